#pragma once

#include <kopt/harness/inputs.hpp>

// The defaults of family.json's optional fields, in one place: spec::Family starts from them,
// the keep test's options (decide::Options) and the CLI's help texts quote them.
namespace kopt::spec::defaults {

inline constexpr double timeout_s = 300; ///< one harness run's limit, seconds (timeout_s)
inline constexpr int warmup = harness::default_warmup; ///< bench.warmup: the harness's own
inline constexpr int repeat = harness::default_repeat; ///< bench.repeat: the harness's own
inline constexpr int rounds = 6;                       ///< bench.rounds: side-by-side rounds
inline constexpr double keep_threshold = 0.01;         ///< keep.threshold
inline constexpr double keep_confidence = 0.95;        ///< keep.confidence
inline constexpr double keep_max_regression = 0.02;    ///< keep.max_regression

} // namespace kopt::spec::defaults
