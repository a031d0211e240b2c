#pragma once

// The a8w8 blockscale GEMM (DeepSeek-V3 / aiter layout) in plain HIP, the family of
// examples/cuda_gemm_a8w8_blockscale written for AMD GPUs:
//   A  fp8 e4m3 [M, K] row-major, scale_a float [M, K/128]      (one scale per row and 128 of K)
//   B  fp8 e4m3 [N, K] row-major, scale_b float [N/128, K/128]  (one scale per 128x128 block)
//   C  bf16 [M, N] = sum over K blocks kb of (sum_{k in kb} A[m,k] * B[n,k]) * sa[m,kb] *
//   sb[n/128,kb]
// fp8 arrives as bytes (OCP e4m3, the CUDA example's encoding) and is decoded to float through
// a 256-entry table in LDS: Debian's HIP 5.2 has no fp8 types, and one kernel then serves gfx90a
// (no fp8 hardware) and gfx94x alike. Each 128-wide K block is summed in fp32, then scaled and
// added to the fp32 accumulator.
//
// Instances are named the way Composable Kernel names its a8w8 blockscale instances:
//   a8w8_blockscale_1x128x128_<BLOCK>x<BM>x<BN>x<BK>_<TM>x<TN>_intrawave_v1
// (scale blocks 1x128 for A and 128x128 for B, threads per block, the block's M, N and K tile,
// each thread's TM x TN outputs). Shapes: any M >= 1; N % BN == 0 and N % 128 == 0; K % BK == 0.
// Other shapes are refused with hipErrorInvalidValue, never computed wrongly.
//
// Registry and dispatch include this header too; kopt compiles every TU of a hip family as HIP.

#include <hip/hip_runtime.h>

#include <cstdint>

/// One GEMM call's shape, buffers (device pointers) and stream.
struct GemmArgs {
  std::int64_t M, N, K;
  const std::uint8_t *A; ///< fp8 e4m3 bytes, [M, K]
  const std::uint8_t *B; ///< fp8 e4m3 bytes, [N, K]
  const float *scale_a;  ///< [M, K / 128]
  const float *scale_b;  ///< [N / 128, K / 128]
  std::uint16_t *C;      ///< bf16 bits, [M, N]
  hipStream_t stream;
};

/// The scale block along K.
constexpr int kScaleBlock = 128;

namespace a8w8 {

/// Returns the float an OCP e4m3 byte encodes (0x7F / 0xFF are NaN; no infinities).
__host__ __device__ inline float e4m3_to_float(std::uint8_t x) {
  const int sign = x >> 7, exp = (x >> 3) & 15, man = x & 7;
  float v;
  if (exp == 15 && man == 7) {
    v = __builtin_nanf("");
  } else if (exp == 0) {
    v = ldexpf(static_cast<float>(man), -9); // subnormal: man * 2^-6 / 8
  } else {
    v = ldexpf(1.f + man / 8.f, exp - 7);
  }
  return sign ? -v : v;
}

// Rounds fp32 to bf16 (nearest even), NaN kept a NaN.
__device__ inline std::uint16_t to_bf16(float x) {
  std::uint32_t u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return 0x7fc0;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

// One BM x BN tile of C per block of BLOCK threads; thread (ty, tx) owns rows ty + i * (BM/TM)
// and columns tx + j * (BN/TN), so neighbouring lanes read neighbouring LDS words. Each step
// stages a BM x BK slab of A and a BN x BK slab of B as bytes in LDS (BK / 128 scale blocks).
template <int BLOCK, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BLOCK) gemm_a8w8_blockscale_kernel(GemmArgs g) {
  static_assert((BM / TM) * (BN / TN) == BLOCK, "the thread grid must cover the tile");
  static_assert(BK % kScaleBlock == 0, "a K step holds whole scale blocks");
  constexpr int RY = BM / TM, RX = BN / TN;
  __shared__ float lut[256];
  __shared__ std::uint8_t sA[BM][BK + 4];
  __shared__ std::uint8_t sB[BN][BK + 4];
  const int tid = threadIdx.x, ty = tid / RX, tx = tid % RX;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * BM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * BN;
  const std::int64_t KB = g.K / kScaleBlock;
  for (int i = tid; i < 256; i += BLOCK) {
    lut[i] = e4m3_to_float(static_cast<std::uint8_t>(i));
  }
  float acc[TM][TN] = {};
  for (std::int64_t k0 = 0; k0 < g.K; k0 += BK) {
    __syncthreads();
    // 4-byte loads: K % 128 == 0 keeps every row start 4-byte aligned.
    for (int e = tid; e < BM * BK / 4; e += BLOCK) {
      const int r = e / (BK / 4), c = (e % (BK / 4)) * 4;
      std::uint32_t word = 0;
      if (m0 + r < g.M) {
        word = *reinterpret_cast<const std::uint32_t *>(g.A + (m0 + r) * g.K + k0 + c);
      }
      *reinterpret_cast<std::uint32_t *>(&sA[r][c]) = word;
    }
    for (int e = tid; e < BN * BK / 4; e += BLOCK) {
      const int r = e / (BK / 4), c = (e % (BK / 4)) * 4;
      *reinterpret_cast<std::uint32_t *>(&sB[r][c]) =
          *reinterpret_cast<const std::uint32_t *>(g.B + (n0 + r) * g.K + k0 + c);
    }
    __syncthreads();
    for (int sub = 0; sub < BK / kScaleBlock; ++sub) {
      float part[TM][TN] = {};
      for (int k = sub * kScaleBlock; k < (sub + 1) * kScaleBlock; ++k) {
        float a[TM], b[TN];
        for (int i = 0; i < TM; ++i) {
          a[i] = lut[sA[ty + i * RY][k]];
        }
        for (int j = 0; j < TN; ++j) {
          b[j] = lut[sB[tx + j * RX][k]];
        }
        for (int i = 0; i < TM; ++i) {
          for (int j = 0; j < TN; ++j) {
            part[i][j] = fmaf(a[i], b[j], part[i][j]);
          }
        }
      }
      const std::int64_t kb = k0 / kScaleBlock + sub;
      for (int i = 0; i < TM; ++i) {
        const std::int64_t m = m0 + ty + i * RY;
        const float sa = m < g.M ? g.scale_a[m * KB + kb] : 0.f;
        for (int j = 0; j < TN; ++j) {
          const std::int64_t n = n0 + tx + j * RX;
          acc[i][j] += part[i][j] * (sa * g.scale_b[(n / kScaleBlock) * KB + kb]);
        }
      }
    }
  }
  for (int i = 0; i < TM; ++i) {
    const std::int64_t m = m0 + ty + i * RY;
    if (m < g.M) {
      for (int j = 0; j < TN; ++j) {
        g.C[m * g.N + n0 + tx + j * RX] = to_bf16(acc[i][j]);
      }
    }
  }
}

} // namespace a8w8

/// Launches one instance on args.stream; returns hipErrorInvalidValue for a shape it cannot
/// compute, else the launch's hipGetLastError().
template <int BLOCK, int BM, int BN, int BK, int TM, int TN>
hipError_t a8w8_blockscale_gemm(const GemmArgs &args) {
  if (args.M < 1 || args.N % BN != 0 || args.N % kScaleBlock != 0 || args.K % BK != 0 ||
      args.K < BK) {
    return hipErrorInvalidValue;
  }
  // Grid x runs over M so that neighbouring blocks share B's tile in L2.
  const dim3 grid(static_cast<unsigned>((args.M + BM - 1) / BM),
                  static_cast<unsigned>(args.N / BN));
  hipLaunchKernelGGL((a8w8::gemm_a8w8_blockscale_kernel<BLOCK, BM, BN, BK, TM, TN>), grid,
                     dim3(BLOCK), 0, args.stream, args);
  return hipGetLastError();
}
