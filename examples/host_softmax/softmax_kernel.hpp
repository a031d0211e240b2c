#pragma once

// The host_softmax kernel: out[r, :] = softmax(x[r, :]) over `rows` rows of `cols` floats,
// row-major. This is the baseline (candidate 00): three passes over each row (its max, the sum
// of exp(x - max), then each exp again divided by the sum), UNROLL elements per step.

#include <cmath>
#include <cstdint>

/// One call's arguments: what the harness allocates and the kernel reads and writes.
struct SoftmaxArgs {
  std::int64_t rows;
  std::int64_t cols;
  const float *x;
  float *out;
};

template <int UNROLL> void softmax_rows(const SoftmaxArgs &args) {
  for (std::int64_t r = 0; r < args.rows; ++r) {
    const float *x = args.x + r * args.cols;
    float *out = args.out + r * args.cols;
    float max = x[0];
    for (std::int64_t c = 1; c < args.cols; ++c) {
      max = x[c] > max ? x[c] : max;
    }
    float sum = 0.0f;
    for (std::int64_t c = 0; c < args.cols; ++c) {
      sum += std::exp(x[c] - max);
    }
    std::int64_t c = 0;
    for (; c + UNROLL <= args.cols; c += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) {
        out[c + u] = std::exp(x[c + u] - max) / sum;
      }
    }
    for (; c < args.cols; ++c) {
      out[c] = std::exp(x[c] - max) / sum;
    }
  }
}
