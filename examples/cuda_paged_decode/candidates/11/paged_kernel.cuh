#pragma once

// Paged KV-cache decode attention with grouped-query heads (paged_args.cuh gives the layouts):
// candidate 11, 09 with the products computed transposed at head 256 and at most 8 query rows
// (decode_chunk_swapped: S^T = K Q^T and O^T += V^T P^T, the query rows as the mma's 8 columns,
// where 09's 16-row tiles held 2-8 real rows: half the mma and half the output registers). 09: 07
// with the warps' merge made without atomics (merge_and_store: a tree over two slots
// of shared memory where 07 added every warp's output by atomicAdd of floats, spinning
// compare-and-swap loops) and with tiles of two slices and K and V copied in turn: each warp takes 32 tokens
// at a time at heads 64 and 128 (one Q fragment for both slices' mma, one row max and one rescale
// for 32 tokens: twice the independent mma chains), and where 07 double-buffered K and V together
// (at head 256 not at all: one stage, every copy waited on whole), the next tile's K is queued once
// this tile's scores are made and its V once this tile's P V is done, so each copy lands while the
// other half of the work runs, in the shared memory of 07's stages. 07: 06 with fewer instructions
// a slice (ldmatrix, each row's last visible position once per chunk, page offsets by shifts, the
// rescale skipped where no row's max moved). 06: the split chosen by the instance (SPLIT: 0 never, 1 05's cost model, more:
// chunks of about that many tokens), so that a tuned dispatch can choose it per shape. 05: the plan
// made by every CTA of the main kernel (no planning launch). Where
// the (sequence, KV head) pairs are fewer than two waves of the resident CTA slots (SMs x CTAs per
// SM) and the sequences at most kPlanMaxSeqs, each CTA reads the context lengths and cuts every
// sequence by its own length into chunks of one size (choose_chunk, 04's cost model), the same in
// every CTA; one wave of CTAs takes the work items (chunk, KV head) in turn through a counter (a
// module variable paged_reduce sets back to zero), a sequence of one chunk writes its output, the
// others their unnormalised output and (m, l) per row, which paged_reduce merges (launched as a
// programmatic dependent: its CTAs start during the main kernel and wait for its end). Else one CTA
// per (sequence, KV head) over the whole context.
//
// The CTA (02, 03) holds every query row of its KV head (R = (Hq / Hkv) * mtp rows, at most 32,
// as one or two 16-row tiles); each of its 4 warps streams its own tiles through cp.async
// (decode_chunk): S = Q K^T on mma.sync m16n8k16 (bf16 in, fp32 out), the causal mask and online softmax on
// the accumulators, O += P V with P rounded to bf16. The warps' (m, l, O) meet in shared memory,
// over the stages (three CTAs per SM at head 128). A slice starts on a multiple of 16 tokens and
// pages hold 16 or 32, so a slice lies in one page: one table lookup per slice, 32 at a time.
//
// This header is also read by the host compiler (kopt's generated registry and dispatch include it
// through kopt_manifest.h), so everything CUDA-only sits under __CUDACC__.
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
/// A chunk: a multiple of kStep tokens (each warp's slices start on 16s), at least kMinChunk.
constexpr int kStep = kWarps * kSlice, kMinChunk = 128;
/// The most sequences a plan takes (four a thread; more: one CTA per sequence), the merge's largest
/// CTA.
constexpr int kPlanMaxSeqs = 4 * kWarps * 32, kReduceThreads = 512;

/// 16-token slices a warp takes at a time (its tile): two at heads 64 and 128 with one row tile,
/// else one (the shared memory of 07's two stages of one slice, and the registers of two tiles).
template <int D, int RT> __host__ __device__ constexpr int tile_slices() {
  return D < 256 && RT == 1 ? 2 : 1;
}

/// Query rows a CTA's tiles hold: RT tiles of 16 rows, or with RT 0 (head 256 and at most 8 rows:
/// decode_chunk_swapped) one tile of 8, the mma's columns.
template <int RT> __host__ __device__ constexpr int tile_rows() { return RT == 0 ? 8 : RT * 16; }

/// Bytes of the warps' K and V buffers: per warp one K and one V tile [16 NS][D+8] bf16.
template <int D, int RT> __host__ __device__ constexpr std::size_t stage_bytes() {
  return std::size_t(kWarps) * 2 * tile_slices<D, RT>() * kSlice * (D + 8) * 2;
}

/// Shared memory at head D, RT 16-row tiles (tile_rows: M rows): Q [M][D+8] bf16, the stages (after the loop the
/// merge's two slots of output [RT*16][D+8] fp32), the warps' max [kWarps][RT*16] and the slots'
/// sums [2][RT*16] fp32.
template <int D, int RT> constexpr std::size_t smem_bytes() {
  constexpr std::size_t M = tile_rows<RT>();
  static_assert(2 * M * (D + 8) * 4 <= stage_bytes<D, RT>(), "the merge's slots fit the stages");
  return M * (D + 8) * 2 + stage_bytes<D, RT>() + (kWarps + 2) * M * 4;
}

// The workspace when planned (ints, then floats; written by the main kernel's CTA 0 for the merge):
// C, the chunk count N, two unused, the first chunk of each sequence [num_seqs, padded to 4]; then
// from partials_at() one partial per work item (chunk y, KV head kvh) at
// (y * Hkv + kvh) * partial_stride(): its unnormalised output [R][D], max [R] and sum [R].
__host__ __device__ inline std::size_t chunks_at(int seqs) {
  return 4 + (std::size_t(seqs) + 3) / 4 * 4;
}
__host__ __device__ inline std::size_t partials_at(int seqs) {
  return (chunks_at(seqs) + 63) / 64 * 64;
}
__host__ __device__ inline int partial_stride(int R, int D) { return (R * (D + 2) + 3) / 4 * 4; }

/// Chunks of C tokens a context of ctx tokens is cut into (one at least).
__device__ inline int chunks_of(int ctx, int C) { return max(1, (ctx + C - 1) / C); }

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

// Four 8x8 bf16 matrices from shared memory, lane l giving the address of row l % 8 of matrix
// l / 8; r[i] is matrix i's (row g, columns 2t, 2t + 1), or with .trans its (rows 2t, 2t + 1,
// column g).
__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], const __nv_bfloat16 *p) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(at));
}
__device__ inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const __nv_bfloat16 *p) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(at));
}

// Queues the copy of the NS slices at token s0 (a multiple of 16; slice u in page pages[u]) of
// [.., end) of one cache (K or V rows, zero past end) into the warp's tile `dst` [16 NS][D+8], as
// one cp.async group.
template <int D, int NS>
__device__ void issue_tile(const PagedArgs &a, const __nv_bfloat16 *cache, const int (&pages)[NS],
                           int kvh, int s0, int end, __nv_bfloat16 *dst) {
  constexpr int LD = D + 8, V8 = D / 8;
  const int lane = threadIdx.x % 32, row = a.num_kv_heads * D; // row: a token's elements
#pragma unroll
  for (int u = 0; u < NS; ++u) {
    const int su = s0 + u * kSlice;
    const __nv_bfloat16 *src =
        cache + (std::int64_t(pages[u]) * a.block_size + (su & (a.block_size - 1))) * row +
        std::int64_t(kvh) * D;
#pragma unroll
    for (int i = 0; i < kSlice * V8 / 32; ++i) {
      const int e = lane + 32 * i, t = e / V8, c = (e % V8) * 8;
      const int bytes = su + t < end ? 16 : 0; // 0: the 16 bytes are zero-filled (the page's row)
      const unsigned d =
          static_cast<unsigned>(__cvta_generic_to_shared(dst + (u * kSlice + t) * LD + c));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src + t * row + c),
                   "r"(bytes));
    }
  }
  asm volatile("cp.async.commit_group;");
}

/// One warp's running state: per 16-row tile the output accumulators (D / 8 n-tiles of m16n8), and
/// per row this lane holds (g and g + 8 of each tile) the max and its share of the sum.
template <int D, int RT> struct WarpState {
  float o[RT][D / 8][4];
  float m[RT][2], l[RT][2];
};

// S = Q K^T of one tile of NS slices, masked and scaled: s[rt][j][c] is row rt*16 + g (+8 for
// c >= 2), token s0 + j*8 + 2t + (c & 1); -inf where the token is past the row's last visible one,
// lim[rt][h] (the chunk's end, or the row's position). Q's A fragments and K's B fragments through
// ldmatrix: lane l addresses row l % 8 of matrix l / 8 (Q: rows +8 for odd matrices, columns +8
// for the upper two; K: columns +8 for odd matrices, tokens +8 for the upper two). Each Q fragment
// serves the tile's NS slices: 2 NS independent chains of mma per row tile.
template <int D, int RT, int NS>
__device__ void tile_scores(const PagedArgs &a, const __nv_bfloat16 *sQ, const __nv_bfloat16 *sK,
                            int s0, const int (&lim)[RT][2], float (&s)[RT][2 * NS][4]) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32, t = lane % 4, r8 = lane % 8, mi = lane / 8;
  const __nv_bfloat16 *qa = sQ + (r8 + 8 * (mi & 1)) * LD + 8 * (mi >> 1);
  const __nv_bfloat16 *ka = sK + (r8 + 8 * (mi >> 1)) * LD + 8 * (mi & 1);
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int j = 0; j < 2 * NS; ++j) {
      s[rt][j][0] = s[rt][j][1] = s[rt][j][2] = s[rt][j][3] = 0.f;
    }
  }
#pragma unroll
  for (int k0 = 0; k0 < D; k0 += 16) {
    std::uint32_t kb[NS][4]; // per slice: b0, b1 of tokens 0-7, then of tokens 8-15
#pragma unroll
    for (int u = 0; u < NS; ++u) {
      ldmatrix_x4(kb[u], ka + u * kSlice * LD + k0);
    }
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
      std::uint32_t af[4];
      ldmatrix_x4(af, qa + rt * 16 * LD + k0);
#pragma unroll
      for (int u = 0; u < NS; ++u) {
        mma_bf16(s[rt][2 * u], af, kb[u][0], kb[u][1]);
        mma_bf16(s[rt][2 * u + 1], af, kb[u][2], kb[u][3]);
      }
    }
  }
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int j = 0; j < 2 * NS; ++j) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int pos = s0 + j * 8 + 2 * t + (c & 1);
        s[rt][j][c] = pos <= lim[rt][c >> 1] ? s[rt][j][c] * a.scale : -INFINITY;
      }
    }
  }
}

// Online softmax of one tile on the score accumulators (each row's max over its quad of lanes and
// the tile's 2 NS n-tiles), the output rescaled where a row's max moved; the scores become P.
template <int D, int RT, int NS>
__device__ void tile_softmax(float (&s)[RT][2 * NS][4], WarpState<D, RT> &w) {
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) { // row g, then row g + 8
      float mx = fmaxf(s[rt][0][2 * h], s[rt][0][2 * h + 1]);
#pragma unroll
      for (int j = 1; j < 2 * NS; ++j) {
        mx = fmaxf(mx, fmaxf(s[rt][j][2 * h], s[rt][j][2 * h + 1]));
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(w.m[rt][h], mx);
      const float m_use = m_new == -INFINITY ? 0.f : m_new; // no key yet
      const float alpha = __expf(w.m[rt][h] - m_use);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 2 * NS; ++j) {
#pragma unroll
        for (int c = 2 * h; c < 2 * h + 2; ++c) {
          s[rt][j][c] = __expf(s[rt][j][c] - m_use);
          sum += s[rt][j][c];
        }
      }
      w.m[rt][h] = m_new;
      w.l[rt][h] = w.l[rt][h] * alpha + sum;
      if (__any_sync(0xffffffffu, alpha != 1.f)) { // most tiles move no row's max
#pragma unroll
        for (int nd = 0; nd < D / 8; ++nd) {
          w.o[rt][nd][2 * h] *= alpha;
          w.o[rt][nd][2 * h + 1] *= alpha;
        }
      }
    }
  }
}

// O += P V of one tile, P as bf16 A fragments (slice u: k-step u) and V's columns as B fragments,
// transposed by ldmatrix: lane l addresses token l % 8 (+8 for odd matrices) at dimension 8 (l /
// 16) of each pair of n-tiles.
template <int D, int RT, int NS>
__device__ void tile_pv(const __nv_bfloat16 *sV, const float (&s)[RT][2 * NS][4],
                        WarpState<D, RT> &w) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32;
  const __nv_bfloat16 *va = sV + (lane % 8 + 8 * ((lane / 8) & 1)) * LD + 8 * (lane / 16);
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
    std::uint32_t pf[NS][4];
#pragma unroll
    for (int u = 0; u < NS; ++u) {
      pf[u][0] = pack(s[rt][2 * u][0], s[rt][2 * u][1]);
      pf[u][1] = pack(s[rt][2 * u][2], s[rt][2 * u][3]);
      pf[u][2] = pack(s[rt][2 * u + 1][0], s[rt][2 * u + 1][1]);
      pf[u][3] = pack(s[rt][2 * u + 1][2], s[rt][2 * u + 1][3]);
    }
#pragma unroll
    for (int nd = 0; nd < D / 8; nd += 2) {
#pragma unroll
      for (int u = 0; u < NS; ++u) {
        std::uint32_t vb[4]; // b0, b1 of n-tile nd, then of nd + 1
        ldmatrix_x4_trans(vb, va + u * kSlice * LD + nd * 8);
        mma_bf16(w.o[rt][nd], pf[u], vb[0], vb[1]);
        mma_bf16(w.o[rt][nd + 1], pf[u], vb[2], vb[3]);
      }
    }
  }
}

/// The chunk one CTA of the main kernel takes: its sequence and context, its tokens [begin, end),
/// and, where it is the sequence's only chunk, nothing to merge (it writes the output).
struct Chunk {
  int seq, ctx, begin, end;
  bool whole;
};

/// The largest of the warps' maxima of row `row` (sM: [kWarps][M]).
__device__ inline float warps_max(const float *sM, int M, int row) {
  float top = -INFINITY;
  for (int k = 0; k < kWarps; ++k) {
    top = fmaxf(top, sM[k * M + row]);
  }
  return top;
}

// The warps' tree over two slots of shared memory (11: one for both states): warps 2 and 3
// leave their rows for warps 0 and 1 to add, then warp 1 its sum for warp 0. put(k) writes this
// warp's rows into slot k, add(k) adds slot k's to them. True in warp 0, which then holds the
// CTA's sum.
template <class Put, class Add> __device__ bool merge_tree(const Put &put, const Add &add) {
  const int warp = threadIdx.x / 32;
  if (warp >= 2) {
    put(warp - 2);
  }
  __syncthreads();
  if (warp < 2) {
    add(warp);
  }
  __syncthreads(); // warp 0 has read slot 0 before warp 1 writes it
  if (warp == 1) {
    put(0);
  }
  __syncthreads();
  if (warp != 0) {
    return false;
  }
  add(0);
  return true;
}

// The warps' merge, without atomics (07's shared-memory atomicAdd of floats compiled to spinning
// compare-and-swap loops, four warps on the same words): each warp's rows rescaled to the CTA's max,
// then a tree over two slots of shared memory (over the stages, free once every warp has left the
// loop): warps 2 and 3 leave theirs for warps 0 and 1 to add, warp 1 its sum for warp 0, which
// stores the output (the sequence's only chunk: o / l) or the chunk's partial `part` from its
// registers. Rows past R are neither written nor read.
template <int D, int RT>
__device__ void merge_and_store(const PagedArgs &a, WarpState<D, RT> &w, float *sX, float *sM,
                                int seq, int kvh, float *part, int R, int G) {
  constexpr int M = RT * 16, LO = D + 8; // a slot's rows: D floats and 8 of padding
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float *sLs = sM + kWarps * M; // the slots' sums [2][M]
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
  __syncthreads(); // every warp is out of the loop: the stages are free
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float top = warps_max(sM, M, rt * 16 + g + 8 * h);
      const float f = w.m[rt][h] == -INFINITY ? 0.f : __expf(w.m[rt][h] - top);
      w.m[rt][h] = top;
      w.l[rt][h] *= f;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        w.o[rt][nd][2 * h] *= f;
        w.o[rt][nd][2 * h + 1] *= f;
      }
    }
  }
  // This warp's rows into slot k, or slot k's added to this warp's.
  const auto put = [&](int k) {
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = rt * 16 + g + 8 * h;
        if (row < R) {
          float *dst = sX + (k * M + row) * LO + 2 * t;
#pragma unroll
          for (int nd = 0; nd < D / 8; ++nd) {
            *reinterpret_cast<float2 *>(dst + nd * 8) =
                make_float2(w.o[rt][nd][2 * h], w.o[rt][nd][2 * h + 1]);
          }
          if (t == 0) {
            sLs[k * M + row] = w.l[rt][h];
          }
        }
      }
    }
  };
  const auto add = [&](int k) {
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = rt * 16 + g + 8 * h;
        if (row < R) {
          const float *src = sX + (k * M + row) * LO + 2 * t;
#pragma unroll
          for (int nd = 0; nd < D / 8; ++nd) {
            const float2 v = *reinterpret_cast<const float2 *>(src + nd * 8);
            w.o[rt][nd][2 * h] += v.x;
            w.o[rt][nd][2 * h + 1] += v.y;
          }
          w.l[rt][h] += sLs[k * M + row];
        }
      }
    }
  };
  if (!merge_tree(put, add)) {
    return;
  }
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = rt * 16 + g + 8 * h;
      if (row >= R) {
        continue;
      }
      if (part != nullptr) {
        float *dst = part + row * D + 2 * t;
#pragma unroll
        for (int nd = 0; nd < D / 8; ++nd) {
          *reinterpret_cast<float2 *>(dst + nd * 8) =
              make_float2(w.o[rt][nd][2 * h], w.o[rt][nd][2 * h + 1]);
        }
        if (t == 0) {
          part[R * D + row] = w.m[rt][h];
          part[R * D + R + row] = w.l[rt][h];
        }
        continue;
      }
      const float inv = 1.f / w.l[rt][h];
      const int j = row / G, hq = kvh * G + row % G;
      auto *dst = reinterpret_cast<__nv_bfloat162 *>(
          a.out + ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + hq) * D + 2 * t);
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        dst[nd * 4] = __floats2bfloat162_rn(w.o[rt][nd][2 * h] * inv, w.o[rt][nd][2 * h + 1] * inv);
      }
    }
  }
}

// Q's R rows of (sequence, KV head) into sQ [M][D+8] (M = tile_rows), zero past R.
template <int D, int RT>
__device__ void load_q(const PagedArgs &a, __nv_bfloat16 *sQ, int seq, int kvh, int R, int G) {
  constexpr int LD = D + 8, M = tile_rows<RT>();
  for (int e = threadIdx.x; e < M * (D / 8); e += blockDim.x) {
    const int r = e / (D / 8), c = (e % (D / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < R) {
      const std::int64_t at =
          ((std::int64_t(seq) * a.mtp + r / G) * a.num_q_heads + kvh * G + r % G) * D + c;
      v = *reinterpret_cast<const uint4 *>(a.q + at);
    }
    *reinterpret_cast<uint4 *>(sQ + r * LD + c) = v;
  }
}

// The CTA's work on KV head kvh of chunk c: chunk y of the plan (with no plan, sequence y). Each
// warp takes tiles of NS slices (warp w: tokens begin + 16 NS (w + 4 k) on) through one K and
// one V buffer, their copies in turn with the work: K of the next tile is queued once this tile's
// scores are made, V of the next once its P V is done, so each copy lands while the other half of
// the work runs.
template <int D, int RT>
__device__ void decode_chunk(const PagedArgs &a, const Chunk &c, int y, int kvh) {
  constexpr int LD = D + 8, M = RT * 16, NS = tile_slices<D, RT>(), T = NS * kSlice;
  constexpr int step = kWarps * T;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *sQ = reinterpret_cast<__nv_bfloat16 *>(smem);
  __nv_bfloat16 *stages0 = sQ + M * LD;
  float *sX = reinterpret_cast<float *>(stages0); // after the loop: the merge's slots
  float *sM = reinterpret_cast<float *>(stages0 + stage_bytes<D, RT>() / 2);
  const int warp = threadIdx.x / 32, G = a.num_q_heads / a.num_kv_heads;
  const int R = G * a.mtp, first = c.begin + warp * T, end = c.end;
  __nv_bfloat16 *sK = stages0 + warp * 2 * T * LD, *sV = sK + T * LD; // this warp's tiles
  // The pages of the warp's tile k (slice u at token first + step k + 16 u), 32 tiles at a time:
  // lane i holds tile (k & ~31) + i's, fetched when k reaches a multiple of 32 (k = 0, 1, 2, ...
  // in order).
  const int *table = a.block_tables + std::int64_t(c.seq) * a.max_blocks_per_seq;
  const int shift = __ffs(a.block_size) - 1; // pages of 2^shift tokens
  int held[NS];
  const auto pages = [&](int k, int (&pg)[NS]) {
#pragma unroll
    for (int u = 0; u < NS; ++u) {
      const int pos = first + (k + int(threadIdx.x % 32)) * step + u * kSlice;
      held[u] = (k & 31) != 0 ? held[u] : pos < end ? table[pos >> shift] : 0;
      pg[u] = __shfl_sync(0xffffffffu, held[u], k & 31);
    }
  };
  int pg[NS]; // the pages of the tile whose copies are queued next
  pages(0, pg);
  if (first < end) {
    issue_tile<D, NS>(a, a.k_cache, pg, kvh, first, end, sK);
    issue_tile<D, NS>(a, a.v_cache, pg, kvh, first, end, sV);
  }
  load_q<D, RT>(a, sQ, c.seq, kvh, R, G);
  __syncthreads();
  WarpState<D, RT> w{}; // o and l zero, m -inf: no key yet
  int lim[RT][2];       // this lane's rows' last visible token: the chunk's end or the row's position
#pragma unroll
  for (int rt = 0; rt < RT; ++rt) {
    w.m[rt][0] = w.m[rt][1] = -INFINITY;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = rt * 16 + (threadIdx.x % 32) / 4 + 8 * h;
      lim[rt][h] = min(end - 1, c.ctx - a.mtp + row / G);
    }
  }
  for (int s0 = first, i = 0; s0 < end; s0 += step, ++i) {
    const bool more = s0 + step < end;
    asm volatile("cp.async.wait_group 1;"); // K of this tile (its V may be in flight)
    __syncwarp();
    float s[RT][2 * NS][4];
    tile_scores<D, RT, NS>(a, sQ, sK, s0, lim, s);
    __syncwarp(); // every lane has read K before the next copy into it
    if (more) {
      pages(i + 1, pg);
      issue_tile<D, NS>(a, a.k_cache, pg, kvh, s0 + step, end, sK);
    } else {
      asm volatile("cp.async.commit_group;");
    }
    tile_softmax<D, RT, NS>(s, w);
    asm volatile("cp.async.wait_group 1;"); // V of this tile (the next K may be in flight)
    __syncwarp();
    tile_pv<D, RT, NS>(sV, s, w);
    __syncwarp(); // every lane has read V before the next copy into it
    if (more) {
      issue_tile<D, NS>(a, a.v_cache, pg, kvh, s0 + step, end, sV);
    } else {
      asm volatile("cp.async.commit_group;");
    }
  }
  asm volatile("cp.async.wait_all;"); // no copy lands in the stages once the slots lie there
  float *part = nullptr;
  if (!c.whole) {
    part = a.workspace + partials_at(a.num_seqs) +
           (std::int64_t(y) * a.num_kv_heads + kvh) * partial_stride(R, D);
  }
  merge_and_store<D, RT>(a, w, sX, sM, c.seq, kvh, part, R, G);
}

// The transposed products (candidate 11), at head 256 with at most 8 query rows (Gemma-2's 2 query
// heads a KV head x 1-4 tokens): S^T = K Q^T, K's 16 tokens of a slice as the mma's rows and the
// query rows as its 8 columns, and O^T += V^T P^T, the head's dimensions as the rows. Where the
// 16-row tile of decode_chunk held 2-8 real rows, this holds 8: per slice 16 mma for the scores
// and 16 for P V, not 32 each, and 64 output accumulators a lane, not 128.

// An 8x8 bf16 matrix transposed across the warp: lane l gives (row g, columns 2t, 2t + 1) of it
// and gets the same of the transpose.
__device__ inline std::uint32_t movmatrix_trans(std::uint32_t x) {
  std::uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

/// One warp's running state with the products transposed: O^T as D / 16 m-tiles of m16n8 (o[md][c]:
/// dimension 16 md + g (+8 for c >= 2), row 2t + (c & 1)), and per row this lane holds (2t and
/// 2t + 1) the max and its share of the sum (over its tokens g and g + 8).
template <int D> struct SwapState {
  float o[D / 16][4];
  float m[2], l[2];
};

// S^T of one slice at token s0, masked and scaled: s[c] is token s0 + g (+8 for c >= 2), row 2t +
// (c & 1); -inf past the row's last visible token lim[c & 1]. K's A fragments through ldmatrix
// (lane l addresses token l % 8, +8 for odd matrices, columns +8 for the upper two); Q's B
// fragments qb are held in registers for the whole chunk. Two chains of mma (even and odd k-steps).
template <int D>
__device__ void swap_scores(const PagedArgs &a, const std::uint32_t (&qb)[D / 16][2],
                            const __nv_bfloat16 *sK, int s0, const int (&lim)[2], float (&s)[4]) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32, g = lane / 4, r8 = lane % 8, mi = lane / 8;
  const __nv_bfloat16 *ka = sK + (r8 + 8 * (mi & 1)) * LD + 8 * (mi >> 1);
  float acc[2][4] = {};
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    std::uint32_t af[4];
    ldmatrix_x4(af, ka + kd * 16);
    mma_bf16(acc[kd & 1], af, qb[kd][0], qb[kd][1]);
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int pos = s0 + g + 8 * (c >> 1);
    s[c] = pos <= lim[c & 1] ? (acc[0][c] + acc[1][c]) * a.scale : -INFINITY;
  }
}

// Online softmax of one slice: each row's max over its 8 lanes of one t and their two tokens, the
// output rescaled where a row's max moved; the scores become P.
template <int D> __device__ void swap_softmax(float (&s)[4], SwapState<D> &w) {
  float alpha[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) { // row 2t + h: s[h] and s[h + 2]
    float mx = fmaxf(s[h], s[h + 2]);
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
    const float m_new = fmaxf(w.m[h], mx);
    const float m_use = m_new == -INFINITY ? 0.f : m_new; // no key yet
    alpha[h] = __expf(w.m[h] - m_use);
    s[h] = __expf(s[h] - m_use);
    s[h + 2] = __expf(s[h + 2] - m_use);
    w.m[h] = m_new;
    w.l[h] = w.l[h] * alpha[h] + s[h] + s[h + 2];
  }
  if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
    for (int md = 0; md < D / 16; ++md) {
      w.o[md][0] *= alpha[0];
      w.o[md][1] *= alpha[1];
      w.o[md][2] *= alpha[0];
      w.o[md][3] *= alpha[1];
    }
  }
}

// O^T += V^T P^T of one slice: P^T's B fragments from this lane's (token, row) pairs transposed by
// movmatrix (b0: tokens 2t, 2t + 1 of row g; b1: tokens 2t + 8, 2t + 9), V^T's A fragments through
// ldmatrix.trans (lane l addresses token l % 8, +8 for the upper two matrices, dimensions +8 for
// odd matrices).
template <int D>
__device__ void swap_pv(const __nv_bfloat16 *sV, const float (&s)[4], SwapState<D> &w) {
  constexpr int LD = D + 8;
  const int lane = threadIdx.x % 32;
  const std::uint32_t b0 = movmatrix_trans(pack(s[0], s[1]));
  const std::uint32_t b1 = movmatrix_trans(pack(s[2], s[3]));
  const __nv_bfloat16 *va = sV + (lane % 8 + 8 * (lane / 16)) * LD + 8 * ((lane / 8) & 1);
#pragma unroll
  for (int md = 0; md < D / 16; ++md) {
    std::uint32_t af[4];
    ldmatrix_x4_trans(af, va + md * 16);
    mma_bf16(w.o[md], af, b0, b1);
  }
}

// merge_and_store for the transposed state: each warp's rows rescaled to the CTA's max, the same
// tree over two slots of shared memory ([2][8][D+8] fp32, rows by dimensions), and warp 0 leaves
// the sum in slot 0, from which its lanes store the output (o / l, bf16) or the chunk's partial
// `part`, a row's consecutive dimensions at a time.
template <int D>
__device__ void swap_merge_and_store(const PagedArgs &a, SwapState<D> &w, float *sX, float *sM,
                                     int seq, int kvh, float *part, int R, int G) {
  constexpr int M = 8, LO = D + 8;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float *sLs = sM + kWarps * M; // the slots' sums [2][M]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = w.l[h];
    l += __shfl_xor_sync(0xffffffffu, l, 4);
    l += __shfl_xor_sync(0xffffffffu, l, 8);
    l += __shfl_xor_sync(0xffffffffu, l, 16);
    w.l[h] = l;
    if (g == 0) {
      sM[warp * M + 2 * t + h] = w.m[h];
    }
  }
  __syncthreads(); // every warp is out of the loop: the stages are free
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float top = warps_max(sM, M, 2 * t + h);
    const float f = w.m[h] == -INFINITY ? 0.f : __expf(w.m[h] - top);
    w.m[h] = top;
    w.l[h] *= f;
#pragma unroll
    for (int md = 0; md < D / 16; ++md) {
      w.o[md][h] *= f;
      w.o[md][h + 2] *= f;
    }
  }
  // This warp's rows into slot k, or slot k's added to this warp's.
  const auto put = [&](int k) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 2 * t + h;
      if (row < R) {
        float *dst = sX + (k * M + row) * LO + g;
#pragma unroll
        for (int md = 0; md < D / 16; ++md) {
          dst[md * 16] = w.o[md][h];
          dst[md * 16 + 8] = w.o[md][h + 2];
        }
        if (g == 0) {
          sLs[k * M + row] = w.l[h];
        }
      }
    }
  };
  const auto add = [&](int k) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = 2 * t + h;
      if (row < R) {
        const float *src = sX + (k * M + row) * LO + g;
#pragma unroll
        for (int md = 0; md < D / 16; ++md) {
          w.o[md][h] += src[md * 16];
          w.o[md][h + 2] += src[md * 16 + 8];
        }
        w.l[h] += sLs[k * M + row];
      }
    }
  };
  if (!merge_tree(put, add)) {
    return;
  }
  __syncwarp(); // every lane has read slot 0 before any writes the sum there
  put(0);
  __syncwarp();
  if (part != nullptr && g == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (2 * t + h < R) {
        part[R * D + 2 * t + h] = w.m[h];
        part[R * D + R + 2 * t + h] = w.l[h];
      }
    }
  }
  for (int e = lane; e < R * (D / 2); e += 32) { // two dimensions a lane
    const int row = e / (D / 2), d = 2 * (e % (D / 2));
    const float2 v = *reinterpret_cast<const float2 *>(sX + row * LO + d);
    if (part != nullptr) {
      *reinterpret_cast<float2 *>(part + row * D + d) = v;
      continue;
    }
    const float inv = 1.f / sLs[row];
    const int j = row / G, hq = kvh * G + row % G;
    *reinterpret_cast<__nv_bfloat162 *>(
        a.out + ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + hq) * D + d) =
        __floats2bfloat162_rn(v.x * inv, v.y * inv);
  }
}

// decode_chunk with the products transposed (at most 8 rows): each warp takes slices of 16 tokens
// (warp w: tokens begin + 16 (w + 4 k) on) through one K and one V buffer, their copies in turn
// with the work as in decode_chunk; Q's fragments are read once into registers.
template <int D>
__device__ void decode_chunk_swapped(const PagedArgs &a, const Chunk &c, int y, int kvh) {
  constexpr int LD = D + 8, M = 8, NS = 1, T = kSlice, step = kWarps * T;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *sQ = reinterpret_cast<__nv_bfloat16 *>(smem);
  __nv_bfloat16 *stages0 = sQ + M * LD;
  float *sX = reinterpret_cast<float *>(stages0); // after the loop: the merge's slots
  float *sM = reinterpret_cast<float *>(stages0 + stage_bytes<D, 0>() / 2);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int G = a.num_q_heads / a.num_kv_heads;
  const int R = G * a.mtp, first = c.begin + warp * T, end = c.end;
  __nv_bfloat16 *sK = stages0 + warp * 2 * T * LD, *sV = sK + T * LD; // this warp's tiles
  const int *table = a.block_tables + std::int64_t(c.seq) * a.max_blocks_per_seq;
  const int shift = __ffs(a.block_size) - 1; // pages of 2^shift tokens
  int held[NS] = {};
  const auto pages = [&](int k, int(&pg)[NS]) { // as decode_chunk's
    const int pos = first + (k + lane) * step;
    held[0] = (k & 31) != 0 ? held[0] : pos < end ? table[pos >> shift] : 0;
    pg[0] = __shfl_sync(0xffffffffu, held[0], k & 31);
  };
  int pg[NS];
  pages(0, pg);
  if (first < end) {
    issue_tile<D, NS>(a, a.k_cache, pg, kvh, first, end, sK);
    issue_tile<D, NS>(a, a.v_cache, pg, kvh, first, end, sV);
  }
  load_q<D, 0>(a, sQ, c.seq, kvh, R, G);
  __syncthreads();
  std::uint32_t qb[D / 16][2]; // Q^T's B fragments: dimensions 2t, 2t + 1 (+8) of row g
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    qb[kd][0] = u32_at(sQ + g * LD + kd * 16 + 2 * t);
    qb[kd][1] = u32_at(sQ + g * LD + kd * 16 + 8 + 2 * t);
  }
  SwapState<D> w{}; // o and l zero, m -inf: no key yet
  int lim[2];       // rows 2t and 2t + 1: the last visible token
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    w.m[h] = -INFINITY;
    lim[h] = min(end - 1, c.ctx - a.mtp + (2 * t + h) / G);
  }
  for (int s0 = first, i = 0; s0 < end; s0 += step, ++i) {
    const bool more = s0 + step < end;
    asm volatile("cp.async.wait_group 1;"); // K of this slice (its V may be in flight)
    __syncwarp();
    float s[4];
    swap_scores<D>(a, qb, sK, s0, lim, s);
    __syncwarp(); // every lane has read K before the next copy into it
    if (more) {
      pages(i + 1, pg);
      issue_tile<D, NS>(a, a.k_cache, pg, kvh, s0 + step, end, sK);
    } else {
      asm volatile("cp.async.commit_group;");
    }
    swap_softmax<D>(s, w);
    asm volatile("cp.async.wait_group 1;"); // V of this slice (the next K may be in flight)
    __syncwarp();
    swap_pv<D>(sV, s, w);
    __syncwarp(); // every lane has read V before the next copy into it
    if (more) {
      issue_tile<D, NS>(a, a.v_cache, pg, kvh, s0 + step, end, sV);
    } else {
      asm volatile("cp.async.commit_group;");
    }
  }
  asm volatile("cp.async.wait_all;"); // no copy lands in the stages once the slots lie there
  float *part = nullptr;
  if (!c.whole) {
    part = a.workspace + partials_at(a.num_seqs) +
           (std::int64_t(y) * a.num_kv_heads + kvh) * partial_stride(R, D);
  }
  swap_merge_and_store<D>(a, w, sX, sM, c.seq, kvh, part, R, G);
}

/// CTAs per SM an H100/H200's 228 KB allow (1 KB a CTA reserved): registers held to it at one tile.
template <int D, int RT> constexpr int min_ctas() {
  return RT <= 1 ? int(228 * 1024 / (smem_bytes<D, RT>() + 1024)) : 1;
}

/// A plan's run of sequences of this thread, [x, y): ceil(n / threads) of them, in thread order.
__device__ inline int2 seq_run(int n) {
  const int per = (n + int(blockDim.x) - 1) / int(blockDim.x);
  const int begin = min(n, int(threadIdx.x) * per);
  return make_int2(begin, min(n, begin + per));
}

/// v reduced over the block, a sum where `sum`, else a max; every thread gets it. `scratch` holds
/// one value per warp.
template <class T> __device__ T block_reduce(T v, bool sum, T *scratch) {
  const auto op = [sum](T x, T y) { return sum ? x + y : (x > y ? x : y); };
  for (int o = 16; o > 0; o /= 2) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  }
  __syncthreads(); // the scratch's last readers are done
  if (threadIdx.x % 32 == 0) {
    scratch[threadIdx.x / 32] = v;
  }
  __syncthreads();
  v = scratch[0];
  for (int k = 1; k < int(blockDim.x) / 32; ++k) {
    v = op(v, scratch[k]);
  }
  return v;
}

/// The chunk count of the threads before this one (an exclusive prefix sum of `mine`).
__device__ inline int plan_scan(int mine, int *scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int x = mine;
  for (int o = 1; o < 32; o *= 2) {
    const int y = __shfl_up_sync(0xffffffffu, x, o);
    x += lane >= o ? y : 0;
  }
  __syncthreads();
  if (lane == 31) {
    scratch[warp] = x;
  }
  __syncthreads();
  for (int k = 0; k < warp; ++k) {
    x += scratch[k];
  }
  return x - mine;
}

// The chunk (a multiple of kStep, at least kMinChunk) of the least estimated time among three:
// one chunk per sequence; the smallest whose work items fit the slots once (bisection); and for
// several waves sqrt(2 x tokens x Hkv x ovh / slots), where the last wave's ragged end and the
// CTAs' fixed cost balance, or more where the chunks would not fit cap.
__device__ inline int choose_chunk(const PagedArgs &a, int slots, int cap, int fixed,
                                   int *scratch, long long *wide) {
  const int n = a.num_seqs, hkv = a.num_kv_heads;
  const int2 run = seq_run(n);
  int longest = 0;
  long long tokens = 0;
  for (int s = run.x; s < run.y; ++s) {
    longest = max(longest, __ldg(a.context_lens + s));
    tokens += __ldg(a.context_lens + s);
  }
  longest = block_reduce(longest, false, scratch);
  tokens = block_reduce(tokens, true, wide);
  const auto chunks = [&](int C) { // over every sequence; every thread gets it
    int count = 0;
    for (int s = run.x; s < run.y; ++s) {
      count += chunks_of(__ldg(a.context_lens + s), C);
    }
    return block_reduce(count, true, scratch);
  };
  // The time of N chunks of C tokens, in tokens a CTA slot streams: one wave (the chunk and a CTA's
  // fixed cost ovh) where the items fit the slots, else at least the work over the slots plus half
  // a chunk (the last wave's ragged end); plus ovh for the merge where a sequence is split.
  const float ovh = 8192.f / a.head_size;
  const auto cost = [&](int C, int N) {
    const float chunk = float(min(C, longest));
    float t = chunk + ovh;
    if (long(N) * hkv > slots) {
      t = fmaxf(t, hkv * (float(tokens) + N * ovh) / slots + 0.5f * chunk);
    }
    return t + (N > n ? ovh : 0.f);
  };
  const int whole = max(kMinChunk, (longest + kStep - 1) / kStep * kStep);
  if (fixed > 1) { // the instance's chunk, made larger where its chunks would not fit cap
    const long long fit = (tokens + (cap - n) - 1) / (cap - n);
    const long long C = max((long long)max(fixed, kMinChunk), fit);
    return int(min((long long)whole, (C + kStep - 1) / kStep * kStep));
  }
  int best = whole;
  float best_t = cost(whole, n);
  if (long(n) * hkv < slots) {
    int lo = kMinChunk / kStep, hi = whole / kStep;
    while (lo < hi) { // hi fits: one chunk per sequence
      const int mid = (lo + hi) / 2;
      if (long(chunks(mid * kStep)) * hkv <= slots) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    const float t = cost(lo * kStep, chunks(lo * kStep));
    best = t < best_t ? lo * kStep : best;
    best_t = fminf(t, best_t);
  }
  if (cap > n) { // chunks of at least tokens / (cap - n) are at most cap
    const long long fit = (tokens + (cap - n) - 1) / (cap - n);
    const float ideal = sqrtf(2.f * float(tokens) * hkv * ovh / slots);
    const int C = max(kMinChunk, int((max(fit, (long long)ideal) + kStep - 1) / kStep * kStep));
    if (C < whole) {
      const int N = chunks(C);
      best = N <= cap && cost(C, N) < best_t ? C : best;
    }
  }
  return best;
}

// The plan in every CTA of the main kernel, the same in each: choose_chunk's size C and the
// chunks' count into `plan` (shared: read again after each barrier, no register held over the
// loop), and this thread's first chunk (returned: an exclusive prefix sum over the runs of
// seq_run). CTA 0 also writes C, the count and each sequence's first chunk to the workspace,
// which paged_reduce reads after this kernel.
__device__ inline int make_plan(const PagedArgs &a, int slots, int cap, int fixed, int *scratch,
                                long long *wide, int2 &plan) {
  const int C = choose_chunk(a, slots, cap, fixed, scratch, wide);
  const int2 run = seq_run(a.num_seqs);
  int mine = 0;
  for (int s = run.x; s < run.y; ++s) {
    mine += chunks_of(__ldg(a.context_lens + s), C);
  }
  const int first = plan_scan(mine, scratch);
  const int total = block_reduce(mine, true, scratch);
  if (blockIdx.x == 0) {
    int *ws = reinterpret_cast<int *>(a.workspace);
    for (int s = run.x, at = first; s < run.y; ++s) {
      ws[4 + s] = at;
      at += chunks_of(__ldg(a.context_lens + s), C);
    }
    if (threadIdx.x == 0) {
      ws[0] = C;
      ws[1] = total;
    }
  }
  if (threadIdx.x == 0) {
    plan = make_int2(C, total);
  }
  __syncthreads();
  return first;
}

// Chunk y of the plan (false past its last; y is the same in every thread), or with no plan (cap
// 0) all of sequence y. The one thread whose run holds chunk y (its first chunk `first`) hands it
// out through `slot`.
__device__ inline bool find_chunk(const PagedArgs &a, const int2 &plan, int first, int cap, int y,
                                  int4 &slot, Chunk &c) {
  if (cap == 0) {
    const int ctx = a.context_lens[y];
    c = Chunk{y, ctx, 0, ctx, true};
    return true;
  }
  const int C = plan.x;
  if (y >= plan.y) {
    return false;
  }
  const int2 run = seq_run(a.num_seqs);
  for (int s = run.x, at = first; s < run.y; ++s) {
    const int ctx = __ldg(a.context_lens + s), k = chunks_of(ctx, C);
    if (y >= at && y < at + k) {
      slot = make_int4(s, y - at, ctx, 0);
    }
    at += k;
  }
  __syncthreads(); // slot's last readers passed decode_chunk's barriers before this write
  const int4 e = slot;
  c = Chunk{e.x, e.z, e.y * C, min(e.z, e.y * C + C), chunks_of(e.z, C) == 1};
  return true;
}

/// The planned main kernel's item counter: items from gridDim.x on are handed out as gridDim.x
/// plus its count. Zero at load; paged_reduce, which follows every planned main kernel in the
/// stream, sets it back to zero (so calls on one stream at a time; the workspace is no place for
/// it: nothing of the call runs before the main kernel to reset it there).
static __device__ int next_item;

// Work item t is KV head t % Hkv of chunk t / Hkv of the plan, or with no plan (cap 0) of
// sequence t / Hkv. CTA b takes item b, then with a plan the items the counter hands out, until
// they run out.
template <int D, int RT>
__global__ void __launch_bounds__(kWarps * 32, min_ctas<D, RT>())
    paged_decode(PagedArgs a, int cap, int slots, int fixed) {
  __shared__ int scratch[kWarps], next_t;
  __shared__ long long wide[kWarps];
  __shared__ int4 slot;
  __shared__ int2 plan; // C, the chunks' count
  // paged_reduce (a programmatic dependent launch) may start once every CTA is here: it waits for
  // this grid's end and its memory before it reads or writes anything.
  asm volatile("griddepcontrol.launch_dependents;");
  const int first = cap != 0 ? make_plan(a, slots, cap, fixed, scratch, wide, plan) : 0;
  Chunk c;
  for (int t = int(blockIdx.x); find_chunk(a, plan, first, cap, t / a.num_kv_heads, slot, c);
       t = next_t) {
    const int next = cap != 0 && threadIdx.x == 0 ? int(gridDim.x) + atomicAdd(&next_item, 1) : 0;
    if constexpr (RT == 0) {
      decode_chunk_swapped<D>(a, c, t / a.num_kv_heads, t % a.num_kv_heads);
    } else {
      decode_chunk<D, RT>(a, c, t / a.num_kv_heads, t % a.num_kv_heads);
    }
    if (cap == 0) {
      return;
    }
    if (threadIdx.x == 0) {
      next_t = next;
    }
    __syncthreads(); // also: the next chunk's copies wait for this one's output to be stored
  }
}

// The chunks' merge where sequence blockIdx.y has more than one chunk. CTA x holds `rows` of the
// sequence's output rows (row j * Hq + h: query token j, query head h); per row, `groups` groups
// of D / 4 threads (a float4 of the row each) take every groups-th chunk, merging (m, l, o) online,
// then meet in shared memory: out = sum_g o_g exp(m_g - M) / sum_g l_g exp(m_g - M). A chunk
// where the row sees no key holds m = -inf, l = 0, o = 0 and weighs nothing (chunk 0 holds
// position 0, which every row sees).
template <int D>
__global__ void __launch_bounds__(kReduceThreads) paged_reduce(PagedArgs a, int groups) {
  constexpr int L = D / 4;
  __shared__ __align__(16) float sO[kReduceThreads * 4];
  __shared__ float sM[kReduceThreads / L], sL[kReduceThreads / L];
  asm volatile("griddepcontrol.wait;" ::: "memory"); // the main kernel has ended
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
    next_item = 0; // the main kernel took its last item
  }
  const int *plan = reinterpret_cast<const int *>(a.workspace);
  const int seq = blockIdx.y, n = chunks_of(a.context_lens[seq], plan[0]);
  if (n <= 1) {
    return; // its only chunk wrote the output
  }
  const int slot = threadIdx.x / L, g = slot % groups, d = (threadIdx.x % L) * 4;
  const int x = blockIdx.x * (blockDim.x / (L * groups)) + slot / groups;
  const int j = x / a.num_q_heads, h = x % a.num_q_heads, G = a.num_q_heads / a.num_kv_heads;
  const int R = G * a.mtp, r = j * G + h % G, stride = partial_stride(R, D);
  const bool live = x < a.num_q_heads * a.mtp;
  float m = -INFINITY, l = 0.f;
  float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
  if (live) {
    const float *base = a.workspace + partials_at(a.num_seqs) +
                        (std::int64_t(plan[4 + seq]) * a.num_kv_heads + h / G) * stride;
    const std::int64_t next = std::int64_t(a.num_kv_heads) * stride; // the sequence's next chunk
#pragma unroll 4
    for (int z = g; z < n; z += groups) {
      const float *p = base + z * next;
      const float mz = p[R * D + r], lz = p[R * D + R + r], top = fmaxf(m, mz);
      const float4 v = *reinterpret_cast<const float4 *>(p + r * D + d);
      if (top != -INFINITY) {
        const float fo = __expf(m - top), fz = __expf(mz - top);
        l = l * fo + lz * fz;
        o = make_float4(o.x * fo + v.x * fz, o.y * fo + v.y * fz, o.z * fo + v.z * fz,
                        o.w * fo + v.w * fz);
        m = top;
      }
    }
  }
  reinterpret_cast<float4 *>(sO)[threadIdx.x] = o;
  if (d == 0) {
    sM[slot] = m;
    sL[slot] = l;
  }
  __syncthreads();
  if (!live || g != 0) {
    return; // group 0 writes the row
  }
  float top = -INFINITY, sum = 0.f;
  float4 out = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int k = 0; k < groups; ++k) {
    top = fmaxf(top, sM[slot + k]);
  }
  for (int k = 0; k < groups; ++k) {
    const float f = sM[slot + k] == -INFINITY ? 0.f : __expf(sM[slot + k] - top);
    const float4 v = reinterpret_cast<const float4 *>(sO)[threadIdx.x + k * L];
    sum += sL[slot + k] * f;
    out = make_float4(out.x + v.x * f, out.y + v.y * f, out.z + v.z * f, out.w + v.w * f);
  }
  auto *dst = reinterpret_cast<__nv_bfloat162 *>(
      a.out + ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + h) * D + d);
  dst[0] = __floats2bfloat162_rn(out.x / sum, out.y / sum);
  dst[1] = __floats2bfloat162_rn(out.z / sum, out.w / sum);
}

/// The resident CTA slots of paged_decode<D, RT>: SMs times its CTAs per SM.
template <int D, int RT> long resident_slots() {
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, paged_decode<D, RT>, kWarps * 32,
                                                smem_bytes<D, RT>());
  return long(std::max(sms, 1)) * std::max(per_sm, 1);
}

/// Chunk groups per row of the merge: about the chunks of a sequence when the plan fills the
/// slots once, a power of two, at most kReduceThreads / (D / 4).
inline int reduce_groups(const PagedArgs &a, long slots) {
  const long chunks = slots / (long(a.num_kv_heads) * a.num_seqs);
  int groups = 1;
  while (groups < chunks && groups * 2 * (a.head_size / 4) <= kReduceThreads) {
    groups *= 2;
  }
  return groups;
}

template <int D, int RT> cudaError_t launch(const PagedArgs &a, int split) {
  constexpr std::size_t bytes = smem_bytes<D, RT>();
  static const cudaError_t attr = cudaFuncSetAttribute(
      paged_decode<D, RT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (attr != cudaSuccess) {
    return attr;
  }
  static const long slots = resident_slots<D, RT>();
  // A plan where one chunk per sequence leaves fewer work items than two waves of the slots;
  // cap chunks are four waves.
  const int R = a.num_q_heads / a.num_kv_heads * a.mtp;
  const long cap = 4 * slots / a.num_kv_heads;
  const std::size_t need =
      (partials_at(a.num_seqs) + std::size_t(cap) * a.num_kv_heads * partial_stride(R, D)) *
      sizeof(float);
  // SPLIT 0: never; 1: where one chunk per sequence is under two waves; a chunk: wherever the
  // chunks can be more than the sequences.
  const bool room = split == 1 ? long(a.num_seqs) * a.num_kv_heads < 2 * slots : cap > a.num_seqs;
  const bool plan = split != 0 && room && a.num_seqs <= kPlanMaxSeqs && a.workspace != nullptr &&
                    need <= a.workspace_bytes;
  // With a plan, a wave of CTAs (at most cap x Hkv items) that each make it and take items until
  // they run out.
  const long ctas =
      plan ? std::min(cap * a.num_kv_heads, slots) : long(a.num_seqs) * a.num_kv_heads;
  paged_decode<D, RT>
      <<<unsigned(ctas), kWarps * 32, bytes, a.stream>>>(a, plan ? int(cap) : 0, int(slots), split);
  if (plan) {
    const int groups = reduce_groups(a, slots), per_row = groups * (D / 4);
    const int rows = std::max(1, std::min(a.num_q_heads * a.mtp, 256 / per_row));
    const dim3 grid2(unsigned((a.num_q_heads * a.mtp + rows - 1) / rows), unsigned(a.num_seqs));
    // Launched while the main kernel runs (its CTAs wait in griddepcontrol.wait), so that its
    // launch overlaps the main kernel's tail.
    cudaLaunchConfig_t config{};
    config.gridDim = grid2;
    config.blockDim = dim3(unsigned(rows * per_row));
    config.stream = a.stream;
    cudaLaunchAttribute pdl{};
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &pdl;
    config.numAttrs = 1;
    const cudaError_t launched = cudaLaunchKernelEx(&config, paged_reduce<D>, a, groups);
    if (launched != cudaSuccess) {
      return launched;
    }
  }
  return cudaGetLastError();
}

template <int D> cudaError_t launch_rows(const PagedArgs &a, int split) {
  const int rows = a.num_q_heads / a.num_kv_heads * a.mtp;
  if constexpr (D == 256) {
    if (rows <= 8) {
      return launch<D, 0>(a, split); // the transposed products (decode_chunk_swapped)
    }
  }
  return rows <= 16 ? launch<D, 1>(a, split) : launch<D, 2>(a, split);
}

} // namespace paged

/// The entry point every instance calls with its SPLIT (this candidate's instance.cu.in): 0 no split
/// of the context, 1 the cost model's chunk (05), more: chunks of at least that many tokens.
/// Returns cudaErrorInvalidValue for a shape the kernel does not do (never a wrong output): pages
/// must hold a power of two of at least 16 tokens (a slice lies in one page; offsets by shifts).
/// Else the launches' error.
template <int SPLIT> cudaError_t paged_decode_attention(const PagedArgs &a) {
  if (a.num_kv_heads <= 0 || a.num_q_heads % a.num_kv_heads != 0 ||
      a.num_q_heads / a.num_kv_heads * a.mtp > paged::kMaxRows || a.num_seqs <= 0 ||
      a.block_size <= 0 || a.block_size % paged::kSlice != 0 ||
      (a.block_size & (a.block_size - 1)) != 0) {
    return cudaErrorInvalidValue;
  }
  switch (a.head_size) {
  case 64:
    return paged::launch_rows<64>(a, SPLIT);
  case 128:
    return paged::launch_rows<128>(a, SPLIT);
  case 256:
    return paged::launch_rows<256>(a, SPLIT);
  default:
    return cudaErrorInvalidValue;
  }
}

#endif // __CUDACC__
