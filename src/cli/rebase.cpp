#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "util/error.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct RebaseOptions {
  FamilyOptions family;
  std::string reason;
};

} // namespace

Handler setup_rebase(CLI::App &app) {
  auto options = std::make_shared<RebaseOptions>();
  options->family.add_to(app);
  app.add_option("--reason", options->reason,
                 "why BEST's content changed (recorded in attempts.jsonl and performance.md)")
      ->required();
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    ledger::Files files{loaded.layout.ledger};
    std::optional<ledger::State> state = ledger::read_state(files);
    if (!state) {
      throw Error(files.state().string() + ": no ledger yet: nothing to rebase");
    }
    // BEST's content hash as it compiles now: its folder, its bases and the family's files.
    std::string now = loaded.candidates.content_hash(loaded.family, state->best);
    ledger::Recorded rebased = ledger::rebase(files, now, options->reason);
    if (context.json) {
      context.out << nlohmann::json{{"outcome", rebased.outcome == ledger::Outcome::recorded
                                                    ? "recorded"
                                                    : "identical"},
                                    {"message", rebased.message},
                                    {"state", ledger::to_json(rebased.state)}}
                         .dump(2)
                  << "\n";
    } else {
      context.out << rebased.message << "\n" << ledger::summary_line(rebased.state) << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
