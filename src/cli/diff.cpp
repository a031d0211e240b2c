#include "candidate/checkout.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "util/error.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct DiffOptions {
  FamilyOptions family;
  std::vector<std::string> ids;
};

} // namespace

Handler setup_diff(CLI::App &app) {
  auto options = std::make_shared<DiffOptions>();
  options->family.add_to(app);
  app.add_option("ids", options->ids,
                 "FROM TO: what changes FROM's files into TO's; one id: that candidate against "
                 "its base")
      ->required()
      ->expected(1, 2);
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    std::string from;
    std::string to = options->ids.back();
    if (options->ids.size() == 2) {
      from = options->ids.front();
    } else {
      from = loaded.candidates.get(to).spec.base;
      if (from.empty()) {
        throw Error("diff: candidate " + to + " is the baseline (it has no base): give two ids");
      }
    }
    util::RealProcessRunner runner;
    context.out << candidate::diff_files(loaded.candidates.files(loaded.family, from),
                                         loaded.candidates.files(loaded.family, to), runner);
    return 0;
  };
}

} // namespace kopt::cli
