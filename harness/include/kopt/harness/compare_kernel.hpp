#pragma once

// The kernel of gpu::DeviceCheck (gpu.hpp), written once for the cuda and hip backends: device
// code, included by cuda.hpp and hip.hpp after their runtime's headers, whose Runtime launches
// it from compare_async. Each element is tested as compare.cpp tests it on the host (in double,
// NaN always failing), and a block's counts and maxima go to the tally by one atomic each.

#include "kopt/harness/gpu.hpp"

#include <algorithm>
#include <cstddef>

namespace kopt::harness::gpu {

/// Threads per block of the comparison (its reduction assumes this many).
constexpr unsigned compare_threads = 256;

/// Returns the float that the fp16 bits `h` encode, exactly (every fp16 value is a float).
__device__ inline float fp16_bits_to_float(unsigned h) {
  const unsigned sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) { // zero or subnormal: man * 2^-24, exact in fp32
    const float v = static_cast<float>(man) * 0x1p-24f;
    return sign ? -v : v;
  }
  const unsigned bits = exp == 31 ? sign | 0x7f800000u | man << 13 // inf, NaN
                                  : sign | (exp + 112) << 23 | man << 13;
  return __int_as_float(static_cast<int>(bits));
}

/// Returns element `i` of an output stored as D, widened to float.
template <Dtype D> __device__ inline float output_element(const void *output, std::size_t i) {
  if constexpr (D == Dtype::fp32) {
    return static_cast<const float *>(output)[i];
  } else if constexpr (D == Dtype::bf16) {
    const unsigned bits = static_cast<const unsigned short *>(output)[i];
    return __int_as_float(static_cast<int>(bits << 16));
  } else {
    return fp16_bits_to_float(static_cast<const unsigned short *>(output)[i]);
  }
}

/// Whether `x` is a NaN, by its bits, so that no fast-math flag can fold the test away.
__device__ inline bool is_nan(double x) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(x));
  return (bits & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}

/// Compares `n` elements of `output` (stored as D) with `reference` under atol + rtol * |g|,
/// adding the counts and maxima of its elements into `tally`.
template <Dtype D>
__global__ void __launch_bounds__(compare_threads)
    kopt_compare_output(const void *output, const float *reference, std::size_t n, double atol,
                        double rtol, DeviceTally *tally) {
  unsigned long long mismatches = 0, nans = 0;
  double max_abs = 0, max_rel = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double x = output_element<D>(output, i);
    const double g = reference[i];
    const double diff = fabs(x - g);
    if (is_nan(diff)) { // a NaN on either side, or inf - inf
      ++nans;
      ++mismatches;
      continue;
    }
    // Multiplied, rounded, then added, as compare.cpp does on the host: a fused multiply-add
    // would move the bound by an ulp.
    if (!(diff <= atol + __dmul_rn(rtol, fabs(g)))) {
      ++mismatches;
    }
    max_abs = fmax(max_abs, diff);
    if (g != 0) {
      max_rel = fmax(max_rel, diff / fabs(g));
    }
  }
  __shared__ unsigned long long block_mismatches[compare_threads], block_nans[compare_threads];
  __shared__ double block_abs[compare_threads], block_rel[compare_threads];
  const unsigned t = threadIdx.x;
  block_mismatches[t] = mismatches;
  block_nans[t] = nans;
  block_abs[t] = max_abs;
  block_rel[t] = max_rel;
  __syncthreads();
  for (unsigned half = compare_threads / 2; half > 0; half /= 2) {
    if (t < half) {
      block_mismatches[t] += block_mismatches[t + half];
      block_nans[t] += block_nans[t + half];
      block_abs[t] = fmax(block_abs[t], block_abs[t + half]);
      block_rel[t] = fmax(block_rel[t], block_rel[t + half]);
    }
    __syncthreads();
  }
  if (t == 0) {
    if (block_mismatches[0] != 0) {
      atomicAdd(&tally->mismatches, block_mismatches[0]);
    }
    if (block_nans[0] != 0) {
      atomicAdd(&tally->nans, block_nans[0]);
    }
    atomicMax(&tally->max_abs_bits,
              static_cast<unsigned long long>(__double_as_longlong(block_abs[0])));
    atomicMax(&tally->max_rel_bits,
              static_cast<unsigned long long>(__double_as_longlong(block_rel[0])));
  }
}

/// Launches the comparison of `n` elements of `output` (stored as `dtype`) with `reference` on
/// `stream`, adding into `tally` (zeroed before); the caller checks the launch's error. At most
/// 1024 blocks, each thread striding over the output: a few atomics, whatever its size.
template <class Stream>
void launch_compare(const void *output, Dtype dtype, const float *reference, std::size_t n,
                    Tolerance tolerance, DeviceTally *tally, Stream stream) {
  if (n == 0) {
    return;
  }
  const auto blocks = static_cast<unsigned>(
      std::min<std::size_t>((n + compare_threads - 1) / compare_threads, 1024));
  switch (dtype) {
  case Dtype::fp32:
    kopt_compare_output<Dtype::fp32><<<blocks, compare_threads, 0, stream>>>(
        output, reference, n, tolerance.atol, tolerance.rtol, tally);
    break;
  case Dtype::bf16:
    kopt_compare_output<Dtype::bf16><<<blocks, compare_threads, 0, stream>>>(
        output, reference, n, tolerance.atol, tolerance.rtol, tally);
    break;
  case Dtype::fp16:
    kopt_compare_output<Dtype::fp16><<<blocks, compare_threads, 0, stream>>>(
        output, reference, n, tolerance.atol, tolerance.rtol, tally);
    break;
  }
}

} // namespace kopt::harness::gpu
