#pragma once

// The host_gemm kernel, candidate 01: C = A * B in float, row-major A[M,K], B[K,N], C[M,N].
// Register blocking: each 4 x 8 block of C lives in 32 accumulators while all of K streams
// through a packed, contiguous 8-column panel of B, so the inner loop is 8 independent
// multiply-adds the compiler vectorises (two SSE2 registers per row) instead of one dependent
// add chain over a strided column of B.

#include <algorithm>
#include <cstdint>
#include <vector>

/// One GEMM call's shape and buffers.
struct GemmArgs {
  std::int64_t M, N, K;
  const float *A;
  const float *B;
  float *C;
};

namespace gemm_detail {

constexpr int MR = 4; // rows of C per micro tile
constexpr int NR = 8; // columns of C per micro tile (and per packed panel of B)

// Computes one MR x NR micro tile over all of K from MR rows of A and a packed panel of B. Each
// accumulator starts at 0 and adds its products in k order, as the baseline does, so results
// are bit for bit the baseline's.
inline void micro_tile(std::int64_t K, const float *a0, const float *a1, const float *a2,
                       const float *a3, const float *panel, float acc[MR][NR]) {
  float c0[NR] = {}, c1[NR] = {}, c2[NR] = {}, c3[NR] = {};
  for (std::int64_t k = 0; k < K; ++k) {
    const float *b = panel + k * NR;
    const float x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
    // Left rolled for the vectoriser: GCC -O3 otherwise unrolls these 8 steps first and its
    // straight-line vectoriser then shuffles them, which measured 2x slower than -O2's code.
#pragma GCC unroll 1
    for (int j = 0; j < NR; ++j) {
      c0[j] += x0 * b[j];
      c1[j] += x1 * b[j];
      c2[j] += x2 * b[j];
      c3[j] += x3 * b[j];
    }
  }
  for (int j = 0; j < NR; ++j) {
    acc[0][j] = c0[j];
    acc[1][j] = c1[j];
    acc[2][j] = c2[j];
    acc[3][j] = c3[j];
  }
}

} // namespace gemm_detail

/// Computes C = A * B in TM x TN cache blocks of C made of 4 x 8 register tiles; B's columns of
/// a block are packed once (zero-padded past N) and reused by every row of A. Edge tiles are
/// computed whole on clamped rows and padded columns and only their valid part is stored, so
/// any M, N, K works. TK is unused: the micro tile streams all of K through one panel.
template <int TM, int TN, int TK> void gemm_tiled(const GemmArgs &g) {
  using gemm_detail::MR;
  using gemm_detail::NR;
  static_assert(TN % NR == 0, "TN must be a multiple of the 8-column panel");
  const std::int64_t M = g.M, N = g.N, K = g.K;
  std::vector<float> packed(static_cast<std::size_t>(K) * TN);
  float acc[MR][NR];
  for (std::int64_t j0 = 0; j0 < N; j0 += TN) {
    const std::int64_t jn = std::min<std::int64_t>(TN, N - j0);
    const std::int64_t panels = (jn + NR - 1) / NR;
    for (std::int64_t p = 0; p < panels; ++p) {
      float *panel = packed.data() + p * K * NR;
      for (std::int64_t k = 0; k < K; ++k) {
        for (int j = 0; j < NR; ++j) {
          const std::int64_t col = j0 + p * NR + j;
          panel[k * NR + j] = col < N ? g.B[k * N + col] : 0.0f;
        }
      }
    }
    for (std::int64_t i0 = 0; i0 < M; i0 += TM) {
      const std::int64_t i1 = std::min<std::int64_t>(i0 + TM, M);
      for (std::int64_t p = 0; p < panels; ++p) {
        const float *panel = packed.data() + p * K * NR;
        const std::int64_t col0 = j0 + p * NR;
        const std::int64_t cols = std::min<std::int64_t>(NR, N - col0);
        for (std::int64_t i = i0; i < i1; i += MR) {
          const std::int64_t rows = std::min<std::int64_t>(MR, i1 - i);
          // Rows past the edge repeat the last valid row; their results are not stored.
          const float *a[MR];
          for (int r = 0; r < MR; ++r) {
            a[r] = g.A + (i + std::min<std::int64_t>(r, rows - 1)) * K;
          }
          gemm_detail::micro_tile(K, a[0], a[1], a[2], a[3], panel, acc);
          for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t j = 0; j < cols; ++j) {
              g.C[(i + r) * N + col0 + j] = acc[r][j];
            }
          }
        }
      }
    }
  }
}
