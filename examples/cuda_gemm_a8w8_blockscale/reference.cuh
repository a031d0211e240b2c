#pragma once

// What the family's harness and bench/standalone.cu share, and candidates never change: seeded
// inputs made on the device, the fp32 reference GEMM (the golden), a CPU reference of single
// rows that checks it, and an on-device comparison. Not in family.json's "editable".

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <mma.h>

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
  cudaStream_t stream;
};

/// Which of A's rows the reference computes: row i of its output is A's row index[i] (device
/// memory, `count` entries), or row i itself when index is null (then count is M).
struct RowSample {
  const std::int64_t *index;
  std::int64_t count;
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

// fp8 e4m3 values of U(-1, 1) rounded to e4m3: signed, varied, never all zero.
__global__ void fill_fp8(std::uint8_t *dst, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    dst[i] = __nv_fp8_e4m3(2.f * unit(seed, i) - 1.f).__x;
  }
}

// Scales in [2^-4, 2^0) with a random mantissa, as amax / 448 quantisation gives.
__global__ void fill_scale(float *dst, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    dst[i] = exp2f(-4.f * unit(seed, i));
  }
}

__device__ inline float fp8_to_float(std::uint8_t x) {
  __nv_fp8_e4m3 v;
  v.__x = x;
  return static_cast<float>(v);
}

// The fp32 reference on the fp8-decoded inputs: per 128-wide K block an fp32 sum, then scaled and
// added, the order the family's definition gives. The block sums run on tensor cores: every e4m3
// value is exact in bf16, the product of two bf16 is exact in fp32, and the accumulators are
// fp32, so each block sum is the exact products summed in fp32 (in another order than plain
// FMAs would: about 1e-6 apart, under the CPU check's 1e-3 and far under bf16's tolerance).
// 64x64 outputs per block of 4 warps, 32x32 per warp as 2x2 WMMA tiles of 16x16x16.
//
// Output row i (0 <= i < rows.count) is the reference of A's row rows.index[i], or of row i when
// rows.index is null: the whole output, or a sample of its rows (RowSample).
__global__ void __launch_bounds__(128) reference_gemm(RefArgs g, RowSample rows, float *out) {
  using namespace nvcuda;
  constexpr int BM = 64, BN = 64, BK = kScaleBlock;
  constexpr int LDS = BK + 8; // bf16 elements per shared row: 16-byte rows, banks staggered
  constexpr int LDC = BN + 4; // floats per row of the block sums
  // The bf16 tiles, and after their products the block sums in the same bytes.
  __shared__ __align__(128) unsigned char smem[2 * BM * LDS * sizeof(__nv_bfloat16)];
  static_assert(BM * LDC * sizeof(float) <= sizeof(smem), "the block sums fit the tiles' bytes");
  auto *sA = reinterpret_cast<__nv_bfloat16 *>(smem);
  auto *sB = sA + BM * LDS;
  auto *sC = reinterpret_cast<float *>(smem);
  const int tid = threadIdx.x, warp = tid / 32, wm = warp / 2, wn = warp % 2;
  const std::int64_t m0 = blockIdx.y * (std::int64_t)BM, n0 = blockIdx.x * (std::int64_t)BN;
  const std::int64_t KB = g.K / kScaleBlock;
  auto a_row = [&](std::int64_t i) { return rows.index ? rows.index[i] : i; };
  float total[BM * BN / 128] = {};
  for (std::int64_t kb = 0; kb < KB; ++kb) {
    // 64 rows x 128 bytes of A and of B, 16 bytes a load, decoded to bf16; rows past the last
    // are 0.
    for (int e = tid; e < BM * BK / 16; e += 128) {
      const int r = e / (BK / 16), c = (e % (BK / 16)) * 16;
      const std::int64_t k = kb * BK + c;
      uint4 a = make_uint4(0, 0, 0, 0), b = make_uint4(0, 0, 0, 0);
      if (m0 + r < rows.count) {
        a = *reinterpret_cast<const uint4 *>(g.A + a_row(m0 + r) * g.K + k);
      }
      if (n0 + r < g.N) {
        b = *reinterpret_cast<const uint4 *>(g.B + (n0 + r) * g.K + k);
      }
      const auto *ab = reinterpret_cast<const std::uint8_t *>(&a);
      const auto *bb = reinterpret_cast<const std::uint8_t *>(&b);
      for (int t = 0; t < 16; ++t) {
        sA[r * LDS + c + t] = __float2bfloat16(fp8_to_float(ab[t]));
        sB[r * LDS + c + t] = __float2bfloat16(fp8_to_float(bb[t]));
      }
    }
    __syncthreads();
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        wmma::fill_fragment(acc[i][j], 0.f);
      }
    }
    for (int k = 0; k < BK; k += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb[2];
      for (int i = 0; i < 2; ++i) {
        wmma::load_matrix_sync(fa[i], sA + (wm * 32 + i * 16) * LDS + k, LDS);
        wmma::load_matrix_sync(fb[i], sB + (wn * 32 + i * 16) * LDS + k, LDS);
      }
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
      }
    }
    __syncthreads(); // every warp has read the tiles before the sums overwrite them
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        wmma::store_matrix_sync(sC + (wm * 32 + i * 16) * LDC + wn * 32 + j * 16, acc[i][j], LDC,
                                wmma::mem_row_major);
      }
    }
    __syncthreads();
    // The block's 64 columns share one scale of B (N blocks of 128).
    const float sb = g.scale_b[(n0 / kScaleBlock) * KB + kb];
    for (int q = 0; q < BM * BN / 128; ++q) {
      const int e = tid + q * 128, r = e / BN, c = e % BN;
      const float sa = m0 + r < rows.count ? g.scale_a[a_row(m0 + r) * KB + kb] : 0.f;
      total[q] += sC[r * LDC + c] * (sa * sb);
    }
    __syncthreads(); // the sums are read before the next tiles overwrite them
  }
  for (int q = 0; q < BM * BN / 128; ++q) {
    const int e = tid + q * 128, r = e / BN, c = e % BN;
    if (m0 + r < rows.count) {
      out[(m0 + r) * g.N + n0 + c] = total[q];
    }
  }
}

/// Launches the reference of the rows of A that `rows` names into `out` (fp32 [rows.count, N])
/// on g.stream; returns the launch's error.
inline cudaError_t launch_reference_rows(const RefArgs &g, RowSample rows, float *out) {
  dim3 grid(static_cast<unsigned>((g.N + 63) / 64), static_cast<unsigned>((rows.count + 63) / 64));
  reference_gemm<<<grid, 128, 0, g.stream>>>(g, rows, out);
  return cudaGetLastError();
}

/// Launches the reference into `out` (fp32 [M, N]) on g.stream; returns the launch's error.
inline cudaError_t launch_reference(const RefArgs &g, float *out) {
  return launch_reference_rows(g, RowSample{nullptr, g.M}, out);
}

/// Copies the output rows index[0..count) of `c` ([M, N] bf16 bits) into `out` ([count, N]), in
/// that order.
__global__ void gather_rows(const std::uint16_t *c, const std::int64_t *index, std::int64_t count,
                            std::int64_t N, std::uint16_t *out) {
  for (std::int64_t e = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; e < count * N;
       e += (std::int64_t)gridDim.x * blockDim.x) {
    out[e] = c[index[e / N] * N + e % N];
  }
}

// Counts the bf16 outputs outside atol + rtol * |golden| (NaN included).
__global__ void count_mismatches(const std::uint16_t *c, const float *golden, std::int64_t n,
                                 float atol, float rtol, unsigned long long *count) {
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    __nv_bfloat16_raw raw;
    raw.x = c[i];
    const float x = __bfloat162float(__nv_bfloat16(raw));
    const float diff = fabsf(x - golden[i]);
    if (!(diff <= atol + rtol * fabsf(golden[i]))) {
      ++local;
    }
  }
  if (local) {
    atomicAdd(count, local);
  }
}

/// Returns the float an e4m3 byte encodes (host side, for the CPU reference).
inline float fp8_value(std::uint8_t x) {
  __nv_fp8_e4m3 v;
  v.__x = x;
  return static_cast<float>(v);
}

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
