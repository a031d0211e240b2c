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

#include <cuda.h> // CUtensorMap and its enums (the entry point is fetched at run time)
#include <cuda_bf16.h>

namespace a8w8 {

// The smem layout of a tile: rows of 128 bytes (one K block) split into 8 chunks of 16 bytes.
// Chunk c of row r is stored at c ^ (r & 7): the 8 row addresses of one ldmatrix phase (rows
// 128 bytes apart) then hit 8 different 16-byte bank groups instead of the same one.
constexpr bool kSwizzleSmem = true;

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

// ---------------------------------------------------------------------------------------------
// Hopper path (sm_90a): wgmma + TMA + mbarrier pipeline, warp-specialised.
//
// Taken by every instance whose tile is at least 64 x 64 (BM in {64, 128}, BN in {64, 128});
// the 16- and 32-row decode tiles keep the mma.sync kernel above. One CTA of 3 warpgroups per
// BM x BN tile of C: warpgroup 0 is the producer (one thread issues the TMA loads of A's and B's
// K block into STAGES shared-memory slots, 128B-swizzled, completing on the slot's "full"
// mbarrier); warpgroups 1 and 2 are consumers. With BM = 128 each consumer owns 64 rows x BN
// columns; with BM = 64 both own the 64 rows and BN / 2 columns each. Per K block (128 = the
// scale block) a consumer issues 4 wgmma m64nNk32 e4m3 (A and B from shared memory through
// descriptors) into an fp32 partial, waits for them, frees the slot (every consumer thread
// arrives on the slot's "empty" mbarrier) and promotes: acc += partial * sa[row] * sb.
// WM and WN of the instance mean nothing here; STAGES is the pipeline depth.
// Persistent (11): the grid is as many CTAs as fit at once (SMs x CTAs per SM); each walks the
// tiles blockIdx.x, + gridDim.x, ..., its producer loading the next tile while its consumers
// finish this one. 12: the tiles in bands of 8 M tiles, N within a band, for L2 reuse.
// Shapes: as the mma.sync path (any M >= 1, N % BN == 0, N % 128 == 0, K % 128 == 0); rows
// past M are zero-filled by TMA and never stored.
// ---------------------------------------------------------------------------------------------
namespace a8w8::hopper {

/// Whether an instance's tile takes this path.
template <int BM, int BN> constexpr bool kTakes = (BM == 64 || BM == 128) && (BN == 64 || BN == 128);

constexpr int kConsumers = 2;                  // consumer warpgroups per CTA
constexpr int kThreads = 128 * (1 + kConsumers); // plus the producer warpgroup

/// The dynamic shared memory of one CTA: STAGES slots of [A tile | B tile], each tile rows of 128
/// bytes (one K block) in TMA's 128-byte swizzle, every tile 1024-byte aligned; then the full and
/// empty mbarriers; plus 1024 bytes of slack to align the start.
template <int BM, int BN, int STAGES> struct Smem {
  static constexpr int a_bytes = BM * kScaleBlock;
  static constexpr int b_bytes = BN * kScaleBlock;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int bars_offset = STAGES * stage_bytes;
  static constexpr int bytes = bars_offset + 2 * STAGES * 8 + 1024;
  static_assert(a_bytes % 1024 == 0 && b_bytes % 1024 == 0, "swizzle atoms are 1024 bytes");
};

__device__ __forceinline__ void mbar_init(std::uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile("{\n.reg .pred p;\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}

/// Waits until the phase of parity `parity` of the mbarrier has completed.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

/// One 2D tile global -> shared through the tensor map; completes `bytes` on `bar`.
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap *map,
                                            std::uint32_t bar, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
               "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(x), "r"(y)
               : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map))
               : "memory");
}

/// A wgmma shared-memory descriptor of a K-major tile in the 128-byte swizzle: start address,
/// leading offset unused (the K extent of one wgmma, 32 bytes, sits inside a 128-byte row),
/// stride 1024 bytes between 8-row groups, swizzle mode 1 (128B).
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

/// Keeps the compiler from moving accesses of an accumulator register across wgmma's
/// asynchronous boundaries.
template <int R> __device__ __forceinline__ void fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void wgmma_m64n16k32(float (&d)[8], std::uint64_t da,
                                                 std::uint64_t db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {"
               "%0, %1, %2, %3, %4, %5, %6, %7"
               "}, %8, %9, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7])
               : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n32k32(float (&d)[16], std::uint64_t da,
                                                 std::uint64_t db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
               "}, %16, %17, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n64k32(float (&d)[32], std::uint64_t da,
                                                 std::uint64_t db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
               "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
               "}, %32, %33, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
                 "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
                 "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
                 "+f"(d[31])
               : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], std::uint64_t da,
                                                 std::uint64_t db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
               "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, "
               "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
               "%62, %63"
               "}, %64, %65, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
                 "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
                 "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
                 "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
                 "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
                 "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                 "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
                 "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
                 "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "r"(accumulate));
}

template <int N>
__device__ __forceinline__ void wgmma_k32(float (&d)[N / 2], std::uint64_t da, std::uint64_t db,
                                          int accumulate) {
  if constexpr (N == 16) {
    wgmma_m64n16k32(d, da, db, accumulate);
  } else if constexpr (N == 32) {
    wgmma_m64n32k32(d, da, db, accumulate);
  } else if constexpr (N == 64) {
    wgmma_m64n64k32(d, da, db, accumulate);
  } else {
    static_assert(N == 128, "wgmma N of this kernel: 16, 32, 64 or 128");
    wgmma_m64n128k32(d, da, db, accumulate);
  }
}

struct HopperParams {
  int M, N, K;
  const float *scale_a;
  const float *scale_b;
  __nv_bfloat16 *C;
  int splits = 1; ///< the decode path's K splits: the CTAs of one cluster along z (14)
};

/// The tile a persistent CTA takes `tile`-th: bands of kBand M tiles, each walked M first then
/// N, so the CTAs running at once share a few A and B tiles per K block (about 8 + 16 tiles on
/// 132 SMs instead of every M tile and 4 N tiles in the plain M-first order).
constexpr int kBand = 8;
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int BM, int BN,
                                            int &m0, int &n0) {
  const int band = tile / (kBand * tiles_n);
  const int first = band * kBand;
  const int rows = min(kBand, tiles_m - first); // the last band may be narrower
  const int local = tile - band * kBand * tiles_n;
  m0 = (first + local % rows) * BM;
  n0 = (local / rows) * BN;
}

template <int BM, int BN, int STAGES>
__global__ void __launch_bounds__(kThreads, BM * BN <= 64 * 128 ? 2 : 1)
    gemm_a8w8_blockscale_wgmma(const __grid_constant__ CUtensorMap map_a,
                               const __grid_constant__ CUtensorMap map_b, HopperParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Smem<BM, BN, STAGES>;
  constexpr int WG_N = BM == 128 ? BN : BN / kConsumers; // columns per consumer warpgroup
  constexpr int R = WG_N / 2;                              // fp32 accumulators per thread
  static_assert(BM == 64 * kConsumers || BM == 64, "one or two 64-row wgmma tiles per CTA");

  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t base = (raw + 1023) & ~1023u;
  auto full = [&](int s) { return base + S::bars_offset + 8 * s; };
  auto empty = [&](int s) { return base + S::bars_offset + 8 * (STAGES + s); };

  // Persistent: the grid is as many CTAs as fit at once, and each walks the tiles
  // blockIdx.x, + gridDim.x, ... in bands of kBand M tiles (tile_origin).
  // The producer runs ahead across tiles, so the next tile's first K blocks load while the
  // consumers promote and store this one. `it` counts K blocks over all of a CTA's tiles: slot
  // it % STAGES, round it / STAGES, as the one-tile kernel counted kb.
  const int tiles_m = (p.M + BM - 1) / BM, tiles_n = p.N / BN;
  const int tiles = tiles_m * tiles_n;
  const int KB = p.K / kScaleBlock;

  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 128 * kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // Producer: one thread keeps STAGES K blocks in flight.
    if (threadIdx.x == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, tiles_n, BM, BN, m0, n0);
        for (int kb = 0; kb < KB; ++kb, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) {
            mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1); // the consumers freed round it/STAGES-1
          }
          const std::uint32_t a = base + s * S::stage_bytes;
          mbar_arrive_expect_tx(full(s), S::stage_bytes);
          tma_load_2d(a, &map_a, full(s), kb * kScaleBlock, m0);
          tma_load_2d(a + S::a_bytes, &map_b, full(s), kb * kScaleBlock, n0);
        }
      }
    }
  } else {
    const int c = threadIdx.x / 128 - 1; // consumer index
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    const int wm = BM == 128 ? c : 0; // this consumer's 64-row slab of the tile
    const int wn = BM == 128 ? 0 : c; // and its WG_N-column slab
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int m0, n0;
      tile_origin(tile, tiles_m, tiles_n, BM, BN, m0, n0);
      const int r0 = m0 + wm * 64 + warp * 16 + lane / 4;
      const int r1 = r0 + 8;
      const float *sa0 = p.scale_a + static_cast<std::int64_t>(min(r0, p.M - 1)) * KB;
      const float *sa1 = p.scale_a + static_cast<std::int64_t>(min(r1, p.M - 1)) * KB;
      const float *sb = p.scale_b + static_cast<std::int64_t>(n0 / kScaleBlock) * KB;

      float acc[R], part[R];
#pragma unroll
      for (int i = 0; i < R; ++i) acc[i] = 0.f, part[i] = 0.f;

      for (int kb = 0; kb < KB; ++kb, ++it) {
        const int s = it % STAGES;
        // The scales do not depend on the slot: their loads overlap the wait.
        const float a0 = __ldg(sa0 + kb), a1 = __ldg(sa1 + kb), b = __ldg(sb + kb);
        mbar_wait(full(s), (it / STAGES) & 1);
        const std::uint32_t a_tile = base + s * S::stage_bytes + wm * 64 * kScaleBlock;
        const std::uint32_t b_tile = base + s * S::stage_bytes + S::a_bytes + wn * WG_N * kScaleBlock;
        fence_operands(part);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < kScaleBlock / 32; ++k) {
          wgmma_k32<WG_N>(part, smem_desc(a_tile + 32 * k), smem_desc(b_tile + 32 * k), k > 0);
        }
        wgmma_commit();
        wgmma_wait_all();
        fence_operands(part);
        mbar_arrive(empty(s));
        const float s0 = a0 * b, s1 = a1 * b;
#pragma unroll
        for (int i = 0; i < R; i += 4) {
          acc[i + 0] += part[i + 0] * s0;
          acc[i + 1] += part[i + 1] * s0;
          acc[i + 2] += part[i + 2] * s1;
          acc[i + 3] += part[i + 3] * s1;
        }
      }

      // Epilogue: the m64nN accumulator layout: element 4j+e of a thread sits at row
      // warp*16 + lane/4 (+8 for e >= 2), column 8j + 2*(lane%4) (+1 for odd e).
      const int col0 = n0 + wn * WG_N + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < R / 4; ++j) {
        const int col = col0 + 8 * j;
        if (r0 < p.M) {
          *reinterpret_cast<__nv_bfloat162 *>(p.C + static_cast<std::int64_t>(r0) * p.N + col) =
              __floats2bfloat162_rn(acc[4 * j + 0], acc[4 * j + 1]);
        }
        if (r1 < p.M) {
          *reinterpret_cast<__nv_bfloat162 *>(p.C + static_cast<std::int64_t>(r1) * p.N + col) =
              __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
        }
      }
    }
  }
#else
  __trap(); // built without sm_90a: never computes anything (the launch reports the fault)
#endif
}

// ---------------------------------------------------------------------------------------------
// Decode path (sm_90a): the 16- and 32-row tiles with BN in {64, 128} as a swapped wgmma,
// C^T tile = B tile (BN rows of N: the wgmma's M, 64 per consumer warpgroup) x A tile^T (BM rows
// of M: the wgmma's N, 16 or 32). Same producer, TMA and mbarrier pipeline as above; BN / 64
// consumer warpgroups. Promotion per K block: each accumulator column is one row m of C, so its
// scale is sa[m, kb] * sb (one sb per tile: BN divides 128). Rows m >= M are zero-filled by TMA
// and never stored; their scale reads are clamped to row M - 1.
// Scales in the slot (10): the producer warp copies each K block's scales into the slot with
// cp.async, completing on the slot's full mbarrier, so a consumer's K block waits on shared
// memory instead of a global load (whose latency was on every K block's critical path).
// Split-K (14-16): shapes with few tiles split K over a cluster (launch_swap).
// The deep pipeline (this candidate): a 16 x 64 decode launch (M <= 16) that 16 split in two
// runs unsplit with kDeepStages slots, whatever the instance's STAGES.
// ---------------------------------------------------------------------------------------------
/// The most K splits of the decode path: a cluster of at most 8 CTAs is portable.
constexpr int kMaxSplits = 8;

template <int BM, int BN> constexpr bool kTakesSwap = (BM == 16 || BM == 32) && (BN == 64 || BN == 128);

/// The decode path's shared memory: Smem's tiles, then per slot the K block's scales (sa of the
/// tile's BM rows, then sb; padded to 16 bytes), then the full and empty mbarriers.
template <int BM, int BN, int STAGES> struct SmemSwap {
  using Tiles = Smem<BM, BN, STAGES>;
  static constexpr int a_bytes = Tiles::a_bytes;
  static constexpr int stage_bytes = Tiles::stage_bytes;
  static constexpr int scale_floats = BM + 4;
  static constexpr int scales_offset = STAGES * stage_bytes;
  static constexpr int bars_offset = scales_offset + STAGES * scale_floats * 4;
  static constexpr int bytes = bars_offset + 2 * STAGES * 8 + 1024;
};

/// Barrier `id` among `count` threads (whole warps) of the CTA.
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/// The cluster-wide barrier: every thread of every CTA of the cluster arrives (release) and
/// waits (acquire), so shared memory written before it is visible to the cluster after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/// The float at `addr` (a shared address of this CTA) in the shared memory of cluster CTA `rank`.
__device__ __forceinline__ float ld_cluster_f32(std::uint32_t addr, int rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

/// One 4-byte global -> shared copy (cp.async), and an arrive on `bar` once this thread's copies
/// so far have landed (counted in the barrier's expected arrivals: .noinc).
__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const float *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// SPLIT (16): the split-K kernel, launched as clusters of p.splits CTAs; without it the kernel
// is 12's (15 compiled the split into every launch and lost 1-7% on the shapes it did not split).
template <int BM, int BN, int STAGES, bool SPLIT>
__global__ void __launch_bounds__(128 * (1 + BN / 64), 2)
    gemm_a8w8_blockscale_wgmma_swap(const __grid_constant__ CUtensorMap map_a,
                                    const __grid_constant__ CUtensorMap map_b, HopperParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = SmemSwap<BM, BN, STAGES>;
  constexpr int kConsumersHere = BN / 64;
  constexpr int R = BM / 2; // fp32 accumulators per thread of an m64nBMk32 wgmma

  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t base = (raw + 1023) & ~1023u;
  auto full = [&](int s) { return base + S::bars_offset + 8 * s; };
  auto empty = [&](int s) { return base + S::bars_offset + 8 * (STAGES + s); };

  const int m0 = blockIdx.x * BM;
  const int n0 = blockIdx.y * BN;
  const int KB = p.K / kScaleBlock;
  // Split-K (14): the p.splits CTAs of a cluster (blockIdx.z, the cluster's rank) each take a
  // contiguous range of K blocks; the partial tiles are summed through distributed shared memory.
  // (KB <= 2^24 and at most kMaxSplits splits: the products fit an int.)
  const int kb_begin = SPLIT ? KB * static_cast<int>(blockIdx.z) / p.splits : 0;
  const int kb_end = SPLIT ? KB * (static_cast<int>(blockIdx.z) + 1) / p.splits : KB;

  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1 + 32); // the TMA thread's expect_tx and the producer warp's scale copies
      mbar_init(empty(s), 128 * kConsumersHere);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // Producer warp: lane 0 issues the TMA loads of a K block; every lane copies scales of it
    // (lane r < BM: sa of row m0 + r, clamped to M - 1; lane 0 also sb) into the slot, so the
    // consumers read them from shared memory instead of waiting on global loads each K block.
    if (threadIdx.x < 32) {
      const int lane = threadIdx.x;
      const float *sa_row =
          p.scale_a + static_cast<std::int64_t>(min(m0 + lane % BM, p.M - 1)) * KB;
      const float *sb_row = p.scale_b + static_cast<std::int64_t>(n0 / kScaleBlock) * KB;
      for (int kb = kb_begin; kb < kb_end; ++kb) {
        const int i = kb - kb_begin; // slot i % STAGES, round i / STAGES
        const int s = i % STAGES;
        if (i >= STAGES) {
          mbar_wait(empty(s), ((i / STAGES) & 1) ^ 1);
        }
        const std::uint32_t scales = base + S::scales_offset + s * S::scale_floats * 4;
        if (lane < BM) cp_async_4(scales + 4 * lane, sa_row + kb);
        if (lane == 0) cp_async_4(scales + 4 * BM, sb_row + kb);
        cp_async_arrive_noinc(full(s));
        if (lane == 0) {
          const std::uint32_t a = base + s * S::stage_bytes;
          mbar_arrive_expect_tx(full(s), S::stage_bytes);
          tma_load_2d(a, &map_a, full(s), kb * kScaleBlock, m0);
          tma_load_2d(a + S::a_bytes, &map_b, full(s), kb * kScaleBlock, n0);
        }
      }
    }
  } else {
    const int c = threadIdx.x / 128 - 1; // consumer index: its 64-row slab of B's tile
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    // This thread's accumulator columns (rows m of C): 8j + 2*(lane%4) + e, e in {0, 1}; their
    // scales sit in the slot.
    const float *scales_of_slot0 =
        reinterpret_cast<const float *>(smem_raw + (base - raw) + S::scales_offset);

    float acc[R], part[R];
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] = 0.f, part[i] = 0.f;

    for (int kb = kb_begin; kb < kb_end; ++kb) {
      const int i = kb - kb_begin;
      const int s = i % STAGES;
      mbar_wait(full(s), (i / STAGES) & 1);
      const float *sc = scales_of_slot0 + s * S::scale_floats;
      float scale[BM / 8][2];
      const float b = sc[BM];
#pragma unroll
      for (int j = 0; j < BM / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) scale[j][e] = sc[8 * j + 2 * (lane % 4) + e];
      const std::uint32_t a_tile = base + s * S::stage_bytes;
      const std::uint32_t b_tile = a_tile + S::a_bytes + c * 64 * kScaleBlock;
      fence_operands(part);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kScaleBlock / 32; ++k) {
        // The wgmma's A is B's slab (64 rows of N), its B the A tile (BM rows of M).
        wgmma_k32<BM>(part, smem_desc(b_tile + 32 * k), smem_desc(a_tile + 32 * k), k > 0);
      }
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(part);
      mbar_arrive(empty(s));
#pragma unroll
      for (int j = 0; j < BM / 8; ++j) {
        const float s0 = scale[j][0] * b, s1 = scale[j][1] * b;
        acc[4 * j + 0] += part[4 * j + 0] * s0;
        acc[4 * j + 1] += part[4 * j + 1] * s1;
        acc[4 * j + 2] += part[4 * j + 2] * s0;
        acc[4 * j + 3] += part[4 * j + 3] * s1;
      }
    }

    // Element 4j+e sits at row n = warp*16 + lane/4 (+8 for e >= 2) of the slab and column
    // m = 8j + 2*(lane%4) (+1 for odd e): C[m, n].
    const int n = c * 64 + warp * 16 + lane / 4; // within the tile
    if constexpr (!SPLIT) {
#pragma unroll
      for (int j = 0; j < BM / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int m = m0 + 8 * j + 2 * (lane % 4) + (e & 1);
          if (m < p.M) {
            p.C[static_cast<std::int64_t>(m) * p.N + n0 + n + (e >= 2 ? 8 : 0)] =
                __float2bfloat16_rn(acc[4 * j + e]);
          }
        }
      }
    } else {
      // Split-K: the partial tile goes to shared memory as [m][n] floats over the stage slots
      // (every TMA load of this CTA has landed and been read once the consumers are here; the
      // CTA barrier below waits for the other consumer warpgroup's last wgmma).
      named_barrier_sync(1, 128 * kConsumersHere);
      float *partial = reinterpret_cast<float *>(smem_raw + (base - raw));
#pragma unroll
      for (int j = 0; j < BM / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int m = 8 * j + 2 * (lane % 4) + (e & 1);
          partial[m * BN + n + (e >= 2 ? 8 : 0)] = acc[4 * j + e];
        }
      }
    }
  }
  if constexpr (SPLIT) {
    // Every CTA of the cluster sums its share of the tile's elements over the p.splits partial
    // tiles (rank order, so the sum is the same on every run) and stores them; the second
    // barrier keeps each CTA's shared memory alive until the others have read it.
    static_assert(BM * BN * 4 <= STAGES * S::stage_bytes, "the partial tile fits the slots");
    cluster_sync();
    constexpr int kElements = BM * BN;
    const int begin = kElements * static_cast<int>(blockIdx.z) / p.splits;
    const int end = kElements * (static_cast<int>(blockIdx.z) + 1) / p.splits;
    for (int e = begin + static_cast<int>(threadIdx.x); e < end; e += blockDim.x) {
      const int m = m0 + e / BN;
      if (m < p.M) {
        float v[kMaxSplits];
#pragma unroll
        for (int r = 0; r < kMaxSplits; ++r) v[r] = r < p.splits ? ld_cluster_f32(base + 4 * e, r) : 0.f;
        float sum = 0.f;
#pragma unroll
        for (int r = 0; r < kMaxSplits; ++r) sum += v[r];
        p.C[static_cast<std::int64_t>(m) * p.N + n0 + e % BN] = __float2bfloat16_rn(sum);
      }
    }
    cluster_sync();
  }
#else
  __trap();
#endif
}

/// cuTensorMapEncodeTiled, fetched from the driver once (no -lcuda needed).
using EncodeTiled = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                 const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      f = nullptr;
    }
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return fn;
}

/// A K-major fp8 [rows, K] matrix as 2D tiles of box_rows x 128 bytes, 128-byte swizzle; rows past
/// the end read as zeros.
inline bool make_map(CUtensorMap *map, const std::uint8_t *ptr, std::int64_t rows, std::int64_t K,
                     int box_rows) {
  const EncodeTiled encode = encode_tiled();
  if (encode == nullptr) {
    return false;
  }
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kScaleBlock), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<std::uint8_t *>(ptr), dims,
                strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/// Launches the Hopper path; the caller has checked the shape.
template <int BM, int BN, int STAGES> cudaError_t launch(const GemmArgs &args) {
  using S = Smem<BM, BN, STAGES>;
  auto kernel = gemm_a8w8_blockscale_wgmma<BM, BN, STAGES>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::bytes);
  if (attribute != cudaSuccess) {
    return attribute;
  }
  // The persistent grid: CTAs per SM (registers and shared memory) x SMs, asked once.
  static const int resident = [&] {
    int device = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, S::bytes) !=
            cudaSuccess) {
      return 0;
    }
    return sms * per_sm;
  }();
  if (resident < 1) {
    return cudaErrorInvalidConfiguration;
  }
  // TMA needs 16-byte aligned bases (and K % 16 == 0, which K % 128 == 0 gives).
  if (reinterpret_cast<std::uintptr_t>(args.A) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(args.B) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  CUtensorMap map_a, map_b;
  if (!make_map(&map_a, args.A, args.M, args.K, BM) ||
      !make_map(&map_b, args.B, args.N, args.K, BN)) {
    return cudaErrorInvalidValue;
  }
  HopperParams p{static_cast<int>(args.M), static_cast<int>(args.N), static_cast<int>(args.K),
                 args.scale_a, args.scale_b, reinterpret_cast<__nv_bfloat16 *>(args.C)};
  const std::int64_t tiles = (args.M + BM - 1) / BM * (args.N / BN);
  if (tiles > INT32_MAX) {
    return cudaErrorInvalidValue;
  }
  const unsigned grid = static_cast<unsigned>(tiles < resident ? tiles : resident);
  kernel<<<grid, kThreads, S::bytes, args.stream>>>(map_a, map_b, p);
  return cudaGetLastError();
}

/// The pipeline depth of 17's unsplit decode launches: 12 K blocks (120 KB) in flight per CTA,
/// one CTA per SM.
constexpr int kDeepStages = 12;

/// Launches the decode path; the caller has checked the shape.
template <int BM, int BN, int STAGES> cudaError_t launch_swap(const GemmArgs &args) {
  using S = SmemSwap<BM, BN, STAGES>;
  auto kernel = gemm_a8w8_blockscale_wgmma_swap<BM, BN, STAGES, false>;
  auto kernel_split = gemm_a8w8_blockscale_wgmma_swap<BM, BN, STAGES, true>;
  static const cudaError_t attribute = [&] {
    if (S::bytes <= 48 * 1024) {
      return cudaSuccess;
    }
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::bytes);
    return e != cudaSuccess ? e
                            : cudaFuncSetAttribute(kernel_split,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   S::bytes);
  }();
  if (attribute != cudaSuccess) {
    return attribute;
  }
  static const int sms = [] {
    int device = 0, count = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      return 0;
    }
    return count;
  }();
  if (sms < 1) {
    return cudaErrorInvalidConfiguration;
  }
  if (reinterpret_cast<std::uintptr_t>(args.A) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(args.B) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  CUtensorMap map_a, map_b;
  if (!make_map(&map_a, args.A, args.M, args.K, BM) ||
      !make_map(&map_b, args.B, args.N, args.K, BN)) {
    return cudaErrorInvalidValue;
  }
  HopperParams p{static_cast<int>(args.M), static_cast<int>(args.N), static_cast<int>(args.K),
                 args.scale_a, args.scale_b, reinterpret_cast<__nv_bfloat16 *>(args.C)};
  // Split-K (14): with fewer tiles than SMs, each tile's K blocks are split over the CTAs of a
  // cluster (at most kMaxSplits, and at least 2 K blocks each) so that about one CTA per SM
  // streams B. 15: SMs / tiles rounded to the nearest (14 rounded up: 2 splits of 96-112 tiles
  // lost 13-20%); 16: 12's kernel and launch when there is no split.
  const std::int64_t tiles = (args.M + BM - 1) / BM * (args.N / BN);
  const std::int64_t KB = args.K / kScaleBlock;
  std::int64_t splits = (2 * sms + tiles) / (2 * tiles);
  splits = splits < kMaxSplits ? splits : kMaxSplits;
  splits = splits < KB / 2 ? splits : KB / 2;
  const dim3 grid(static_cast<unsigned>((args.M + BM - 1) / BM), static_cast<unsigned>(args.N / BN));
  // 17: where 16 split a 16 x 64 decode tile (M <= 16) in two, one CTA per tile streams all of
  // K with kDeepStages slots instead: the tiles fill 2/5 to 2/3 of the SMs, and the split's
  // cluster launch, barriers and reduction cost more than the SMs it adds (measured on an H100:
  // (1, 5120, 8192) 21.1 us with 2 splits of 6 stages, 18.5 us with 12 stages unsplit; cuBLASLt
  // 19.8 us, whose decode kernel runs 64-row tiles 16 K blocks deep, unsplit, on 80 SMs).
  if constexpr (BM == 16 && BN == 64) {
    if (args.M <= 16 && splits == 2) {
      using D = SmemSwap<BM, BN, kDeepStages>;
      auto deep = gemm_a8w8_blockscale_wgmma_swap<BM, BN, kDeepStages, false>;
      static const cudaError_t deep_attribute =
          cudaFuncSetAttribute(deep, cudaFuncAttributeMaxDynamicSharedMemorySize, D::bytes);
      if (deep_attribute != cudaSuccess) {
        return deep_attribute;
      }
      deep<<<grid, 128 * (1 + BN / 64), D::bytes, args.stream>>>(map_a, map_b, p);
      return cudaGetLastError();
    }
  }
  if (splits < 2) {
    kernel<<<grid, 128 * (1 + BN / 64), S::bytes, args.stream>>>(map_a, map_b, p);
    return cudaGetLastError();
  }
  p.splits = static_cast<int>(splits);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid.x, grid.y, static_cast<unsigned>(p.splits));
  config.blockDim = dim3(128 * (1 + BN / 64));
  config.dynamicSmemBytes = S::bytes;
  config.stream = args.stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = static_cast<unsigned>(p.splits);
  config.attrs = &cluster;
  config.numAttrs = 1;
  const cudaError_t launched = cudaLaunchKernelEx(&config, kernel_split, map_a, map_b, p);
  return launched != cudaSuccess ? launched : cudaGetLastError();
}

} // namespace a8w8::hopper


/// Launches one instance on args.stream (tiles of at least 64 x 64 through the Hopper path, the
/// 16- and 32-row tiles of BN >= 64 through its swapped decode path, 16 x 32 through mma.sync) and returns the first error: a shape the kernel does not
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
  if constexpr (a8w8::hopper::kTakes<BM, BN>) {
    return a8w8::hopper::launch<BM, BN, STAGES>(args);
  } else if constexpr (a8w8::hopper::kTakesSwap<BM, BN>) {
    return a8w8::hopper::launch_swap<BM, BN, STAGES>(args);
  } else {
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
}

#endif // __CUDACC__
