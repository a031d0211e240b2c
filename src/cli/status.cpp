#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

Handler setup_status(CLI::App &app) {
  auto options = std::make_shared<FamilyOptions>();
  options->add_to(app);
  return [options](Context &context) {
    // Only the family file and the ledger are read: a broken candidate folder must not hide
    // the loop's state.
    spec::Family family = spec::load_family(options->spec);
    spec::Layout layout(options->state_dir, options->ledger);
    ledger::Files files{layout.ledger};
    std::optional<ledger::State> state = ledger::read_state(files);
    if (context.json) {
      context.out << (state ? ledger::to_json(*state) : nlohmann::json(nullptr)).dump(2) << "\n";
    } else if (!state) {
      context.out << family.name << ": no ledger yet (" << files.state().string()
                  << "): record the baseline first\n";
    } else {
      context.out << ledger::format_status(*state);
    }
    return 0;
  };
}

} // namespace kopt::cli
