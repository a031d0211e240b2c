#pragma once

// A synthetic CK-like family for bench/compile: a plain tiled host GEMM whose epilogue
// instantiates DEPTH small templates, so that one instance TU costs seconds and hundreds of MB
// to compile, as Composable Kernel instances do (minutes there). The epilogue adds 0 * f(A[0]),
// which the compiler cannot fold away, so every instance computes the same C = A * B.

#include <algorithm>
#include <cstdint>

/// One GEMM call's shape and buffers.
struct GemmArgs {
  std::int64_t M, N, K;
  const float *A;
  const float *B;
  float *C;
};

template <long S, int I> inline float ck_term(float x) {
  return x * (1.0f + float(I) * 1e-7f) + float((S + I) % 7);
}

/// ck_term<S, Lo> ... ck_term<S, Hi - 1> applied in turn: Hi - Lo instantiations, split in
/// halves so that the nesting stays shallow. S is the instance's own (its tile), so that no two
/// instances share an instantiation, as no two CK instances share their pipeline's.
template <long S, int Lo, int Hi> struct CkChain {
  static inline float apply(float x) {
    if constexpr (Hi - Lo == 1) {
      return ck_term<S, Lo>(x);
    } else {
      constexpr int Mid = (Lo + Hi) / 2;
      return CkChain<S, Mid, Hi>::apply(CkChain<S, Lo, Mid>::apply(x));
    }
  }
};

template <int TM, int TN, int TK, int DEPTH> void ck_like_gemm(const GemmArgs &g) {
  constexpr long S = (TM * 1000L + TN) * 1000L + TK;
  const float zero = 0.0f * CkChain<S, 0, DEPTH>::apply(g.M * g.K > 0 ? g.A[0] : 0.0f);
  for (std::int64_t i0 = 0; i0 < g.M; i0 += TM) {
    const std::int64_t i1 = std::min<std::int64_t>(i0 + TM, g.M);
    for (std::int64_t j0 = 0; j0 < g.N; j0 += TN) {
      const std::int64_t j1 = std::min<std::int64_t>(j0 + TN, g.N);
      for (std::int64_t i = i0; i < i1; ++i) {
        for (std::int64_t j = j0; j < j1; ++j) {
          float acc = 0.0f;
          for (std::int64_t k0 = 0; k0 < g.K; k0 += TK) {
            const std::int64_t k1 = std::min<std::int64_t>(k0 + TK, g.K);
            for (std::int64_t k = k0; k < k1; ++k) {
              acc += g.A[i * g.K + k] * g.B[k * g.N + j];
            }
          }
          g.C[i * g.N + j] = acc + zero;
        }
      }
    }
  }
}
