#include "ledger/record_candidate.hpp"

#include "profile/freshness.hpp"
#include "util/error.hpp"

namespace kopt::ledger {

namespace {

// The ledger starts with the baseline: when there is no state yet and the decision was made
// against the baseline, record the baseline from its own measurement first.
std::optional<Recorded> record_baseline(const spec::Layout &layout, const spec::Family &family,
                                        const candidate::CandidateSet &candidates,
                                        const Files &files, const decide::Decision &decision) {
  if (read_state(files) || decision.candidate == decision.best) {
    return std::nullopt;
  }
  const candidate::Candidate &baseline = candidates.get(decision.best);
  // Measured side by side, the baseline's samples are the ones beside the candidate.
  std::filesystem::path own = layout.measurement(baseline.id());
  std::filesystem::path paired = layout.paired_best(decision.candidate);
  std::error_code ec;
  profile::Measurement m = profile::read_measurement(
      std::filesystem::exists(paired, ec) && !std::filesystem::exists(own, ec) ? paired : own);
  decide::Request request;
  request.target = baseline.spec.target;
  request.expected_hash = candidates.content_hash(family, baseline.id());
  return record(files, decide::decide(m, m, request), baseline.spec, m);
}

} // namespace

void check_decided(const decide::Decision &decision, const std::string &id,
                   const std::string &hash) {
  auto refuse = [&](const std::string &field, const std::string &expected, const std::string &got,
                    const std::string &why) {
    throw Error(decision.file + ": " + field + ": expected " + expected + ", got " +
                (got.empty() ? "(none)" : got) + ": " + why + "; run kopt decide --candidate " +
                id + " again");
  };
  if (decision.candidate != id) {
    refuse("candidate", id, decision.candidate, "a decision of another candidate");
  }
  if (decision.hash != hash) {
    refuse("hash", hash, decision.hash,
           "candidate " + id + "'s content is not what was decided (changed since, or edited)");
  }
}

RecordRun record_candidate(const spec::Layout &layout, const spec::Family &family,
                           const candidate::CandidateSet &candidates, const std::string &id,
                           const Options &options) {
  const candidate::Candidate &candidate = candidates.get(id);
  std::filesystem::path decision_path = layout.decision(candidate.id());
  std::error_code ec;
  if (!std::filesystem::exists(decision_path, ec)) {
    throw Error(decision_path.string() + ": no decision yet: run kopt decide --candidate " +
                candidate.id() + " first");
  }
  decide::Decision decision = decide::read_decision(decision_path);
  std::string hash = candidates.content_hash(family, candidate.id());
  check_decided(decision, candidate.id(), hash);
  std::filesystem::path measurement_path = layout.measurement(candidate.id());
  profile::Measurement measurement =
      std::filesystem::exists(measurement_path, ec)
          ? profile::read_measurement(measurement_path)
          : decide::missing_measurement(candidate.id(), measurement_path);
  // The measurement gives performance.md its kernels: it must still be the one decided.
  std::string remedy = "run candidate_" + candidate.id() + "_bench and kopt decide --candidate " +
                       candidate.id() + " again";
  decide::check_measured(measurement, measurement_path.string(), {candidate.id(), hash},
                         {decision.best, decision.best_hash}, remedy);
  // A verdict on configs, a golden, a harness or a build that are no longer there is not
  // recorded as the loop's.
  std::string changed = profile::changed_since(measurement, family, layout);
  if (!changed.empty()) {
    throw Error(measurement_path.string() + ": " + changed + "; " + remedy);
  }

  Files files{layout.ledger};
  RecordRun run;
  run.baseline = record_baseline(layout, family, candidates, files, decision);
  run.recorded = record(files, decision, candidate.spec, measurement, options);
  return run;
}

} // namespace kopt::ledger
