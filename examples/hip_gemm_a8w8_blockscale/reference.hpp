#pragma once

// What the family's harness uses and candidates never change: seeded inputs made on the device,
// the fp32 reference GEMM (the golden) and a CPU reference of single rows that checks it. The
// HIP port of examples/cuda_gemm_a8w8_blockscale/reference.cuh: the same inputs for the same
// seed (OCP e4m3 bytes, rounded to nearest even here in software). Not in family.json's
// "editable".

#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace a8w8_ref {

/// The scale block along K (gemm_kernel.cuh's kScaleBlock; not included here, since a candidate's
/// copy of that header is the one the harness compiles).
constexpr int kScaleBlock = 128;

/// The reference's view of one problem: device pointers, fp8 as bytes, and the stream.
struct RefArgs {
  std::int64_t M, N, K;
  const std::uint8_t *A; ///< [M, K]
  const std::uint8_t *B; ///< [N, K]
  const float *scale_a;  ///< [M, K / 128]
  const float *scale_b;  ///< [N / 128, K / 128]
  hipStream_t stream;
};

// splitmix64's finaliser: inputs are a pure function of (seed, index), the same on any GPU.
__host__ __device__ inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ inline float unit(std::uint64_t seed, std::int64_t i) { // [0, 1)
  return static_cast<float>(mix(seed ^ mix(static_cast<std::uint64_t>(i))) >> 40) * 0x1p-24f;
}

// x in (-1, 1) as an OCP e4m3 byte, rounded to nearest even (what __nv_fp8_e4m3(x) gives).
__host__ __device__ inline std::uint8_t float_to_e4m3(float x) {
  const std::uint8_t sign = x < 0.f ? 0x80 : 0;
  const float a = fabsf(x);
  if (a < 0x1p-6f) { // subnormal: steps of 2^-9 (rounding up to 8 steps gives the first normal)
    return sign | static_cast<std::uint8_t>(rintf(a * 0x1p9f));
  }
  int e = 0;
  const float f = frexpf(a, &e); // a = f * 2^e, f in [0.5, 1)
  int man = static_cast<int>(rintf((2.f * f - 1.f) * 8.f));
  int exp = e - 1 + 7;
  if (man == 8) { // rounded up to the next power of two
    man = 0;
    ++exp;
  }
  return sign | static_cast<std::uint8_t>(exp << 3 | man);
}

// fp8 e4m3 values of U(-1, 1) rounded to e4m3: signed, varied, never all zero.
__global__ void fill_fp8(std::uint8_t *dst, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    dst[i] = float_to_e4m3(2.f * unit(seed, i) - 1.f);
  }
}

// Scales in [2^-4, 2^0) with a random mantissa, as amax / 448 quantisation gives.
__global__ void fill_scale(float *dst, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    dst[i] = exp2f(-4.f * unit(seed, i));
  }
}

// The decoding is the kernel header's a8w8::e4m3_to_float, repeated here because a candidate's
// copy of that header is the one the harness compiles.
__host__ __device__ inline float fp8_to_float(std::uint8_t x) {
  const int sign = x >> 7, exp = (x >> 3) & 15, man = x & 7;
  float v;
  if (exp == 15 && man == 7) {
    v = __builtin_nanf("");
  } else if (exp == 0) {
    v = ldexpf(static_cast<float>(man), -9);
  } else {
    v = ldexpf(1.f + man / 8.f, exp - 7);
  }
  return sign ? -v : v;
}

// The fp32 reference on the fp8-decoded inputs, plain FMAs (no tensor cores): per 128-wide K
// block an fp32 sum, then scaled and added, the order the family's definition gives. 64x64
// outputs per block of 16x16 threads, 4x4 per thread.
__global__ void __launch_bounds__(256) reference_gemm(RefArgs g, float *out) {
  __shared__ float sA[16][64 + 1];
  __shared__ float sB[16][64 + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const std::int64_t m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  const std::int64_t KB = g.K / kScaleBlock;
  float acc[4][4] = {};
  for (std::int64_t kb = 0; kb < KB; ++kb) {
    float part[4][4] = {};
    for (int k1 = 0; k1 < kScaleBlock; k1 += 16) {
      for (int e = tid; e < 64 * 16; e += 256) {
        const int r = e / 16, k = e % 16;
        const std::int64_t kk = kb * kScaleBlock + k1 + k;
        sA[k][r] = m0 + r < g.M ? fp8_to_float(g.A[(m0 + r) * g.K + kk]) : 0.f;
        sB[k][r] = n0 + r < g.N ? fp8_to_float(g.B[(n0 + r) * g.K + kk]) : 0.f;
      }
      __syncthreads();
      for (int k = 0; k < 16; ++k) {
        for (int i = 0; i < 4; ++i) {
          for (int j = 0; j < 4; ++j) {
            part[i][j] = fmaf(sA[k][ty + 16 * i], sB[k][tx + 16 * j], part[i][j]);
          }
        }
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      const std::int64_t m = m0 + ty + 16 * i;
      const float sa = m < g.M ? g.scale_a[m * KB + kb] : 0.f;
      for (int j = 0; j < 4; ++j) {
        const std::int64_t n = n0 + tx + 16 * j;
        const float sb = n < g.N ? g.scale_b[(n / kScaleBlock) * KB + kb] : 0.f;
        acc[i][j] += part[i][j] * (sa * sb);
      }
    }
  }
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const std::int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < g.M && n < g.N) {
        out[m * g.N + n] = acc[i][j];
      }
    }
  }
}

/// Launches the reference into `out` (fp32 [M, N]) on g.stream; returns the launch's error.
inline hipError_t launch_reference(const RefArgs &g, float *out) {
  dim3 grid(static_cast<unsigned>((g.N + 63) / 64), static_cast<unsigned>((g.M + 63) / 64));
  hipLaunchKernelGGL(reference_gemm, grid, dim3(16, 16), 0, g.stream, g, out);
  return hipGetLastError();
}

/// Returns the float an e4m3 byte encodes (host side, for the CPU reference).
inline float fp8_value(std::uint8_t x) { return fp8_to_float(x); }

/// The CPU fp32 reference of one output row: a_row is A[m, :], b is all of B (host copies).
inline std::vector<float> cpu_reference_row(const std::uint8_t *a_row, const float *sa_row,
                                            const std::vector<std::uint8_t> &b,
                                            const std::vector<float> &sb, std::int64_t N,
                                            std::int64_t K) {
  float lut[256];
  for (int i = 0; i < 256; ++i) {
    lut[i] = fp8_value(static_cast<std::uint8_t>(i));
  }
  const std::int64_t KB = K / kScaleBlock;
  std::vector<float> a(K);
  for (std::int64_t k = 0; k < K; ++k) {
    a[k] = lut[a_row[k]];
  }
  std::vector<float> row(N, 0.f);
  for (std::int64_t n = 0; n < N; ++n) {
    const std::uint8_t *brow = b.data() + n * K;
    float acc = 0.f;
    for (std::int64_t kb = 0; kb < KB; ++kb) {
      float part = 0.f;
      for (int k = 0; k < kScaleBlock; ++k) {
        part += a[kb * kScaleBlock + k] * lut[brow[kb * kScaleBlock + k]];
      }
      acc += part * (sa_row[kb] * sb[(n / kScaleBlock) * KB + kb]);
    }
    row[n] = acc;
  }
  return row;
}

} // namespace a8w8_ref
