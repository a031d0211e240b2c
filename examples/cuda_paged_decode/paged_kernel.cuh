#pragma once

// Paged KV-cache decode attention with grouped-query heads (paged_args.cuh gives the layouts):
// the baseline. One CTA per (sequence, KV head) computes every query row that reads that KV
// head (its group's query heads times the mtp query tokens: R = (Hq / Hkv) * mtp rows, at most
// 32) over the whole context in one pass, with no split of the context across CTAs.
//
// Per step of C tokens: the step's K and V rows are gathered page by page into shared memory
// (16-byte loads, rows padded by 16 bytes so that a warp's 16-byte reads of 8 rows hit distinct
// banks); the R x C scores q . k * scale (fp32, causal mask per query token) go to shared
// memory; one warp per row updates its running max m and sum l (online softmax) and turns the
// scores into weights; then each thread updates its output elements o = o * exp(m_old - m_new) +
// sum_t p_t v_t (fp32, in shared memory). At the end o / l is written as bf16.
//
// This header is also read by the host compiler (kopt's generated registry and dispatch include
// it through kopt_manifest.h), so everything CUDA-only sits under __CUDACC__.
#include "paged_args.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)

#include <cuda_bf16.h>

namespace paged {

/// The most query rows (query heads of one KV head times query tokens) one CTA holds.
constexpr int kMaxRows = 32;

/// Tokens of one step at head size D: 64, 32 at 256 (shared memory).
template <int D> __host__ __device__ constexpr int step_tokens() { return D >= 256 ? 32 : 64; }

/// Shared memory of one CTA at head size D: K, V and Q rows padded by 8 bf16, the step's
/// scores [kMaxRows][C + 1] and the fp32 output [kMaxRows][D], then m, l and alpha per row.
template <int D> constexpr std::size_t smem_bytes() {
  constexpr int C = step_tokens<D>(), LD = D + 8;
  return (2 * C + kMaxRows) * LD * 2 + kMaxRows * (C + 1) * 4 + kMaxRows * D * 4 + 3 * kMaxRows * 4;
}

__device__ inline float2 bf2(std::uint32_t w) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&w));
}

// The step's K and V rows [c0, c0 + C) of the sequence into sK, sV (rows of LD bf16); rows past
// the context are zero.
template <int D, int C>
__device__ void load_kv(const PagedArgs &a, const int *table, int kvh, int c0, int ctx,
                        __nv_bfloat16 *sK, __nv_bfloat16 *sV) {
  constexpr int LD = D + 8, V8 = D / 8;
  for (int e = threadIdx.x; e < C * V8; e += blockDim.x) {
    const int t = e / V8, c = (e % V8) * 8, pos = c0 + t;
    uint4 k = make_uint4(0, 0, 0, 0), v = k;
    if (pos < ctx) {
      const std::int64_t page = table[pos / a.block_size];
      const std::int64_t at =
          ((page * a.block_size + pos % a.block_size) * a.num_kv_heads + kvh) * D + c;
      k = *reinterpret_cast<const uint4 *>(a.k_cache + at);
      v = *reinterpret_cast<const uint4 *>(a.v_cache + at);
    }
    *reinterpret_cast<uint4 *>(sK + t * LD + c) = k;
    *reinterpret_cast<uint4 *>(sV + t * LD + c) = v;
  }
}

// Scores of the step: sS[r][t] = q_r . k_t * scale, or -inf past query row r's position.
// Row r is query token r / G of the group's query head r % G.
template <int D, int C>
__device__ void scores(const PagedArgs &a, int R, int G, int c0, int ctx, const __nv_bfloat16 *sQ,
                       const __nv_bfloat16 *sK, float *sS) {
  constexpr int LD = D + 8;
  for (int e = threadIdx.x; e < R * C; e += blockDim.x) {
    const int r = e / C, t = e % C, pos = c0 + t;
    const int last = ctx - a.mtp + r / G; // the query token's own position
    float dot = 0.f;
    if (pos <= last) {
      const uint4 *q = reinterpret_cast<const uint4 *>(sQ + r * LD);
      const uint4 *k = reinterpret_cast<const uint4 *>(sK + t * LD);
#pragma unroll 4
      for (int i = 0; i < D / 8; ++i) {
        const uint4 qa = q[i], ka = k[i];
        const std::uint32_t qw[4] = {qa.x, qa.y, qa.z, qa.w}, kw[4] = {ka.x, ka.y, ka.z, ka.w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float2 qf = bf2(qw[w]), kf = bf2(kw[w]);
          dot = fmaf(qf.x, kf.x, dot);
          dot = fmaf(qf.y, kf.y, dot);
        }
      }
    }
    sS[r * (C + 1) + t] = pos <= last ? dot * a.scale : -INFINITY;
  }
}

// Online softmax of the step, one warp per row: the row's new max, its weights in place of the
// scores, the rescale alpha of its earlier sums, and its running sum.
template <int C> __device__ void softmax_step(int R, float *sS, float *sM, float *sL, float *sA) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int r = warp; r < R; r += warps) {
    float s[C / 32], mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < C / 32; ++i) {
      s[i] = sS[r * (C + 1) + lane + 32 * i];
      mx = fmaxf(mx, s[i]);
    }
    for (int o = 16; o > 0; o >>= 1) {
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    }
    const float m_old = sM[r], m_new = fmaxf(m_old, mx);
    const float m_use = m_new == -INFINITY ? 0.f : m_new; // a row with no key yet
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < C / 32; ++i) {
      const float p = __expf(s[i] - m_use);
      sS[r * (C + 1) + lane + 32 * i] = p;
      sum += p;
    }
    for (int o = 16; o > 0; o >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, o);
    }
    if (lane == 0) {
      const float alpha = __expf(m_old - m_use);
      sA[r] = alpha;
      sL[r] = sL[r] * alpha + sum;
      sM[r] = m_new;
    }
  }
}

// The output's update of the step: o[r][d] = o[r][d] * alpha_r + sum_t p[r][t] * v[t][d], two
// adjacent d per thread and element pair.
template <int D, int C>
__device__ void accumulate(int R, const float *sS, const float *sA, const __nv_bfloat16 *sV,
                           float *sO) {
  constexpr int LD = D + 8;
  for (int e = threadIdx.x; e < R * D / 2; e += blockDim.x) {
    const int r = e / (D / 2), d = (e % (D / 2)) * 2;
    const float alpha = sA[r];
    float2 o = *reinterpret_cast<float2 *>(sO + r * D + d);
    o.x *= alpha;
    o.y *= alpha;
#pragma unroll 8
    for (int t = 0; t < C; ++t) {
      const float p = sS[r * (C + 1) + t];
      const float2 v = bf2(*reinterpret_cast<const std::uint32_t *>(sV + t * LD + d));
      o.x = fmaf(p, v.x, o.x);
      o.y = fmaf(p, v.y, o.y);
    }
    *reinterpret_cast<float2 *>(sO + r * D + d) = o;
  }
}

template <int D, int C>
__device__ void load_q(const PagedArgs &a, int seq, int kvh, int R, int G, __nv_bfloat16 *sQ) {
  constexpr int LD = D + 8, V8 = D / 8;
  for (int e = threadIdx.x; e < R * V8; e += blockDim.x) {
    const int r = e / V8, c = (e % V8) * 8, j = r / G, h = kvh * G + r % G;
    const std::int64_t at = ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + h) * D + c;
    *reinterpret_cast<uint4 *>(sQ + r * LD + c) = *reinterpret_cast<const uint4 *>(a.q + at);
  }
}

template <int D, int WARPS>
__global__ void __launch_bounds__(WARPS * 32) paged_decode(PagedArgs a) {
  constexpr int C = step_tokens<D>(), LD = D + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  auto *sK = reinterpret_cast<__nv_bfloat16 *>(smem);
  __nv_bfloat16 *sV = sK + C * LD, *sQ = sV + C * LD;
  float *sS = reinterpret_cast<float *>(sQ + kMaxRows * LD), *sO = sS + kMaxRows * (C + 1);
  float *sM = sO + kMaxRows * D, *sL = sM + kMaxRows, *sA = sL + kMaxRows;
  const int kvh = blockIdx.x, seq = blockIdx.y, G = a.num_q_heads / a.num_kv_heads;
  const int R = G * a.mtp, ctx = a.context_lens[seq];
  const int *table = a.block_tables + std::int64_t(seq) * a.max_blocks_per_seq;
  load_q<D, C>(a, seq, kvh, R, G, sQ);
  for (int e = threadIdx.x; e < R * D; e += blockDim.x) {
    sO[e] = 0.f;
  }
  for (int r = threadIdx.x; r < R; r += blockDim.x) {
    sM[r] = -INFINITY;
    sL[r] = 0.f;
  }
  for (int c0 = 0; c0 < ctx; c0 += C) {
    load_kv<D, C>(a, table, kvh, c0, ctx, sK, sV);
    __syncthreads();
    scores<D, C>(a, R, G, c0, ctx, sQ, sK, sS);
    __syncthreads();
    softmax_step<C>(R, sS, sM, sL, sA);
    __syncthreads();
    accumulate<D, C>(R, sS, sA, sV, sO);
    __syncthreads();
  }
  for (int e = threadIdx.x; e < R * D / 2; e += blockDim.x) {
    const int r = e / (D / 2), d = (e % (D / 2)) * 2, j = r / G, h = kvh * G + r % G;
    const float inv = 1.f / sL[r];
    const std::int64_t at = ((std::int64_t(seq) * a.mtp + j) * a.num_q_heads + h) * D + d;
    *reinterpret_cast<__nv_bfloat162 *>(a.out + at) =
        __floats2bfloat162_rn(sO[r * D + d] * inv, sO[r * D + d + 1] * inv);
  }
}

template <int D, int WARPS> cudaError_t launch(const PagedArgs &a) {
  constexpr std::size_t bytes = smem_bytes<D>();
  static const cudaError_t attr = cudaFuncSetAttribute(
      paged_decode<D, WARPS>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (attr != cudaSuccess) {
    return attr;
  }
  const dim3 grid(static_cast<unsigned>(a.num_kv_heads), static_cast<unsigned>(a.num_seqs));
  paged_decode<D, WARPS><<<grid, WARPS * 32, bytes, a.stream>>>(a);
  return cudaGetLastError();
}

} // namespace paged

/// The entry point every instance calls: WARPS warps per CTA. Returns cudaErrorInvalidValue for
/// a shape the kernel does not do (never a wrong output), else the launch's error.
template <int WARPS> cudaError_t paged_decode_attention(const PagedArgs &a) {
  if (a.num_kv_heads <= 0 || a.num_q_heads % a.num_kv_heads != 0 ||
      a.num_q_heads / a.num_kv_heads * a.mtp > paged::kMaxRows || a.num_seqs <= 0) {
    return cudaErrorInvalidValue;
  }
  switch (a.head_size) {
  case 64:
    return paged::launch<64, WARPS>(a);
  case 128:
    return paged::launch<128, WARPS>(a);
  case 256:
    return paged::launch<256, WARPS>(a);
  default:
    return cudaErrorInvalidValue;
  }
}

#endif // __CUDACC__
