#pragma once

// The host_gemm kernel: C = A * B in float, row-major A[M,K], B[K,N], C[M,N].
// This is the baseline (candidate 00): a plain tiled loop, correct for any M, N, K.

#include <algorithm>
#include <cstdint>

/// One GEMM call's shape and buffers.
struct GemmArgs {
  std::int64_t M, N, K;
  const float *A;
  const float *B;
  float *C;
};

/// Computes C = A * B tile by tile (TM x TN tiles of C, TK-deep slices of K); tiles at the
/// edges are cut to the matrix, so any M, N, K works. Each C element sums its K products in
/// order, so every instance gives the same bits.
template <int TM, int TN, int TK> void gemm_tiled(const GemmArgs &g) {
  for (std::int64_t i = 0; i < g.M * g.N; ++i) {
    g.C[i] = 0.0f;
  }
  for (std::int64_t i0 = 0; i0 < g.M; i0 += TM) {
    const std::int64_t i1 = std::min<std::int64_t>(i0 + TM, g.M);
    for (std::int64_t j0 = 0; j0 < g.N; j0 += TN) {
      const std::int64_t j1 = std::min<std::int64_t>(j0 + TN, g.N);
      for (std::int64_t k0 = 0; k0 < g.K; k0 += TK) {
        const std::int64_t k1 = std::min<std::int64_t>(k0 + TK, g.K);
        for (std::int64_t i = i0; i < i1; ++i) {
          for (std::int64_t j = j0; j < j1; ++j) {
            float acc = g.C[i * g.N + j];
            for (std::int64_t k = k0; k < k1; ++k) {
              acc += g.A[i * g.K + k] * g.B[k * g.N + j];
            }
            g.C[i * g.N + j] = acc;
          }
        }
      }
    }
  }
}
