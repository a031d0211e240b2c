#include "ledger/ledger.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

Handler setup_ledger(CLI::App &app) {
  auto options = std::make_shared<FamilyOptions>();
  app.require_subcommand(1);
  CLI::App *rebuild = app.add_subcommand(
      "rebuild",
      "rebuild a lost or unreadable state.json (and performance.md) from attempts.jsonl");
  options->add_to(*rebuild);
  return [options](Context &context) {
    // Only the family file and the ledger are read, as for status.
    options->require_state_dir();
    spec::Family family = spec::load_family(options->spec);
    spec::Layout layout(options->state_dir, options->ledger);
    ledger::Recorded rebuilt = ledger::rebuild(ledger::Files{layout.ledger}, family.name);
    print_recorded(context, "rebuilt", rebuilt);
    return 0;
  };
}

} // namespace kopt::cli
