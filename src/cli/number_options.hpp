#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>

namespace kopt::cli {

/// A check for a numeric option: its value must be a finite number in [low, high]. Anything else
/// (nan, inf, text, out of range) is a usage error naming the option and the range:
/// `--noise: expected a finite number in [0, 1], got nan`. CLI11's own Range lets NaN through.
CLI::Validator finite_number(double low, double high = std::numeric_limits<double>::max());

/// A check for a count option: its value must be a whole number in [low, high]:
/// `--max-consecutive: expected a whole number >= 1, got -1`.
CLI::Validator whole_number(int64_t low, int64_t high = std::numeric_limits<int32_t>::max());

} // namespace kopt::cli
