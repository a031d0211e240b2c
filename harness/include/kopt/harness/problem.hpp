#pragma once

#include "kopt/harness/compare.hpp"
#include "kopt/harness/inputs.hpp"

#include <optional>
#include <vector>

namespace kopt::harness {

/// One config's buffers and chosen kernel, written by the family. The harness drives it: for
/// every run fill_inputs (fresh inputs each time), poison_output, run and sync; after every timed
/// run check_output; output only where a golden is compared or written. The run() and the
/// kernel it calls are the candidate's; everything else here is the family's own code, which
/// kopt treats as trusted (docs/KEEP.md).
class Problem {
public:
  virtual ~Problem() = default;

  /// Fills every input from `rng`, always in the same order, so one seed gives one set of inputs.
  /// Called before every run with another seed, so no cache of the candidate's can hit.
  virtual void fill_inputs(Rng &rng) = 0;

  /// Overwrites every output element with NaN (see poison()).
  virtual void poison_output() = 0;

  /// Runs the kernel once; a device backend may return before the kernel has finished.
  virtual void run() = 0;

  /// Waits until the last run() has finished; host runs are synchronous, so it does nothing.
  virtual void sync() {}

  /// Returns every output element as a float, copied to the host.
  virtual std::vector<float> output() = 0;

  /// Returns the tolerance the output is checked with; the default is fp32's.
  virtual Tolerance tolerance() const { return Tolerance{}; }

  /// Checks the run that just returned: copies its output first (so that work the candidate
  /// left running cannot finish it in time), then computes the reference of the current inputs
  /// with the family's own code (never the candidate's) and compares every element under
  /// tolerance(), on the device where the output lives. Returns nullopt when the family has no
  /// reference: its timed runs are then unchecked, and kopt keeps no candidate of it.
  virtual std::optional<Comparison> check_output() { return std::nullopt; }

  /// Compares the output of the last run with `golden` (the golden's entry for this config, in
  /// the order output() gives) under tolerance(), as compare() does, on the device where the
  /// output lives, so no output is copied back. Returns nullopt when the family does not (the
  /// harness then compares output() on the host, which also names a size mismatch).
  virtual std::optional<Comparison> compare_output(const std::vector<float> &golden) {
    (void)golden;
    return std::nullopt;
  }
};

} // namespace kopt::harness
