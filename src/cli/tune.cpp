#include "tune/tune.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/progress.hpp"
#include "cli/subcommands.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct TuneCliOptions {
  FamilyOptions family;
  tune::TuneOptions tune;
  std::string kernels;
  std::string configs;
  std::string build_dir;
  std::string prefix;
  bool quiet = false;
};

size_t stale_rows(const tune::TuneReport &report) {
  size_t rows = 0;
  for (const auto &[reason, n] : report.stale) {
    rows += n;
  }
  return rows;
}

} // namespace

Handler setup_tune(CLI::App &app) {
  auto options = std::make_shared<TuneCliOptions>();
  options->family.add_to(app, &options->build_dir);
  app.add_option("--candidate", options->tune.candidate,
                 "the candidate whose harness runs (default: the baseline)");
  app.add_option("--kernels", options->kernels, "comma-separated instances (default: every one)");
  app.add_option("--configs", options->configs, "configs CSV to tune on (default: the family's)");
  app.add_option("--build-dir", options->build_dir, "build the candidate's harness here first");
  app.add_option("--prefix", options->prefix, "the PREFIX given to kopt_add_family");
  app.add_option("--chunk", options->tune.chunk, "configs per harness run")
      ->check(whole_number(1))
      ->capture_default_str();
  app.add_option("--warmup", options->tune.warmup, "warm-up runs per config (default: family's)")
      ->check(whole_number(0, 1000000));
  app.add_option("--repeat", options->tune.repeat, "timed runs per config (default: family's)")
      ->check(whole_number(1, 1000000));
  add_ties_option(app, options->tune.ties);
  add_quiet_option(app, options->quiet);
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    tune::TuneOptions t = options->tune;
    t.candidate = loaded.candidates.get(t.candidate.empty() ? loaded.baseline() : t.candidate).id();
    t.hash = loaded.candidates.content_hash(loaded.family, t.candidate);
    for (const auto &k : util::split(options->kernels, ',')) {
      if (!util::trim(k).empty()) {
        t.kernels.emplace_back(util::trim(k));
      }
    }
    t.configs = options->configs;
    std::optional<profile::RunSetup> setup =
        prepare_run(loaded, options->build_dir, {options->prefix + "candidate_" + t.candidate},
                    options->family.gpu_wait_min, context.err);
    if (!setup) {
      return 1;
    }
    util::RealProcessRunner runner;
    std::unique_ptr<util::StatusLine> progress = status_line(context, options->quiet);
    tune::TuneReport report =
        tune::tune(loaded.family, loaded.layout, t, runner, *setup, context.err, *progress);
    if (context.json) {
      nlohmann::json stale = nlohmann::json::array();
      for (const auto &[reason, rows] : report.stale) {
        stale.push_back({{"reason", reason}, {"rows", rows}});
      }
      context.out << util::dump_json(nlohmann::json{{"candidate", t.candidate},
                                                    {"hash", t.hash},
                                                    {"measured", report.measured},
                                                    {"reused", report.reused},
                                                    {"remeasured", stale_rows(report)},
                                                    {"stale", stale},
                                                    {"failures", report.failures},
                                                    {"shapes", report.shapes},
                                                    {"arch", report.arch},
                                                    {"compute_units", report.compute_units},
                                                    {"full_csv", report.full_csv.string()},
                                                    {"tuned_csv", report.tuned_csv.string()}})
                  << "\n";
    } else {
      context.out << "candidate " << t.candidate << " (hash " << t.hash.substr(0, 8)
                  << "): measured " << report.measured << " rows, reused " << report.reused
                  << " from " << report.full_csv.string() << "\n";
      if (!report.stale.empty()) {
        context.out << "re-measured " << stale_rows(report) << " rows:\n";
        for (const auto &[reason, rows] : report.stale) {
          context.out << "  " << rows << " " << reason << "\n";
        }
      }
      for (const auto &f : report.failures) {
        context.out << "failed: " << f << "\n";
      }
      context.out << "wrote " << report.tuned_csv.string() << " (" << report.shapes
                  << " shapes, gfx " << report.arch << ", cu_num " << report.compute_units << ")\n";
    }
    return report.failures.empty() ? 0 : 1;
  };
}

} // namespace kopt::cli
