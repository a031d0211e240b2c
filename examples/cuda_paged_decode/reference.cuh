#pragma once

// What the family's harness shares and candidates never change: seeded inputs made on the
// device, the fp32 reference of paged decode attention (the golden, and the check of every
// timed run), and the gather of sampled output rows. Not in family.json's "editable".

#include "paged_args.cuh"
#include "reference_host.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace paged_ref {

/// Queries are U(-1, 1) times this, keys and values U(-1, 1): the scores q . k / sqrt(head_size)
/// then have a standard deviation of about kQueryGain / 3 = 2.7 at every head size, so softmax
/// puts most of its weight on a few keys, as trained models' attention does, and an output is
/// a mix of few values (|out| about 0.1-0.5), not the near-zero mean of thousands.
constexpr float kQueryGain = 8.f;

__device__ inline float unit(std::uint64_t seed, std::int64_t i) { // [0, 1)
  return static_cast<float>(mix(seed ^ mix(static_cast<std::uint64_t>(i))) >> 40) * 0x1p-24f;
}

// bf16 values of U(-gain, gain): signed, varied, never all zero.
__global__ void fill_bf16(__nv_bfloat16 *dst, std::int64_t n, std::uint64_t seed, float gain) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    dst[i] = __float2bfloat16(gain * (2.f * unit(seed, i) - 1.f));
  }
}

/// Which sequences the reference computes: output sequence i is sequence index[i] (device memory,
/// `count` entries), or sequence i itself when index is null (then count is num_seqs).
struct SeqSample {
  const int *index;
  int count;
};

constexpr int kRefThreads = 128;

// Sum (max when `take_max`) of one value per thread over the block; every thread gets it.
__device__ inline float block_reduce(float x, bool take_max, float *scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = take_max ? fmaxf(x, y) : x + y;
  }
  __syncthreads(); // the last call's readers are done with scratch
  if (threadIdx.x % 32 == 0) {
    scratch[threadIdx.x / 32] = x;
  }
  __syncthreads();
  x = scratch[0];
  for (int w = 1; w < kRefThreads / 32; ++w) {
    x = take_max ? fmaxf(x, scratch[w]) : x + scratch[w];
  }
  return x;
}

// The fp32 reference, one block per output row (query token j, query head hq) of a sequence:
// blockIdx.x = j * num_q_heads + hq, blockIdx.y = the sample's sequence. 128 keys a step: each
// thread one key's score (an fp32 dot product over head_size), the step's max and sum over the
// block (online softmax: the running sums rescaled by exp(m_old - m_new)), then each thread the
// weighted value sums of its head_size / 128 output elements. out is [count, mtp, Hq, D] fp32.
__global__ void __launch_bounds__(kRefThreads)
    reference_rows(PagedArgs g, SeqSample seqs, float *out) {
  __shared__ float p[kRefThreads];
  __shared__ float scratch[kRefThreads / 32];
  const int D = g.head_size, j = blockIdx.x / g.num_q_heads, hq = blockIdx.x % g.num_q_heads;
  const int seq = seqs.index ? seqs.index[blockIdx.y] : blockIdx.y;
  const int kvh = hq / (g.num_q_heads / g.num_kv_heads);
  const int n = g.context_lens[seq] - g.mtp + j + 1;
  const __nv_bfloat16 *q = g.q + ((std::int64_t(seq) * g.mtp + j) * g.num_q_heads + hq) * D;
  const int *table = g.block_tables + std::int64_t(seq) * g.max_blocks_per_seq;
  auto row = [&](int pos) {
    const std::int64_t page = table[pos / g.block_size];
    return ((page * g.block_size + pos % g.block_size) * g.num_kv_heads + kvh) * D;
  };
  float m = -INFINITY, l = 0.f, acc[256 / kRefThreads] = {};
  for (int c0 = 0; c0 < n; c0 += kRefThreads) {
    const int t = c0 + threadIdx.x;
    float s = -INFINITY;
    if (t < n) {
      const __nv_bfloat16 *k = g.k_cache + row(t);
      float dot = 0.f;
      for (int d = 0; d < D; ++d) {
        dot += __bfloat162float(q[d]) * __bfloat162float(k[d]);
      }
      s = dot * g.scale;
    }
    const float m_new = fmaxf(m, block_reduce(s, true, scratch)); // finite: key 0 is in step 0
    const float e = t < n ? expf(s - m_new) : 0.f;
    const float alpha = expf(m - m_new);
    l = l * alpha + block_reduce(e, false, scratch);
    m = m_new;
    p[threadIdx.x] = e;
    __syncthreads();
    const int steps = min(kRefThreads, n - c0);
    for (int i = 0; i * kRefThreads < D; ++i) {
      const int d = i * kRefThreads + threadIdx.x;
      float sum = 0.f;
      for (int tt = 0; d < D && tt < steps; ++tt) {
        sum += p[tt] * __bfloat162float(g.v_cache[row(c0 + tt) + d]);
      }
      acc[i] = acc[i] * alpha + sum;
    }
    __syncthreads(); // p is read before the next step overwrites it
  }
  float *o = out + ((std::int64_t(blockIdx.y) * g.mtp + j) * g.num_q_heads + hq) * D;
  for (int i = 0; i * kRefThreads < D; ++i) {
    const int d = i * kRefThreads + threadIdx.x;
    if (d < D) {
      o[d] = acc[i] / l;
    }
  }
}

/// Launches the reference of the sequences `seqs` names into `out` (fp32 [seqs.count, mtp, Hq,
/// head_size]) on g.stream; returns the launch's error.
inline cudaError_t launch_reference(const PagedArgs &g, SeqSample seqs, float *out) {
  if (g.head_size > 256) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(static_cast<unsigned>(g.mtp * g.num_q_heads), static_cast<unsigned>(seqs.count));
  reference_rows<<<grid, kRefThreads, 0, g.stream>>>(g, seqs, out);
  return cudaGetLastError();
}

/// Copies the output sequences index[0..count) of `out` (bf16 bits, `per_seq` elements each)
/// into `dst` ([count, per_seq]), in that order.
__global__ void gather_seqs(const std::uint16_t *out, const int *index, int count,
                            std::int64_t per_seq, std::uint16_t *dst) {
  for (std::int64_t e = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; e < count * per_seq;
       e += (std::int64_t)gridDim.x * blockDim.x) {
    dst[e] = out[index[e / per_seq] * per_seq + e % per_seq];
  }
}

} // namespace paged_ref
