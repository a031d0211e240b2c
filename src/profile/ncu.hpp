#pragma once

// Nsight Compute backend. Launches map to configs by NVTX range: the harness pushes one range
// per config, in the default domain, named `config_<index> <col>=<val> ...` (index: the 0-based
// row of the configs file), around that config's timed launches only (warm-up outside it), and
// synchronises the device before popping it. Launches outside every `config_<index>` range are
// not counted. Without NVTX columns, launches map to configs in order (see ProfileOptions).
//
// Every launch inside a config's timed runs counts toward its time, whatever its name: work moved
// into another kernel or onto another stream is work (a split-K reduction too). kernel_regex only
// names the family's kernels; the others are reported (ProfiledConfig::kernels) so the verdict can
// name them. The harness's own kernels are not the candidate's work and are left out by exact
// name (is_harness_kernel).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::profile {

/// Whether the harness's own kernels can appear among the profiled launches; see ProfileOptions.
enum class HarnessFlush { outside, inside };

/// What attribution needs besides the profiler's output: which kernels are the family's, how
/// many timed runs each config makes, and (when the output carries no NVTX / roctx ranges) how
/// many launches of the family's kernels each config makes in order.
struct ProfileOptions {
  std::string kernel_regex = ".*"; ///< ECMAScript regex searched in the kernel name
  int launches_per_config = 0;     ///< 0: without ranges every launch belongs to config 0
  /// Timed runs per config: a config's counted launches split into this many runs of equal
  /// launch count, each run's times summed into one sample. 0: each launch is one sample.
  /// Where the harness's L2 flush shows (it marks the start of each timed run), runs are split
  /// at it instead and this many flushes are required.
  int runs_per_config = 0;
  /// Whether the harness's L2 flush can be in the output: rocprofv3 traces everything, and ncu
  /// without a profiler start profiles every launch. Under ncu's timed mode the flush is outside
  /// the window, so a kernel there named like it is the candidate's, and counts.
  HarnessFlush flush = HarnessFlush::outside;
};

/// One kernel's share of a config's counted time.
struct KernelTime {
  std::string kernel;
  int launches = 0;
  double ns = 0;       ///< summed GPU time of its launches
  bool family = false; ///< true when the name matches kernel_regex
};

/// One config's profiled time: every counted launch of its timed runs, per run.
struct ProfiledConfig {
  int config = 0;      ///< the index from `config_<index>` or from launch order
  std::string range;   ///< the range name, e.g. "config_0 M=65536"; "" by order
  int launches = 0;    ///< counted launches attributed to this config, of any kernel
  double total_ns = 0; ///< the sum of run_ns
  /// each timed run's GPU time, in run order: under ncu (kernels serialised) the sum of its
  /// launches; under the CUPTI tracer the time at least one of them ran (overlaps count once)
  std::vector<double> run_ns;
  std::vector<KernelTime> kernels; ///< per kernel name, in first-seen order

  /// Returns the mean GPU time per timed run in nanoseconds (0 without runs).
  double mean_ns() const { return run_ns.empty() ? 0 : total_ns / run_ns.size(); }

  /// Returns the mean GPU time per timed run in microseconds.
  double mean_us() const { return mean_ns() / 1000.0; }

  /// Returns the distinct kernel names, in first-seen order.
  std::vector<std::string> kernel_names() const;

  /// Returns the counted kernels whose names do not match kernel_regex, in first-seen order.
  std::vector<KernelTime> outside_regex() const;
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

/// A report that profiled nothing, saying why.
ProfileReport unprofiled(std::string reason);

/// Which launches ncu profiles: only those between the harness's profiler start and stop (its
/// timed runs; warm-ups run at full speed, unprofiled), or every matching launch.
enum class NcuLaunches { timed, all };

/// Returns the ncu argv that profiles every kernel `harness` (its argv) launches: no kernel-name
/// filter, since work in any kernel counts (kernel_regex is applied after, to name kernels).
std::vector<std::string> ncu_command(const std::vector<std::string> &harness,
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

/// True when `kernel` (as a profiler names it) is the harness's end-of-timed-run mark,
/// kopt_timed_end, by its exact qualified name (launched where a trace sees every dispatch).
bool is_harness_end(const std::string &kernel);

/// Returns whether `kernel` (as a profiler names it, qualified, with template arguments and
/// parameters or without) is the harness's L2 flush read, kopt::harness::{cuda,hip}::
/// kopt_l2_flush_read.
bool is_harness_flush(const std::string &kernel);

/// Attributes every launch to a config (by its range when `by_range`, else in order of the
/// launches matching options.kernel_regex), leaves out the harness's own kernels, splits each
/// config's launches into timed runs (see ProfileOptions::runs_per_config) and sums each run.
/// Returns an unprofiled report naming `source` when no launch matches kernel_regex (or some
/// config has none, naming what it has), when runs cannot be told apart, or when kernels
/// outside kernel_regex run without config ranges to attribute them by.
ProfileReport attribute_launches(const std::vector<KernelLaunch> &launches, bool by_range,
                                 const ProfileOptions &options, const std::string &source);

} // namespace kopt::profile
