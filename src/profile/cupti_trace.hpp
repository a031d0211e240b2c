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
// Work launched outside every range must not run during one (a kernel an untimed call started,
// doing the timed runs' work while they launch nothing worth timing): the trace holds each
// range's span on the GPU's clock and every kernel, copy and set launched outside the ranges
// that ran during a span, and one that did makes the trace refused, naming it. The harness's own
// work queued before a range on its stream (the L2 flush, the poison, the fills) may still be
// running when the range opens: it ends before the range's first activity on that stream, the
// stream of the timer's first event record in the range, begins, and is not the range's.
//
// The file (version 2): comment lines `# kopt cupti trace 2`, `# ranges N`, `# calls N`,
// `# dropped N`, any `# error <text>`, `# anomaly <text>` and `# running <range> <kernel>` lines
// (a kernel launched outside the ranges, still running when that range ended: the tracer then
// ended the process), then a CSV table (range, kind, start_ns, end_ns, stream, correlation, name)
// and a last line `# end`. Each range has one row of kind `range`: its span, and the timer's
// stream (empty when it recorded no event); an activity launched outside every range has range
// `-`.

#include "profile/ncu.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::profile {

/// One kernel, copy or set the tracer saw launched inside a timed range, or launched outside
/// every range and run during one.
struct TracedActivity {
  int range = 0;    ///< -1: launched outside every range
  std::string kind; ///< "kernel", "memcpy" or "memset"
  std::string name; ///< the kernel's demangled name, or "memcpy DtoD" and the like
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t stream = 0;
  int line = 0; ///< its line in the trace, for messages
};

/// A timed range's span on the GPU's clock (CUPTI's timestamps at its profiler start and stop).
struct RangeSpan {
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
  int64_t stream = -1; ///< the stream of the timer's first event record in it; -1: none
  int line = 0;        ///< its row in the trace; 0: the trace has none
};

/// A kernel launched outside the ranges that was still running when timed range `range` ended.
struct RunningKernel {
  int range = 0;
  std::string name;
};

/// A trace read back.
struct CuptiTrace {
  int version = 0;                    ///< N of `# kopt cupti trace N`
  int ranges = 0;                     ///< timed ranges the harness opened
  int64_t calls = 0;                  ///< API calls made inside them
  int64_t dropped = 0;                ///< activity records CUPTI dropped (buffers full)
  std::vector<std::string> errors;    ///< CUPTI calls that failed in the tracer
  std::vector<std::string> anomalies; ///< profiler starts and stops out of turn
  bool complete = false;              ///< the last line was `# end`
  std::vector<RunningKernel> running; ///< `# running` lines
  std::vector<RangeSpan> spans;       ///< one per range, from its `range` row
  std::vector<TracedActivity> activities;
};

/// Parses a trace; throws kopt::Error naming `source`:line and what was expected.
CuptiTrace parse_cupti_trace(std::string_view text, const std::string &source);

/// Attributes a trace's ranges to `configs` configs of `options.runs_per_config` timed runs each
/// (see the top of this header). Returns an unprofiled report naming `source` when the trace is
/// incomplete, names a kernel still running at a range's end, had a CUPTI error or an anomaly,
/// is of a version before 2 (no spans), dropped records, holds another number of ranges than
/// configs x runs, a range without its span, work launched outside the ranges that ran during
/// one, or a run that launched nothing.
ProfileReport attribute_cupti_trace(const CuptiTrace &trace, int configs,
                                    const ProfileOptions &options, const std::string &source);

/// Reads the trace at `path` and attributes it; no file there gives an unprofiled report that
/// says the harness left no trace.
ProfileReport read_cupti_output(const std::filesystem::path &path, int configs,
                                const ProfileOptions &options);

/// Why the trace at `path`, of a harness that failed, ends the measurement: the kernel it names
/// as still running when a range ended (the tracer then ended the harness), as
/// attribute_cupti_trace says it, with `repeat` timed runs per config; "" when there is no such
/// trace or line.
std::string running_kernel_refusal(const std::filesystem::path &path, int repeat);

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
