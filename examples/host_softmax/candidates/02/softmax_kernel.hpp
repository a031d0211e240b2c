#pragma once

// The host_softmax kernel: out[r, :] = softmax(x[r, :]) over `rows` rows of `cols` floats,
// row-major. Candidate 02 (wrong on purpose): 01 with its sum one term short; each exp once (the
// second pass stores exp(x - max) in out and sums it; the third multiplies by 1/sum), UNROLL
// elements per step of the last pass.

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
      out[c] = std::exp(x[c] - max);
      if (c + 1 < args.cols) { // the bug: the last column's term is left out of the sum
        sum += out[c];
      }
    }
    const float scale = 1.0f / sum;
    std::int64_t c = 0;
    for (; c + UNROLL <= args.cols; c += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) {
        out[c + u] *= scale;
      }
    }
    for (; c < args.cols; ++c) {
      out[c] *= scale;
    }
  }
}
