#include "round/steps.hpp"

#include "buildinfo/ninja_deps.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

#include <filesystem>

namespace kopt::round {

namespace fs = std::filesystem;

namespace {

// A missing measurement.json is a failed attempt (nothing comparable), not a tool error.
profile::Measurement read_or_missing(const fs::path &path, const std::string &id) {
  std::error_code ec;
  return fs::exists(path, ec) ? profile::read_measurement(path)
                              : decide::missing_measurement(id, path);
}

// The ledger starts with the baseline: when there is no state yet and the decision was made
// against the baseline, record the baseline from its own measurement first.
std::optional<ledger::Recorded> record_baseline(const LoadedFamily &loaded,
                                                const ledger::Files &files,
                                                const decide::Decision &decision) {
  if (ledger::read_state(files) || decision.candidate == decision.best) {
    return std::nullopt;
  }
  const candidate::Candidate &baseline = loaded.candidates.get(decision.best);
  // Measured side by side, the baseline's samples are the ones beside the candidate.
  fs::path own = loaded.layout.measurement(baseline.id());
  fs::path paired = loaded.layout.paired_best(decision.candidate);
  std::error_code ec;
  profile::Measurement m =
      profile::read_measurement(fs::exists(paired, ec) && !fs::exists(own, ec) ? paired : own);
  decide::Request request;
  request.target = baseline.spec.target;
  request.expected_hash = loaded.candidates.content_hash(loaded.family, baseline.id());
  return ledger::record(files, decide::decide(m, m, request), baseline.spec, m);
}

} // namespace

decide::Options keep_options(const spec::Family &family) {
  decide::Options options;
  options.noise = family.keep_threshold;
  options.confidence = family.keep_confidence;
  options.max_regression = family.keep_max_regression;
  return options;
}

decide::Decision decide_candidate(const LoadedFamily &loaded, const std::string &id,
                                  const ledger::Best &best, const decide::Options &options) {
  const candidate::Candidate &candidate = loaded.candidates.get(id);
  decide::Request request;
  request.target = candidate.spec.target;
  request.expected_hash = loaded.candidates.content_hash(loaded.family, id);
  request.best_hash = best.hash;
  request.identical_to = loaded.identical_to(id, best);
  fs::path decision_path = loaded.layout.decision(id);
  std::error_code ec;
  if (fs::exists(decision_path, ec)) {
    request.previous = decide::read_decision(decision_path);
  }
  if (fs::exists(loaded.layout.calibration(), ec)) {
    request.calibration = decide::read_calibration(loaded.layout.calibration());
  }
  // Side by side, BEST's samples are the ones measured beside the candidate.
  profile::Measurement measured = read_or_missing(loaded.layout.measurement(id), id);
  profile::Measurement best_measured;
  if (!measured.paired_best.empty()) {
    best_measured = read_or_missing(loaded.layout.paired_best(id), measured.paired_best);
    if (best_measured.ok() && measured.paired_best != best.id) {
      best_measured.status = "failed";
      best_measured.reason = "candidate " + id + " was measured beside BEST " +
                             measured.paired_best + ", but BEST is now " + best.id +
                             ": benchmark it again (target candidate_" + id + "_bench)";
    }
  } else {
    best_measured = read_or_missing(loaded.layout.measurement(best.id), best.id);
  }
  decide::Decision decision = decide::decide(best_measured, measured, request, options);
  decide::write_decision(decision_path, decision);
  return decision;
}

RecordOutcome record_candidate(const LoadedFamily &loaded, const std::string &id,
                               const ledger::Options &limits) {
  const candidate::Candidate &candidate = loaded.candidates.get(id);
  fs::path decision_path = loaded.layout.decision(id);
  std::error_code ec;
  if (!fs::exists(decision_path, ec)) {
    throw Error(decision_path.string() + ": no decision yet: run kopt decide --candidate " + id +
                " first");
  }
  decide::Decision decision = decide::read_decision(decision_path);
  profile::Measurement measurement = read_or_missing(loaded.layout.measurement(id), id);
  ledger::Files files{loaded.layout.ledger};
  RecordOutcome outcome;
  outcome.baseline = record_baseline(loaded, files, decision);
  outcome.recorded = ledger::record(files, decision, candidate.spec, measurement, limits);
  return outcome;
}

std::vector<std::string> identity_problems(const LoadedFamily &loaded, const std::string &id,
                                           const std::string &build_dir,
                                           const std::string &prefix) {
  util::RealProcessRunner runner;
  util::Command command{{"ninja", "-C", build_dir, "-t", "deps"}, {}, {}, 120};
  util::ProcessResult result = runner.run(command);
  if (!result.ok()) {
    return {"`ninja -C " + build_dir + " -t deps` " + result.describe(120)};
  }
  std::vector<fs::path> foreign;
  for (const auto &c : loaded.candidates.all()) {
    foreign.push_back(c.dir);
  }
  return buildinfo::check_identity(buildinfo::parse_ninja_deps(result.out, fs::absolute(build_dir)),
                                   prefix + "candidate_" + id, loaded.layout.gen_root(),
                                   loaded.layout.gen_dir(id), loaded.family.kernel_header, foreign)
      .problems;
}

} // namespace kopt::round
