// The example application of the cuda_paged_decode family: the decode loop of one attention
// layer shaped like Llama-3.1-8B's (32 query heads, 8 KV heads, head 128, pages of 16 tokens)
// over a batch of 32 sequences whose contexts grow by one token a step; every 4th step verifies
// 4 draft tokens (speculative decoding, mtp 4). A step: the page-table update (a new page where a
// sequence crosses a page boundary, from a shuffled free list), the new tokens' q, K and V with
// RoPE written into the paged cache, the attention through the candidate's dispatch, a pass over
// one layer's weights (the projections' memory traffic) and the residual update of the hidden
// state, which the next step's queries are made from.
// Contract: kopt compiles this file with one candidate's generated folder on the include path
// (kopt_manifest.h) and links KernelOpt::harness and CUDA::cudart; a run times the loop after a
// warm-up and prints `kopt-app-us: <us>` and `checksum: <sum>`; a bad option exits 2, an error 1.
// Shape capture (KOPT_CAPTURE=<file>) is the generated dispatch's: it counts every dispatch of
// the run, the warm-up's two (one step of each mtp) and the loop's.
#include "kopt_manifest.h"

#include <kopt/harness/cuda.hpp>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;
namespace kc = kopt::harness::cuda;

constexpr int kSeqs = 32;
constexpr int kQHeads = 32;
constexpr int kKvHeads = 8;
constexpr int kHead = 128;
constexpr int kBlock = 16;                       // tokens per page
constexpr int kHidden = kQHeads * kHead;         // 4096
constexpr int kMaxMtp = 4;                       // the verification steps' query tokens
constexpr int kMtpEvery = 4;                     // every 4th step verifies drafts
constexpr int kPromptMin = 1024;                 // the prompts' lengths: uniform in between,
constexpr int kPromptMax = 3000;                 // sequence 0 the longest
constexpr int kBucket = 256;                     // max_context_len: the batch's, rounded up to this
constexpr int kMaxContext = 8192;                // the cache's room per sequence
constexpr int kMaxBlocks = kMaxContext / kBlock; // block_tables' columns
constexpr std::int64_t kWeights = 218103808;     // one layer's weights (qkv, o, MLP): 436 MB bf16
constexpr int kWeightBlocks = 1056;              // 8 CTAs per SM of an H200
constexpr std::size_t kWorkspaceBytes = std::size_t{128} << 20; // PagedArgs::workspace
constexpr float kRopeTheta = 500000.f;                          // Llama 3's
constexpr std::uint64_t kSeed = 20261129;
constexpr int kThreads = 256;
constexpr std::int64_t kMaxSteps = kMaxContext - kPromptMax - kMaxMtp;

const char kUsage[] = "usage: app [--steps N] [--device D]\n";

/// The command line: decode steps and the CUDA device.
struct Options {
  std::int64_t steps = 512; // timed 0.16 s (02) to 0.37 s (00) on an H200, a run 0.5-0.7 s
  int device = 0;
};

/// Reads `text` as an integer in [0, max] into `value`; false when it is not one.
bool parse_count(const char *text, std::int64_t max, std::int64_t *value) {
  char *end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || parsed < 0 || parsed > max) {
    return false;
  }
  *value = parsed;
  return true;
}

/// Parses argv into `options`; prints why on stderr and returns false on a bad command line.
bool parse_options(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name != "--steps" && name != "--device") {
      std::fprintf(stderr, "app: unknown option '%s'\n%s", argv[i], kUsage);
      return false;
    }
    const std::int64_t max = name == "--steps" ? kMaxSteps : 1024;
    std::int64_t value = 0;
    if (i + 1 == argc || !parse_count(argv[i + 1], max, &value)) {
      std::fprintf(stderr, "app: %s needs an integer from 0 to %lld, got '%s'\n%s", argv[i],
                   static_cast<long long>(max), i + 1 == argc ? "" : argv[i + 1], kUsage);
      return false;
    }
    ++i;
    if (name == "--steps") {
      options->steps = value;
    } else {
      options->device = static_cast<int>(value);
    }
  }
  if (options->steps == 0) {
    std::fprintf(stderr, "app: --steps 0: nothing to time\n%s", kUsage);
    return false;
  }
  return true;
}

/// A uniform value in [-1, 1) from a seed and an index (splitmix64's finaliser): the same bytes
/// on every GPU and in every run.
__device__ float hash_uniform(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * 0x1p-23f - 1.f;
}

__global__ void fill_bf16(__nv_bfloat16 *out, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = __float2bfloat16(hash_uniform(seed, i));
  }
}

/// The page-table update, one thread per sequence: the step's mtp tokens go at positions
/// committed .. committed + mtp - 1; a block they reach that has no page yet gets the next page
/// of the free list. context_lens holds committed + mtp (the draft tokens included).
__global__ void allocate_pages(const int *committed, int mtp, const int *free_pages, int *next_free,
                               int *block_tables, int *context_lens) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= kSeqs) {
    return;
  }
  const int len = committed[s] + mtp;
  int *table = block_tables + s * kMaxBlocks;
  for (int b = (len - mtp) / kBlock; b <= (len - 1) / kBlock; ++b) {
    if (table[b] < 0) {
      table[b] = free_pages[atomicAdd(next_free, 1)];
    }
  }
  context_lens[s] = len;
}

/// Rotates the pair (x, y) of dimension pair i at position pos (RoPE, the halves' pairing).
__device__ float2 rope(float x, float y, int i, int pos) {
  const float angle = pos * powf(kRopeTheta, -2.f * i / kHead);
  float sin_a, cos_a;
  sincosf(angle, &sin_a, &cos_a);
  return make_float2(x * cos_a - y * sin_a, x * sin_a + y * cos_a);
}

/// The step's new tokens, one thread per (sequence, token, head, dimension pair) over the query
/// heads, then the key heads, then the value heads: q from the hidden state (8 tanh(h + noise):
/// peaked attention, as the family's inputs), k and v fresh; q and k rotated at their position;
/// k and v written into the cache at the page the table holds.
__global__ void qkv_rope(const float *hidden, const int *context_lens, const int *block_tables,
                         int mtp, std::uint64_t seed, __nv_bfloat16 *q, __nv_bfloat16 *k_cache,
                         __nv_bfloat16 *v_cache) {
  constexpr int pairs = kHead / 2, heads = kQHeads + 2 * kKvHeads;
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (i >= std::int64_t{kSeqs} * mtp * heads * pairs) {
    return;
  }
  const int p = i % pairs, h = i / pairs % heads, j = i / (pairs * heads) % mtp;
  const int s = i / (std::int64_t{pairs} * heads * mtp);
  const int pos = context_lens[s] - mtp + j;
  const float a = hash_uniform(seed, 2 * i), b = hash_uniform(seed, 2 * i + 1);
  if (h < kQHeads) {
    const float *x = hidden + std::int64_t{s} * kHidden + h * kHead;
    const float2 r = rope(8.f * tanhf(x[p] + a), 8.f * tanhf(x[p + pairs] + b), p, pos);
    __nv_bfloat16 *row = q + ((std::int64_t{s} * mtp + j) * kQHeads + h) * kHead;
    row[p] = __float2bfloat16(r.x);
    row[p + pairs] = __float2bfloat16(r.y);
    return;
  }
  const int kv = (h - kQHeads) % kKvHeads;
  const int page = block_tables[s * kMaxBlocks + pos / kBlock];
  const std::int64_t at = ((std::int64_t{page} * kBlock + pos % kBlock) * kKvHeads + kv) * kHead;
  const float2 r = h < kQHeads + kKvHeads ? rope(a, b, p, pos) : make_float2(a, b);
  __nv_bfloat16 *cache = h < kQHeads + kKvHeads ? k_cache : v_cache;
  cache[at + p] = __float2bfloat16(r.x);
  cache[at + p + pairs] = __float2bfloat16(r.y);
}

/// The projections' memory traffic: every CTA reads its share of the layer's weights (16-byte
/// loads) against the hidden state of sequence 0 and writes one partial sum.
__global__ void weight_pass(const __nv_bfloat16 *weights, const float *hidden, float *partial) {
  const uint4 *w = reinterpret_cast<const uint4 *>(weights);
  constexpr std::int64_t vectors = kWeights / 8;
  float sum = 0.f;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < vectors;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const uint4 raw = w[i];
    const __nv_bfloat162 *pair = reinterpret_cast<const __nv_bfloat162 *>(&raw);
    const float x = hidden[(i * 8) % kHidden];
    for (int e = 0; e < 4; ++e) {
      const float2 f = __bfloat1622float2(pair[e]);
      sum += (f.x + f.y) * x;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
  }
  __shared__ float warp_sums[kThreads / 32];
  if (threadIdx.x % 32 == 0) {
    warp_sums[threadIdx.x / 32] = sum;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (float v : warp_sums) {
      total += v;
    }
    partial[blockIdx.x] = total;
  }
}

/// The residual update from the last query token's attention output (the accepted token): h =
/// 0.75 h + 0.25 tanh(o + a small weight term); one thread per hidden value. The first thread of
/// each sequence commits its one token.
__global__ void residual(const __nv_bfloat16 *out, int mtp, const float *partial, float *hidden,
                         int *committed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kSeqs * kHidden) {
    return;
  }
  const int s = i / kHidden, c = i % kHidden;
  const float o = __bfloat162float(out[(std::int64_t{s} * mtp + mtp - 1) * kHidden + c]);
  hidden[i] = 0.75f * hidden[i] + 0.25f * tanhf(o + 1e-6f * partial[c % kWeightBlocks]);
  if (c == 0) {
    ++committed[s];
  }
}

__global__ void fill_hidden(float *hidden, std::uint64_t seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kSeqs * kHidden) {
    hidden[i] = hash_uniform(seed, i);
  }
}

/// The grid of one thread per item, kThreads to a block.
unsigned grid_for(std::int64_t items) {
  return static_cast<unsigned>((items + kThreads - 1) / kThreads);
}

/// The sequences' prompts and the cache's pages: prompt lengths uniform in [kPromptMin,
/// kPromptMax] (sequence 0 the longest), every page of the cache once in a shuffled free list,
/// each prompt's blocks given the list's first pages in turn.
struct Prompts {
  Prompts() : lens(kSeqs), free_pages(kSeqs * kMaxBlocks), tables(kSeqs * kMaxBlocks, -1) {
    std::mt19937_64 rng(kSeed);
    std::uniform_int_distribution<int> len(kPromptMin, kPromptMax);
    for (int &n : lens) {
      n = len(rng);
    }
    lens[0] = kPromptMax;
    std::iota(free_pages.begin(), free_pages.end(), 0);
    std::shuffle(free_pages.begin(), free_pages.end(), rng);
    for (int s = 0; s < kSeqs; ++s) {
      for (int b = 0; b < (lens[s] + kBlock - 1) / kBlock; ++b) {
        tables[s * kMaxBlocks + b] = free_pages[used++];
      }
    }
  }

  std::vector<int> lens, free_pages, tables;
  int used = 0;
};

/// The layer's cache, tables and activations on the device, and the host's copy of the longest
/// committed context (every sequence commits one token a step).
class Layer {
public:
  explicit Layer(cudaStream_t stream)
      : stream_(stream), k_cache_(std::size_t{kSeqs} * kMaxBlocks * kBlock * kKvHeads * kHead),
        v_cache_(k_cache_.size()), weights_(kWeights), q_(kSeqs * kMaxMtp * kHidden),
        out_(q_.size()), hidden_(kSeqs * kHidden), partial_(kWeightBlocks),
        workspace_(kWorkspaceBytes / sizeof(float)), free_pages_(kSeqs * kMaxBlocks),
        tables_(kSeqs * kMaxBlocks), context_lens_(kSeqs), committed_(kSeqs), next_free_(1) {
    const std::int64_t cache = static_cast<std::int64_t>(k_cache_.size());
    fill_bf16<<<4096, kThreads, 0, stream_>>>(k_cache_.get(), cache, kSeed + 1);
    KOPT_CUDA_CHECK(cudaGetLastError());
    fill_bf16<<<4096, kThreads, 0, stream_>>>(v_cache_.get(), cache, kSeed + 2);
    KOPT_CUDA_CHECK(cudaGetLastError());
    fill_bf16<<<4096, kThreads, 0, stream_>>>(weights_.get(), kWeights, kSeed + 3);
    KOPT_CUDA_CHECK(cudaGetLastError());
    upload(free_pages_, prompts_.free_pages);
    reset();
  }

  /// Sets the sequences back to their prompts: committed lengths, tables, free list position
  /// and hidden state.
  void reset() {
    upload(committed_, prompts_.lens);
    upload(tables_, prompts_.tables);
    upload(next_free_, std::vector<int>{prompts_.used});
    fill_hidden<<<grid_for(kSeqs * kHidden), kThreads, 0, stream_>>>(hidden_.get(), kSeed + 4);
    KOPT_CUDA_CHECK(cudaGetLastError());
    longest_ = kPromptMax;
    step_ = 0;
  }

  /// Queues one decode step of `mtp` query tokens a sequence on the stream.
  void step(int mtp) {
    allocate_pages<<<1, kSeqs, 0, stream_>>>(committed_.get(), mtp, free_pages_.get(),
                                             next_free_.get(), tables_.get(), context_lens_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    const std::int64_t pairs = std::int64_t{kSeqs} * mtp * (kQHeads + 2 * kKvHeads) * kHead / 2;
    qkv_rope<<<grid_for(pairs), kThreads, 0, stream_>>>(hidden_.get(), context_lens_.get(),
                                                        tables_.get(), mtp, kSeed + 16 * ++step_,
                                                        q_.get(), k_cache_.get(), v_cache_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    attention(mtp);
    weight_pass<<<kWeightBlocks, kThreads, 0, stream_>>>(weights_.get(), hidden_.get(),
                                                         partial_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    residual<<<grid_for(kSeqs * kHidden), kThreads, 0, stream_>>>(out_.get(), mtp, partial_.get(),
                                                                  hidden_.get(), committed_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    ++longest_;
  }

  /// Waits for the stream and returns the sum of the hidden state.
  double checksum() const {
    std::vector<float> h(hidden_.size());
    KOPT_CUDA_CHECK(
        cudaMemcpyAsync(h.data(), hidden_.get(), hidden_.bytes(), cudaMemcpyDeviceToHost, stream_));
    KOPT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return std::accumulate(h.begin(), h.end(), 0.0);
  }

private:
  template <class T> void upload(const kc::DeviceBuffer<T> &to, const std::vector<T> &from) {
    KOPT_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.data(), from.size() * sizeof(T),
                                    cudaMemcpyHostToDevice, stream_));
  }

  /// The attention of the step through the candidate's dispatch. max_context_len is the longest
  /// context rounded up to kBucket (an upper bound, as the kernel's contract allows): a serving
  /// loop's few padded sizes, so that a run dispatches few distinct shapes.
  void attention(int mtp) {
    const int max_len = (longest_ + mtp + kBucket - 1) / kBucket * kBucket;
    const std::int64_t dims[] = {kSeqs, max_len, kHead, mtp}; // batch, ctx_max, head_size, mtp
    const kopt_generated::KernelEntry &kernel = kopt_generated::dispatch(dims);
    PagedArgs args;
    args.num_seqs = kSeqs;
    args.mtp = mtp;
    args.num_q_heads = kQHeads;
    args.num_kv_heads = kKvHeads;
    args.head_size = kHead;
    args.block_size = kBlock;
    args.max_blocks_per_seq = kMaxBlocks;
    args.max_context_len = max_len;
    args.scale = 1.f / std::sqrt(static_cast<float>(kHead));
    args.q = q_.get();
    args.k_cache = k_cache_.get();
    args.v_cache = v_cache_.get();
    args.block_tables = tables_.get();
    args.context_lens = context_lens_.get();
    args.out = out_.get();
    args.workspace = workspace_.get();
    args.workspace_bytes = kWorkspaceBytes;
    args.stream = stream_;
    const cudaError_t status = kernel.fn(args);
    if (status != cudaSuccess) {
      throw kh::Error("kernel " + std::string(kernel.name) + " at batch " + std::to_string(kSeqs) +
                      " ctx_max " + std::to_string(max_len) + " mtp " + std::to_string(mtp) + ": " +
                      cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
    }
  }

  cudaStream_t stream_;
  Prompts prompts_;
  kc::DeviceBuffer<__nv_bfloat16> k_cache_, v_cache_, weights_, q_, out_;
  kc::DeviceBuffer<float> hidden_, partial_, workspace_;
  kc::DeviceBuffer<int> free_pages_, tables_, context_lens_, committed_, next_free_;
  int longest_ = kPromptMax; // sequence 0's committed tokens
  std::uint64_t step_ = 0;
};

/// The mtp of step t (from 0): every kMtpEvery-th step verifies kMaxMtp draft tokens.
int mtp_of(std::int64_t t) { return t % kMtpEvery == kMtpEvery - 1 ? kMaxMtp : 1; }

/// Builds the layer, warms up, times the loop and prints its time and checksum.
void run(const Options &options) {
  KOPT_CUDA_CHECK(cudaSetDevice(options.device));
  cudaStream_t stream = nullptr;
  KOPT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    Layer layer(stream);
    // One step of each mtp before timing: every kernel's first launch (module load, attribute
    // calls, occupancy queries) stays outside the timed loop.
    layer.step(1);
    layer.step(kMaxMtp);
    layer.reset();
    KOPT_CUDA_CHECK(cudaStreamSynchronize(stream));

    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t t = 0; t < options.steps; ++t) {
      layer.step(mtp_of(t));
    }
    KOPT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto stop = std::chrono::steady_clock::now();
    KOPT_CUDA_CHECK(cudaGetLastError());

    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(stop - start).count();
    std::printf("kopt-app-us: %lld\n", static_cast<long long>(us));
    std::printf("checksum: %.9g\n", layer.checksum());
  }
  KOPT_CUDA_CHECK(cudaStreamDestroy(stream));
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse_options(argc, argv, &options)) {
    return 2;
  }
  try {
    run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "app: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
