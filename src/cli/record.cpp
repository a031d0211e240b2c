#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/record_candidate.hpp"

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

} // namespace

Handler setup_record(CLI::App &app) {
  auto options = std::make_shared<RecordOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate whose decision to record")
      ->required();
  app.add_option("--max-consecutive", options->limits.max_consecutive,
                 "stop after this many consecutive measured regressions (default " +
                     std::to_string(ledger::Options{}.max_consecutive) + ")")
      ->check(whole_number(1));
  app.add_flag("--allow-other-build", options->limits.allow_other_build,
               "record a measurement of another build than BEST was recorded with (another "
               "optimisation level or flags); the attempt's row names its build");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    ledger::RecordRun run = ledger::record_candidate(
        loaded.layout, loaded.family, loaded.candidates, options->candidate, options->limits);
    if (!context.json && run.baseline) {
      context.out << run.baseline->message << "\n";
    }
    print_recorded(context, ledger::to_string(run.recorded.outcome), run.recorded);
    return 0;
  };
}

} // namespace kopt::cli
