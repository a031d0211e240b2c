#pragma once

// The a8w8 blockscale GEMM (DeepSeek-V3 / aiter layout) on tensor cores:
//   A  fp8 e4m3 [M, K] row-major, scale_a float [M, K/128]      (one scale per row and 128 of K)
//   B  fp8 e4m3 [N, K] row-major, scale_b float [N/128, K/128]  (one scale per 128x128 block)
//   C  bf16 [M, N] = sum over K blocks kb of (sum_{k in kb} A[m,k] * B[n,k]) * sa[m,kb] * sb[n/128,kb]
// Each 128-wide K block is accumulated in fp32 by mma.sync m16n8k32 e4m3 (sm_89+), then scaled
// and added to the fp32 accumulator, as DeepGEMM's "promotion" does.
//
// Shapes: any M >= 1 (rows past M are zero-filled on load and never stored); N a multiple of
// BLOCK_N (every instance's BLOCK_N divides 128, so N % 128 == 0 is enough); K a multiple of 128
// (the scale block, which is also the kernel's fixed BLOCK_K). Other shapes are refused with
// cudaErrorInvalidValue, never computed wrongly.
//
// This header is also read by the host compiler (kopt's generated registry and dispatch include
// it through kopt_manifest.h), so everything CUDA-only sits under __CUDACC__.

#include <cuda_runtime_api.h>

#include <cstdint>

/// One GEMM call's shape, buffers (device pointers) and stream.
struct GemmArgs {
  std::int64_t M, N, K;
  const std::uint8_t *A;  ///< fp8 e4m3 bytes, [M, K]
  const std::uint8_t *B;  ///< fp8 e4m3 bytes, [N, K]
  const float *scale_a;   ///< [M, K / 128]
  const float *scale_b;   ///< [N / 128, K / 128]
  std::uint16_t *C;       ///< bf16 bits, [M, N]
  cudaStream_t stream;
};

/// The scale block along K, and every instance's BLOCK_K.
constexpr int kScaleBlock = 128;

#if defined(__CUDACC__)

#include <cuda_bf16.h>

namespace a8w8 {

// The smem layout of a tile: rows of 128 bytes (one K block) split into 8 chunks of 16 bytes.
// The baseline stores chunks in place, so the 8 row addresses of one ldmatrix phase all hit
// the same four banks (rows are 128 bytes apart).
constexpr bool kSwizzleSmem = false;

__device__ __forceinline__ int smem_chunk(int row, int chunk) {
  return kSwizzleSmem ? (chunk ^ (row & 7)) : chunk;
}

__device__ __forceinline__ std::uint32_t smem_addr(const void *p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; src_bytes 0 fills the destination with zeros.
__device__ __forceinline__ void cp_async_16(void *dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_4(void *dst, const void *src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// D = A * B + D for one 16x8x32 fp8 tile (A row-major, B column-major, i.e. B stored [n][k]).
__device__ __forceinline__ void mma_e4m3(float (&d)[4], const std::uint32_t (&a)[4],
                                         std::uint32_t b0, std::uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// The shared memory one pipeline stage holds: the A and B tiles of one K block and their scales.
template <int BM, int BN> struct Stage {
  static constexpr int a_bytes = BM * kScaleBlock;
  static constexpr int b_bytes = BN * kScaleBlock;
  static constexpr int sa_offset = a_bytes + b_bytes;
  static constexpr int sb_offset = sa_offset + BM * 4;
  static constexpr int bytes = (sb_offset + 4 + 127) / 128 * 128;
};

struct Params {
  int M, N, K;
  const std::uint8_t *A;
  const std::uint8_t *B;
  const float *scale_a;
  const float *scale_b;
  __nv_bfloat16 *C;
};

/// A BM x BN tile of C per block, WM x WN warps, STAGES K blocks in flight through cp.async.
template <int BM, int BN, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(WM *WN * 32) gemm_a8w8_blockscale(Params p) {
  constexpr int kThreads = WM * WN * 32;
  constexpr int WTM = BM / WM; // warp tile
  constexpr int WTN = BN / WN;
  constexpr int MI = WTM / 16;
  constexpr int NI = WTN / 8;
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");
  static_assert(kScaleBlock % BN == 0, "BLOCK_N must divide 128: one scale_b per tile");
  static_assert(STAGES >= 1, "at least one stage");
  using S = Stage<BM, BN>;

  extern __shared__ __align__(128) std::uint8_t smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wm0 = (warp / WN) * WTM;
  const int wn0 = (warp % WN) * WTN;
  const int m0 = blockIdx.x * BM; // x over M: neighbouring blocks share B's tile in L2
  const int n0 = blockIdx.y * BN;
  const int KB = p.K / kScaleBlock;

  auto load_stage = [&](int slot, int kb) {
    std::uint8_t *base = smem + slot * S::bytes;
    const int k0 = kb * kScaleBlock;
    for (int c = tid; c < BM * 8; c += kThreads) {
      const int row = c >> 3, chunk = c & 7;
      const bool valid = m0 + row < p.M;
      const std::uint8_t *src = valid ? p.A + (std::int64_t)(m0 + row) * p.K + k0 + chunk * 16 : p.A;
      cp_async_16(base + row * 128 + smem_chunk(row, chunk) * 16, src, valid ? 16 : 0);
    }
    for (int c = tid; c < BN * 8; c += kThreads) {
      const int row = c >> 3, chunk = c & 7;
      const std::uint8_t *src = p.B + (std::int64_t)(n0 + row) * p.K + k0 + chunk * 16;
      cp_async_16(base + S::a_bytes + row * 128 + smem_chunk(row, chunk) * 16, src, 16);
    }
    for (int r = tid; r < BM; r += kThreads) {
      const bool valid = m0 + r < p.M;
      const float *src = valid ? p.scale_a + (std::int64_t)(m0 + r) * KB + kb : p.scale_a;
      cp_async_4(base + S::sa_offset + r * 4, src, valid ? 4 : 0);
    }
    if (tid == 0) {
      cp_async_4(base + S::sb_offset, p.scale_b + (std::int64_t)(n0 / kScaleBlock) * KB + kb, 4);
    }
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  auto compute_stage = [&](int slot) {
    const std::uint8_t *base = smem + slot * S::bytes;
    const std::uint8_t *sA = base;
    const std::uint8_t *sB = base + S::a_bytes;
    float part[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) part[i][j][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kScaleBlock / 32; ++kk) {
      std::uint32_t a[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        // Matrices 0..3: rows 0-7 / 8-15 at k 0-15, then the same at k 16-31.
        const int row = wm0 + i * 16 + (lane & 15);
        const int chunk = kk * 2 + (lane >> 4);
        ldmatrix_x4(a[i], sA + row * 128 + smem_chunk(row, chunk) * 16);
      }
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        // Matrices 0..3: n-block j at k 0-15 / 16-31, then n-block j+1 likewise.
        std::uint32_t b[4];
        const int mat = lane >> 3;
        const int row = wn0 + j * 8 + (mat >> 1) * 8 + (lane & 7);
        const int chunk = kk * 2 + (mat & 1);
        ldmatrix_x4(b, sB + row * 128 + smem_chunk(row, chunk) * 16);
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          mma_e4m3(part[i][j], a[i], b[0], b[1]);
          mma_e4m3(part[i][j + 1], a[i], b[2], b[3]);
        }
      }
    }
    const float *sa = reinterpret_cast<const float *>(base + S::sa_offset);
    const float sb = *reinterpret_cast<const float *>(base + S::sb_offset);
#pragma unroll
    for (int i = 0; i < MI; ++i) {
      const int r = wm0 + i * 16 + (lane >> 2);
      const float s0 = sa[r] * sb, s1 = sa[r + 8] * sb;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        acc[i][j][0] += part[i][j][0] * s0;
        acc[i][j][1] += part[i][j][1] * s0;
        acc[i][j][2] += part[i][j][2] * s1;
        acc[i][j][3] += part[i][j][3] * s1;
      }
    }
  };

  if constexpr (STAGES == 1) {
    for (int kb = 0; kb < KB; ++kb) {
      load_stage(0, kb);
      cp_async_commit();
      cp_async_wait<0>();
      __syncthreads();
      compute_stage(0);
      __syncthreads();
    }
  } else {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < KB) load_stage(s, s);
      cp_async_commit(); // empty groups keep the group count uniform
    }
    for (int kb = 0; kb < KB; ++kb) {
      cp_async_wait<STAGES - 2>(); // K block kb has landed (this thread's copies)
      __syncthreads();             // ... everyone's, and slot (kb-1) % STAGES is free again
      const int next = kb + STAGES - 1;
      if (next < KB) load_stage(next % STAGES, next);
      cp_async_commit();
      compute_stage(kb % STAGES);
    }
    cp_async_wait<0>();
  }

#pragma unroll
  for (int i = 0; i < MI; ++i) {
    const int r = m0 + wm0 + i * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int c = n0 + wn0 + j * 8 + (lane & 3) * 2;
      if (r < p.M) {
        *reinterpret_cast<__nv_bfloat162 *>(p.C + (std::int64_t)r * p.N + c) =
            __floats2bfloat162_rn(acc[i][j][0], acc[i][j][1]);
      }
      if (r + 8 < p.M) {
        *reinterpret_cast<__nv_bfloat162 *>(p.C + (std::int64_t)(r + 8) * p.N + c) =
            __floats2bfloat162_rn(acc[i][j][2], acc[i][j][3]);
      }
    }
  }
}

} // namespace a8w8

/// Launches one instance on args.stream and returns the first error: a shape the kernel does not
/// take (cudaErrorInvalidValue), a failed attribute call or a failed launch. Asynchronous: a
/// fault inside the kernel shows at the caller's next synchronisation.
template <int BM, int BN, int WM, int WN, int STAGES>
cudaError_t a8w8_blockscale_gemm(const GemmArgs &args) {
  using S = a8w8::Stage<BM, BN>;
  if (args.M < 1 || args.N < 1 || args.K < kScaleBlock || args.N % BN != 0 ||
      args.N % kScaleBlock != 0 || args.K % kScaleBlock != 0 || args.M > INT32_MAX ||
      args.N > INT32_MAX || args.K > INT32_MAX || (args.M + BM - 1) / BM > INT32_MAX ||
      args.N / BN > 65535) {
    return cudaErrorInvalidValue;
  }
  constexpr int smem = S::bytes * STAGES;
  auto kernel = a8w8::gemm_a8w8_blockscale<BM, BN, WM, WN, STAGES>;
  // Raised once per instance: a per-launch attribute call would sit inside the timed region.
  static const cudaError_t attribute =
      smem > 48 * 1024
          ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)
          : cudaSuccess;
  if (attribute != cudaSuccess) {
    return attribute;
  }
  a8w8::Params p{static_cast<int>(args.M), static_cast<int>(args.N), static_cast<int>(args.K),
                 args.A, args.B, args.scale_a, args.scale_b,
                 reinterpret_cast<__nv_bfloat16 *>(args.C)};
  dim3 grid(static_cast<unsigned>((args.M + BM - 1) / BM), static_cast<unsigned>(args.N / BN));
  kernel<<<grid, WM * WN * 32, smem, args.stream>>>(p);
  return cudaGetLastError();
}

#endif // __CUDACC__
