#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"

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
    // BEST's content hash as it compiles now: its folder, its bases and the family's files.
    ledger::Recorded rebased = ledger::rebase(
        ledger::Files{loaded.layout.ledger},
        [&](const std::string &best) {
          return loaded.candidates.content_hash(loaded.family, best);
        },
        options->reason);
    print_recorded(context, ledger::to_string(rebased.outcome), rebased);
    return 0;
  };
}

} // namespace kopt::cli
