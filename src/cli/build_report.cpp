#include "buildinfo/build_report.hpp"
#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "spec/family.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <ostream>
#include <thread>

namespace kopt::cli {

namespace {

struct BuildReportOptions {
  std::string build_dir;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int top = 10;
  std::string spec;
};

} // namespace

Handler setup_build_report(CLI::App &app) {
  auto options = std::make_shared<BuildReportOptions>();
  app.add_option("build_dir", options->build_dir, "the ninja build folder")->required();
  app.add_option("--jobs", options->jobs,
                 "the parallelism the efficiency is measured against (default: the cores)")
      ->check(whole_number(1));
  app.add_option("--top", options->top, "how many of the slowest TUs to list")
      ->check(whole_number(0));
  app.add_option("--spec", options->spec,
                 "family.json: check the family's compile_budget_s, exit 1 when over");
  return [options](Context &context) {
    std::optional<spec::Family> family;
    if (!options->spec.empty()) {
      family = spec::load_family(options->spec);
      if (!(family->compile_budget_s > 0)) {
        return 0; // no budget, nothing to check
      }
      if (!std::filesystem::exists(std::filesystem::path(options->build_dir) / ".ninja_log")) {
        context.err << "kopt: warning: " << family->name << ": no .ninja_log in "
                    << options->build_dir << ", so compile_budget_s cannot be checked\n";
        return 0;
      }
    }
    buildinfo::BuildReport report = buildinfo::read_build_report(options->build_dir, options->jobs);
    std::optional<buildinfo::BudgetCheck> budget;
    if (family) {
      budget =
          buildinfo::check_budget(report, family->name, family->compile_budget_s, options->top);
    }
    if (context.json) {
      nlohmann::json j = buildinfo::to_json(report);
      if (budget) {
        j["budget"] = {{"family", family->name},
                       {"budget_s", family->compile_budget_s},
                       {"ok", budget->ok},
                       {"message", budget->message}};
      }
      context.out << util::dump_json(j) << "\n";
    } else if (!budget) {
      context.out << buildinfo::format_report(report, options->top);
    } else if (!budget->ok) {
      context.err << "kopt: " << budget->message;
    }
    return budget && !budget->ok ? 1 : 0;
  };
}

} // namespace kopt::cli
