#pragma once

// Nsight Compute's `--csv --page details --print-units base` output (sections SpeedOfLight,
// Occupancy, WarpStateStats, MemoryWorkloadAnalysis, plus the warp-stall metrics) read into one
// record per kernel launch, and the one-line bottleneck verdict `kopt analyze` prints.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::profile {

/// One profiled launch: its kernel, config (from its `config_<i>` NVTX range) and metrics.
struct LaunchDetails {
  int id = 0;                            ///< ncu's launch ID
  std::string kernel;                    ///< the kernel name as ncu prints it
  int config = -1;                       ///< config index from the NVTX range; -1 without one
  std::string block, grid;               ///< "(128, 1, 1)"
  std::map<std::string, double> metrics; ///< "Section/Metric Name" -> value in base units
  std::map<std::string, std::string> units;
  std::string top_rule;        ///< ncu's rule with the largest estimated speedup, "" if none
  double top_rule_speedup = 0; ///< that estimate, percent

  /// Returns the metric `section`/`name`, or `fallback` when ncu did not report it.
  double get(const std::string &section, const std::string &name, double fallback = -1) const;
};

/// Parses ncu's details page; rows with a non-numeric value ("SM Frequency" strings, rule
/// text) are skipped. Malformed CSV throws kopt::Error naming `source`:line and the column.
std::vector<LaunchDetails> parse_ncu_details(std::string_view text, const std::string &source);

/// What limits one launch, derived from its sections.
struct Bottleneck {
  std::string limiter;   ///< "memory throughput", "compute throughput", "occupancy (registers)",
                         ///< "latency (<top stall>)"
  std::string line;      ///< the limiter with the figures behind it, one line
  std::string top_stall; ///< the largest warp-stall reason, "" when not measured
  double top_stall_cycles = 0;
};

/// Judges a launch: throughput above 60% of peak (memory or SM) names that unit; otherwise
/// occupancy when achieved is under half of theoretical (grid too small), or when registers or
/// shared memory cap theoretical below 50%; else the top warp stall.
Bottleneck judge_bottleneck(const LaunchDetails &launch);

/// Returns the figures the report shows for one launch, with the bottleneck (stable keys).
nlohmann::json to_json(const LaunchDetails &launch, const Bottleneck &bottleneck);

} // namespace kopt::profile
