#pragma once

#include <string>
#include <vector>

namespace kopt::harness {

class Problem;

/// The device a timer measures on, as a tuned table names it: its architecture ("sm_90",
/// "gfx942", "host") and its compute units (SMs, CUs, or the host's hardware threads).
struct DeviceIdentity {
  std::string arch; ///< "" when the timer does not know
  int compute_units = 0;
};

/// Times one run of a problem. Backends differ in what they measure: the host timer takes wall
/// time around a synchronous run, a cuda or hip timer would record events around the launch.
class Timer {
public:
  virtual ~Timer() = default;

  /// Runs `problem` once, waits for it, and returns the run's time in microseconds.
  virtual double time_run(Problem &problem) = 0;

  /// Returns how the time is measured ("chrono", "events"), for the human output.
  virtual const char *name() const = 0;

  /// Returns the device the times are of; the harness prints it (`kopt-device: <arch> <units>`)
  /// so that kopt tune can name it in tuned tables.
  virtual DeviceIdentity device() const { return {}; }

  /// True when the timed work runs on this process's own threads (the host timer): a thread the
  /// kernel leaves running when the call returns is then work the timer did not see. A GPU
  /// runtime or profiler may start threads of its own during a run, so GPU timers say false.
  virtual bool runs_on_host() const { return false; }

  /// Returns the CPU time the whole process (every thread) used during the last time_run, in
  /// microseconds, or -1 when the timer does not measure it.
  virtual double cpu_us() const { return -1; }
};

/// The host timer: std::chrono::steady_clock around run() and sync().
class ChronoTimer final : public Timer {
public:
  double time_run(Problem &problem) override;
  const char *name() const override { return "chrono"; }
  /// "host" and the hardware threads the machine has.
  DeviceIdentity device() const override;
  bool runs_on_host() const override { return true; }
  double cpu_us() const override { return cpu_us_; }

private:
  double cpu_us_ = -1;
};

/// Returns the median of `values` (the mean of the middle two for an even count); throws Error
/// when there are none.
double median(std::vector<double> values);

} // namespace kopt::harness
