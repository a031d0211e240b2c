#include "cli/subcommands.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

Handler setup_version(CLI::App &) {
  return [](Context &context) {
    if (context.json) {
      context.out << util::dump_json(nlohmann::json{{"version", KOPT_VERSION}}, -1) << "\n";
    } else {
      context.out << "kopt " << KOPT_VERSION << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
