// The anchor of this family's figures, measured in the same run as the kernels: cuBLASLt's FP8
// GEMM (e4m3 A and B, one fp32 scale per tensor: cuBLASLt has no 1x128 / 128x128 block scales on
// Hopper, so it does less work than the block-scaled kernels) on the family's shapes, and the
// device's copy rate (a large device-to-device copy, bytes read plus bytes written), and per shape
// a copy of the shape's bytes timed as the GEMMs are (after an L2 flush, launch included): at
// decode sizes (a few MB) even a copy runs well below the large copy's rate.
//
//   anchor configs.csv [--repeat N] [--csv FILE] [--flush read|write]
//
// Per shape: the median of N runs, each after an L2 flush (as bench/standalone.cu times the
// kernels), for cuBLASLt's first heuristic algorithm with fast accumulation off (fp32
// accumulation throughout, the closest to the block-scaled kernels' promotion) and on. Layout as
// the family's: A [M, K] and B [N, K] row-major, C [M, N] bf16 row-major, i.e. cuBLASLt's
// column-major "TN" GEMM C^T[N, M] = B[N, K] * A^T. Build (bench/device_anchor.sh does):
//   nvcc -O3 -std=c++17 -arch=sm_90 anchor.cu -lcublasLt -o anchor
#include "flush.cuh"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

#define CHECK_LT(call)                                                                             \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      std::fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #call, (int)s_);   \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

// Random fp8 e4m3 bytes with a finite, non-zero value (no NaN 0x7f/0xff, no zeros).
__global__ void fill(std::uint8_t *p, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    std::uint8_t b = static_cast<std::uint8_t>((x & 0x37) | 0x08 | (x & 0x80)); // |v| in [2^-6, 1)
    p[i] = b;
  }
}

using bench_flush::Flush;

template <class F> double median_us(F &&launch, Flush &flush, int repeat, bool flush_each = true) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<double> us;
  for (int i = 0; i < repeat; ++i) {
    if (flush_each)
      flush.run(i);
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    us.push_back(1000.0 * ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Lt {
  cublasLtHandle_t handle;
  void *workspace = nullptr;
  std::size_t workspace_bytes = 64u << 20;
  // The two per-tensor scales on the device, each in an allocation of its own (with both in one
  // 8-byte allocation, cublasLtMatmul answered CUBLAS_STATUS_NOT_SUPPORTED for every algorithm
  // the heuristic offered, H100, CUDA 13.0; when it still does, the shape is timed without scales).
  float *scale_a = nullptr, *scale_b = nullptr;
  Lt() {
    CHECK_LT(cublasLtCreate(&handle));
    CHECK(cudaMalloc(&workspace, workspace_bytes));
    CHECK(cudaMalloc(&scale_a, sizeof(float)));
    CHECK(cudaMalloc(&scale_b, sizeof(float)));
    const float ha = 0.75f, hb = 0.5f;
    CHECK(cudaMemcpy(scale_a, &ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(scale_b, &hb, sizeof hb, cudaMemcpyHostToDevice));
  }

  // Returns the median us of C[M,N] = (sa * A[M,K]) (sb * B[N,K])^T, or -1 when cuBLASLt offers
  // no algorithm for the shape.
  double time(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t *A,
              const std::uint8_t *B, void *C, bool fast_accum, Flush &flush, int repeat,
              bool with_scales = true) {
    cublasLtMatmulDesc_t op;
    CHECK_LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    CHECK_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CHECK_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    const float *sa = scale_a, *sb = scale_b;
    // cuBLASLt's A is the family's B (N x K), its B the family's A.
    if (with_scales) {
      CHECK_LT(
          cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb));
      CHECK_LT(
          cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa));
    }
    const std::int8_t fast = fast_accum ? 1 : 0;
    CHECK_LT(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK_LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K)); // B^T viewed col-major
    CHECK_LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K));
    CHECK_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N));
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &workspace_bytes, sizeof workspace_bytes));
    // Up to 8 algorithms in the heuristic's order; the first that runs is timed. Failures are
    // printed once per shape with cuBLASLt's status codes.
    cublasLtMatmulHeuristicResult_t results[8] = {};
    int found = 0;
    double us = -1;
    const cublasStatus_t h =
        cublasLtMatmulAlgoGetHeuristic(handle, op, la, lb, lc, lc, pref, 8, results, &found);
    cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; h == CUBLAS_STATUS_SUCCESS && i < found && us < 0; ++i) {
      const float alpha = 1.f, beta = 0.f;
      cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
      auto launch = [&] {
        if (st == CUBLAS_STATUS_SUCCESS) {
          st = cublasLtMatmul(handle, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc,
                              &results[i].algo, workspace, workspace_bytes, 0);
        }
      };
      launch();
      CHECK(cudaDeviceSynchronize());
      if (st == CUBLAS_STATUS_SUCCESS) {
        us = median_us(launch, flush, repeat);
        CHECK(cudaGetLastError());
        if (st != CUBLAS_STATUS_SUCCESS)
          us = -1;
      }
      last = st;
    }
    if (us < 0) {
      std::fprintf(stderr,
                   "M=%lld N=%lld K=%lld fast=%d: heuristic status %d, %d algorithms, last "
                   "matmul status %d\n",
                   (long long)M, (long long)N, (long long)K, (int)fast_accum, (int)h, found,
                   (int)last);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    return us;
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: anchor configs.csv [--repeat N] [--csv FILE] [--flush read|write]\n");
    return 2;
  }
  int repeat = 20;
  std::string csv_path;
  bool write_flush = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--repeat")
      repeat = std::atoi(argv[i + 1]);
    else if (a == "--csv")
      csv_path = argv[i + 1];
    else if (a == "--flush")
      write_flush = std::string(argv[i + 1]) == "write";
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  Flush flush(write_flush);
  std::printf("L2 flush before each timed run: %s\n", write_flush ? "write (dirty lines)" : "read (clean lines)");

  // Copy rate: 2 GiB device to device, bytes read plus written, no flush (the buffers dwarf L2).
  const std::size_t copy_bytes = std::size_t{2} << 30;
  void *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, copy_bytes));
  CHECK(cudaMalloc(&dst, copy_bytes));
  CHECK(cudaMemset(src, 1, copy_bytes));
  const double copy_us =
      median_us([&] { CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice)); },
                flush, 20, false);
  const double copy_tbs = 2.0 * copy_bytes / copy_us * 1e-6;
  std::printf("copy: %.3f GB in %.1f us: %.3f TB/s (read + written)\n", copy_bytes * 1e-9, copy_us,
              copy_tbs);
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));

  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 2;
  }
  std::FILE *csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv) {
    std::fprintf(csv,
                 "M,N,K,us_lt,tflops_lt,us_lt_fast,tflops_lt_fast,bytes,floor_copy_us,copy_tbs,"
                 "copy_same_us\n");
  }
  Lt lt;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    long long M, N, K;
    if (std::sscanf(line.c_str(), "%lld,%lld,%lld", &M, &N, &K) != 3)
      continue;
    std::uint8_t *A = nullptr, *B = nullptr;
    void *C = nullptr;
    CHECK(cudaMalloc(&A, M * K));
    CHECK(cudaMalloc(&B, N * K));
    CHECK(cudaMalloc(&C, M * N * 2));
    fill<<<1024, 256>>>(A, M * K, 17);
    fill<<<1024, 256>>>(B, N * K, 29);
    CHECK(cudaGetLastError());
    double us = lt.time(M, N, K, A, B, C, false, flush, repeat);
    double us_fast = lt.time(M, N, K, A, B, C, true, flush, repeat);
    if (us < 0 || us_fast < 0) {
      std::printf("M=%lld N=%lld K=%lld: retried without scale pointers\n", M, N, K);
      if (us < 0)
        us = lt.time(M, N, K, A, B, C, false, flush, repeat, false);
      if (us_fast < 0)
        us_fast = lt.time(M, N, K, A, B, C, true, flush, repeat, false);
    }
    const double flops = 2.0 * M * N * K;
    // The bytes a block-scaled GEMM must move: A, B, C and both scale tensors.
    const double bytes = double(M) * K + double(N) * K + 2.0 * M * N + 4.0 * M * (K / 128) +
                         4.0 * (N / 128) * (K / 128);
    const double floor_us = bytes / copy_tbs * 1e-6;
    // The same bytes moved by a device-to-device copy (half read, half written), timed like the
    // GEMMs: the copy rate at this size.
    const std::size_t half = static_cast<std::size_t>(bytes / 2) & ~std::size_t{255};
    void *from = nullptr, *to = nullptr;
    CHECK(cudaMalloc(&from, half));
    CHECK(cudaMalloc(&to, half));
    CHECK(cudaMemset(from, 1, half));
    const double copy_same_us = median_us(
        [&] { CHECK(cudaMemcpyAsync(to, from, half, cudaMemcpyDeviceToDevice)); }, flush, repeat);
    CHECK(cudaFree(from));
    CHECK(cudaFree(to));
    std::printf("M=%lld N=%lld K=%lld cublasLt %.2f us %.1f TFLOP/s | fast-accum %.2f us %.1f "
                "TFLOP/s | copy floor %.2f us (lt at %.0f%% of copy rate) | same-size copy %.2f us\n",
                M, N, K, us, us > 0 ? flops / us * 1e-6 : 0.0, us_fast,
                us_fast > 0 ? flops / us_fast * 1e-6 : 0.0, floor_us,
                us > 0 ? 100.0 * floor_us / us : 0.0, copy_same_us);
    if (csv) {
      std::fprintf(csv, "%lld,%lld,%lld,%.3f,%.1f,%.3f,%.1f,%.0f,%.3f,%.4f,%.3f\n", M, N, K, us,
                   us > 0 ? flops / us * 1e-6 : 0.0, us_fast,
                   us_fast > 0 ? flops / us_fast * 1e-6 : 0.0, bytes, floor_us, copy_tbs,
                   copy_same_us);
    }
    CHECK(cudaFree(A));
    CHECK(cudaFree(B));
    CHECK(cudaFree(C));
  }
  if (csv)
    std::fclose(csv);
  return 0;
}
