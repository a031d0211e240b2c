#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "round/steps.hpp"
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
    const std::string &id = loaded.candidates.get(options->candidate).id();
    round::RecordOutcome outcome = round::record_candidate(loaded, id, options->limits);
    const std::optional<ledger::Recorded> &baseline = outcome.baseline;
    const ledger::Recorded &recorded = outcome.recorded;
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
