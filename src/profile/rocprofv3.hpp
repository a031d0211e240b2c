#pragma once

// rocprofv3 backend. Attribution to configs: when a marker trace holds roctx ranges named
// `config_<index> <col>=<val> ...` (the NVTX convention of ncu.hpp, pushed with roctxRangePush
// around a config's timed launches, device synchronised before roctxRangePop), a dispatch
// belongs to the innermost such range whose [Start, End] holds its Start_Timestamp. Without
// such ranges, dispatches map to configs in launch order (Dispatch_Id), N per config
// (ProfileOptions::launches_per_config). The trace holds every dispatch, warm-ups and the
// harness's own kernels too: a config's dispatches split into timed runs at the harness's L2
// flush, which (with the poisoning fills before it) is left out; see attribute_launches.

#include "profile/ncu.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kopt::util {
struct CsvTable;
}

namespace kopt::profile {

/// Whether rocprofv3 also records roctx ranges (marker_api_trace.csv) for attribution.
enum class MarkerTrace { no, yes };

/// One kernel dispatch from kernel_trace.csv, whatever the ROCm version's column layout.
struct KernelDispatch {
  std::string kernel;
  std::string agent;        ///< "1" (2024 layout) or "Agent 7" (current layout)
  int64_t dispatch_id = -1; ///< -1 when the layout has no Dispatch_Id
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int line = 0; ///< line in the CSV file, for messages

  /// Returns End_Timestamp - Start_Timestamp in nanoseconds.
  int64_t duration_ns() const { return end_ns - start_ns; }
};

/// One roctx range (or marker) from marker_api_trace.csv: its message and time span.
struct MarkerRange {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

/// One row of kernel_stats.csv (same header as hip_api_stats.csv).
struct KernelStat {
  std::string name;
  int64_t calls = 0;
  double total_ns = 0;
  double average_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
};

/// Returns the rocprofv3 argv that traces kernels of `harness` into `dir` with files named
/// `<name>_kernel_trace.csv` (and `<name>_marker_api_trace.csv` with MarkerTrace::yes).
std::vector<std::string> rocprofv3_command(const std::filesystem::path &dir,
                                           const std::string &name,
                                           const std::vector<std::string> &harness,
                                           MarkerTrace markers = MarkerTrace::yes);

/// Returns the one file under `dir` (searched recursively) whose name ends in `suffix`, as
/// rocprofv3 writes `<dir>/<hostname>/<pid>_<suffix>` or `<dir>/<name>_<suffix>`; nullopt when
/// there is none. Throws kopt::Error naming them when there are several.
std::optional<std::filesystem::path> find_rocprofv3_file(const std::filesystem::path &dir,
                                                         const std::string &suffix);

/// Reads kernel dispatches by header name (2024 18-column layout, current 22-column layout,
/// `rocpd convert` layout with Guid), in launch order; errors name file:line: column.
std::vector<KernelDispatch> parse_kernel_trace(const util::CsvTable &table);

/// Reads and parses a kernel_trace.csv file.
std::vector<KernelDispatch> read_kernel_trace(const std::filesystem::path &path);

/// Reads roctx ranges and markers (Function, Start_Timestamp, End_Timestamp) from a table.
std::vector<MarkerRange> parse_marker_trace(const util::CsvTable &table);

/// Reads and parses a marker_api_trace.csv file.
std::vector<MarkerRange> read_marker_trace(const std::filesystem::path &path);

/// Reads kernel_stats.csv (Name, Calls, TotalDurationNs, AverageNs, MinNs, MaxNs).
std::vector<KernelStat> read_kernel_stats(const std::filesystem::path &path);

/// Attributes dispatches to configs by `config_<index>` ranges in `markers` when there are
/// any, else in launch order; see the top of this header. `source` names the trace file.
ProfileReport attribute_dispatches(const std::vector<KernelDispatch> &dispatches,
                                   const std::vector<MarkerRange> &markers,
                                   const ProfileOptions &options, const std::string &source);

/// Finds and reads the kernel trace (and marker trace, when present) that rocprofv3 wrote
/// under `dir` and attributes them; a missing kernel trace gives an unprofiled report.
ProfileReport read_rocprofv3_output(const std::filesystem::path &dir,
                                    const ProfileOptions &options);

} // namespace kopt::profile
