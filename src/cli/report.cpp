#include "report/report.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "spec/family.hpp"
#include "util/atomic_file.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct ReportCliOptions {
  FamilyOptions family;
  report::ReportOptions report;
  std::string out;
  std::string build_dir;
  std::string heuristic;
};

} // namespace

Handler setup_report(CLI::App &app) {
  auto options = std::make_shared<ReportCliOptions>();
  options->family.add_to(app, &options->build_dir);
  app.add_option("--out", options->out,
                 "the HTML file to write (atomically; default: <state-dir>/report.html)");
  app.add_option("--build-dir", options->build_dir,
                 "the ninja build folder whose newest run the compile waterfall shows");
  app.add_option("--heuristic", options->heuristic,
                 "a heuristic.json to map (default: family.json's rules)");
  app.add_option("--tune-candidate", options->report.tune_candidate,
                 "whose tuning results to show (default: the newest tune/<id>/full.csv)");
  return [options](Context &context) {
    auto [family, layout] = read_family_state(options->family, context.err);
    if (options->out.empty()) {
      options->out = (std::filesystem::path(options->family.state_dir) / "report.html").string();
    }
    options->report.build_dir = options->build_dir;
    options->report.heuristic = options->heuristic;
    report::Page page = report::make_report(family, layout, options->report);
    util::write_file_atomic(options->out, page.html);
    if (context.json) {
      nlohmann::json figures = nlohmann::json::array();
      for (const report::Figure &f : page.figures) {
        figures.push_back({{"id", f.id}, {"title", f.title}, {"marks", f.marks}});
      }
      context.out << util::dump_json({{"out", options->out},
                                      {"figures", figures},
                                      {"not_shown", page.not_shown}})
                  << "\n";
      return 0;
    }
    context.out << "wrote " << options->out << ": " << page.figures.size() << " figures";
    for (const report::Figure &f : page.figures) {
      context.out << (&f == &page.figures.front() ? " (" : ", ") << f.id;
    }
    context.out << (page.figures.empty() ? "" : ")") << "\n";
    for (const std::string &line : page.not_shown) {
      context.out << "  not shown: " << line << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
