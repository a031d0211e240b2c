#pragma once
// The keep test: decide() compares BEST's and a candidate's measurements and returns the
// Decision. The parts it is made of have their own headers, included here for its callers:
// the Decision and its file (decision.hpp), the paired comparison (compare.hpp), the machine's
// resolution (calibration.hpp), the correctness rule (correctness.hpp) and the verdict's text
// (format.hpp).

#include "decide/calibration.hpp"
#include "decide/compare.hpp"
#include "decide/correctness.hpp"
#include "decide/decision.hpp"
#include "decide/format.hpp"
#include "profile/measurement.hpp"
#include "spec/roofline.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace kopt::decide {

/// What the keep test needs besides the two measurements.
struct Request {
  std::string target = "global"; ///< the candidate's target config class, or "global"
  std::string expected_hash;     ///< the candidate's content hash; empty: not checked
  std::string best_hash;         ///< BEST's expected hash (ledger or content); empty: unchecked
  std::string identical_to; ///< set when the candidate's content equals BEST's or a recorded one
  std::optional<Calibration> calibration; ///< the machine's resolution, when calibrated
  /// The family's roofline: the plausibility gate and each class's speed of light.
  std::optional<spec::Roofline> roofline;
};

/// The share of the machine's CPU time that other processes took while a host measurement ran
/// (profile::Measurement::others_cpu) from which the machine counts as busy: its decision says
/// so, and judges a class better or worse only where its whole interval lies beyond kBusyMargin.
constexpr double kBusyMachine = 0.25;
/// The change a class must exceed, all of its interval, to count on a busy machine (docs/KEEP.md).
constexpr double kBusyMargin = 0.10;
/// How far BEST's own times may move over a host measurement's rounds (largest round over
/// smallest) before the machine counts as unsteady: a class then counts only beyond that
/// movement (and at least kBusyMargin).
constexpr double kUnsteadyHost = 0.10;

/// Decides keep/discard of `candidate` against `best` (see "Decision" in docs/FORMATS.md).
Decision decide(const profile::Measurement &best, const profile::Measurement &candidate,
                const Request &request, const Options &options = {});

/// Returns a measurement with status failed for a candidate whose measurement.json is missing.
profile::Measurement missing_measurement(const std::string &candidate,
                                         const std::filesystem::path &path);

} // namespace kopt::decide
