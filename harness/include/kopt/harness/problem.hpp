#pragma once

#include "kopt/harness/compare.hpp"
#include "kopt/harness/inputs.hpp"

#include <vector>

namespace kopt::harness {

/// One config's buffers and chosen kernel, written by the family. The harness drives it:
/// fill_inputs once, then for every run poison_output, run and sync, then output.
class Problem {
public:
  virtual ~Problem() = default;

  /// Fills every input from `rng`, always in the same order, so one seed gives one set of inputs.
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
};

} // namespace kopt::harness
