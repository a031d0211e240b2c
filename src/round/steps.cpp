#include "round/steps.hpp"

#include "profile/freshness.hpp"
#include "util/error.hpp"

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

// A measurement of inputs that changed since it was taken (the configs, the golden, the harness,
// the build) is refused, never decided: its verdict would be of what is no longer there.
void check_current(const profile::Measurement &m, const fs::path &path, const LoadedFamily &loaded,
                   const std::string &remedy) {
  std::string changed = profile::changed_since(m, loaded.family, loaded.layout);
  if (!changed.empty()) {
    throw Error(path.string() + ": " + changed + "; " + remedy);
  }
}

// Both sides rebuilt with other flags (the build type changed in the build folder) compare alike,
// but not with BEST's row in the ledger: the verdict says so, and kopt record refuses it unless
// asked.
void say_other_build(decide::Decision &decision, const LoadedFamily &loaded,
                     const profile::Measurement &measured) {
  std::optional<ledger::State> state = ledger::read_state(ledger::Files{loaded.layout.ledger});
  std::string other = state ? ledger::other_build(*state, measured) : "";
  if (!other.empty()) {
    decision.reason += "; another build than BEST's row: " + other +
                       " (kopt record refuses it without --allow-other-build)";
  }
}

} // namespace

decide::Options keep_options(const spec::Family &family) {
  decide::Options options;
  options.threshold = family.keep_threshold;
  options.confidence = family.keep_confidence;
  options.max_regression = family.keep_max_regression;
  switch (family.keep_weighting) {
  case spec::KeepWeighting::equal:
    options.weighting = decide::Weighting::equal;
    break;
  case spec::KeepWeighting::count:
    options.weighting = decide::Weighting::count;
    break;
  case spec::KeepWeighting::traffic:
    options.weighting = decide::Weighting::traffic;
    break;
  }
  return options;
}

decide::Decision decide_candidate(const LoadedFamily &loaded, const std::string &id,
                                  const ledger::Best &best, const decide::Options &options) {
  const candidate::Candidate &candidate = loaded.candidates.get(id);
  decide::Request request;
  request.target = candidate.spec.target;
  request.expected_hash = loaded.candidates.content_hash(loaded.family, id);
  request.best_hash = best.hash;
  request.roofline = loaded.family.roofline;
  request.identical_to = ledger::identical_to(ledger::Files{loaded.layout.ledger}, loaded.family,
                                              loaded.candidates, id, best);
  fs::path decision_path = loaded.layout.decision(id);
  std::error_code ec;
  if (fs::exists(loaded.layout.calibration(), ec)) {
    request.calibration = decide::read_calibration(loaded.layout.calibration());
  }
  // Side by side, BEST's samples are the ones measured beside the candidate. Each file must be
  // of the code it stands for now: a copied, stale or forged one is refused, never decided.
  decide::Identity own{id, request.expected_hash};
  decide::Identity best_identity{best.id, best.hash};
  std::string remedy = "run candidate_" + id + "_bench again";
  fs::path path = loaded.layout.measurement(id);
  profile::Measurement measured = read_or_missing(path, id);
  if (id == best.id) {
    // BEST's keep test: its measurement may have been made beside the BEST it replaced; it is
    // decided against itself, and passes (a kept candidate stays green).
    decide::check_measured(measured, path.string(), own,
                           decide::Identity{measured.paired_best, measured.paired_best_hash},
                           remedy);
    check_current(measured, path, loaded, remedy);
    decide::Decision decision = decide::decide(measured, measured, request, options);
    decide::write_decision(decision_path, decision);
    return decision;
  }
  decide::check_measured(measured, path.string(), own, best_identity, remedy);
  check_current(measured, path, loaded, remedy);
  profile::Measurement best_measured;
  if (!measured.paired_best.empty()) {
    path = loaded.layout.paired_best(id);
    best_measured = read_or_missing(path, measured.paired_best);
  } else {
    path = loaded.layout.measurement(best.id);
    best_measured = read_or_missing(path, best.id);
  }
  // BEST's own measurement was made beside the BEST of its day: only its id and hash matter.
  decide::Identity paired =
      measured.paired_best.empty()
          ? decide::Identity{best_measured.paired_best, best_measured.paired_best_hash}
          : best_identity;
  decide::check_measured(best_measured, path.string(), best_identity, paired, remedy);
  check_current(best_measured, path, loaded, remedy);
  decide::Decision decision = decide::decide(best_measured, measured, request, options);
  say_other_build(decision, loaded, measured);
  decide::write_decision(decision_path, decision);
  return decision;
}

} // namespace kopt::round
