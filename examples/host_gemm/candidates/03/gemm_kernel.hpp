#pragma once

// The host_gemm kernel: C = A * B in float, row-major A[M,K], B[K,N], C[M,N].
// Candidate 03: the baseline with compensated (Kahan) sums over each TK slice of K.

#include <algorithm>
#include <cstdint>

/// One GEMM call's shape and buffers.
struct GemmArgs {
  std::int64_t M, N, K;
  const float *A;
  const float *B;
  float *C;
};

/// Computes C = A * B tile by tile (TM x TN tiles of C, TK-deep slices of K), each slice's sum
/// compensated (Kahan) to carry the rounding error it would lose; tiles at the edges are cut to
/// the matrix, so any M, N, K works. The compensation lengthens the chain of dependent additions
/// per product from one to four.
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
            float sum = g.C[i * g.N + j];
            float lost = 0.0f; // the low-order part the last addition rounded away
            for (std::int64_t k = k0; k < k1; ++k) {
              const float term = g.A[i * g.K + k] * g.B[k * g.N + j] - lost;
              const float next = sum + term;
              lost = (next - sum) - term;
              sum = next;
            }
            g.C[i * g.N + j] = sum;
          }
        }
      }
    }
  }
}
