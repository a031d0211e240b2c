#pragma once

// The build report: what the last ninja run compiled and how long it took (.ninja_log), each
// compile's ccache result, and the family's compile-time budget (`kopt build-report`).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kopt::buildinfo {

/// One line of .ninja_log: when a command ran (ms since its run began), the output it wrote,
/// the restat mtime ninja recorded and the hash of the command line.
struct LogEntry {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int64_t mtime = 0;
  std::string output;
  std::string hash;
  int line = 0; ///< 1-based line in the log file
};

/// A parsed .ninja_log: its format version (5 to 7) and every entry in file order.
struct NinjaLog {
  int version = 0;
  std::vector<LogEntry> entries;
};

/// Parses the text of a .ninja_log (versions 5 to 7); `file` names it in errors, which read
/// `<file>:<line>: <field>: <what was expected>`.
NinjaLog parse_ninja_log(const std::string &text, const std::string &file);

/// Returns the entries of the newest run in the log: ninja appends each run's entries in the
/// order its commands finish, so a run begins where an end time goes backwards or an output
/// repeats.
std::vector<LogEntry> latest_run(const NinjaLog &log);

/// Returns the entries of the newest run that compiled something (an object file among its
/// outputs), or of the newest run when none did: a later run of only custom commands (a bench,
/// a report) says nothing of the compile.
std::vector<LogEntry> latest_compile_run(const NinjaLog &log);

/// One command of a run: the lines of one edge share its command hash and times.
struct LoggedCommand {
  std::vector<std::string> outputs;
  std::string hash;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

/// Groups a run's entries into commands by (command hash, start, end), in log order.
std::vector<LoggedCommand> group_commands(const std::vector<LogEntry> &run);

/// What ccache did for one compile, from the stats log kopt launch-compile leaves beside it.
enum class CacheResult { unknown, direct_hit, preprocessed_hit, miss, uncacheable };

/// Returns the result a ccache stats log (CCACHE_STATSLOG) records for one compile.
CacheResult parse_ccache_stats_log(const std::string &text);

/// Returns "direct_hit", "preprocessed_hit", "miss", "uncacheable" or "unknown".
std::string to_string(CacheResult result);

/// One translation unit's compile in the run, attributed to a family, candidate and instance
/// from its object path (`<target>candidate_<id>.dir/.../<family>/gen/<id>/instances/<x>.o`).
struct TuCompile {
  std::string object;
  std::string family;    ///< "" when the object is not a kopt candidate's
  std::string candidate; ///< "" likewise
  std::string instance;  ///< the instance name for instance TUs, else ""
  double seconds = 0;
  CacheResult cache = CacheResult::unknown;
};

/// Compile times and cache results of one family in the run.
struct FamilyCompile {
  std::string name;
  int tus = 0;
  double compile_s = 0; ///< the sum of its TU times
  double wall_s = 0;    ///< first start to last end over its commands (TUs and links)
  int hits = 0;
  int misses = 0;
};

/// The compile-time report of a build folder's newest ninja run.
struct BuildReport {
  int log_version = 0;
  int jobs = 1;          ///< the parallelism efficiency is measured against
  int commands = 0;      ///< commands the run executed (compiles, links, custom commands)
  double wall_s = 0;     ///< first start to last end of the run
  double tu_sum_s = 0;   ///< the sum of every TU's compile time
  double efficiency = 0; ///< tu_sum_s / (wall_s * jobs)
  int hits = 0;          ///< ccache hits (direct + preprocessed) among the TUs
  int direct_hits = 0;
  int misses = 0;
  std::vector<TuCompile> tus;          ///< slowest first
  std::vector<FamilyCompile> families; ///< by name
};

/// Builds the report of `log`'s newest run; `cache_of` returns the ccache result of an object
/// (a path relative to the build folder). `jobs` must be at least 1.
BuildReport make_report(const NinjaLog &log, int jobs,
                        const std::function<CacheResult(const std::string &)> &cache_of);

/// Which run of .ninja_log a report is of.
enum class Run { newest, newest_compile };

/// Reads `<build_dir>/.ninja_log` and the ccache stats logs (`<object>.kopt-ccache`) of its
/// newest run (or newest run that compiled, latest_compile_run) and returns the report; throws
/// Error when there is no log.
BuildReport read_build_report(const std::filesystem::path &build_dir, int jobs,
                              Run run = Run::newest);

/// Returns the report as text: the run's totals, the `top` slowest TUs and each family.
std::string format_report(const BuildReport &report, int top);

/// Returns the report as JSON (docs/FORMATS.md, "kopt build-report --json").
nlohmann::json to_json(const BuildReport &report);

/// The verdict on a family's compile budget: over when its wall time in the run exceeds it.
struct BudgetCheck {
  bool ok = true;
  std::string message; ///< names the family, its wall time, the budget and the slowest TUs
};

/// Checks family `family`'s wall time in `report` against `budget_s`, naming the `top` slowest
/// of its TUs when it is over.
BudgetCheck check_budget(const BuildReport &report, const std::string &family, double budget_s,
                         int top);

} // namespace kopt::buildinfo
