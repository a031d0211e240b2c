#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::profile {

/// Which tool produced a measurement's times. The keep metric is the profiler's time; `events`
/// (harness device events) is the fallback when no profiler ran and is reported as such.
enum class Source { chrono, events, ncu, rocprofv3, cupti };

/// Returns "chrono", "events", "ncu", "rocprofv3" or "cupti".
const char *to_string(Source source);

/// Parses a source name; throws kopt::Error naming `where` for anything else.
Source parse_source(const std::string &text, const std::string &where);

/// A kernel outside the family's kernel_regex that ran in a config's timed runs: counted in the
/// config's time like any other, and named so that a verdict can say where the time went.
struct OutsideKernel {
  std::string kernel;
  double share = 0; ///< its part of the config's profiled time, 0..1 (mean over the rounds)
};

/// One config's result: its column values, config class, the kernel dispatch chose, the keep
/// metric `us` (profiler time, or the harness's own on host), the harness time and the error.
struct ConfigResult {
  std::vector<std::string> values; ///< in Measurement::config_columns order
  std::string config_class;
  std::string kernel;
  double us = 0;         ///< the keep metric, microseconds (median of the rounds' medians)
  double harness_us = 0; ///< the harness's own timing, microseconds
  double err = 0;        ///< mismatch ratio against the golden; 0 is correct
  bool err_known = true; ///< false when no golden was compared (then correctness fails)
  /// Every timed launch's keep-metric time in microseconds, one list per round (one harness
  /// run each); empty in measurements written before samples were kept.
  std::vector<std::vector<double>> rounds;
  /// Counted kernels outside kernel_regex (profiled measurements only), in first-seen order.
  std::vector<OutsideKernel> outside_regex;
  /// Timed runs whose output the harness checked against the family's reference, over every
  /// round; 0 when the family has none (kopt keeps no such candidate), -1 when not recorded
  /// (a measurement from before runs were checked).
  int checked = -1;
  std::string check; ///< the first failed check, "round 2: timed run 3: 5 of 64 outputs wrong"
};

/// Everything `kopt bench` learned about one candidate: measurement.json.
struct Measurement {
  std::string family;
  std::string candidate;
  std::string hash;          ///< the content hash the harness printed
  std::string status = "ok"; ///< "ok" or "failed"
  std::string reason;        ///< why it failed (harness crash, timeout, hash mismatch...)
  Source measured_by = Source::chrono;
  bool profiled = true; ///< false: the profiler failed, times are the harness's own
  std::string device;   ///< CPU or GPU model the run used
  std::string driver;   ///< the GPU driver's version; "" on host or when unknown
  std::string clocks;   ///< the GPU's clocks when the run began (e.g. "sm 1980 MHz, mem 2619 MHz")
  std::string date;     ///< ISO 8601, UTC
  /// The build it measured (buildinfo::BuildFlags): the hash of the flags its instances were
  /// compiled with, and the flags; "" when the build recorded none (built without kopt's
  /// launcher, or by an older kopt).
  std::string build;
  std::string build_flags;
  /// What it measured besides the code and the machine (profile/freshness.hpp): the configs
  /// file's content hash, the golden's (the hash of golden.json, "" when there was none) and the
  /// family's harness source's, each taken when the run began; "" in measurements written before
  /// kopt recorded them.
  std::string configs_hash;
  std::string golden;
  std::string harness_source;
  int warmup = 0; ///< untimed runs per config before each round's timed ones
  int repeat = 0; ///< timed runs per config and round; 0 in older measurements
  /// BEST's id and hash when this candidate was measured side by side with BEST (BEST's own
  /// samples are then in the same folder, see spec::Layout::paired_best); empty otherwise.
  std::string paired_best;
  std::string paired_best_hash;
  /// Side by side: which side's harness went first in round 1, and so started first and took
  /// its memory first ("best-first" or "candidate-first"); "" when not side by side or written
  /// before arrangements were recorded. Alternates from one measurement of a candidate to the
  /// next (the first by the candidate's id).
  std::string arrangement;
  /// Side by side on a host family: the share of the machine's CPU time that processes other
  /// than kopt and its harnesses used while the rounds ran, 0..1 (util::others_share); -1 when
  /// not taken (a GPU family, no /proc/stat, or written before kopt took it).
  double others_cpu = -1;
  /// Side by side: how many measurements of this code beside this BEST its rounds pool (1: this
  /// one alone; profile::pool_rounds).
  int looks = 1;
  std::vector<std::string> config_columns;
  std::vector<ConfigResult> configs;

  /// True when the run completed with results for every config.
  bool ok() const { return status == "ok"; }

  /// Returns how many rounds every config has samples for (0 when some config has none).
  size_t sampled_rounds() const;
};

/// A config's time (us) as the keep test compares it: over `rounds` side-by-side rounds, the
/// geomean of each round's median; with fewer than 2 (or a config without them), its `us`.
double config_time_us(const ConfigResult &c, size_t rounds);

/// What a measurement (or a tune row) was taken with. One taken otherwise does not stand for a
/// new one: other code, another device or driver, another timer or other run counts give other
/// times.
struct Conditions {
  std::string hash;     ///< the content hash the harness printed
  std::string device;   ///< the device's name: the GPU model, or the CPU model on host
  std::string driver;   ///< the GPU driver's version, "" on host
  std::string profiler; ///< what timed it: chrono, events, ncu or rocprofv3
  int warmup = 0;
  int repeat = 0;
};

/// Returns the conditions `m` was measured under.
Conditions conditions_of(const Measurement &m);

/// Returns why something measured under `then` cannot stand for a measurement under `now` (the
/// first field that differs, both values named), or "" when it can.
std::string stale_reason(const Conditions &then, const Conditions &now);

/// Serialises a measurement (stable key order).
nlohmann::json to_json(const Measurement &m);

/// Reads a measurement back; errors name `source` and the missing or mistyped field.
Measurement measurement_from_json(const nlohmann::json &j, const std::string &source);

/// Reads measurement.json; errors name the file and field.
Measurement read_measurement(const std::filesystem::path &path);

/// Writes measurement.json atomically.
void write_measurement(const std::filesystem::path &path, const Measurement &m);

} // namespace kopt::profile
