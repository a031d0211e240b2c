#pragma once

// Nsight Compute backend. Launches map to configs by NVTX range: the harness pushes one range
// per config, in the default domain, named `config_<index> <col>=<val> ...` (index: the 0-based
// row of the configs file), around that config's timed launches only (warm-up outside it), and
// synchronises the device before popping it. Launches outside every `config_<index>` range are
// not counted. Without NVTX columns, launches map to configs in order (see ProfileOptions).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::profile {

/// What attribution needs besides the profiler's output: which kernels count, and (when the
/// output carries no NVTX / roctx ranges) how many timed launches each config makes in order.
struct ProfileOptions {
  std::string kernel_regex = ".*"; ///< ECMAScript regex searched in the kernel name
  int launches_per_config = 0;     ///< 0: without ranges every launch belongs to config 0
};

/// One config's profiled kernel time: the mean over its matching launches.
struct ProfiledConfig {
  int config = 0;                   ///< the index from `config_<index>` or from launch order
  std::string range;                ///< the range name, e.g. "config_0 M=65536"; "" by order
  int launches = 0;                 ///< matching launches attributed to this config
  double total_ns = 0;              ///< their summed GPU time
  std::vector<double> launch_ns;    ///< each matching launch's GPU time, in launch order
  std::vector<std::string> kernels; ///< distinct kernel names, in first-seen order

  /// Returns the mean GPU time per launch in nanoseconds (0 without launches).
  double mean_ns() const { return launches ? total_ns / launches : 0; }

  /// Returns the mean GPU time per launch in microseconds.
  double mean_us() const { return mean_ns() / 1000.0; }
};

/// A profiler run read back: per-config times, or why there are none (then the measurement
/// is "unprofiled" and keeps the harness's own timings).
struct ProfileReport {
  bool profiled = true;
  std::string reason;                         ///< why profiled is false, one sentence
  std::vector<ProfiledConfig> configs;        ///< sorted by config index
  std::vector<std::string> available_kernels; ///< what ncu listed when nothing matched

  /// Returns the config with index `config`, or nullptr when it has no launches.
  const ProfiledConfig *find(int config) const;
};

/// Which launches ncu profiles: only those between the harness's profiler start and stop (its
/// timed runs; warm-ups run at full speed, unprofiled), or every matching launch.
enum class NcuLaunches { timed, all };

/// Returns the ncu argv that profiles `harness` (its argv) for kernels matching `kernel_regex`.
std::vector<std::string> ncu_command(const std::string &kernel_regex,
                                     const std::vector<std::string> &harness,
                                     NcuLaunches launches = NcuLaunches::timed);

/// Returns whether ncu's stdout says it profiled no kernel at all.
bool ncu_profiled_nothing(std::string_view ncu_stdout);

/// Parses ncu's stdout (`--csv --print-units base`, details or raw page, with or without
/// --nvtx): skips the program's and ==PROF== lines, finds the CSV header by its column names
/// and attributes gpu__time_duration.sum to configs. "No kernels were profiled" returns an
/// unprofiled report; malformed CSV throws kopt::Error naming `source`:line and the column.
ProfileReport parse_ncu_output(std::string_view text, const std::string &source,
                               const ProfileOptions &options);

/// Reads a file holding ncu's stdout and parses it as parse_ncu_output does.
ProfileReport read_ncu_output(const std::filesystem::path &path, const ProfileOptions &options);

/// Returns the config index of an NVTX / roctx range name `config_<index>[ ...]`, or -1.
int config_index_of_range(std::string_view range);

/// One kernel launch as a profiler reported it, before it is attributed to a config.
struct KernelLaunch {
  std::string kernel;
  double ns = 0;
  std::string range; ///< the innermost `config_<index>` range around it; "" when none
};

/// Attributes launches of kernels matching options.kernel_regex to configs: by their range
/// when `by_range`, else in order. Returns an unprofiled report (naming `source`) when no
/// launch matches or the count does not divide into options.launches_per_config.
ProfileReport attribute_launches(const std::vector<KernelLaunch> &launches, bool by_range,
                                 const ProfileOptions &options, const std::string &source);

} // namespace kopt::profile
