// The example application of the host_gemm family: a tiny two-layer decoder (hidden 256, four
// attention heads over a 384-position key/value ring, a SwiGLU FFN, a 384-token head) runs a
// fixed loop of prefill and decode steps on one core, every GEMM through the candidate's dispatch.
// Contract: kopt compiles this file with one candidate's generated folder on the include path
// (kopt_manifest.h) and links KernelOpt::harness; `app [--steps N] [--prefill P]` times the loop
// and prints `kopt-app-us: <us>` and `checksum: <sum>`; a bad option exits 2, an error (a NaN) 1.
#include "kopt_manifest.h"

#include <kopt/harness/error.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;

constexpr std::int64_t kHidden = 256;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kHeadDim = 64;
constexpr std::int64_t kAttn = kHeads * kHeadDim; // the width of q, of k and of v
constexpr std::int64_t kFfn = 320;
constexpr std::int64_t kVocab = 384;
constexpr std::int64_t kContext = 384; // the key/value positions each layer keeps
constexpr std::size_t kLayers = 2;
constexpr std::int64_t kDecodeRows = 8;    // the decode batch: one token for each of 8 sequences
constexpr std::int64_t kPrefillRows = 128; // one prompt chunk
constexpr std::uint64_t kSeed = 20261128;
// The buffers are sized for a prefill step, and a decode step reads the first rows of any step.
static_assert(kPrefillRows >= kDecodeRows);

const char kUsage[] = "usage: app [--steps N] [--prefill P]\n";

/// The command line: decode steps and prefill steps.
struct Options {
  std::int64_t steps = 12; // with one prefill, about 0.25 s with candidate 00 on one core
  std::int64_t prefill = 1;
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
    if (name != "--steps" && name != "--prefill") {
      std::fprintf(stderr, "app: unknown option '%s'\n%s", argv[i], kUsage);
      return false;
    }
    std::int64_t value = 0;
    if (i + 1 == argc || !parse_count(argv[i + 1], 1000000, &value)) {
      std::fprintf(stderr, "app: %s needs an integer from 0 to 1000000, got '%s'\n%s", argv[i],
                   i + 1 == argc ? "" : argv[i + 1], kUsage);
      return false;
    }
    ++i;
    (name == "--steps" ? options->steps : options->prefill) = value;
  }
  if (options->steps + options->prefill == 0) {
    std::fprintf(stderr, "app: --steps and --prefill are both 0: nothing to time\n%s", kUsage);
    return false;
  }
  return true;
}

/// A uniform value in [-1, 1) from a seed and an index (splitmix64's finaliser): the same values
/// on every machine and in every run.
float hash_uniform(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * 0x1p-23f - 1.f;
}

/// `size` values uniform in [-scale, scale) from `seed`.
std::vector<float> uniform(std::int64_t size, std::uint64_t seed, float scale) {
  std::vector<float> values(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = scale * hash_uniform(seed, i);
  }
  return values;
}

/// One linear layer: its weight [k, n], row-major as GemmArgs's B, made once from `seed` with an
/// rms of about 1 / sqrt(k), so that an output has about its input's rms.
struct Linear {
  Linear(std::int64_t in, std::int64_t out, std::uint64_t seed)
      : k(in), n(out), weight(uniform(k * n, seed, std::sqrt(3.f / static_cast<float>(k)))) {}

  std::int64_t k, n;
  std::vector<float> weight;
};

/// One decoder layer: its four linear layers and its ring of keys and values [kContext, kAttn],
/// which starts full of seeded history.
struct Layer {
  explicit Layer(std::uint64_t seed)
      : qkv(kHidden, 3 * kAttn, seed), out(kAttn, kHidden, seed + 1),
        gate_up(kHidden, 2 * kFfn, seed + 2), down(kFfn, kHidden, seed + 3),
        keys(uniform(kContext * kAttn, seed + 4, 1.f)),
        values(uniform(kContext * kAttn, seed + 5, 1.f)) {}

  Linear qkv, out, gate_up, down;
  std::vector<float> keys, values;
  std::int64_t cursor = 0; // the ring position the next token's key and value go to
};

/// x [rows, cols] scaled so that each row's mean square is 1.
void rms_norm(const float *x, std::int64_t rows, std::int64_t cols, float *out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    float sum = 0.f;
    for (std::int64_t c = 0; c < cols; ++c) {
      sum += row[c] * row[c];
    }
    const float inv = 1.f / std::sqrt(sum / static_cast<float>(cols) + 1e-6f);
    for (std::int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = row[c] * inv;
    }
  }
}

/// True when all `count` values are finite: none has an exponent field of all ones (a NaN or an
/// infinity). Bit tests rather than std::isfinite, so that the loop vectorises.
bool all_finite(const float *values, std::int64_t count) {
  std::uint32_t bad = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, values + i, sizeof bits);
    bad |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

/// Turns each of `count` scores into its softmax weight in place; returns false when they are not
/// finite (a NaN or an infinity in them).
bool softmax(float *scores, std::int64_t count) {
  float max = scores[0];
  for (std::int64_t i = 1; i < count; ++i) {
    max = std::fmax(max, scores[i]);
  }
  float sum = 0.f;
  for (std::int64_t i = 0; i < count; ++i) {
    scores[i] = std::exp(scores[i] - max);
    sum += scores[i];
  }
  if (!std::isfinite(max) || !std::isfinite(sum)) {
    return false;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    scores[i] /= sum;
  }
  return true;
}

/// The model and the activations every step reuses, sized for the larger step; a step of `rows`
/// rows uses the first `rows` rows of each.
class Model {
public:
  Model()
      : embedding_(uniform(kVocab * kHidden, kSeed, 1.f)), head_(kHidden, kVocab, kSeed + 1),
        hidden_(kPrefillRows * kHidden), normed_(kPrefillRows * kHidden),
        qkv_(kPrefillRows * 3 * kAttn), attended_(kPrefillRows * kAttn),
        gate_up_(kPrefillRows * 2 * kFfn), mixed_(kPrefillRows * kFfn),
        delta_(kPrefillRows * kHidden), probs_(kPrefillRows * kVocab), scores_(kContext) {
    layers_.reserve(kLayers);
    for (std::uint64_t l = 1; l <= kLayers; ++l) {
      layers_.emplace_back(kSeed + 16 * l);
    }
  }

  /// Runs one step of `tokens.size()` tokens through every layer and the head; leaves each row's
  /// next-token probabilities in probs().
  void step(const std::vector<std::int64_t> &tokens) {
    const auto rows = static_cast<std::int64_t>(tokens.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      const float *row = embedding_.data() + tokens[r] * kHidden;
      std::copy(row, row + kHidden, hidden_.data() + r * kHidden);
    }
    for (Layer &layer : layers_) {
      rms_norm(hidden_.data(), rows, kHidden, normed_.data());
      linear(layer.qkv, normed_.data(), rows, qkv_.data());
      attend(layer, rows);
      linear(layer.out, attended_.data(), rows, delta_.data());
      add(delta_.data(), rows * kHidden, hidden_.data());
      rms_norm(hidden_.data(), rows, kHidden, normed_.data());
      linear(layer.gate_up, normed_.data(), rows, gate_up_.data());
      swiglu(rows);
      linear(layer.down, mixed_.data(), rows, delta_.data());
      add(delta_.data(), rows * kHidden, hidden_.data());
    }
    rms_norm(hidden_.data(), rows, kHidden, normed_.data());
    linear(head_, normed_.data(), rows, probs_.data());
    for (std::int64_t r = 0; r < rows; ++r) {
      if (!softmax(probs_.data() + r * kVocab, kVocab)) {
        throw kh::Error("row " + std::to_string(r) + " of " + std::to_string(rows) +
                        " has a NaN or an infinity in its logits");
      }
    }
  }

  /// Row `r`'s next-token probabilities [kVocab] from the last step.
  const float *probs(std::int64_t r) const { return probs_.data() + r * kVocab; }

private:
  /// out [rows, layer.n] = x [rows, layer.k] times layer's weight, by the GEMM the candidate's
  /// dispatch picks for the shape; throws when the output is not all finite, naming the kernel.
  static void linear(const Linear &layer, const float *x, std::int64_t rows, float *out) {
    const std::int64_t dims[] = {rows, layer.n, layer.k};
    const kopt_generated::KernelEntry &kernel = kopt_generated::dispatch(dims);
    kernel.fn(GemmArgs{rows, layer.n, layer.k, x, layer.weight.data(), out});
    if (!all_finite(out, rows * layer.n)) {
      throw kh::Error("kernel " + std::string(kernel.name) + " at M=" + std::to_string(rows) +
                      " N=" + std::to_string(layer.n) + " K=" + std::to_string(layer.k) +
                      " wrote a NaN or an infinity");
    }
  }

  /// Stands in for attention: puts the step's keys and values into the layer's ring, then each
  /// row's query attends, head by head, over every position of the ring (no causal mask: the
  /// cost, not the meaning, is what the application needs). qkv_ -> attended_.
  void attend(Layer &layer, std::int64_t rows) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const float *kv = qkv_.data() + r * 3 * kAttn + kAttn;
      const std::int64_t slot = (layer.cursor + r) % kContext;
      std::copy(kv, kv + kAttn, layer.keys.data() + slot * kAttn);
      std::copy(kv + kAttn, kv + 2 * kAttn, layer.values.data() + slot * kAttn);
    }
    layer.cursor = (layer.cursor + rows) % kContext;
    const float scale = 1.f / std::sqrt(static_cast<float>(kHeadDim));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t h = 0; h < kHeads; ++h) {
        const float *q = qkv_.data() + r * 3 * kAttn + h * kHeadDim;
        for (std::int64_t t = 0; t < kContext; ++t) {
          const float *key = layer.keys.data() + t * kAttn + h * kHeadDim;
          float dot = 0.f;
          for (std::int64_t d = 0; d < kHeadDim; ++d) {
            dot += q[d] * key[d];
          }
          scores_[t] = dot * scale;
        }
        if (!softmax(scores_.data(), kContext)) {
          throw kh::Error("attention head " + std::to_string(h) + " of row " + std::to_string(r) +
                          " has a NaN or an infinity in its scores");
        }
        float *o = attended_.data() + r * kAttn + h * kHeadDim;
        std::fill(o, o + kHeadDim, 0.f);
        for (std::int64_t t = 0; t < kContext; ++t) {
          const float *value = layer.values.data() + t * kAttn + h * kHeadDim;
          for (std::int64_t d = 0; d < kHeadDim; ++d) {
            o[d] += scores_[t] * value[d];
          }
        }
      }
    }
  }

  /// The SwiGLU of the FFN: mixed_ [rows, kFfn] = silu(gate) * up of gate_up_ [rows, 2 kFfn].
  void swiglu(std::int64_t rows) {
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < kFfn; ++c) {
        const float gate = gate_up_[r * 2 * kFfn + c];
        const float up = gate_up_[r * 2 * kFfn + kFfn + c];
        mixed_[r * kFfn + c] = gate / (1.f + std::exp(-gate)) * up;
      }
    }
  }

  /// The residual update: to += delta, `count` values.
  static void add(const float *delta, std::int64_t count, float *to) {
    for (std::int64_t i = 0; i < count; ++i) {
      to[i] += delta[i];
    }
  }

  std::vector<float> embedding_; // [kVocab, kHidden]
  std::vector<Layer> layers_;
  Linear head_;
  std::vector<float> hidden_; // the residual stream
  std::vector<float> normed_;
  std::vector<float> qkv_;
  std::vector<float> attended_;
  std::vector<float> gate_up_;
  std::vector<float> mixed_;
  std::vector<float> delta_; // a linear's output, added to hidden_
  std::vector<float> probs_; // the head's logits, then their softmax
  std::vector<float> scores_;
};

/// The loop's steps in order, as their row counts: `prefill` requests, each a prefill step
/// followed by its share of the `steps` decode steps (all decode steps when there is none).
std::vector<std::int64_t> schedule(std::int64_t steps, std::int64_t prefill) {
  std::vector<std::int64_t> rows;
  if (prefill == 0) {
    rows.assign(static_cast<std::size_t>(steps), kDecodeRows);
    return rows;
  }
  for (std::int64_t p = 0; p < prefill; ++p) {
    rows.push_back(kPrefillRows);
    const std::int64_t decode = steps * (p + 1) / prefill - steps * p / prefill;
    rows.insert(rows.end(), static_cast<std::size_t>(decode), kDecodeRows);
  }
  return rows;
}

/// The index of the largest of `count` values (the first on a tie).
std::int64_t argmax(const float *values, std::int64_t count) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < count; ++i) {
    best = values[i] > values[best] ? i : best;
  }
  return best;
}

/// The `count` prompts of the prefill steps, kPrefillRows seeded tokens each.
std::vector<std::vector<std::int64_t>> prompts(std::int64_t count) {
  std::vector<std::vector<std::int64_t>> all(static_cast<std::size_t>(count));
  for (std::size_t p = 0; p < all.size(); ++p) {
    for (std::int64_t r = 0; r < kPrefillRows; ++r) {
      const float u = 0.5f * (hash_uniform(kSeed + 2, p * kPrefillRows + r) + 1.f);
      all[p].push_back(std::min(static_cast<std::int64_t>(u * kVocab), kVocab - 1));
    }
  }
  return all;
}

/// Builds the model, times the loop and prints its time and checksum. A prefill step's tokens
/// are a seeded prompt; a decode step's are the greedy picks of the last step's first rows; the
/// checksum adds up every pick's probability.
void run(const Options &options) {
  const std::vector<std::int64_t> rows = schedule(options.steps, options.prefill);
  const std::vector<std::vector<std::int64_t>> prompt = prompts(options.prefill);
  Model model;
  std::vector<std::int64_t> tokens(kDecodeRows);
  for (std::int64_t r = 0; r < kDecodeRows; ++r) {
    tokens[r] = r * kVocab / kDecodeRows;
  }
  std::size_t prefilled = 0;
  double checksum = 0;

  const auto start = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < rows.size(); ++s) {
    try {
      model.step(rows[s] == kPrefillRows ? prompt[prefilled++] : tokens);
    } catch (const kh::Error &e) {
      throw kh::Error("step " + std::to_string(s) + " (" + std::to_string(rows[s]) +
                      " rows): " + e.what());
    }
    for (std::int64_t r = 0; r < kDecodeRows; ++r) {
      tokens[r] = argmax(model.probs(r), kVocab);
      checksum += model.probs(r)[tokens[r]];
    }
  }
  const auto stop = std::chrono::steady_clock::now();

  const std::chrono::duration<double, std::micro> us = stop - start;
  std::printf("kopt-app-us: %.1f\n", us.count());
  std::printf("checksum: %.9g\n", checksum);
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
