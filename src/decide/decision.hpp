#pragma once
// The outcome of the keep test: each config class's row, the verdict and why, and its file
// (decision.json, written by decision_json.cpp).

#include "decide/options.hpp"
#include "decide/plausible.hpp"

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

/// Parses a state name ("" is a tie, as older files wrote it); throws kopt::Error naming `where`
/// for anything else.
State parse_state(const std::string &text, const std::string &where);

/// How a decision compared the two measurements.
enum class Method {
  paired, ///< side by side: per-round paired ratios, a Student-t interval per class
  means   ///< older measurements without samples, or not side by side: geomeans only
};

/// Returns "paired" or "means".
const char *to_string(Method method);

/// Parses a method name; throws kopt::Error naming `where` for anything else.
Method parse_method(const std::string &text, const std::string &where);

/// One config class's comparison: geomean times, their ratio, its interval and the state.
struct ClassRow {
  std::string config_class;
  int configs = 0;
  double best_us = 0;      ///< geomean of BEST's times
  double candidate_us = 0; ///< geomean of the candidate's times
  double ratio = 1;        ///< geomean of candidate us / best us
  double change = 0;       ///< ratio - 1 (negative is faster)
  bool has_interval = false;
  double low = 0;  ///< the change's confidence interval (paired method only)
  double high = 0; ///< (paired method only)
  State state = State::tie;
  /// Traffic rows only: the class's part of BEST's kernel time per application run (0..1).
  double share = 0;
  /// Within the threshold and counted because an earlier measurement agreed: a decision written
  /// by an earlier kopt (read back from its decision.json); kopt no longer counts such a change.
  bool repeated = false;
  /// Within the threshold, the interval excludes zero: shown, not counted.
  bool pending = false;

  /// True when the interval lies wholly on one side of zero (paired method only).
  bool excludes_zero() const { return has_interval && (high < 0 || low > 0); }
};

/// The configs weighed by the application's traffic: a config's calls per application run (the
/// configs file's count) times its time. A row's best_us and candidate_us are the class's kernel
/// time per run (sum of count x us), its change that of the time the application spends there;
/// the overall row's change is the predicted change of the application's kernel time.
struct Traffic {
  double calls = 0;              ///< the count column's sum: kernel calls per application run
  std::vector<ClassRow> classes; ///< with share set, in the decision's class order
  ClassRow overall;
};

/// One config whose output did not match the golden; `err_known` false: never compared.
struct ConfigError {
  std::string config; ///< "M=64,N=128,K=128"
  double err = 0;
  bool err_known = true;
};

/// A kernel outside kernel_regex that the candidate ran in its timed runs, counted in its time.
struct OutsideKernel {
  std::string kernel;
  double share = 0; ///< its part of the time of the configs it ran in, 0..1
  int configs = 0;  ///< how many configs it ran in
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
  std::string build;       ///< the candidate measurement's build (Measurement::build)
  std::string build_flags; ///< and its flags
  /// The configs it was decided on: how many the candidate's measurement holds, and the configs
  /// file's content hash it measured ("" when the measurement did not record it).
  int configs = 0;
  std::string configs_hash;
  /// The candidate measurement's arrangement (Measurement::arrangement): "best-first",
  /// "candidate-first", or "" when not side by side or not recorded.
  std::string arrangement;
  Method method = Method::means;
  int rounds = 0; ///< side-by-side rounds behind the intervals (paired method)
  Options options;
  Verdict verdict = Verdict::failed;
  std::string reason;
  std::vector<ClassRow> classes;      ///< in the order classes first appear in BEST's configs
  std::vector<std::string> winning;   ///< classes that improved beyond noise (split advice)
  std::string split_advice;           ///< empty unless the verdict is split
  std::vector<ConfigError> incorrect; ///< configs whose err is not 0 (verdict incorrect)
  std::optional<ClassRow> overall;    ///< all configs together; absent when nothing compared
  /// Present when the configs carry a count column and times were compared.
  std::optional<Traffic> traffic;
  std::string identical_to;       ///< "BEST 01" or "04": the candidate's content equals that one's
  std::vector<std::string> notes; ///< e.g. a threshold below the machine's resolution
  /// The candidate's counted kernels outside kernel_regex, named in the reason too.
  std::vector<OutsideKernel> outside_regex;
  /// Each class's fraction of the device's limits; absent when the family declares no roofline.
  std::optional<SpeedOfLight> speed_of_light;
  std::string file; ///< the decision.json it was read from (read_decision), for errors; "" when
                    ///< made in memory. Not serialised.

  /// The rows the verdict was judged on: the traffic rows under Weighting::traffic, else classes.
  const std::vector<ClassRow> &judged_classes() const;

  /// True for a regression that counts against the loop: some class worse beyond the
  /// threshold (a confirmed change within it is a regression verdict but does not count).
  bool counts_as_regression() const;
};

/// Serialises a decision (stable key order).
nlohmann::json to_json(const Decision &decision);

/// Reads a decision back; errors name `source` and the missing or mistyped field.
Decision decision_from_json(const nlohmann::json &j, const std::string &source);

/// Reads decision.json; errors name the file and field.
Decision read_decision(const std::filesystem::path &path);

/// Writes decision.json atomically.
void write_decision(const std::filesystem::path &path, const Decision &decision);

} // namespace kopt::decide
