#pragma once

// The host side of the family's inputs and reference, plain C++ (no CUDA), shared by the
// harness, the device reference (reference.cuh) and the unit test that checks it against a
// naive computation (tests/unit/example_paged_decode_test.cpp): one config's shape, its
// contexts, the page tables of one run, and the CPU fp32 reference of one output row.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define PAGED_HD __host__ __device__
#else
#define PAGED_HD
#endif

namespace paged_ref {

// splitmix64's finaliser: every input is a pure function of (seed, index), on any GPU or CPU.
PAGED_HD inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// One config's shape: the configs file's columns.
struct Shape {
  int batch = 0, ctx_min = 0, ctx_max = 0, block_size = 0, mtp = 0, head_size = 0;
  int num_q_heads = 0, num_kv_heads = 0;

  /// Returns what is wrong with the shape ("" when nothing is).
  std::string problem() const {
    if (batch <= 0 || num_q_heads <= 0 || num_kv_heads <= 0) {
      return "batch, num_q_heads and num_kv_heads must be positive";
    }
    if (num_q_heads % num_kv_heads != 0) {
      return "num_kv_heads must divide num_q_heads";
    }
    if (head_size != 64 && head_size != 128 && head_size != 256) {
      return "head_size must be 64, 128 or 256";
    }
    if (block_size != 16 && block_size != 32) {
      return "block_size must be 16 or 32";
    }
    if (mtp != 1 && mtp != 2 && mtp != 4) {
      return "mtp must be 1, 2 or 4";
    }
    if (ctx_min < mtp || ctx_max < ctx_min) {
      return "contexts must satisfy mtp <= ctx_min <= ctx_max";
    }
    return "";
  }
  int group() const { return num_q_heads / num_kv_heads; }
};

/// A generator of the family's own (splitmix64 over a counter): the same sequence everywhere.
class HostRng {
public:
  explicit HostRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix(state_++); }
  /// Uniform in [lo, hi] (hi - lo well under 2^32).
  int between(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

private:
  std::uint64_t state_;
};

/// The config's context lengths, one per sequence: drawn once from the shape alone, so every run
/// of the config (and both sides of a keep test) does the same work; the runs deal them to the
/// sequences in a fresh order. The first two are ctx_max and ctx_min, the rest uniform between.
inline std::vector<int> config_contexts(const Shape &s) {
  HostRng rng(mix(0x5eed) ^ mix(static_cast<std::uint64_t>(s.batch) << 40 ^
                                static_cast<std::uint64_t>(s.ctx_min) << 20 ^
                                static_cast<std::uint64_t>(s.ctx_max)));
  std::vector<int> lens(s.batch);
  for (int i = 0; i < s.batch; ++i) {
    lens[i] = i == 0 ? s.ctx_max : i == 1 ? s.ctx_min : rng.between(s.ctx_min, s.ctx_max);
  }
  return lens;
}

/// Pages of the KV cache a config needs: each sequence's blocks, whatever the order.
inline int config_pages(const Shape &s, const std::vector<int> &contexts) {
  int pages = 0;
  for (int len : contexts) {
    pages += (len + s.block_size - 1) / s.block_size;
  }
  return pages;
}

/// One run's context_lens and block_tables: the config's contexts dealt to the sequences in an
/// order drawn from `seed`, and every page of the cache handed out in a random permutation, so
/// no sequence's blocks are contiguous or in order. Entries past a sequence's last block are -1.
struct Layout {
  std::vector<int> context_lens; ///< [batch]
  std::vector<int> block_tables; ///< [batch, max_blocks_per_seq]
  int max_blocks_per_seq = 0;
  int num_blocks = 0;
};

inline Layout make_layout(const Shape &s, const std::vector<int> &contexts, std::uint64_t seed) {
  HostRng rng(seed);
  Layout l;
  l.context_lens = contexts;
  for (int i = s.batch - 1; i > 0; --i) { // Fisher-Yates, the family's generator
    std::swap(l.context_lens[i], l.context_lens[rng.between(0, i)]);
  }
  l.max_blocks_per_seq = (s.ctx_max + s.block_size - 1) / s.block_size;
  l.num_blocks = config_pages(s, contexts);
  std::vector<int> pages(l.num_blocks);
  for (int i = 0; i < l.num_blocks; ++i) {
    pages[i] = i;
  }
  for (int i = l.num_blocks - 1; i > 0; --i) {
    std::swap(pages[i], pages[rng.between(0, i)]);
  }
  l.block_tables.assign(static_cast<std::size_t>(s.batch) * l.max_blocks_per_seq, -1);
  int next = 0;
  for (int seq = 0; seq < s.batch; ++seq) {
    const int blocks = (l.context_lens[seq] + s.block_size - 1) / s.block_size;
    for (int b = 0; b < blocks; ++b) {
      l.block_tables[static_cast<std::size_t>(seq) * l.max_blocks_per_seq + b] = pages[next++];
    }
  }
  return l;
}

/// Returns the float a bf16 bit pattern encodes.
inline float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &word, sizeof f);
  return f;
}

/// Host copies of one run's inputs, decoded to float, in the layouts of paged_args.cuh.
struct HostInputs {
  Shape shape;
  float scale = 0.f;
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  const Layout *layout = nullptr;
};

/// The CPU fp32 reference of one output row, query token j of sequence seq at query head hq:
/// every score q . k * scale of the key positions up to the token's own, their softmax (max
/// subtracted, fp32 sums), and the weighted sum of the values. Writes head_size floats to out.
inline void cpu_reference_row(const HostInputs &in, int seq, int j, int hq, float *out) {
  const Shape &s = in.shape;
  const int D = s.head_size, kvh = hq / s.group();
  const int n = in.layout->context_lens[seq] - s.mtp + j + 1; // keys this token attends to
  const float *q = in.q + ((static_cast<std::size_t>(seq) * s.mtp + j) * s.num_q_heads + hq) * D;
  auto row = [&](const float *cache, int pos) {
    const int page =
        in.layout->block_tables[static_cast<std::size_t>(seq) * in.layout->max_blocks_per_seq +
                                pos / s.block_size];
    return cache +
           ((static_cast<std::size_t>(page) * s.block_size + pos % s.block_size) * s.num_kv_heads +
            kvh) *
               D;
  };
  std::vector<float> p(n);
  float m = -INFINITY;
  for (int t = 0; t < n; ++t) {
    const float *k = row(in.k, t);
    float dot = 0.f;
    for (int d = 0; d < D; ++d) {
      dot += q[d] * k[d];
    }
    p[t] = dot * in.scale;
    m = std::max(m, p[t]);
  }
  float sum = 0.f;
  for (int t = 0; t < n; ++t) {
    p[t] = std::exp(p[t] - m);
    sum += p[t];
  }
  std::fill(out, out + D, 0.f);
  for (int t = 0; t < n; ++t) {
    const float *v = row(in.v, t);
    for (int d = 0; d < D; ++d) {
      out[d] += p[t] * v[d];
    }
  }
  for (int d = 0; d < D; ++d) {
    out[d] /= sum;
  }
}

} // namespace paged_ref
