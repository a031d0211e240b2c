#pragma once

// The host_spin kernel: spins on the steady clock for a set number of microseconds (times
// kSpinScale), so a candidate's change in duration is known exactly; a calibration family, not
// a workload. CHECK is how many pause iterations lie between clock reads.

#include "spin_scale.hpp"

#include <chrono>
#include <cstdint>

/// One run's length and where it reports that it ran.
struct SpinArgs {
  std::int64_t us; ///< microseconds to spin, before kSpinScale
  float *out;      ///< set to 1 when the spin ends
};

template <int CHECK> void spin(const SpinArgs &args) {
  using clock = std::chrono::steady_clock;
  const auto length = std::chrono::nanoseconds(
      static_cast<std::int64_t>(1000.0 * static_cast<double>(args.us) * kSpinScale + 0.5));
  const auto start = clock::now();
  volatile std::int64_t spins = 0;
  while (clock::now() - start < length) {
    for (int i = 0; i < CHECK; ++i) {
      spins = spins + 1;
    }
  }
  *args.out = 1.0f;
}
