#include "profile/bench_detail.hpp"

#include "buildinfo/build_flags.hpp"
#include "profile/confined.hpp"
#include "profile/cupti_trace.hpp"
#include "profile/freshness.hpp"
#include "profile/rocprofv3.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text.hpp"

#include <cstdio>
#include <fstream>
#include <map>

namespace kopt::profile {

namespace fs = std::filesystem;

using namespace detail;

namespace {

harness::Mode harness_mode(HarnessMode mode) {
  switch (mode) {
  case HarnessMode::correctness:
    return harness::Mode::correctness;
  case HarnessMode::benchmark:
    return harness::Mode::benchmark;
  case HarnessMode::full_benchmark:
    return harness::Mode::full_benchmark;
  }
  return harness::Mode::benchmark;
}

std::string tail(const std::string &text, size_t lines) {
  if (text.empty()) {
    return text; // a harness that wrote nothing to stderr
  }
  size_t pos = text.size();
  while (lines > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      return text;
    }
    --lines;
  }
  return text.substr(pos + 1);
}

// The config a harness's log shows started and not finished ("8/9 M=1,N=2"), or "": the harness
// writes "harness: [8/9] M=1,N=2 started" before a config's runs and "harness: [8/9] M=1,N=2
// kernel=..." after them.
std::string unfinished_config(const std::string &log) {
  std::string started; // "[8/9] M=1,N=2"
  const std::string prefix = "harness: [";
  const std::string suffix = " started";
  for (const std::string &line : util::split(log, '\n')) {
    if (!line.starts_with(prefix)) {
      continue;
    }
    std::string rest = line.substr(prefix.size() - 1);
    if (rest.ends_with(suffix)) {
      started = rest.substr(0, rest.size() - suffix.size());
    } else if (!started.empty() && rest.starts_with(started + " ")) {
      started.clear();
    }
  }
  if (started.empty()) {
    return "";
  }
  size_t close = started.find("] ");
  return close == std::string::npos
             ? ""
             : started.substr(1, close - 1) + " " + started.substr(close + 2);
}

// The device a run of `family` uses, as measurements name it.
std::string device_name(const spec::Family &family, const RunSetup &setup) {
  if (family.backend == spec::Backend::host) {
    return host_cpu_model();
  }
  return setup.device.empty() ? "GPU" : setup.device;
}

// Where the harness ran guarded, it told kopt each timed run's time as it measured it
// (`kopt-sample CONFIG RUN US`): the results file must hold exactly those times. Returns "" or
// what differs.
std::string samples_disagree(const util::ProcessResult &result,
                             const std::vector<HarnessRow> &rows) {
  if (result.err.find("harness: guarded ") == std::string::npos) {
    return ""; // not guarded (a harness run by hand or of an older kopt): nothing was reported
  }
  std::map<std::pair<size_t, size_t>, std::string> reported;
  const std::string prefix = "kopt-sample ";
  for (const std::string &line : util::split(result.out, '\n')) {
    if (!line.starts_with(prefix)) {
      continue;
    }
    std::vector<std::string> words = util::split(line.substr(prefix.size()), ' ');
    size_t config = 0, run = 0;
    if (words.size() != 3 || std::sscanf(words[0].c_str(), "%zu", &config) != 1 ||
        std::sscanf(words[1].c_str(), "%zu", &run) != 1 ||
        !reported.emplace(std::make_pair(config, run), words[2]).second) {
      return "the harness's stdout holds a timed run's report twice or malformed ('" +
             util::excerpt(line, 80) + "'): something beside the harness wrote it";
    }
  }
  size_t expected = 0;
  for (size_t c = 0; c < rows.size(); ++c) {
    for (size_t r = 0; r < rows[c].samples.size(); ++r, ++expected) {
      auto found = reported.find({c + 1, r + 1});
      char written[64];
      std::snprintf(written, sizeof written, "%.3f", rows[c].samples[r]);
      if (found == reported.end() || found->second != written) {
        return "config " + util::join(rows[c].values, ",") + ", timed run " +
               std::to_string(r + 1) + ": the results file says " + written +
               " us, but the harness measured " +
               (found == reported.end() ? std::string("no such run") : found->second + " us") +
               " when it ran it: its times were rewritten in its memory";
      }
    }
  }
  if (reported.size() != expected) {
    return "the harness reported " + std::to_string(reported.size()) +
           " timed runs, its results "
           "file holds " +
           std::to_string(expected) + ": something beside the harness wrote them";
  }
  return "";
}

} // namespace

namespace detail {

void write_log(const fs::path &file, const util::Command &command,
               const util::ProcessResult &result, double timeout_s) {
  std::string text = "$";
  for (const auto &arg : command.argv) {
    text += " " + arg;
  }
  text += "\n# " + result.describe(timeout_s) + ", " + std::to_string(result.seconds) + " s";
  if (command.cpu >= 0) {
    text += ", on CPU " + std::to_string(command.cpu);
  }
  if (!result.confined.empty()) {
    text += ", confined (" + result.confined + ")";
  }
  text += "\n--- stdout\n" + result.out + "--- stderr\n" + result.err;
  util::write_file_atomic(file, text);
}

// Why a harness run failed: how it ended, the config it died on, the last lines of its stderr.
std::string harness_failure(const util::ProcessResult &result, double timeout_s) {
  if (std::string refused = refusal(result); !refused.empty()) {
    return refused; // what the candidate's code tried, not the exit it led to
  }
  std::string reason = "harness " + result.describe(timeout_s);
  std::string config = unfinished_config(result.err);
  if (!config.empty()) {
    bool died = result.signal != 0 || result.timed_out;
    reason += (died ? ", died on config " : ", in config ") + util::excerpt(config, 200);
  }
  std::string last = tail(result.err, 3);
  if (!last.empty()) {
    reason += ": " + last;
  }
  while (!reason.empty() && reason.back() == '\n') {
    reason.pop_back();
  }
  return reason;
}

// A traced harness's failure: the tracer's refusal first when it ended the harness (a kernel
// launched outside the timed ranges still running when one ended).
std::string traced_failure(const util::ProcessResult &result, const spec::Family &family,
                           const fs::path &trace) {
  std::string failure = harness_failure(result, family.timeout_s);
  std::string why = running_kernel_refusal(trace, family.repeat);
  return why.empty() ? failure : why + "; " + failure;
}

// What times a benchmark of `family` here: on NVIDIA the CUPTI tracer when kopt has it (unless
// the setup asks for ncu), else ncu when it is on PATH; on AMD rocprofv3 when it is on PATH; else
// the harness's own events (chrono on host).
Source benchmark_profiler(const spec::Family &family, const RunSetup &setup) {
  if (family.backend == spec::Backend::host) {
    return Source::chrono;
  }
  if (family.backend == spec::Backend::cuda) {
    if (setup.profiler != "ncu" && !find_cupti_tracer().empty()) {
      return Source::cupti;
    }
    if (setup.profiler != "cupti" && !util::find_program("ncu").empty()) {
      return Source::ncu;
    }
  }
  if (family.backend == spec::Backend::hip && !util::find_program("rocprofv3").empty()) {
    return Source::rocprofv3;
  }
  return Source::events;
}

// A run's measurement before it runs: who, where, when, and the configs file's columns.
Measurement describe_run(const spec::Family &family, const spec::Layout &layout,
                         const std::string &id, HarnessMode mode, const RunSetup &setup) {
  Measurement m;
  m.family = family.name;
  m.candidate = id;
  buildinfo::BuildFlags build = buildinfo::read_build_flags(layout.gen_dir(id));
  m.build = build.hash;
  m.build_flags = build.flags;
  bool host = family.backend == spec::Backend::host;
  m.measured_by = host ? Source::chrono : Source::events;
  m.profiled = host;
  m.device = device_name(family, setup);
  m.driver = setup.driver;
  m.clocks = setup.clocks;
  m.date = util::utc_now();
  if (mode != HarnessMode::correctness) {
    m.warmup = family.warmup;
    m.repeat = family.repeat;
  }
  set_inputs(m, current_inputs(family, layout));
  m.config_columns = util::read_csv(family.configs).header;
  return m;
}

// The harness's rows as the measurement's configs, each with its class and harness time.
void add_configs(Measurement &m, std::vector<HarnessRow> rows, const spec::Family &family) {
  for (auto &row : rows) {
    ConfigResult c;
    c.config_class = spec::config_class(family.classes, m.config_columns, row.values);
    c.values = std::move(row.values);
    c.kernel = std::move(row.kernel);
    c.us = row.us;
    c.harness_us = row.us;
    if (!row.samples.empty()) {
      c.rounds = {std::move(row.samples)};
    }
    c.err_known = row.err.has_value();
    c.err = row.err.value_or(0);
    c.checked = row.checked;
    c.check = std::move(row.check);
    m.configs.push_back(std::move(c));
  }
}

// The command of one harness run of `mode`: its arguments (results into `csv`, the golden
// compared when there is one and `golden` asks; with `serve`, rounds on request and no `csv`),
// time limit, environment and CPU.
util::Command harness_command(const spec::Family &family, const spec::Layout &layout,
                              HarnessMode mode, const RunSetup &setup, const fs::path &csv,
                              GoldenCheck golden, const fs::path &harness, bool serve) {
  kopt::harness::Options args;
  args.mode = harness_mode(mode);
  args.configs = family.configs.string();
  args.out = csv.string();
  args.serve = serve;
  if (fs::exists(layout.golden()) && golden == GoldenCheck::compare) {
    args.golden = layout.golden().string();
  }
  args.warmup = family.warmup;
  args.repeat = family.repeat;
  args.one_cpu = family.backend == spec::Backend::host && setup.cpu >= 0;
  util::Command command;
  command.argv = harness_argv(harness, args);
  command.timeout_s = family.timeout_s;
  command.env = setup.env;
  command.cpu = setup.cpu;
  return command;
}

} // namespace detail

namespace {

// The harness a run executes: a copy of the one kopt built, checked against its build's hash,
// in the run's folder for the length of a scope (removed after).
struct ScopedCopy {
  fs::path path;
  std::string problem; // why the build's program is not run, "" when it is
  ScopedCopy(const spec::Layout &layout, const std::string &id, fs::path to)
      : path(std::move(to)), problem(verified_copy(layout, id, path)) {}
  ~ScopedCopy() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  ScopedCopy(const ScopedCopy &) = delete;
  ScopedCopy &operator=(const ScopedCopy &) = delete;
};

// A run's profiler, where it writes, and the harness's command line without it (ncu may run
// the harness again).
struct Profiled {
  Source profiler;
  fs::path trace_dir;   // rocprofv3's
  fs::path cupti_trace; // the CUPTI tracer's
  std::vector<std::string> plain;
};

// Puts `command` under `profiler` (ncu, rocprofv3 or the CUPTI tracer; others leave it alone),
// its trace under `dir`.
Profiled under_profiler(util::Command &command, Source profiler, const fs::path &dir) {
  Profiled run{profiler, dir / "rocprofv3", dir / "cupti_trace.csv", command.argv};
  if (profiler == Source::ncu) {
    command.argv = ncu_command(run.plain, NcuLaunches::timed);
  } else if (profiler == Source::rocprofv3) {
    fs::remove_all(run.trace_dir); // an earlier run's trace must never pass for this run's
    command.argv = rocprofv3_command(run.trace_dir, "kopt", run.plain);
  } else if (profiler == Source::cupti) {
    trace_with_cupti(command, find_cupti_tracer(), run.cupti_trace);
  }
  return run;
}

// A benchmark's times from its profiler's output (`ncu_stdout` and `log` under ncu), or on a
// GPU without one the reason the harness's own events time it.
void use_times(Measurement &m, const Profiled &run, const std::string &ncu_stdout,
               const fs::path &log, const spec::Family &family, NcuLaunches ncu_launches) {
  if (run.profiler == Source::ncu) {
    use_ncu_times(m, ncu_stdout, log.string(), family, ncu_launches);
  } else if (run.profiler == Source::rocprofv3) {
    use_rocprofv3_times(m, run.trace_dir, family);
  } else if (run.profiler == Source::cupti) {
    use_cupti_times(m, run.cupti_trace, family);
  } else if (family.backend != spec::Backend::host) {
    m.reason = std::string(family.backend == spec::Backend::hip ? "rocprofv3" : "ncu") +
               " not found: times are the harness's own events";
  }
}

// `m` failed for `reason`.
Measurement &fail_run(Measurement &m, std::string reason) {
  m.status = "failed";
  m.reason = std::move(reason);
  return m;
}

// Adds a finished run's results file (`csv`) to `m`, checked, where it was a benchmark, against
// the times the harness reported while it ran; false (and `m` failed) when they cannot be.
bool add_results(Measurement &m, const fs::path &csv, const util::ProcessResult &result,
                 const spec::Family &family, bool benchmark) {
  std::vector<HarnessRow> rows;
  try {
    rows = read_harness_results(csv, m.config_columns, family.impl);
  } catch (const Error &e) {
    fail_run(m, e.what());
    return false;
  }
  if (std::string why = benchmark ? samples_disagree(result, rows) : ""; !why.empty()) {
    fail_run(m, why);
    return false;
  }
  add_configs(m, std::move(rows), family);
  return true;
}

} // namespace

std::string host_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        return line.substr(colon + 2);
      }
    }
  }
  return "unknown CPU";
}

Conditions benchmark_conditions(const spec::Family &family, const RunSetup &setup,
                                const std::string &hash) {
  return {hash,          device_name(family, setup),
          setup.driver,  to_string(benchmark_profiler(family, setup)),
          family.warmup, family.repeat};
}

Measurement run_harness(const spec::Family &family, const spec::Layout &layout,
                        const std::string &id, HarnessMode mode, util::ProcessRunner &runner,
                        const RunSetup &setup, const fs::path &results_dir, GoldenCheck golden) {
  // A signal that came between two runs (under bench_candidate's shield) stops here, before the
  // next harness starts.
  util::throw_if_interrupted("candidate " + id + "'s harness");
  Measurement m = describe_run(family, layout, id, mode, setup);
  bool host = family.backend == spec::Backend::host;
  fs::path harness = layout.harness(id);
  fs::path dir = results_dir.empty() ? layout.results_dir(id) : results_dir;
  fs::create_directories(dir);
  fs::path csv = dir / (mode == HarnessMode::correctness ? "correctness.csv" : "results.csv");
  fs::remove(csv); // a stale file must never pass for this run's results
  if (!fs::exists(harness)) {
    return fail_run(m, "no harness binary at " + harness.string() + " (build target candidate_" +
                           id + " first)");
  }
  // Every run executes a fresh copy of the harness in its own folder, checked against the file
  // kopt built: a candidate's code may have replaced another's executable. On the host the copy
  // also changes where the binary's pages land each run: one side's runs would otherwise share
  // one placement in memory for a whole measurement (a bias of up to 1.6% between
  // byte-identical binaries on a 2-core machine), which a copy per run turns into noise.
  const ScopedCopy copy(layout, id, dir / harness.filename());
  if (!copy.problem.empty()) {
    return fail_run(m, copy.problem);
  }
  util::Command command = harness_command(family, layout, mode, setup, csv, golden, copy.path);
  bool profiling = mode != HarnessMode::correctness;
  const Profiled run =
      under_profiler(command, profiling ? benchmark_profiler(family, setup) : m.measured_by, dir);
  bool under_ncu = run.profiler == Source::ncu;
  confine_harness(command, {dir}, family, under_ncu || run.profiler == Source::rocprofv3);
  if (host) {
    util::become_subreaper();
  }
  util::ProcessResult result = runner.run(command);
  // A process the candidate's harness leaves behind could run beside the next run (BEST's) and
  // slow it down; it is killed, and the run that left it fails.
  int left = host ? util::kill_children() : 0;
  NcuLaunches ncu_launches = NcuLaunches::timed;
  if (under_ncu && result.ok() && ncu_profiled_nothing(result.out)) {
    ncu_launches = NcuLaunches::all;
    // A harness whose timer marks no profiler start (its own timer, an older build): every
    // launch is profiled, warm-ups too; the harness's flush tells the timed runs apart.
    command.argv = ncu_command(run.plain, NcuLaunches::all);
    result = runner.run(command);
  }
  fs::path log = dir / (mode == HarnessMode::correctness ? "correctness.log" : "harness.log");
  write_log(log, command, result, family.timeout_s);
  m.hash = harness_hash(result.out);
  if (left > 0) {
    return fail_run(m, "the harness left " + std::to_string(left) +
                           " process(es) running after it exited (killed): a candidate may leave "
                           "nothing running");
  }
  if (!result.ok()) {
    return fail_run(m, run.profiler == Source::cupti
                           ? traced_failure(result, family, run.cupti_trace)
                           : harness_failure(result, family.timeout_s));
  }
  if (!add_results(m, csv, result, family, profiling)) {
    return m;
  }
  if (profiling) {
    use_times(m, run, result.out, log, family, ncu_launches);
  }
  return m;
}

const ConfigResult *failed_check(const Measurement &m) {
  for (const ConfigResult &c : m.configs) {
    if (!c.check.empty()) {
      return &c;
    }
  }
  return nullptr;
}

} // namespace kopt::profile
