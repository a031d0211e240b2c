#pragma once

// The cuda_spin kernel: each block spins for a set number of SM cycles (times kSpinScale), so
// a candidate's change in duration is known exactly; a calibration family, not a workload.

#include "spin_scale.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

/// One run's length and where its blocks report that they ran.
struct SpinArgs {
  std::int64_t cycles; ///< SM cycles each block spins, before kSpinScale
  float *out;          ///< one float per block, set to 1 by its first thread
  cudaStream_t stream;
};

// The host compiler sees this header too (the generated registry and dispatch include it
// through kopt_manifest.h), so the kernel sits under __CUDACC__.
#if defined(__CUDACC__)
template <int BLOCKS> __global__ void spin_kernel(long long cycles, float *out) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = 1.0f;
  }
}

/// Launches BLOCKS blocks of one warp, each spinning args.cycles * kSpinScale cycles.
template <int BLOCKS> cudaError_t spin(const SpinArgs &args) {
  const auto cycles = static_cast<long long>(static_cast<double>(args.cycles) * kSpinScale + 0.5);
  spin_kernel<BLOCKS><<<BLOCKS, 32, 0, args.stream>>>(cycles, args.out);
  return cudaGetLastError();
}
#endif // __CUDACC__
