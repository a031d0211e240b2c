#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct RecordOptions {
  FamilyOptions family;
  std::string candidate;
  ledger::Options limits;
};

const char *to_string(ledger::Outcome outcome) {
  switch (outcome) {
  case ledger::Outcome::recorded:
    return "recorded";
  case ledger::Outcome::duplicate:
    return "duplicate";
  case ledger::Outcome::candidate_is_best:
    return "candidate_is_best";
  case ledger::Outcome::identical:
    return "identical";
  }
  return "?";
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
  std::filesystem::path own = loaded.layout.measurement(baseline.id());
  std::filesystem::path paired = loaded.layout.paired_best(decision.candidate);
  std::error_code ec;
  profile::Measurement m = profile::read_measurement(
      std::filesystem::exists(paired, ec) && !std::filesystem::exists(own, ec) ? paired : own);
  decide::Request request;
  request.target = baseline.spec.target;
  request.expected_hash = loaded.candidates.content_hash(loaded.family, baseline.id());
  return ledger::record(files, decide::decide(m, m, request), baseline.spec, m);
}

} // namespace

Handler setup_record(CLI::App &app) {
  auto options = std::make_shared<RecordOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate whose decision to record")
      ->required();
  app.add_option("--max-consecutive", options->limits.max_consecutive,
                 "stop after this many consecutive measured regressions (default 5)");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    const candidate::Candidate &candidate = loaded.candidates.get(options->candidate);
    const std::string &id = candidate.id();
    std::filesystem::path decision_path = loaded.layout.decision(id);
    std::error_code ec;
    if (!std::filesystem::exists(decision_path, ec)) {
      throw Error(decision_path.string() + ": no decision yet: run kopt decide --candidate " + id +
                  " first");
    }
    decide::Decision decision = decide::read_decision(decision_path);
    std::filesystem::path measurement_path = loaded.layout.measurement(id);
    profile::Measurement measurement = std::filesystem::exists(measurement_path, ec)
                                           ? profile::read_measurement(measurement_path)
                                           : decide::missing_measurement(id, measurement_path);

    ledger::Files files{loaded.layout.ledger};
    std::optional<ledger::Recorded> baseline = record_baseline(loaded, files, decision);
    ledger::Recorded recorded =
        ledger::record(files, decision, candidate.spec, measurement, options->limits);
    if (context.json) {
      context.out << nlohmann::json{{"outcome", to_string(recorded.outcome)},
                                    {"message", recorded.message},
                                    {"state", ledger::to_json(recorded.state)}}
                         .dump(2)
                  << "\n";
    } else {
      if (baseline) {
        context.out << baseline->message << "\n";
      }
      context.out << recorded.message << "\n" << ledger::summary_line(recorded.state) << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
