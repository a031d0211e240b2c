#pragma once

#include "profile/measurement.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::decide {

/// What the keep test concluded about a candidate against BEST.
enum class Verdict { keep, tie, regression, split, incorrect, failed };

/// Returns "keep", "tie", "regression", "split", "incorrect" or "failed".
const char *to_string(Verdict verdict);

/// Parses a verdict name; throws kopt::Error naming `where` for anything else.
Verdict parse_verdict(const std::string &text, const std::string &where);

/// How one config class moved: beyond noise either way, or within it.
enum class State { better, worse, tie };

/// Returns "better", "worse" or "tie".
const char *to_string(State state);

/// Whether harness time (measured_by `events`, or a failed profiler) may decide a keep.
enum class HarnessTime { refuse, allow };

/// How configs weigh in a class's geomean: equally, or by the configs file's `count` column
/// (call counts from `kopt capture merge`).
enum class Weighting { equal, count };

/// The keep test's thresholds; the defaults are the workflow's.
struct Options {
  double noise = 0.01;          ///< |change| below this is a tie (unless seen twice in a row)
  double max_regression = 0.02; ///< a non-target class may get this much worse and still keep
  HarnessTime harness_time = HarnessTime::refuse;
  Weighting weighting = Weighting::equal;
};

/// One config class's comparison: geomean times, their ratio and the resulting state.
struct ClassRow {
  std::string config_class;
  int configs = 0;
  double best_us = 0;      ///< geomean of BEST's times
  double candidate_us = 0; ///< geomean of the candidate's times
  double ratio = 1;        ///< geomean of candidate us / best us
  double change = 0;       ///< ratio - 1 (negative is faster)
  State state = State::tie;
  bool repeated = false; ///< within noise, counted because the previous decision saw it too
};

/// One config whose output did not match the golden; `err_known` false: never compared.
struct ConfigError {
  std::string config; ///< "M=64,N=128,K=128"
  double err = 0;
  bool err_known = true;
};

/// The outcome of one keep test: decision.json.
struct Decision {
  std::string family;
  std::string candidate;
  std::string hash; ///< the candidate's measured content hash
  std::string best;
  std::string best_hash;
  std::string target = "global";
  std::string date;        ///< the candidate measurement's date
  std::string measured_by; ///< the candidate measurement's source
  Options options;
  Verdict verdict = Verdict::failed;
  std::string reason;
  std::vector<ClassRow> classes;      ///< in the order classes first appear in BEST's configs
  std::vector<std::string> winning;   ///< classes that improved beyond noise (split advice)
  std::string split_advice;           ///< empty unless the verdict is split
  std::vector<ConfigError> incorrect; ///< configs whose err is not 0 (verdict incorrect)
  std::optional<ClassRow> overall;    ///< all configs together; absent when nothing compared
};

/// What the keep test needs besides the two measurements.
struct Request {
  std::string target = "global";    ///< the candidate's target config class, or "global"
  std::string expected_hash;        ///< the candidate's content hash; empty: not checked
  std::string best_hash;            ///< BEST's expected hash (ledger or content); empty: unchecked
  std::optional<Decision> previous; ///< the last decision for this candidate, for the noise rule
};

/// Decides keep/discard of `candidate` against `best` (see "Decision" in docs/FORMATS.md).
Decision decide(const profile::Measurement &best, const profile::Measurement &candidate,
                const Request &request, const Options &options = {});

/// Returns a measurement with status failed for a candidate whose measurement.json is missing.
profile::Measurement missing_measurement(const std::string &candidate,
                                         const std::filesystem::path &path);

/// Returns the per-class table as fixed-width text, ending with the overall row.
std::string format_table(const Decision &decision);

/// Returns "verdict: <v> (<reason>)", plus the split advice on a second line when there is one.
std::string format_verdict(const Decision &decision);

/// Formats a change as a signed percentage with two decimals ("-5.20%").
std::string format_change(double change);

/// Serialises a decision (stable key order).
nlohmann::json to_json(const Decision &decision);

/// Reads a decision back; errors name `source` and the missing or mistyped field.
Decision decision_from_json(const nlohmann::json &j, const std::string &source);

/// Reads decision.json; errors name the file and field.
Decision read_decision(const std::filesystem::path &path);

/// Writes decision.json atomically.
void write_decision(const std::filesystem::path &path, const Decision &decision);

} // namespace kopt::decide
