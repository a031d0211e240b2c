#include "profile/bench_detail.hpp"

#include "profile/cupti_trace.hpp"
#include "profile/rocprofv3.hpp"
#include "util/error.hpp"

namespace kopt::profile::detail {

namespace fs = std::filesystem;

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

} // namespace kopt::profile::detail
