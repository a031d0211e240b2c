#include "profile/bench.hpp"

#include "buildinfo/build_flags.hpp"
#include "profile/cupti_trace.hpp"
#include "profile/freshness.hpp"
#include "profile/harness_csv.hpp"
#include "profile/ncu.hpp"
#include "profile/rocprofv3.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/hash.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <ostream>
#include <random>

namespace kopt::profile {

namespace fs = std::filesystem;

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
  text += "\n--- stdout\n" + result.out + "--- stderr\n" + result.err;
  util::write_file_atomic(file, text);
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

// Replaces the harness's times by the profiler's per-config time (every counted launch of a
// timed run summed into its sample); when the profiler attributed nothing to some config the
// measurement stays unprofiled, with the harness's times and the reason.
void use_profiler_times(Measurement &m, const ProfileReport &report, Source tool,
                        const std::string &kernel_regex) {
  if (!report.profiled) {
    m.reason = "unprofiled: " + report.reason;
    return;
  }
  for (size_t i = 0; i < m.configs.size(); ++i) {
    if (!report.find(static_cast<int>(i))) {
      m.reason = std::string("unprofiled: ") + to_string(tool) + " saw no kernel matching '" +
                 kernel_regex + "' in config_" + std::to_string(i);
      return;
    }
  }
  for (size_t i = 0; i < m.configs.size(); ++i) {
    const ProfiledConfig &profiled = *report.find(static_cast<int>(i));
    ConfigResult &c = m.configs[i];
    c.us = profiled.mean_us();
    std::vector<double> samples;
    for (double ns : profiled.run_ns) {
      samples.push_back(ns / 1000.0);
    }
    c.rounds = {samples};
    c.outside_regex.clear();
    for (const KernelTime &k : profiled.outside_regex()) {
      c.outside_regex.push_back({k.kernel, profiled.total_ns > 0 ? k.ns / profiled.total_ns : 0});
    }
  }
  m.measured_by = tool;
  m.profiled = true;
}

// ncu profiles the timed runs only (the harness marks them with profiler start and stop), or
// with NcuLaunches::all warm-ups too, told apart by the harness's flush.
void use_ncu_times(Measurement &m, const std::string &ncu_stdout, const std::string &source,
                   const spec::Family &family, NcuLaunches launches) {
  ProfileOptions options;
  options.kernel_regex = family.kernel_regex;
  options.runs_per_config = family.repeat;
  options.flush = launches == NcuLaunches::all ? HarnessFlush::inside : HarnessFlush::outside;
  try {
    use_profiler_times(m, parse_ncu_output(ncu_stdout, source, options), Source::ncu,
                       family.kernel_regex);
  } catch (const Error &e) {
    m.reason = std::string("ncu output unreadable, times are the harness's events: ") + e.what();
  }
}

// rocprofv3's kernel trace under `trace_dir`: by the harness's roctx ranges when it recorded
// them, else in launch order (one matching dispatch per run); the harness's flush marks each
// timed run, so warm-ups are left out.
void use_rocprofv3_times(Measurement &m, const fs::path &trace_dir, const spec::Family &family) {
  ProfileOptions options;
  options.kernel_regex = family.kernel_regex;
  options.launches_per_config = family.warmup + family.repeat;
  options.runs_per_config = family.repeat;
  options.flush = HarnessFlush::inside;
  try {
    use_profiler_times(m, read_rocprofv3_output(trace_dir, options), Source::rocprofv3,
                       family.kernel_regex);
  } catch (const Error &e) {
    m.reason =
        std::string("rocprofv3 output unreadable, times are the harness's events: ") + e.what();
  }
}

// The CUPTI tracer's trace at `trace`: range r is timed run r % repeat of config r / repeat.
void use_cupti_times(Measurement &m, const fs::path &trace, const spec::Family &family) {
  try {
    use_profiler_times(m,
                       read_cupti_runs(trace, static_cast<int>(m.configs.size()),
                                       family.kernel_regex, family.repeat),
                       Source::cupti, family.kernel_regex);
  } catch (const Error &e) {
    m.reason = std::string("CUPTI trace unreadable, times are the harness's events: ") + e.what();
  }
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

namespace {

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

// The device a run of `family` uses, as measurements name it.
std::string device_name(const spec::Family &family, const RunSetup &setup) {
  if (family.backend == spec::Backend::host) {
    return host_cpu_model();
  }
  return setup.device.empty() ? "GPU" : setup.device;
}

} // namespace

Conditions benchmark_conditions(const spec::Family &family, const RunSetup &setup,
                                const std::string &hash) {
  return {hash,          device_name(family, setup),
          setup.driver,  to_string(benchmark_profiler(family, setup)),
          family.warmup, family.repeat};
}

namespace {

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

// Why a harness run failed: how it ended, the config it died on, the last lines of its stderr.
std::string harness_failure(const util::ProcessResult &result, double timeout_s) {
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
                              GoldenCheck golden, const fs::path &harness, bool serve = false) {
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

} // namespace

namespace {

// A copy of a file for the length of a scope (fs::copy_file, then removed).
struct ScopedCopy {
  fs::path path;
  ScopedCopy(const fs::path &from, fs::path to) : path(std::move(to)) {
    fs::copy_file(from, path, fs::copy_options::overwrite_existing);
  }
  ~ScopedCopy() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  ScopedCopy(const ScopedCopy &) = delete;
  ScopedCopy &operator=(const ScopedCopy &) = delete;
};

} // namespace

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
    m.status = "failed";
    m.reason =
        "no harness binary at " + harness.string() + " (build target candidate_" + id + " first)";
    return m;
  }

  // A host benchmark run executes a fresh copy of the harness in its round's folder: the pages
  // a binary's file holds stay where they first landed, so one side's runs would share one
  // placement in memory for a whole measurement (a bias of up to 1.6% between byte-identical
  // binaries on a 2-core machine); a copy per run turns it into noise the interval carries.
  std::optional<ScopedCopy> copy;
  if (host && mode != HarnessMode::correctness && !results_dir.empty()) {
    copy.emplace(harness, dir / harness.filename());
    harness = copy->path;
  }
  util::Command command = harness_command(family, layout, mode, setup, csv, golden, harness);
  bool profiling = mode != HarnessMode::correctness;
  Source profiler = profiling ? benchmark_profiler(family, setup) : m.measured_by;
  bool under_ncu = profiler == Source::ncu;
  bool under_rocprofv3 = profiler == Source::rocprofv3;
  bool under_cupti = profiler == Source::cupti;
  fs::path trace_dir = dir / "rocprofv3";
  fs::path cupti_trace = dir / "cupti_trace.csv";
  const std::vector<std::string> plain = command.argv; // the harness alone, unprofiled
  if (under_ncu) {
    command.argv = ncu_command(plain, NcuLaunches::timed);
  } else if (under_rocprofv3) {
    fs::remove_all(trace_dir); // an earlier run's trace must never pass for this run's
    command.argv = rocprofv3_command(trace_dir, "kopt", plain);
  } else if (under_cupti) {
    trace_with_cupti(command, find_cupti_tracer(), cupti_trace);
  }
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
    command.argv = ncu_command(plain, NcuLaunches::all);
    result = runner.run(command);
  }
  fs::path log = dir / (mode == HarnessMode::correctness ? "correctness.log" : "harness.log");
  write_log(log, command, result, family.timeout_s);
  m.hash = harness_hash(result.out);
  if (left > 0) {
    m.status = "failed";
    m.reason = "the harness left " + std::to_string(left) +
               " process(es) running after it exited (killed): a candidate may leave nothing "
               "running";
    return m;
  }

  if (!result.ok()) {
    m.status = "failed";
    m.reason = under_cupti ? traced_failure(result, family, cupti_trace)
                           : harness_failure(result, family.timeout_s);
    return m;
  }
  std::vector<HarnessRow> rows;
  try {
    rows = read_harness_results(csv, m.config_columns, family.impl);
  } catch (const Error &e) {
    m.status = "failed";
    m.reason = e.what();
    return m;
  }
  add_configs(m, std::move(rows), family);
  if (under_ncu) {
    use_ncu_times(m, result.out, log.string(), family, ncu_launches);
  } else if (under_rocprofv3) {
    use_rocprofv3_times(m, trace_dir, family);
  } else if (under_cupti) {
    use_cupti_times(m, cupti_trace, family);
  } else if (!host && profiling) {
    m.reason = std::string(family.backend == spec::Backend::hip ? "rocprofv3" : "ncu") +
               " not found: times are the harness's own events";
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

namespace {

// Config `i`'s kernels outside kernel_regex over all runs: each one's mean share of the time
// (0 in a run where it did not run), in first-seen order.
std::vector<OutsideKernel> merged_outside_regex(const std::vector<Measurement> &runs, size_t i) {
  std::vector<OutsideKernel> merged;
  for (const Measurement &run : runs) {
    for (const OutsideKernel &k : run.configs[i].outside_regex) {
      auto it = std::find_if(merged.begin(), merged.end(),
                             [&](const OutsideKernel &o) { return o.kernel == k.kernel; });
      if (it == merged.end()) {
        it = merged.insert(merged.end(), {k.kernel, 0});
      }
      it->share += k.share / static_cast<double>(runs.size());
    }
  }
  return merged;
}

} // namespace

Measurement merge_rounds(const std::vector<Measurement> &runs, size_t planned) {
  if (runs.empty()) {
    throw Error("merge_rounds: no runs");
  }
  Measurement m = runs.front();
  bool noted = false; // the first round whose profiler failed names the measurement's reason
  for (size_t k = 0; k < runs.size(); ++k) {
    const Measurement &run = runs[k];
    std::string round =
        "round " + std::to_string(k + 1) + " of " + std::to_string(std::max(planned, runs.size()));
    if (!run.ok()) {
      m.status = "failed";
      m.reason = round + ": " + run.reason;
      m.configs.clear();
      return m;
    }
    if (run.hash != m.hash || run.configs.size() != m.configs.size()) {
      m.status = "failed";
      m.reason = round + ": the harness printed hash " + run.hash + " after " + m.hash +
                 " (the binary changed during the measurement)";
      m.configs.clear();
      return m;
    }
    if (!noted && (!run.profiled || run.measured_by != m.measured_by)) {
      noted = true;
      m.measured_by = run.measured_by;
      m.profiled = run.profiled;
      m.reason = round + ": " + run.reason;
    }
  }
  for (size_t i = 0; i < m.configs.size(); ++i) {
    ConfigResult &c = m.configs[i];
    c.rounds.clear();
    c.err_known = false;
    c.err = 0;
    c.checked = 0;
    c.check.clear();
    std::vector<double> medians;
    std::vector<double> harness;
    for (size_t k = 0; k < runs.size(); ++k) {
      const ConfigResult &r = runs[k].configs[i];
      // Unrecorded in any round leaves the whole unrecorded; a failed check names its round.
      c.checked = c.checked < 0 || r.checked < 0 ? -1 : c.checked + r.checked;
      if (c.check.empty() && !r.check.empty()) {
        c.check = "round " + std::to_string(k + 1) + ": " + r.check;
      }
      c.rounds.push_back(r.rounds.empty() ? std::vector<double>{r.us} : r.rounds.front());
      medians.push_back(util::median(c.rounds.back()));
      harness.push_back(r.harness_us);
      if (r.err_known) {
        c.err = c.err_known ? std::max(c.err, r.err) : r.err;
        c.err_known = true;
      }
    }
    c.us = util::median(medians);
    c.harness_us = util::median(harness);
    c.outside_regex = merged_outside_regex(runs, i);
  }
  return m;
}

namespace {

// A random token of 16 hex digits, from the OS's entropy.
std::string fresh_token() {
  std::random_device entropy;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", entropy(), entropy());
  return text;
}

// The rounds of one side of a side-by-side measurement, served by one harness process
// (`--serve`): it starts before its first round, runs each round when asked (so the sides still
// take turns round by round), and exits after the last, when the CUPTI tracer writes the trace
// that times every round. Its start-up (context, tracer, module loads) is paid once instead of
// once per round. Its log goes to rounds/<best|candidate>-<id>.log, its trace beside it.
class ServedSide {
public:
  ServedSide(const spec::Family &family, const spec::Layout &layout, std::string id,
             std::string side, util::ProcessRunner &runner, const RunSetup &setup,
             const fs::path &dir)
      : family_(family), layout_(layout), id_(std::move(id)), runner_(runner), setup_(setup),
        log_(dir / (side + "-" + id_ + ".log")),
        trace_(dir / (side + "-" + id_ + ".cupti_trace.csv")) {}

  // Runs the next round into `run_dir`; returns its measurement, timed by the harness until
  // finish() reads the trace, or failed (and then the process has ended).
  Measurement round(const fs::path &run_dir) {
    util::throw_if_interrupted("candidate " + id_ + "'s harness");
    Measurement m = describe_run(family_, layout_, id_, HarnessMode::benchmark, setup_);
    fs::create_directories(run_dir);
    fs::path csv = run_dir / "results.csv";
    fs::remove(csv); // a stale file must never pass for this round's results
    if (ended_) {
      return failed(m, reason_);
    }
    if (!talk_) {
      fs::path harness = layout_.harness(id_);
      if (!fs::exists(harness)) {
        return failed(m, "no harness binary at " + harness.string() + " (build target candidate_" +
                             id_ + " first)");
      }
      // Each round's results file comes on stdin; the golden is compared in the first round.
      command_ = harness_command(family_, layout_, HarnessMode::benchmark, setup_, {},
                                 GoldenCheck::compare, harness, true);
      trace_with_cupti(command_, find_cupti_tracer(), trace_);
      talk_ = runner_.start(command_);
    }
    std::string token = fresh_token();
    if (!talk_->ask("run " + token + " " + csv.string(), "kopt-run-done " + token,
                    family_.timeout_s)) {
      end();
      return failed(m, reason_.empty() ? "the harness ended without finishing the round" : reason_);
    }
    try {
      add_configs(m, read_harness_results(csv, m.config_columns, family_.impl), family_);
    } catch (const Error &e) {
      return failed(m, e.what());
    }
    return m;
  }

  // Closes the process's stdin, so that it begins to exit (and write its trace).
  void close() {
    if (talk_ && !ended_) {
      talk_->close_input();
    }
  }

  // Ends the process (if it runs) and times each of `rounds` (round()'s measurements, in order)
  // by its share of the trace: round j holds the trace's ranges of configs j x C to
  // (j + 1) x C - 1, C configs of repeat timed runs each.
  void finish(std::vector<Measurement> &rounds) {
    end();
    for (Measurement &m : rounds) {
      m.hash = hash_;
    }
    if (rounds.empty()) {
      return;
    }
    if (!reason_.empty()) {
      // A harness that failed after its last round's results left no trace to time any round.
      if (rounds.back().ok()) {
        failed(rounds.back(), reason_ + " (after its last round)");
      }
      return;
    }
    const int configs = static_cast<int>(rounds.front().configs.size());
    try {
      ProfileReport all = read_cupti_runs(trace_, configs * static_cast<int>(rounds.size()),
                                          family_.kernel_regex, family_.repeat);
      for (size_t j = 0; j < rounds.size(); ++j) {
        ProfileReport share{all.profiled, all.reason, {}, all.available_kernels};
        for (const ProfiledConfig &c : all.configs) {
          if (c.config / configs == static_cast<int>(j)) {
            share.configs.push_back(c);
            share.configs.back().config -= static_cast<int>(j) * configs;
          }
        }
        use_profiler_times(rounds[j], share, Source::cupti, family_.kernel_regex);
      }
    } catch (const Error &e) {
      for (Measurement &m : rounds) {
        m.reason =
            std::string("CUPTI trace unreadable, times are the harness's events: ") + e.what();
      }
    }
  }

private:
  static Measurement failed(Measurement &m, const std::string &reason) {
    m.status = "failed";
    m.reason = reason;
    m.configs.clear();
    return m;
  }

  // Closes the harness's stdin and waits for it to exit; keeps its hash, its log and, when it
  // failed, why.
  void end() {
    if (ended_ || !talk_) {
      ended_ = true;
      return;
    }
    ended_ = true;
    util::ProcessResult result = talk_->finish(family_.timeout_s);
    write_log(log_, command_, result, family_.timeout_s);
    hash_ = harness_hash(result.out);
    if (!result.ok()) {
      reason_ = traced_failure(result, family_, trace_);
    }
  }

  const spec::Family &family_;
  const spec::Layout &layout_;
  std::string id_;
  util::ProcessRunner &runner_;
  const RunSetup &setup_;
  fs::path log_;
  fs::path trace_;
  util::Command command_;
  std::unique_ptr<util::Conversation> talk_;
  bool ended_ = false;
  std::string hash_;
  std::string reason_; // why the process failed, once it ended
};

} // namespace

const char *to_string(Arrangement arrangement) {
  return arrangement == Arrangement::best_first ? "best-first" : "candidate-first";
}

Arrangement next_arrangement(const spec::Layout &layout, const std::string &id) {
  try {
    if (std::filesystem::exists(layout.measurement(id)) &&
        read_measurement(layout.measurement(id)).arrangement == "best-first") {
      return Arrangement::candidate_first;
    }
  } catch (const Error &) {
    // An unreadable last measurement is replaced like any other; it names no arrangement.
  }
  return Arrangement::best_first;
}

namespace {

// KOPT_TEST_FIRST_SIDE_SLOWER: a side effect of known size for kopt's tests, every time of
// `runs` (the side that went first in round 1) made the fraction longer.
void slow_for_tests(std::vector<Measurement> &runs) {
  const char *text = std::getenv("KOPT_TEST_FIRST_SIDE_SLOWER");
  double factor = 1 + (text ? std::atof(text) : 0);
  if (factor == 1) {
    return;
  }
  for (Measurement &run : runs) {
    for (ConfigResult &c : run.configs) {
      c.us *= factor;
      c.harness_us *= factor;
      for (std::vector<double> &samples : c.rounds) {
        for (double &us : samples) {
          us *= factor;
        }
      }
    }
  }
}

} // namespace

SideBySide run_side_by_side(const spec::Family &family, const spec::Layout &layout,
                            const std::string &best_id, const std::string &id, int rounds,
                            util::ProcessRunner &runner, const RunSetup &setup,
                            util::Progress &progress, Arrangement arrangement) {
  fs::path dir = layout.results_dir(id) / "rounds";
  fs::remove_all(dir); // an earlier run's rounds must never pass for this run's
  std::vector<Measurement> best_runs;
  std::vector<Measurement> candidate_runs;
  // Under the CUPTI tracer each side's rounds are served by one harness process. Both sides
  // compare their first round's output with the golden: the same work outside the timed runs.
  std::optional<ServedSide> best_side, candidate_side;
  if (benchmark_profiler(family, setup) == Source::cupti) {
    best_side.emplace(family, layout, best_id, "best", runner, setup, dir);
    candidate_side.emplace(family, layout, id, "candidate", runner, setup, dir);
  }
  const bool best_starts = arrangement == Arrangement::best_first;
  bool stop = false;
  for (int k = 0; k < rounds && !stop; ++k) {
    bool last = false; // the candidate's checked run was wrong: this round is the last
    // The side that starts first in even rounds, the other first in odd ones.
    for (int turn = 0; turn < 2 && !stop; ++turn) {
      bool best_turn = ((turn == 0) == (k % 2 == 0)) == best_starts;
      const std::string &who = best_turn ? best_id : id;
      fs::path run_dir =
          dir / (std::to_string(k + 1) + "-" + (best_turn ? "best-" : "candidate-") + who);
      bool check = (best_turn ? best_runs : candidate_runs).empty();
      std::string what = "round " + std::to_string(k + 1) + "/" + std::to_string(rounds) + ": " +
                         (best_turn ? "BEST " : "candidate ") + who;
      progress.starting(what);
      std::optional<ServedSide> &served = best_turn ? best_side : candidate_side;
      Measurement run =
          served ? served->round(run_dir)
                 : run_harness(family, layout, who, HarnessMode::benchmark, runner, setup, run_dir,
                               check ? GoldenCheck::compare : GoldenCheck::skip);
      if (!run.ok()) {
        progress.note(what + " failed: " + run.reason);
      }
      progress.advance(1, what);
      // A failed side ends the measurement: its rounds would not pair. So does, after this
      // round, a candidate whose checked run was wrong: it is incorrect whatever the other rounds
      // say (BEST still runs its turn of the round, so that the two sides pair in either
      // arrangement).
      stop = !run.ok();
      if (!stop && !best_turn && failed_check(run)) {
        last = true;
        progress.note(what + ": " + failed_check(run)->check + ": no more rounds");
      }
      (best_turn ? best_runs : candidate_runs).push_back(std::move(run));
    }
    stop = stop || last;
  }
  if (best_side) {
    best_side->close(); // both exit at once
    candidate_side->close();
    best_side->finish(best_runs);
    candidate_side->finish(candidate_runs);
  }
  slow_for_tests(best_starts ? best_runs : candidate_runs);
  auto merged = [&](const std::vector<Measurement> &runs, const std::string &who) {
    if (!runs.empty()) {
      return merge_rounds(runs, static_cast<size_t>(rounds));
    }
    Measurement m;
    m.family = family.name;
    m.candidate = who;
    m.status = "failed";
    m.reason = "not measured: the side-by-side run stopped when the other side failed";
    return m;
  };
  SideBySide result{merged(best_runs, best_id), merged(candidate_runs, id)};
  result.candidate.paired_best = result.best.candidate;
  result.candidate.paired_best_hash = result.best.hash;
  result.candidate.arrangement = to_string(arrangement);
  result.best.arrangement = result.candidate.arrangement;
  return result;
}

std::string golden_stale_reason(const spec::Family &family, const spec::Layout &layout,
                                const std::string &baseline_hash) {
  if (!fs::exists(layout.golden()) || !fs::exists(layout.golden_info())) {
    return "no golden yet";
  }
  nlohmann::json info = util::read_json(layout.golden_info());
  std::string configs = family.configs.filename().string();
  // Keyed by content, not by path: an edited configs file at the same path is other configs.
  if (info.value("configs_hash", "") != util::hash_file(family.configs)) {
    return configs + " changed";
  }
  if (info.value("baseline_hash", "") != baseline_hash) {
    return "the baseline's content hash changed";
  }
  return "";
}

bool golden_is_current(const spec::Family &family, const spec::Layout &layout,
                       const std::string &baseline_hash) {
  return golden_stale_reason(family, layout, baseline_hash).empty();
}

std::string ensure_golden(const spec::Family &family, const spec::Layout &layout,
                          const std::string &baseline_id, const std::string &baseline_hash,
                          util::ProcessRunner &runner, const RunSetup &setup) {
  util::FileLock lock(layout.lock("golden")); // the first of several benches makes it
  std::string stale = golden_stale_reason(family, layout, baseline_hash);
  if (stale.empty()) {
    return "golden up to date (from candidate " + baseline_id + ")";
  }
  fs::path harness = layout.harness(baseline_id);
  if (!fs::exists(harness)) {
    throw Error("cannot make the golden: no harness binary at " + harness.string() +
                " (build target candidate_" + baseline_id + " first)");
  }
  // Hashed before the run: a configs file edited while the harness runs is caught next time.
  std::string configs_hash = util::hash_file(family.configs);
  fs::create_directories(layout.golden().parent_path());
  fs::path fresh = layout.golden().string() + ".new";
  kopt::harness::Options args;
  args.mode = kopt::harness::Mode::write_golden;
  args.configs = family.configs.string();
  args.write_golden = fresh.string();
  util::Command command;
  command.argv = harness_argv(harness, args);
  command.timeout_s = family.timeout_s;
  command.env = setup.env;
  command.cpu = setup.cpu;
  util::ProcessResult result = runner.run(command);
  write_log(layout.golden().parent_path() / "golden.log", command, result, family.timeout_s);
  if (!result.ok() || !fs::exists(fresh)) {
    // The harness's own last lines (its error) and the config it stopped in, as a failed
    // measurement names them.
    std::string why = result.ok() ? "harness wrote no golden at " + fresh.string()
                                  : harness_failure(result, family.timeout_s);
    throw Error("cannot make the golden: baseline " + baseline_id + "'s " + why +
                " (log: " + (layout.golden().parent_path() / "golden.log").string() + ")");
  }
  std::string printed = harness_hash(result.out);
  if (printed != baseline_hash) {
    throw Error("cannot make the golden: baseline " + baseline_id + "'s harness printed hash '" +
                printed + "', expected " + baseline_hash + " (stale binary?)");
  }
  fs::rename(fresh, layout.golden());
  util::write_json_atomic(layout.golden_info(), {{"baseline", baseline_id},
                                                 {"baseline_hash", baseline_hash},
                                                 {"configs", family.configs.string()},
                                                 {"configs_hash", configs_hash},
                                                 {"date", util::utc_now()}});
  if (stale == "no golden yet") {
    return "golden written from candidate " + baseline_id;
  }
  return "golden remade: " + stale + " (from candidate " + baseline_id + ")";
}

namespace {

// Temp files of a killed writer of candidate `id`'s results (`measurement.json.tmp.XXXXXX` and
// the like): the caller holds the folder's lock, so no live writer owns them.
void remove_temp_files(const spec::Layout &layout, const std::string &id) {
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(layout.results_dir(id), ec)) {
    std::string name = entry.path().filename().string();
    for (const auto &file : {layout.measurement(id), layout.paired_best(id), layout.decision(id),
                             layout.results_csv(id)}) {
      std::string prefix = file.filename().string() + ".tmp.";
      if (name.size() > prefix.size() && name.rfind(prefix, 0) == 0) {
        std::filesystem::remove(entry.path(), ec);
      }
    }
  }
}

} // namespace

BenchRun bench_candidate(const spec::Family &family, const spec::Layout &layout,
                         const std::string &id, const std::string &best_id, int rounds,
                         util::ProcessRunner &runner, const RunSetup &setup,
                         util::Progress &progress) {
  BenchRun run;
  const Arrangement arrangement = next_arrangement(layout, id);
  // An earlier measurement is of other code, or beside another BEST: an interrupted or
  // failed run must not leave it to be decided on.
  std::filesystem::remove(layout.paired_best(id));
  std::filesystem::remove(layout.measurement(id));
  remove_temp_files(layout, id);
  try {
    // Shielded from the first run to the last: a signal between two harness runs becomes an
    // Interrupted named for this step, like one during a run, instead of an exit with no step
    // named (kopt's handler exits at once while nothing is shielded).
    util::InterruptShield shield;
    if (id == best_id) {
      progress.begin("candidate " + id + " (BEST) alone: one run", 1);
      progress.starting("candidate " + id);
      run.candidate = run_harness(family, layout, id, HarnessMode::benchmark, runner, setup);
      progress.advance(1, "candidate " + id);
    } else {
      progress.begin("candidate " + id + " side by side with BEST " + best_id + ": " +
                         std::to_string(rounds) + " rounds, " + to_string(arrangement),
                     2 * static_cast<size_t>(rounds));
      SideBySide side = run_side_by_side(family, layout, best_id, id, rounds, runner, setup,
                                         progress, arrangement);
      run.candidate = std::move(side.candidate);
      run.best = std::move(side.best);
    }
    progress.end();
    util::throw_if_interrupted("the last run"); // one that came after it: nothing is written
    if (run.best) {
      write_measurement(layout.paired_best(id), *run.best);
    }
  } catch (const util::Interrupted &e) {
    throw util::Interrupted(e.signal(), "bench of candidate " + id + ": no measurement written (" +
                                            e.what() + ")");
  }
  write_measurement(layout.measurement(id), run.candidate);
  return run;
}

std::string why_measure_again(const spec::Family &family, const spec::Layout &layout,
                              const std::string &id, const std::string &hash,
                              const std::string &best_id, const std::string &best_hash,
                              const RunSetup &setup) {
  namespace fs = std::filesystem;
  fs::path file = layout.measurement(id);
  if (!fs::exists(file)) {
    return "no measurement yet";
  }
  for (const std::string &who : {id, best_id}) {
    fs::path harness = layout.harness(who);
    if (!fs::exists(harness) || fs::last_write_time(file) < fs::last_write_time(harness)) {
      return "candidate_" + who + " was built after the measurement";
    }
  }
  Measurement m = read_measurement(file);
  if (!m.ok()) {
    return "the measurement failed";
  }
  if (id != best_id && (m.paired_best != best_id || m.paired_best_hash != best_hash)) {
    return "measured beside BEST " + m.paired_best + ", BEST is now " + best_id;
  }
  if (m.configs_hash.empty()) {
    return "no record of the configs it measured (written by an older kopt)";
  }
  std::string changed = changed_since(m, family, layout);
  if (!changed.empty()) {
    return changed;
  }
  return stale_reason(conditions_of(m), benchmark_conditions(family, setup, hash));
}

std::map<std::string, std::pair<int, double>> class_geomeans(const Measurement &m) {
  std::map<std::string, std::pair<int, double>> sums;
  size_t rounds = m.sampled_rounds();
  for (const auto &c : m.configs) {
    auto &[n, log_sum] = sums[c.config_class];
    ++n;
    log_sum += std::log(std::max(config_time_us(c, rounds), 1e-9));
  }
  for (auto &[name, entry] : sums) {
    entry.second = std::exp(entry.second / entry.first);
  }
  return sums;
}

} // namespace kopt::profile
