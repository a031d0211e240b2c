#pragma once

// The application A/B: the family's application (family.json "app") built with BEST's kernels and
// with a candidate's, run side by side in paired rounds on the same inputs, and the end-to-end
// change set beside what the kernel verdict's traffic rows predict (docs/KEEP.md).

#include "decide/decide.hpp"
#include "profile/bench.hpp"
#include "spec/family.hpp"
#include "util/process.hpp"

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::app {

/// The line an application prints with the time of its own timed region; without it, a run's
/// time is the command's wall time.
inline constexpr const char *kTimeLine = "kopt-app-us:";

/// What the kernel verdict predicts for the application: its kernel time per run under the
/// captured traffic changes by `kernel_delta_us`, a part `kernel_share` of its time.
struct Prediction {
  double change = 0; ///< predicted end-to-end change: kernel_delta_us / BEST's application time
  double low = 0;    ///< from the traffic overall row's interval
  double high = 0;
  double kernel_us = 0;       ///< BEST's kernel time per application run (traffic overall best_us)
  double kernel_delta_us = 0; ///< the candidate's minus BEST's, per run
  double kernel_share = 0;    ///< kernel_us / BEST's application time
  std::string decision;       ///< the decision.json it came from
};

/// One application A/B: results/<id>/app.json.
struct Result {
  std::string family;
  std::string candidate;
  std::string hash;
  std::string best;
  std::string best_hash;
  std::string date;
  std::string device;
  std::string status = "ok"; ///< "ok" or "failed"
  std::string reason;        ///< why it failed, or the verdict's reason
  std::string timed_by;      ///< "app" (its kopt-app-us line) or "wall" (the command's wall time)
  std::vector<std::string> command; ///< one run's command, {exe} unexpanded
  int rounds = 0;
  double confidence = 0;
  double threshold = 0;
  std::vector<double> best_us;           ///< BEST's run in each round
  std::vector<double> candidate_us;      ///< the candidate's run in each round
  std::vector<double> best_wall_us;      ///< the whole runs' wall times, BEST's
  std::vector<double> candidate_wall_us; ///< and the candidate's
  /// Timed by the application: per round, its reported saving minus the wall-time saving over
  /// BEST's time (mean, low, high); wholly above twice the threshold the A/B fails.
  std::optional<std::array<double, 3>> wall_gap;
  decide::ClassRow change; ///< "application": medians, change, interval and state
  std::optional<Prediction> prediction;
  std::string no_prediction; ///< why there is none
  /// The measured interval holds the prediction's change (only with a prediction).
  bool prediction_inside = false;

  /// True unless it failed or the application got slower beyond the threshold.
  bool passes() const { return status == "ok" && change.state != decide::State::worse; }
};

/// The two variants and the run's limits.
struct Sides {
  std::string best;
  std::string best_hash;
  std::filesystem::path best_exe;
  std::string candidate;
  std::string hash;
  std::filesystem::path candidate_exe;
};

/// Checks that both variants exist and carry their candidate's content hash (the one
/// `kopt stamp-hash` wrote when they linked); returns the problems, empty when none.
std::vector<std::string> identity_problems(const Sides &sides);

/// A result that ran nothing: failed for `reason` (identity problems, say).
Result refused(const spec::Family &family, const Sides &sides, std::string reason);

/// Runs BEST's and the candidate's variant of `family`'s application side by side, `rounds`
/// times (BEST first in even rounds), and compares them with the keep test's paired statistics
/// (`options`: confidence and threshold). A run that fails, crashes or times out fails the
/// result, naming the side and what happened. `decision` (the candidate's keep test against
/// the same BEST, with traffic rows) gives the prediction.
Result run_ab(const spec::Family &family, const Sides &sides, int rounds,
              const decide::Options &options, const std::optional<decide::Decision> &decision,
              util::ProcessRunner &runner, const profile::RunSetup &setup);

/// The prediction from a decision's traffic rows and BEST's application time, or why none.
std::optional<Prediction> predict(const decide::Decision &decision, double app_best_us,
                                  std::string &why_not);

/// Reads one run's time from its stdout: the kopt-app-us line's value (the last one), or nothing.
std::optional<double> reported_us(const std::string &out);

/// Serialises a result (stable key order).
nlohmann::json to_json(const Result &result);

/// Reads app.json; errors name the file and field.
Result read_result(const std::filesystem::path &path);

/// Writes app.json atomically.
void write_result(const std::filesystem::path &path, const Result &result);

/// The result as text: both sides' medians, the change with its interval, the prediction.
std::string format_result(const Result &result);

} // namespace kopt::app
