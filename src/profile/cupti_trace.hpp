#pragma once

// The CUPTI tracer's trace (harness/tracer/cupti_trace.cpp): kopt injects the tracer into a CUDA
// harness (CUDA_INJECTION64_PATH), and it writes, at the harness's exit, every kernel, copy and
// set that an API call inside a timed range launched, with the GPU's start and end of each. The
// harness's event timer opens one range per timed run (the profiler start and stop ncu obeys
// too), config after config in the configs file's order, `repeat` runs each: range r is run
// r % repeat of config r / repeat. Every activity in a range counts toward its run, whatever its
// name or stream; a run's time is the sum of their durations (as ncu, which serialises them,
// would add them up).
//
// The file: comment lines `# kopt cupti trace 1`, `# ranges N`, `# calls N`, `# dropped N`, any
// `# error <text>` and `# anomaly <text>` lines, then a CSV table (range, kind, start_ns, end_ns,
// stream, correlation, name) and a last line `# end`.

#include "profile/ncu.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::profile {

/// One kernel, copy or set the tracer saw launched inside a timed range.
struct TracedActivity {
  int range = 0;
  std::string kind; ///< "kernel", "memcpy" or "memset"
  std::string name; ///< the kernel's demangled name, or "memcpy DtoD" and the like
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = 0;
  int line = 0; ///< its line in the trace, for messages
};

/// A trace read back.
struct CuptiTrace {
  int ranges = 0;                     ///< timed ranges the harness opened
  int64_t calls = 0;                  ///< API calls made inside them
  int64_t dropped = 0;                ///< activity records CUPTI dropped (buffers full)
  std::vector<std::string> errors;    ///< CUPTI calls that failed in the tracer
  std::vector<std::string> anomalies; ///< profiler starts and stops out of turn
  bool complete = false;              ///< the last line was `# end`
  std::vector<TracedActivity> activities;
};

/// Parses a trace; throws kopt::Error naming `source`:line and what was expected.
CuptiTrace parse_cupti_trace(std::string_view text, const std::string &source);

/// Attributes a trace's ranges to `configs` configs of `options.runs_per_config` timed runs each
/// (see the top of this header). Returns an unprofiled report naming `source` when the trace is
/// incomplete, dropped records, had a CUPTI error or an anomaly, holds another number of ranges
/// than configs x runs, or holds a run that launched nothing.
ProfileReport attribute_cupti_trace(const CuptiTrace &trace, int configs,
                                    const ProfileOptions &options, const std::string &source);

/// Reads the trace at `path` and attributes it; no file there gives an unprofiled report that
/// says the harness left no trace.
ProfileReport read_cupti_output(const std::filesystem::path &path, int configs,
                                const ProfileOptions &options);

/// Sets `command` (a harness run) up to be traced by `tracer` into `trace`: the CUDA driver loads
/// the tracer (CUDA_INJECTION64_PATH), which writes the trace at the harness's exit. Removes an
/// earlier run's trace first: it must never pass for this run's.
void trace_with_cupti(util::Command &command, const std::filesystem::path &tracer,
                      const std::filesystem::path &trace);

/// read_cupti_output of a harness run of `configs` configs, `repeat` timed runs each, whose
/// kernels of interest match `kernel_regex`.
ProfileReport read_cupti_runs(const std::filesystem::path &trace, int configs,
                              const std::string &kernel_regex, int repeat);

/// The tracer library: $KOPT_CUPTI_TRACER when set (a file, or "" when it names none), else
/// libkopt_cupti_trace.so in lib/ beside the folder of the running kopt (its build tree and
/// its install tree alike), else "".
std::filesystem::path find_cupti_tracer();

} // namespace kopt::profile
