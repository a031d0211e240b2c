// Dispatch calls per second with shape capture compiled in (KOPT_CAPTURE unset, then set) and
// without it, for a dispatch of the shape the generated one has: a 7-rule heuristic over M, N, K.
// Built three times from this file (see run.sh): -DKOPT_BENCH_CAPTURE=0 / 1.
#include "gen/shape_capture.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

const char *const kColumns[3] = {"M", "N", "K"};

#if KOPT_BENCH_CAPTURE
// As the generated dispatch TU holds it: made during static initialisation.
kopt_capture::ShapeCapture *const capture = kopt_capture::process_capture("bench", kColumns, 3);
#endif

// The CUDA blockscale family's heuristic, as gen emits it, returning a kernel index.
__attribute__((noinline)) int dispatch(const std::int64_t *dims) {
#if KOPT_BENCH_CAPTURE
  if (capture != nullptr) {
    capture->record(dims);
  }
#endif
  const std::int64_t m = dims[0], n = dims[1];
  if (m <= 16 && n >= 28672)
    return 1;
  if (m <= 16)
    return 2;
  if (m * n <= 1000000)
    return 3;
  if (m * n <= 1600000)
    return 4;
  if (m <= 64)
    return 5;
  if (m * n <= 3000000)
    return 4;
  return 6;
}

} // namespace

int main(int argc, char **argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 200000000;
  static const std::int64_t shapes[8][3] = {
      {1, 6144, 4096},    {16, 6144, 4096},  {64, 7168, 512},   {256, 4096, 7168},
      {2048, 8192, 1024}, {16, 28672, 4096}, {128, 1024, 1024}, {4096, 4096, 4096}};
  long sum = 0;
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    sum += dispatch(shapes[i & 7]);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.1f Mcalls/s %.3f ns/call (checksum %ld)\n", calls / s / 1e6, s / calls * 1e9, sum);
  return 0;
}
