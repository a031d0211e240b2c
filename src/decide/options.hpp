#pragma once
// The keep test's options: its thresholds and what it may compare.

#include "spec/defaults.hpp"

#include <string>

namespace kopt::decide {

/// Whether harness time (measured_by `events`, or a failed profiler) may decide a keep.
enum class HarnessTime { refuse, allow };

/// Whether measurements of different timers (ncu and the CUPTI tracer, say) may be compared.
enum class MixedTimers { refuse, allow };

/// Whether measurements of different builds (instances compiled with other flags: -O0 against
/// -O3, say) may be compared.
enum class MixedBuilds { refuse, allow };

/// What the verdict is judged on: each class's geomean with configs weighing equally, or by the
/// configs file's `count` column (call counts from `kopt capture merge`); or the traffic rows,
/// each class's kernel time under the application's calls (count x time).
enum class Weighting { equal, count, traffic };

/// Returns "equal", "count" or "traffic".
const char *to_string(Weighting weighting);

/// Parses a weighting name; throws kopt::Error naming `where` for anything else.
Weighting parse_weighting(const std::string &text, const std::string &where);

/// The keep test's thresholds; the defaults are the workflow's.
struct Options {
  /// The keep threshold (family.json's keep.threshold, `kopt decide --noise`, decision.json's
  /// "noise"): a class's interval beyond it counts at once.
  double threshold = spec::defaults::keep_threshold;
  double confidence = spec::defaults::keep_confidence; ///< each class's interval's confidence
  /// A non-target class may get this much worse and still keep.
  double max_regression = spec::defaults::keep_max_regression;
  HarnessTime harness_time = HarnessTime::refuse;
  MixedTimers mixed_timers = MixedTimers::refuse;
  MixedBuilds mixed_builds = MixedBuilds::refuse;
  Weighting weighting = Weighting::equal;
};

} // namespace kopt::decide
