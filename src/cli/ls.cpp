#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "report/loop.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

Handler setup_ls(CLI::App &app) {
  auto options = std::make_shared<FamilyOptions>();
  options->add_to(app);
  return [options](Context &context) {
    options->require_state_dir();
    LoadedFamily loaded = load_family(*options);
    for (const auto &folder : loaded.candidates.skipped()) {
      context.err << "kopt: warning: " << folder.string()
                  << ": no candidate.json, so not a candidate (skipped)\n";
    }
    for (const std::string &problem : loaded.candidates.target_problems()) {
      context.err << "kopt: warning: " << problem << "\n";
    }
    std::vector<report::CandidateRow> rows =
        report::list_candidates(loaded.family, loaded.candidates, loaded.layout);
    context.out << (context.json ? util::dump_json(report::to_json(rows)) + "\n"
                                 : report::format_candidates(rows));
    return 0;
  };
}

} // namespace kopt::cli
