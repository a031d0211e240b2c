#pragma once

// Paged KV-cache decode attention with grouped-query heads (paged_args.cuh gives the layouts):
// candidate 03: 02 with one stage of K and V per warp at head 256 and splits that fill the
// resident CTA slots. Candidate 02, tensor cores: as 01, one CTA per (sequence, KV head[,
// partition]) holds every query row of that KV head (R = (Hq / Hkv) * mtp rows, at most 32, as one
// or two 16-row tiles), and the context is split where those CTAs are fewer than the SMs. Inside a
// CTA each of its 4 warps streams its own 16-token slices (slice i of warp w: tokens 16 * (w + 4 i)
// on), K and V copied global -> shared with cp.async, two slices in flight per warp, and keeps its
// own running max, sum and output in registers (flash-decoding inside the CTA): per slice
// S = Q K^T on mma.sync m16n8k16 (bf16 in, fp32 out), the causal mask and online softmax on
// the accumulators, then O += P V with P rounded to bf16 as the mma's A operand. At the end the
// warps' (m, l, O) are merged in shared memory. No block barrier inside the loop.
//
// This header is also read by the host compiler (kopt's generated registry and dispatch include
// it through kopt_manifest.h), so everything CUDA-only sits under __CUDACC__.
#include "paged_args.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#if defined(__CUDACC__)

#include <cuda_bf16.h>

namespace paged {

/// The most query rows (query heads of one KV head times query tokens) one CTA holds.
constexpr int kMaxRows = 32;
/// Warps per CTA, each streaming its own slices; tokens per slice.
constexpr int kWarps = 4, kSlice = 16;

/// Slices in flight per warp: two, one at head 256 (two stages there take 160 KB of shared
/// memory and leave one CTA, 4 warps, per SM; one stage leaves two).
template <int D> __host__ __device__ constexpr int stages() { return D >= 256 ? 1 : 2; }

/// Shared memory at head size D with RT 16-row tiles: Q [RT*16][D+8] bf16; per warp stages<D>()
/// of K and V [16][D+8] bf16; the merged output [RT*16][D] and sum [RT*16] fp32; the warps' max
/// [kWarps][RT*16].
template <int D, int RT> constexpr std::size_t smem_bytes() {
  constexpr int LD = D + 8, M = RT * 16;
  return M * LD * 2 + kWarps * stages<D>() * 2 * kSlice * LD * 2 + M * D * 4 + M * 4 +
         kWarps * M * 4;
}

__device__ inline void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                std::uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ inline std::uint32_t pack(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t *>(&v);
}

__device__ inline std::uint32_t u32_at(const __nv_bfloat16 *p) {
  return *reinterpret_cast<const std::uint32_t *>(p);
}

// Queues the copy of the slice at token s0 of [.., end) (K and V rows, zero past end) into one
// stage of the warp's buffers, as one cp.async group.
template <int D>
__device__ void issue_slice(const PagedArgs &a, const int *table, int kvh, int s0, int end,
                            __nv_bfloat16 *sK, __nv_bfloat16 *sV) {
  constexpr int LD = D + 8, V8 = D / 8;
  const int lane = threadIdx.x % 32;
  for (int e = lane; e < kSlice * V8; e += 32) {
    const int t = e / V8, c = (e % V8) * 8, pos = s0 + t;
    std::int64_t at = 0;
    if (pos < end) {
      const std::int64_t page = table[pos / a.block_size];
      at = ((page * a.block_size + pos % a.block_size) * a.num_kv_heads + kvh) * D + c;
    }
    const int bytes = pos < end ? 16 : 0; // 0: the 16 bytes are zero-filled
    const unsigned dk = static_cast<unsigned>(__cvta_generic_to_shared(sK + t * LD + c));
    const unsigned dv = static_cast<unsigned>(__cvta_generic_to_shared(sV + t * LD + c));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dk), "l"(a.k_cache + at),
                 "r"(bytes));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dv), "l"(a.v_cache + at),
                 "r"(bytes));
  }
  asm volatile("cp.async.commit_group;");
}

/// One warp's running state: per 16-row tile the output accumulators (D / 8 n-tiles of m16n8),
/// and per row this lane holds (g and g + 8 of each tile) the max and its share of the sum.
template <int D, int RT> struct WarpState {
  float o[RT][D / 8][4];
  float m[RT][2], l[RT][2];
};

// S = Q K^T of one slice, masked and scaled: s[rt][nt][c] is row rt*16 + g (+8 for c >= 2),
// token s0 + nt*8 + 2t + (c & 1); -inf where the token is past end or past the row's position.
template <int D, int RT>
__device__ void slice_scores(const PagedArgs &a, const __nv_bfloat16 *sQ, const __nv_bfloat16 *sK,
                             int s0, int end, int ctx, int G, float (&s)[RT][2][4]) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      s[rt][nt][0] = s[rt][nt][1] = s[rt][nt][2] = s[rt][nt][3] = 0.f;
    }
#pragma unroll
    for (int k0 = 0; k0 < D; k0 += 16) {
      const __nv_bfloat16 *q = sQ + (rt * 16 + g) * LD + k0 + 2 * t;
      const std::uint32_t af[4] = {u32_at(q), u32_at(q + 8 * LD), u32_at(q + 8),
                                   u32_at(q + 8 * LD + 8)};
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        const __nv_bfloat16 *k = sK + (nt * 8 + g) * LD + k0 + 2 * t;
        mma_bf16(s[rt][nt], af, u32_at(k), u32_at(k + 8));
      }
    }
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int row = rt * 16 + g + (c >= 2 ? 8 : 0), pos = s0 + nt * 8 + 2 * t + (c & 1);
        const bool live = pos < end && pos <= ctx - a.mtp + row / G;
        s[rt][nt][c] = live ? s[rt][nt][c] * a.scale : -INFINITY;
      }
    }
  }
}

// Online softmax of one slice on the score accumulators (each row's max over its quad of
// lanes), then O = O * alpha + P V with P as bf16 A fragments and V's columns as B fragments.
template <int D, int RT>
__device__ void slice_update(const __nv_bfloat16 *sV, float (&s)[RT][2][4], WarpState<D, RT> &w) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) { // row g, then row g + 8
      float mx = fmaxf(fmaxf(s[rt][0][2 * h], s[rt][0][2 * h + 1]),
                       fmaxf(s[rt][1][2 * h], s[rt][1][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(w.m[rt][h], mx);
      const float m_use = m_new == -INFINITY ? 0.f : m_new; // no key yet
      const float alpha = __expf(w.m[rt][h] - m_use);
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int c = 2 * h; c < 2 * h + 2; ++c) {
          s[rt][nt][c] = __expf(s[rt][nt][c] - m_use);
          sum += s[rt][nt][c];
        }
      }
      w.m[rt][h] = m_new;
      w.l[rt][h] = w.l[rt][h] * alpha + sum;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        w.o[rt][nd][2 * h] *= alpha;
        w.o[rt][nd][2 * h + 1] *= alpha;
      }
    }
    const std::uint32_t pf[4] = {pack(s[rt][0][0], s[rt][0][1]), pack(s[rt][0][2], s[rt][0][3]),
                                 pack(s[rt][1][0], s[rt][1][1]), pack(s[rt][1][2], s[rt][1][3])};
    const auto *v = reinterpret_cast<const std::uint16_t *>(sV) + 2 * t * LD + g;
#pragma unroll
    for (int nd = 0; nd < D / 8; ++nd) {
      const std::uint16_t *col = v + nd * 8;
      const std::uint32_t b0 = col[0] | std::uint32_t(col[LD]) << 16;
      const std::uint32_t b1 = col[8 * LD] | std::uint32_t(col[9 * LD]) << 16;
      mma_bf16(w.o[rt][nd], pf, b0, b1);
    }
  }
}

// Where a split CTA writes its rows: the unnormalised output [R][D], then m and l per row, of
// partition z of (seq, kvh), in the workspace laid out [seq][kvh][split][row][D + 2].
__device__ inline float *partial(const PagedArgs &a, int seq, int kvh, int z, int splits, int R) {
  const std::int64_t slot = (std::int64_t(seq) * a.num_kv_heads + kvh) * splits + z;
  return a.workspace + slot * R * (a.head_size + 2);
}

// The warps' merge: each warp's rows rescaled to the CTA's max M and added into sO and sL
// (shared-memory atomics), then the output (one partition: o / l) or the partition's partial.
template <int D, int RT>
__device__ void merge_and_store(const PagedArgs &a, WarpState<D, RT> &w, float *sO, float *sL,
                                float *sM, int seq, int kvh, int z, int splits, int R, int G) {
  constexpr int M = RT * 16;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = w.l[rt][h];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      w.l[rt][h] = l;
      if (t == 0) {
        sM[warp * M + rt * 16 + g + 8 * h] = w.m[rt][h];
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = rt * 16 + g + 8 * h;
      float top = -INFINITY;
      for (int k = 0; k < kWarps; ++k) {
        top = fmaxf(top, sM[k * M + row]);
      }
      const float f = w.m[rt][h] == -INFINITY ? 0.f : __expf(w.m[rt][h] - top);
      if (t == 0) {
        atomicAdd(sL + row, w.l[rt][h] * f);
      }
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        atomicAdd(sO + row * D + nd * 8 + 2 * t, w.o[rt][nd][2 * h] * f);
        atomicAdd(sO + row * D + nd * 8 + 2 * t + 1, w.o[rt][nd][2 * h + 1] * f);
      }
    }
  }
  __syncthreads();
  if (splits > 1) {
    float *out = partial(a, seq, kvh, z, splits, R);
    for (int e = threadIdx.x; e < R * (D + 2); e += blockDim.x) {
      const int r = e / (D + 2), d = e % (D + 2);
      float top = -INFINITY;
      for (int k = 0; d == D && k < kWarps; ++k) {
        top = fmaxf(top, sM[k * M + r]);
      }
      out[e] = d < D ? sO[r * D + d] : d == D ? top : sL[r];
    }
    return;
  }
  for (int e = threadIdx.x; e < R * D / 2; e += blockDim.x) {
    const int r = e / (D / 2), d = (e % (D / 2)) * 2, j = r / G, hq = kvh * G + r % G;
    const float inv = 1.f / sL[r];
    const std::int64_t at = ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + hq) * D + d;
    *reinterpret_cast<__nv_bfloat162 *>(a.out + at) =
        __floats2bfloat162_rn(sO[r * D + d] * inv, sO[r * D + d + 1] * inv);
  }
}

// One CTA per (KV head, sequence, partition): the partition's tokens [z * part, (z + 1) * part)
// of the context (all of it when splits is 1, which writes the output itself).
template <int D, int RT>
__global__ void __launch_bounds__(kWarps * 32) paged_decode(PagedArgs a, int splits, int part) {
  constexpr int LD = D + 8, M = RT * 16;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *sQ = reinterpret_cast<__nv_bfloat16 *>(smem);
  const int warp = threadIdx.x / 32;
  constexpr int S = stages<D>();
  __nv_bfloat16 *sKV = sQ + M * LD + warp * S * 2 * kSlice * LD; // this warp's K0, V0 (K1, V1)
  float *sO = reinterpret_cast<float *>(sQ + M * LD + kWarps * S * 2 * kSlice * LD);
  float *sL = sO + M * D, *sM = sL + M;
  const int kvh = blockIdx.x, seq = blockIdx.y, z = blockIdx.z, G = a.num_q_heads / a.num_kv_heads;
  const int R = G * a.mtp, ctx = a.context_lens[seq], end = min(ctx, (z + 1) * part);
  const int *table = a.block_tables + std::int64_t(seq) * a.max_blocks_per_seq;
  for (int e = threadIdx.x; e < M * (D / 8); e += blockDim.x) { // Q rows; zero past R
    const int r = e / (D / 8), c = (e % (D / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < R) {
      const std::int64_t at =
          ((std::int64_t(seq) * a.mtp + r / G) * a.num_q_heads + kvh * G + r % G) * D + c;
      v = *reinterpret_cast<const uint4 *>(a.q + at);
    }
    *reinterpret_cast<uint4 *>(sQ + r * LD + c) = v;
  }
  for (int e = threadIdx.x; e < M * D + M; e += blockDim.x) {
    sO[e] = 0.f; // sO, then sL
  }
  __syncthreads();
  WarpState<D, RT> w;
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
    for (int nd = 0; nd < D / 8; ++nd) {
      w.o[rt][nd][0] = w.o[rt][nd][1] = w.o[rt][nd][2] = w.o[rt][nd][3] = 0.f;
    }
    w.m[rt][0] = w.m[rt][1] = -INFINITY;
    w.l[rt][0] = w.l[rt][1] = 0.f;
  }
  const int first = z * part + warp * kSlice, stride = kWarps * kSlice;
  if (S == 2 && first < end) {
    issue_slice<D>(a, table, kvh, first, end, sKV, sKV + kSlice * LD);
  }
  for (int s0 = first, i = 0; s0 < end; s0 += stride, ++i) {
    __nv_bfloat16 *cur = sKV + (S == 2 ? (i & 1) : 0) * 2 * kSlice * LD;
    if (S == 1) {
      issue_slice<D>(a, table, kvh, s0, end, cur, cur + kSlice * LD);
      asm volatile("cp.async.wait_group 0;");
    } else {
      __nv_bfloat16 *next = sKV + (~i & 1) * 2 * kSlice * LD;
      if (s0 + stride < end) {
        issue_slice<D>(a, table, kvh, s0 + stride, end, next, next + kSlice * LD);
      } else {
        asm volatile("cp.async.commit_group;");
      }
      asm volatile("cp.async.wait_group 1;");
    }
    __syncwarp();
    float s[RT][2][4];
    slice_scores<D, RT>(a, sQ, cur, s0, end, ctx, G, s);
    slice_update<D, RT>(cur + kSlice * LD, s, w);
    __syncwarp(); // every lane has read this stage before the next copy into it
  }
  merge_and_store<D, RT>(a, w, sO, sL, sM, seq, kvh, z, splits, R, G);
}

// The partitions' merge, one CTA per (KV head, sequence): per row the largest m, then
// out = sum_z o_z exp(m_z - M) / sum_z l_z exp(m_z - M). Partitions past a short context hold
// m = -inf, l = 0, o = 0 and weigh nothing.
template <int D> __global__ void __launch_bounds__(256) paged_reduce(PagedArgs a, int splits) {
  const int kvh = blockIdx.x, seq = blockIdx.y;
  const int G = a.num_q_heads / a.num_kv_heads, R = G * a.mtp;
  const float *w = partial(a, seq, kvh, 0, splits, R);
  const std::int64_t stride = std::int64_t(R) * (D + 2); // one partition
  for (int e = threadIdx.x; e < R * D; e += blockDim.x) {
    const int r = e / D, d = e % D, j = r / G, h = kvh * G + r % G;
    const float *row = w + std::int64_t(r) * (D + 2);
    float m = -INFINITY;
    for (int z = 0; z < splits; ++z) {
      m = fmaxf(m, row[z * stride + D]);
    }
    float l = 0.f, o = 0.f;
    for (int z = 0; z < splits; ++z) {
      const float f = __expf(row[z * stride + D] - m);
      l += row[z * stride + D + 1] * f;
      o += row[z * stride + d] * f;
    }
    a.out[((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + h) * D + d] = __float2bfloat16(o / l);
  }
}

/// Partitions of the context: one (all of it) where the (sequence, KV head) CTAs fill the
/// resident slots (`slots`: SMs times the kernel's CTAs per SM); else as many as fill them once
/// (rounded down), each at least 256 tokens, as the workspace allows.
inline int split_count(const PagedArgs &a, long slots) {
  const long base = long(a.num_kv_heads) * a.num_seqs;
  const long rows = long(a.num_q_heads) * a.mtp,
             per_split = base / a.num_kv_heads * rows * (a.head_size + 2) * 4;
  long splits = slots / base;
  splits = std::min(splits, (long(a.max_context_len) + 255) / 256);
  splits = std::min(splits, long(a.workspace_bytes / per_split));
  return int(std::max(1L, splits));
}

template <int D, int RT> cudaError_t launch(const PagedArgs &a) {
  constexpr std::size_t bytes = smem_bytes<D, RT>();
  static const cudaError_t attr = cudaFuncSetAttribute(
      paged_decode<D, RT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (attr != cudaSuccess) {
    return attr;
  }
  static const long slots = [] {
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, paged_decode<D, RT>, kWarps * 32, bytes);
    return long(std::max(sms, 1)) * std::max(per_sm, 1);
  }();
  const int splits = split_count(a, slots);
  const int part = ((a.max_context_len + splits - 1) / splits + 63) / 64 * 64;
  const dim3 grid(static_cast<unsigned>(a.num_kv_heads), static_cast<unsigned>(a.num_seqs),
                  static_cast<unsigned>(splits));
  paged_decode<D, RT><<<grid, kWarps * 32, bytes, a.stream>>>(a, splits, part);
  if (splits > 1) {
    paged_reduce<D><<<dim3(grid.x, grid.y), 256, 0, a.stream>>>(a, splits);
  }
  return cudaGetLastError();
}

template <int D> cudaError_t launch_rows(const PagedArgs &a) {
  const int rows = a.num_q_heads / a.num_kv_heads * a.mtp;
  return rows <= 16 ? launch<D, 1>(a) : launch<D, 2>(a);
}

} // namespace paged

/// The entry point every instance calls (WARPS is 01's; this kernel always runs 4 warps a CTA).
/// Returns cudaErrorInvalidValue for a shape the kernel does not do (never a wrong output), else
/// the launch's error.
template <int WARPS> cudaError_t paged_decode_attention(const PagedArgs &a) {
  if (a.num_kv_heads <= 0 || a.num_q_heads % a.num_kv_heads != 0 ||
      a.num_q_heads / a.num_kv_heads * a.mtp > paged::kMaxRows || a.num_seqs <= 0) {
    return cudaErrorInvalidValue;
  }
  switch (a.head_size) {
  case 64:
    return paged::launch_rows<64>(a);
  case 128:
    return paged::launch_rows<128>(a);
  case 256:
    return paged::launch_rows<256>(a);
  default:
    return cudaErrorInvalidValue;
  }
}

#endif // __CUDACC__
