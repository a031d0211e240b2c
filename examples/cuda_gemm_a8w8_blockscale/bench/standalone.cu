// A test program for the kernel without kopt: builds every instance of family.json directly
// (bench/build.sh writes the X-macro list from it), checks each against the references and times
// it with events after an L2 flush (bench/flush.cuh: a read, so L2 is left clean).
//
//   standalone --check                      odd shapes, every instance vs the CPU fp32 reference
//   standalone --sweep configs.csv [--repeat N] [--cpu-rows N] [--csv FILE] [--kernel NAME]
//                                           every config x every instance (or the one named):
//                                           median us, mismatches
//
// Which kernel header it builds comes from the include path (-I candidates/01 -I .), so one
// source gives the numbers of every candidate. -DFORCE_STAGES=n mimics candidate 02, whose
// instance template pins the pipeline depth.
#include <gemm_kernel.cuh>

#include "../reference.cuh"
#include "flush.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifdef FORCE_STAGES
#define STAGES_OF(s) FORCE_STAGES
#else
#define STAGES_OF(s) s
#endif

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

struct Instance {
  const char *name;
  cudaError_t (*fn)(const GemmArgs &);
};

#define X(BM, BN, WM, WN, S)                                                                       \
  {"a8w8_bs_" #BM "x" #BN "_w" #WM "x" #WN "_s" #S,                                                \
   &a8w8_blockscale_gemm<BM, BN, WM, WN, STAGES_OF(S)>},
const Instance kInstances[] = {
#include "instances.inc"
};
#undef X

constexpr float kAtol = 1e-2f, kRtol = 1e-2f; // bf16's tolerance in kopt's harness

struct Problem {
  std::int64_t M, N, K;
  std::uint8_t *A = nullptr, *B = nullptr;
  float *sa = nullptr, *sb = nullptr, *ref = nullptr;
  std::uint16_t *C = nullptr;
  unsigned long long *count = nullptr;

  Problem(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) : M(m), N(n), K(k) {
    const std::int64_t KB = K / 128;
    CHECK(cudaMalloc(&A, M * K));
    CHECK(cudaMalloc(&B, N * K));
    CHECK(cudaMalloc(&sa, M * KB * 4));
    CHECK(cudaMalloc(&sb, (N / 128) * KB * 4));
    CHECK(cudaMalloc(&ref, M * N * 4));
    CHECK(cudaMalloc(&C, M * N * 2));
    CHECK(cudaMalloc(&count, sizeof *count));
    a8w8_ref::fill_fp8<<<1024, 256>>>(A, M * K, seed * 4 + 0);
    a8w8_ref::fill_fp8<<<1024, 256>>>(B, N * K, seed * 4 + 1);
    a8w8_ref::fill_scale<<<256, 256>>>(sa, M * KB, seed * 4 + 2);
    a8w8_ref::fill_scale<<<256, 256>>>(sb, (N / 128) * KB, seed * 4 + 3);
    CHECK(cudaGetLastError());
    CHECK(a8w8_ref::launch_reference(ref_args(), ref));
    CHECK(cudaDeviceSynchronize());
  }
  ~Problem() {
    cudaFree(A), cudaFree(B), cudaFree(sa), cudaFree(sb), cudaFree(ref), cudaFree(C);
    cudaFree(count);
  }
  a8w8_ref::RefArgs ref_args() const { return {M, N, K, A, B, sa, sb, nullptr}; }
  GemmArgs args() const { return {M, N, K, A, B, sa, sb, C, nullptr}; }

  // Rows of the GPU reference against the CPU fp32 reference; returns the largest relative error.
  double check_reference_rows(const std::vector<std::int64_t> &rows) const {
    const std::int64_t KB = K / 128;
    std::vector<std::uint8_t> b(N * K), a(K);
    std::vector<float> sbh((N / 128) * KB), sah(KB), got(N);
    CHECK(cudaMemcpy(b.data(), B, b.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sbh.data(), sb, sbh.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::int64_t r : rows) {
      CHECK(cudaMemcpy(a.data(), A + r * K, K, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(sah.data(), sa + r * KB, KB * 4, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(got.data(), ref + r * N, N * 4, cudaMemcpyDeviceToHost));
      std::vector<float> want = a8w8_ref::cpu_reference_row(a.data(), sah.data(), b, sbh, N, K);
      for (std::int64_t n = 0; n < N; ++n) {
        const double err = std::fabs(got[n] - want[n]) / (1e-3 + std::fabs(want[n]));
        worst = std::isnan(err) ? 1e30 : std::max(worst, err);
      }
    }
    return worst;
  }

  // Runs `inst` once on poisoned output; returns the mismatches against the reference, or -1
  // when the launch was refused.
  long long run_and_check(const Instance &inst) {
    CHECK(cudaMemset(C, 0xFF, M * N * 2)); // 0xFFFF: a bf16 NaN in every unwritten element
    if (inst.fn(args()) != cudaSuccess) {
      return -1;
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemset(count, 0, sizeof *count));
    a8w8_ref::count_mismatches<<<1024, 256>>>(C, ref, M * N, kAtol, kRtol, count);
    CHECK(cudaGetLastError());
    unsigned long long n = 0;
    CHECK(cudaMemcpy(&n, count, sizeof n, cudaMemcpyDeviceToHost));
    return static_cast<long long>(n);
  }
};

struct Timing {
  bench_flush::Flush flush;
  cudaEvent_t start, stop;
  Timing() {
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  // Median of `repeat` runs, each after an L2 flush, after one warm-up run.
  double median_us(const Instance &inst, const GemmArgs &g, int repeat) {
    CHECK(inst.fn(g));
    CHECK(cudaDeviceSynchronize());
    std::vector<double> us;
    for (int i = 0; i < repeat; ++i) {
      flush.run(i);
      CHECK(cudaEventRecord(start));
      CHECK(inst.fn(g));
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(1000.0 * ms);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }
};

int check_mode() {
  struct Shape {
    std::int64_t M, N, K;
  };
  // {1, 256, 4096} to {33, 128, 8192}: few N tiles and a long K, where a decode tile may split
  // K; then M <= 16 with part of an 8-row M tile (5, 9) and all of two (16); the last two: 16 x 64
  // decode tiles that 16 splits in two on 132 SMs (17's deep pipeline instead).
  const Shape shapes[] = {{1, 128, 128},    {17, 256, 512},   {100, 384, 1024},
                          {300, 512, 256},  {129, 256, 384},  {64, 1024, 128},
                          {1, 256, 4096},   {17, 384, 2048},  {33, 128, 8192},
                          {5, 640, 1152},   {9, 256, 896},    {16, 384, 640},
                          {3, 5120, 1664},  {16, 4096, 640}};
  int failures = 0;
  for (const Shape &s : shapes) {
    Problem p(s.M, s.N, s.K, 1000 + s.M);
    std::vector<std::int64_t> rows;
    for (std::int64_t r = 0; r < s.M; ++r) rows.push_back(r);
    const double ref_err = p.check_reference_rows(rows);
    std::printf("check M=%lld N=%lld K=%lld: GPU reference vs CPU max rel err %.2e\n",
                (long long)s.M, (long long)s.N, (long long)s.K, ref_err);
    failures += ref_err > 1e-3;
    for (const Instance &inst : kInstances) {
      const long long bad = p.run_and_check(inst);
      if (bad == -1 && s.N % 128 == 0) {
        std::printf("  %-28s refused\n", inst.name);
        ++failures;
      } else if (bad != 0) {
        std::printf("  %-28s %lld / %lld outside tolerance\n", inst.name, bad,
                    (long long)(s.M * s.N));
        ++failures;
      }
    }
  }
  std::printf("check: %s (%d failures)\n", failures ? "FAILED" : "all instances pass", failures);
  return failures ? 1 : 0;
}

int sweep_mode(const std::string &configs, int repeat, int cpu_rows, const std::string &csv_path,
               const std::string &only) {
  if (!only.empty() && std::none_of(std::begin(kInstances), std::end(kInstances),
                                    [&](const Instance &i) { return only == i.name; })) {
    std::fprintf(stderr, "--kernel %s: no such instance\n", only.c_str());
    return 2;
  }
  std::ifstream in(configs);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", configs.c_str());
    return 2;
  }
  std::string line;
  std::getline(in, line); // header M,N,K
  std::FILE *csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv) std::fprintf(csv, "M,N,K,kernel,us,tflops,mismatches\n");
  Timing timing;
  int failures = 0, index = 0;
  while (std::getline(in, line)) {
    long long M, N, K;
    if (std::sscanf(line.c_str(), "%lld,%lld,%lld", &M, &N, &K) != 3) continue;
    Problem p(M, N, K, 7 * index + 1);
    double ref_err = 0;
    if (cpu_rows > 0) {
      std::vector<std::int64_t> rows = {0};
      if (cpu_rows > 1 && M > 1) rows.push_back(M - 1);
      ref_err = p.check_reference_rows(rows);
      failures += ref_err > 1e-3;
    }
    double best = 1e30;
    const char *best_name = "";
    for (const Instance &inst : kInstances) {
      if (!only.empty() && only != inst.name) continue;
      const long long bad = p.run_and_check(inst);
      if (bad < 0) continue;
      failures += bad != 0;
      const double us = timing.median_us(inst, p.args(), repeat);
      const double tflops = 2.0 * M * N * K / us * 1e-6;
      if (csv) std::fprintf(csv, "%lld,%lld,%lld,%s,%.3f,%.1f,%lld\n", M, N, K, inst.name, us, tflops, bad);
      if (us < best) best = us, best_name = inst.name;
    }
    std::printf("config_%d M=%lld N=%lld K=%lld best %s %.2f us %.1f TFLOP/s (ref vs cpu %.1e)\n",
                index, M, N, K, best_name, best, 2.0 * M * N * K / best * 1e-6, ref_err);
    ++index;
  }
  if (csv) std::fclose(csv);
  std::printf("sweep: %s (%d failures)\n", failures ? "FAILED" : "all outputs within tolerance",
              failures);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "--check";
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  if (mode == "--check") {
    return check_mode();
  }
  if (mode == "--sweep" && argc > 2) {
    int repeat = 10, cpu_rows = 0;
    std::string csv, only;
    for (int i = 3; i + 1 < argc; i += 2) {
      std::string a = argv[i];
      if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
      else if (a == "--cpu-rows") cpu_rows = std::atoi(argv[i + 1]);
      else if (a == "--csv") csv = argv[i + 1];
      else if (a == "--kernel") only = argv[i + 1];
    }
    return sweep_mode(argv[2], repeat, cpu_rows, csv, only);
  }
  std::fprintf(stderr, "usage: standalone --check | --sweep configs.csv [--repeat N] [--kernel NAME] "
                       "[--cpu-rows N] [--csv FILE]\n");
  return 2;
}
