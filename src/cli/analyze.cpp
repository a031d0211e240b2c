#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "profile/harness_csv.hpp"
#include "profile/ncu_details.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace fs = std::filesystem;

namespace {

struct AnalyzeOptions {
  FamilyOptions family;
  std::string candidate;
  std::string ncu_output; ///< parse this saved ncu output instead of running ncu
};

// The sections the report reads, and the stall breakdown WarpStateStats charts but does not
// print on the details page.
std::vector<std::string> ncu_analyze_command(const std::string &kernel_regex,
                                             const std::vector<std::string> &harness) {
  std::vector<std::string> argv = {
      "ncu",
      "--csv",
      "--page",
      "details",
      "--print-units",
      "base",
      "--nvtx",
      "--section",
      "SpeedOfLight",
      "--section",
      "Occupancy",
      "--section",
      "WarpStateStats",
      "--section",
      "MemoryWorkloadAnalysis",
      "--metrics",
      "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio$",
      "-k",
      "regex:" + kernel_regex};
  argv.insert(argv.end(), harness.begin(), harness.end());
  return argv;
}

// One representative config per class: the class's middle row in file order, so that a class
// spanning small and large shapes is shown by a typical one. Returns the chosen row indices.
std::vector<size_t> representatives(const spec::Family &family, const util::CsvTable &configs,
                                    std::vector<std::string> &classes) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> rows;
  for (size_t r = 0; r < configs.rows.size(); ++r) {
    std::string name = spec::config_class(family.classes, configs.header, configs.rows[r]);
    if (!rows.count(name)) {
      order.push_back(name);
    }
    rows[name].push_back(r);
  }
  std::vector<size_t> chosen;
  for (const auto &name : order) {
    chosen.push_back(rows[name][rows[name].size() / 2]);
    classes.push_back(name);
  }
  return chosen;
}

} // namespace

Handler setup_analyze(CLI::App &app) {
  auto options = std::make_shared<AnalyzeOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate whose harness to profile")
      ->required();
  app.add_option("--ncu-output", options->ncu_output,
                 "parse this saved `ncu --csv --page details` output instead of running ncu");
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    const spec::Family &family = loaded.family;
    const std::string &id = loaded.candidates.get(options->candidate).id();
    if (family.backend != "cuda") {
      throw Error(family.file.string() +
                  ": backend: kopt analyze profiles cuda families with "
                  "ncu; '" +
                  family.backend + "' has no profiler report yet");
    }
    util::CsvTable configs = util::read_csv(family.configs);
    std::vector<std::string> classes;
    std::vector<size_t> chosen = representatives(family, configs, classes);
    util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
    fs::path dir = loaded.layout.results_dir(id) / "analyze";
    fs::create_directories(dir);

    std::string text;
    std::string source = options->ncu_output;
    nlohmann::json measured = nullptr; // what the profiled run was: none for a saved output
    if (!options->ncu_output.empty()) {
      text = util::read_file(options->ncu_output);
    } else {
      std::string subset = util::csv_line(configs.header) + "\n";
      for (size_t r : chosen) {
        subset += util::csv_line(configs.rows[r]) + "\n";
      }
      util::write_file_atomic(dir / "configs.csv", subset);
      std::optional<profile::RunSetup> setup =
          gpu_setup(loaded, options->family.gpu_wait_min, context.err);
      if (!setup) {
        return 1;
      }
      fs::path harness = loaded.layout.harness(id);
      if (!fs::exists(harness)) {
        throw Error("no harness binary at " + harness.string() + " (build target candidate_" + id +
                    " first)");
      }
      // One timed launch per config, no warm-up: ncu replays each launch per section anyway.
      kopt::harness::Options args;
      args.mode = kopt::harness::Mode::benchmark;
      args.configs = (dir / "configs.csv").string();
      args.out = (dir / "harness.csv").string();
      args.warmup = 0;
      args.repeat = 1;
      util::Command command;
      command.argv = ncu_analyze_command(family.kernel_regex, profile::harness_argv(harness, args));
      command.env = setup->env;
      command.timeout_s = family.timeout_s;
      util::RealProcessRunner runner;
      util::ProcessResult result = runner.run(command);
      source = (dir / "ncu_details.csv").string();
      util::write_file_atomic(source, result.out);
      if (!result.ok()) {
        context.err << "kopt: ncu " << result.describe(command.timeout_s) << "\n" << result.err;
        return 1;
      }
      std::string expected = loaded.candidates.content_hash(family, id);
      std::string printed = profile::harness_hash(result.out);
      if (printed != expected) {
        throw Error(harness.string() + " printed hash '" + printed + "', but candidate " + id +
                    "'s sources hash to " + expected +
                    ": the binary is stale (build target candidate_" + id + " first)");
      }
      profile::Conditions c{printed, setup->device, setup->driver, "ncu", 0, 1};
      measured = {{"hash", c.hash},         {"device", c.device}, {"driver", c.driver},
                  {"profiler", c.profiler}, {"warmup", c.warmup}, {"repeat", c.repeat}};
      text = result.out;
    }

    std::vector<profile::LaunchDetails> launches = profile::parse_ncu_details(text, source);
    // The hottest kernel: the one with the most profiled time over the representative configs.
    // Each class's launch is reported: the dispatch may pick another instance per class.
    std::map<std::string, double> time_of;
    for (const auto &launch : launches) {
      time_of[launch.kernel] += launch.get("GPU Speed Of Light Throughput", "Duration", 0);
    }
    std::string hottest;
    for (const auto &[kernel, ns] : time_of) {
      if (hottest.empty() || ns > time_of[hottest]) {
        hottest = kernel;
      }
    }
    nlohmann::json rows = nlohmann::json::array();
    std::map<std::string, int> limiter_votes;
    std::string report;
    for (const auto &launch : launches) {
      profile::Bottleneck b = profile::judge_bottleneck(launch);
      ++limiter_votes[b.limiter];
      nlohmann::json row = profile::to_json(launch, b);
      std::string config = "?";
      std::string config_class = "?";
      if (launch.config >= 0 && static_cast<size_t>(launch.config) < chosen.size()) {
        const auto &values = configs.rows[chosen[static_cast<size_t>(launch.config)]];
        config = util::csv_line(values);
        config_class = classes[static_cast<size_t>(launch.config)];
      }
      row["class"] = config_class;
      row["config_values"] = config;
      rows.push_back(row);
      report += "  " + config_class + " (" + config + ") " + launch.kernel + ": " +
                util::format_number(
                    launch.get("GPU Speed Of Light Throughput", "Duration", 0) / 1000.0, 4) +
                " us, " + b.line + "\n";
    }
    if (rows.empty()) {
      throw Error(source + ": ncu reported no launch of a kernel matching '" + family.kernel_regex +
                  "'");
    }
    // The top limiter is the longest launch's: that is where the time goes.
    const nlohmann::json *longest = &rows.front();
    for (const auto &row : rows) {
      if (row["duration_ns"].get<double>() > (*longest)["duration_ns"].get<double>()) {
        longest = &row;
      }
    }
    std::string top = (*longest)["limiter"];
    std::string headline =
        "top limiter: " + top + " (longest class " + (*longest)["class"].get<std::string>() + "; " +
        std::to_string(limiter_votes[top]) + " of " + std::to_string(rows.size()) + " classes)";
    nlohmann::json answer{{"candidate", id},      {"kernel", hottest}, {"top_limiter", top},
                          {"ncu_output", source}, {"classes", rows},   {"measured", measured}};
    util::write_json_atomic(dir / "analyze.json", answer);
    if (context.json) {
      context.out << answer.dump(2) << "\n";
    } else {
      context.out << "candidate " << id << ", hottest kernel " << hottest << "\n"
                  << headline << "\n"
                  << report;
      if (!measured.is_null()) {
        context.out << "measured: hash " << measured["hash"].get<std::string>().substr(0, 8)
                    << " on " << measured["device"].get<std::string>() << " (driver "
                    << measured["driver"].get<std::string>() << "), ncu, warmup 0, repeat 1\n";
      }
    }
    return 0;
  };
}

} // namespace kopt::cli
