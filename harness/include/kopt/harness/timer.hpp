#pragma once

#include <vector>

namespace kopt::harness {

class Problem;

/// Times one run of a problem. Backends differ in what they measure: the host timer takes wall
/// time around a synchronous run, a cuda or hip timer would record events around the launch.
class Timer {
public:
  virtual ~Timer() = default;

  /// Runs `problem` once, waits for it, and returns the run's time in microseconds.
  virtual double time_run(Problem &problem) = 0;

  /// Returns how the time is measured ("chrono", "events"), for the human output.
  virtual const char *name() const = 0;
};

/// The host timer: std::chrono::steady_clock around run() and sync().
class ChronoTimer final : public Timer {
public:
  double time_run(Problem &problem) override;
  const char *name() const override { return "chrono"; }
};

/// Returns the median of `values` (the mean of the middle two for an even count); throws Error
/// when there are none.
double median(std::vector<double> values);

} // namespace kopt::harness
