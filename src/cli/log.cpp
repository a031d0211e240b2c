#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "ledger/ledger.hpp"
#include "report/loop.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

Handler setup_log(CLI::App &app) {
  auto options = std::make_shared<FamilyOptions>();
  options->add_to(app);
  return [options](Context &context) {
    auto [family, layout] = read_family_state(*options, context.err);
    std::vector<report::Attempt> attempts =
        report::read_attempts(ledger::Files{layout.ledger}.attempts());
    if (context.json) {
      context.out << util::dump_json(report::to_json(attempts)) << "\n";
    } else if (attempts.empty()) {
      context.out << family.name << ": no attempts recorded yet ("
                  << ledger::Files{layout.ledger}.attempts().string() << ")\n";
    } else {
      context.out << report::format_attempts(attempts);
    }
    return 0;
  };
}

} // namespace kopt::cli
