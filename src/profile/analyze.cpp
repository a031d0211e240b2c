#include "profile/analyze.hpp"

#include "profile/confined.hpp"

#include "profile/harness_csv.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <map>
#include <ostream>

namespace kopt::profile {

namespace fs = std::filesystem;

namespace {

double duration_ns(const LaunchDetails &launch) {
  return launch.get("GPU Speed Of Light Throughput", "Duration", 0);
}

// The hottest kernel: the one with the most profiled time over the representative configs.
// Each class's launch is reported: the dispatch may pick another instance per class.
std::string hottest_kernel(const std::vector<LaunchDetails> &launches) {
  std::map<std::string, double> time_of;
  for (const auto &launch : launches) {
    time_of[launch.kernel] += duration_ns(launch);
  }
  std::string hottest;
  for (const auto &[kernel, ns] : time_of) {
    if (hottest.empty() || ns > time_of[hottest]) {
      hottest = kernel;
    }
  }
  return hottest;
}

// The harness run under ncu: its configs file holds the representatives only. Returns ncu's
// output, or nullopt after saying on `err` why there is none.
std::optional<std::string>
profile_representatives(const spec::Family &family, const spec::Layout &layout,
                        const AnalyzeRequest &request, const Representatives &chosen,
                        util::ProcessRunner &runner,
                        const std::function<std::optional<RunSetup>()> &find_device,
                        std::ostream &err, nlohmann::json &measured) {
  const std::string &id = request.candidate;
  fs::path dir = layout.results_dir(id) / "analyze";
  std::string subset = util::csv_line(chosen.configs.header) + "\n";
  for (size_t r : chosen.rows) {
    subset += util::csv_line(chosen.configs.rows[r]) + "\n";
  }
  util::write_file_atomic(dir / "configs.csv", subset);
  std::optional<RunSetup> setup = find_device();
  if (!setup) {
    return std::nullopt;
  }
  fs::path harness = layout.harness(id);
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
  command.argv = ncu_analyze_command(family.kernel_regex, harness_argv(harness, args));
  command.env = setup->env;
  command.timeout_s = family.timeout_s;
  confine_harness(command, {dir}, family, true);
  util::ProcessResult result = runner.run(command);
  util::write_file_atomic(dir / "ncu_details.csv", result.out);
  if (!result.ok()) {
    err << "kopt: ncu " << result.describe(command.timeout_s) << "\n" << result.err;
    return std::nullopt;
  }
  std::string printed = harness_hash(result.out);
  if (printed != request.expected_hash) {
    throw Error(harness.string() + " printed hash '" + printed + "', but candidate " + id +
                "'s sources hash to " + request.expected_hash +
                ": the binary is stale (build target candidate_" + id + " first)");
  }
  Conditions c{printed, setup->device, setup->driver, "ncu", 0, 1};
  measured = {{"hash", c.hash},         {"device", c.device}, {"driver", c.driver},
              {"profiler", c.profiler}, {"warmup", c.warmup}, {"repeat", c.repeat}};
  return result.out;
}

} // namespace

Representatives representatives(const spec::Family &family, util::CsvTable configs) {
  Representatives chosen;
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> rows;
  for (size_t r = 0; r < configs.rows.size(); ++r) {
    std::string name;
    try {
      name = spec::config_class(family.classes, configs.header, configs.rows[r]);
    } catch (const Error &e) {
      throw Error(configs.where(r) + ": " + e.what()); // which file and row
    }
    if (!rows.count(name)) {
      order.push_back(name);
    }
    rows[name].push_back(r);
  }
  for (const auto &name : order) {
    chosen.rows.push_back(rows[name][rows[name].size() / 2]);
    chosen.classes.push_back(name);
  }
  chosen.configs = std::move(configs);
  return chosen;
}

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

Analysis analyze_launches(const std::vector<LaunchDetails> &launches, const Representatives &chosen,
                          const std::string &candidate, const std::string &source,
                          const std::string &kernel_regex, nlohmann::json measured) {
  Analysis analysis;
  analysis.kernel = hottest_kernel(launches);
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, int> limiter_votes;
  for (const auto &launch : launches) {
    // Another page or metric set reads as launches of 0 us: say so instead of judging them.
    if (launch.get("GPU Speed Of Light Throughput", "Duration") < 0) {
      throw Error(source + ": launch " + std::to_string(launch.id) + " (" + launch.kernel +
                  ") has no 'GPU Speed Of Light Throughput' Duration: not ncu's details page "
                  "with the SpeedOfLight section (ncu --csv --page details --section "
                  "SpeedOfLight)");
    }
    Bottleneck b = judge_bottleneck(launch);
    ++limiter_votes[b.limiter];
    nlohmann::json row = to_json(launch, b);
    std::string config = "?";
    std::string config_class = "?";
    if (launch.config >= 0 && static_cast<size_t>(launch.config) < chosen.rows.size()) {
      const auto &values = chosen.configs.rows[chosen.rows[static_cast<size_t>(launch.config)]];
      config = util::csv_line(values);
      config_class = chosen.classes[static_cast<size_t>(launch.config)];
    }
    row["class"] = config_class;
    row["config_values"] = config;
    rows.push_back(row);
    analysis.report += "  " + config_class + " (" + config + ") " + launch.kernel + ": " +
                       util::format_number(duration_ns(launch) / 1000.0, 4) + " us, " + b.line +
                       "\n";
  }
  if (rows.empty()) {
    throw Error(source + ": ncu reported no launch of a kernel matching '" + kernel_regex + "'");
  }
  // The top limiter is the longest launch's: that is where the time goes.
  const nlohmann::json *longest = &rows.front();
  for (const auto &row : rows) {
    if (row["duration_ns"].get<double>() > (*longest)["duration_ns"].get<double>()) {
      longest = &row;
    }
  }
  analysis.top_limiter = (*longest)["limiter"];
  analysis.headline = "top limiter: " + analysis.top_limiter + " (longest class " +
                      (*longest)["class"].get<std::string>() + "; " +
                      std::to_string(limiter_votes[analysis.top_limiter]) + " of " +
                      std::to_string(rows.size()) + " classes)";
  analysis.measured = measured;
  analysis.json = {
      {"candidate", candidate}, {"kernel", analysis.kernel}, {"top_limiter", analysis.top_limiter},
      {"ncu_output", source},   {"classes", rows},           {"measured", measured}};
  return analysis;
}

std::optional<Analysis> analyze(const spec::Family &family, const spec::Layout &layout,
                                const AnalyzeRequest &request, util::ProcessRunner &runner,
                                const std::function<std::optional<RunSetup>()> &find_device,
                                std::ostream &err, util::Progress &progress) {
  const std::string &id = request.candidate;
  if (family.backend != spec::Backend::cuda) {
    throw Error(family.file.string() +
                ": backend: kopt analyze profiles cuda families with "
                "ncu; '" +
                spec::to_string(family.backend) + "' has no profiler report yet");
  }
  Representatives chosen = representatives(family, util::read_csv(family.configs));
  util::FileLock lock(layout.lock("results-" + id), &err);
  fs::path dir = layout.results_dir(id) / "analyze";
  fs::create_directories(dir);

  std::string text;
  std::string source = request.ncu_output;
  nlohmann::json measured = nullptr; // what the profiled run was: none for a saved output
  std::string configs = std::to_string(chosen.rows.size()) + " configs (one per class)";
  progress.begin("analyze: candidate " + id + ", " + configs + " under ncu", 2);
  if (!request.ncu_output.empty()) {
    text = util::read_file(request.ncu_output);
    progress.advance(1, "read " + request.ncu_output);
  } else {
    progress.starting("ncu profiling " + configs);
    std::optional<std::string> out = profile_representatives(family, layout, request, chosen,
                                                             runner, find_device, err, measured);
    if (!out) {
      progress.end();
      return std::nullopt;
    }
    text = std::move(*out);
    source = (dir / "ncu_details.csv").string();
    progress.advance(1, "ncu profiled " + configs);
  }
  Analysis analysis = analyze_launches(parse_ncu_details(text, source), chosen, id, source,
                                       family.kernel_regex, measured);
  progress.advance(1, "read the ncu report");
  progress.end();
  util::write_json_atomic(dir / "analyze.json", analysis.json);
  return analysis;
}

} // namespace kopt::profile
