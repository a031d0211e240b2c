// The family's reference GEMM (../reference.cuh, tensor cores) against the plain-FMA kernel it
// replaced (kept below as it was), element by element on six shapes, each timed with events.
// Exit status 1 when any element differs by more than 1e-4 relative, or is not finite.
//   nvcc -std=c++17 -O2 -arch=sm_90a reference_check.cu -o reference_check && ./reference_check
#include "../reference.cuh"
#include <cstdio>
namespace a8w8_ref {

// The fp32 reference on the fp8-decoded inputs, plain FMAs (no tensor cores): per 128-wide K
// block an fp32 sum, then scaled and added, the order the family's definition gives. 64x64
// outputs per block of 16x16 threads, 4x4 per thread.
__global__ void __launch_bounds__(256) old_reference_gemm(RefArgs g, float *out) {
  __shared__ float sA[16][64 + 1];
  __shared__ float sB[16][64 + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const std::int64_t m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  const std::int64_t KB = g.K / kScaleBlock;
  float acc[4][4] = {};
  for (std::int64_t kb = 0; kb < KB; ++kb) {
    float part[4][4] = {};
    for (int k1 = 0; k1 < kScaleBlock; k1 += 16) {
      for (int e = tid; e < 64 * 16; e += 256) {
        const int r = e / 16, k = e % 16;
        const std::int64_t kk = kb * kScaleBlock + k1 + k;
        sA[k][r] = m0 + r < g.M ? fp8_to_float(g.A[(m0 + r) * g.K + kk]) : 0.f;
        sB[k][r] = n0 + r < g.N ? fp8_to_float(g.B[(n0 + r) * g.K + kk]) : 0.f;
      }
      __syncthreads();
      for (int k = 0; k < 16; ++k) {
        for (int i = 0; i < 4; ++i) {
          for (int j = 0; j < 4; ++j) {
            part[i][j] = fmaf(sA[k][ty + 16 * i], sB[k][tx + 16 * j], part[i][j]);
          }
        }
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      const std::int64_t m = m0 + ty + 16 * i;
      const float sa = m < g.M ? g.scale_a[m * KB + kb] : 0.f;
      for (int j = 0; j < 4; ++j) {
        const std::int64_t n = n0 + tx + 16 * j;
        const float sb = n < g.N ? g.scale_b[(n / kScaleBlock) * KB + kb] : 0.f;
        acc[i][j] += part[i][j] * (sa * sb);
      }
    }
  }
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const std::int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < g.M && n < g.N) {
        out[m * g.N + n] = acc[i][j];
      }
    }
  }
}

} // namespace a8w8_ref
using namespace a8w8_ref;
int main() {
  long shapes[][3] = {{1, 6144, 4096}, {16, 7168, 2048}, {100, 1536, 7168}, {64, 32768, 512},
                      {1024, 7168, 16384}, {8192, 7168, 2048}};
  cudaStream_t s; cudaStreamCreate(&s);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  int bad = 0;
  for (auto &sh : shapes) {
    long M = sh[0], N = sh[1], K = sh[2], KB = K / 128;
    std::uint8_t *A, *B; float *sa, *sb, *o1, *o2;
    cudaMalloc(&A, M * K); cudaMalloc(&B, N * K); cudaMalloc(&sa, M * KB * 4);
    cudaMalloc(&sb, N / 128 * KB * 4); cudaMalloc(&o1, M * N * 4); cudaMalloc(&o2, M * N * 4);
    fill_fp8<<<1024, 256, 0, s>>>(A, M * K, 1); fill_fp8<<<1024, 256, 0, s>>>(B, N * K, 2);
    fill_scale<<<256, 256, 0, s>>>(sa, M * KB, 3); fill_scale<<<256, 256, 0, s>>>(sb, N / 128 * KB, 4);
    RefArgs g{M, N, K, A, B, sa, sb, s};
    dim3 grid((N + 63) / 64, (M + 63) / 64);
    float t_old = 0, t_new = 0;
    for (int rep = 0; rep < 3; ++rep) {
      cudaEventRecord(e0, s); old_reference_gemm<<<grid, dim3(16, 16), 0, s>>>(g, o1); cudaEventRecord(e1, s);
      cudaEventSynchronize(e1); cudaEventElapsedTime(&t_old, e0, e1);
      cudaEventRecord(e0, s); launch_reference(g, o2); cudaEventRecord(e1, s);
      cudaEventSynchronize(e1); cudaEventElapsedTime(&t_new, e0, e1);
    }
    std::vector<float> h1(M * N), h2(M * N);
    cudaMemcpy(h1.data(), o1, M * N * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h2.data(), o2, M * N * 4, cudaMemcpyDeviceToHost);
    double worst = 0; long nan = 0;
    for (long i = 0; i < M * N; ++i) {
      if (!std::isfinite(h2[i])) ++nan;
      double d = std::fabs(h1[i] - h2[i]) / (1.0 + std::fabs(h1[i]));
      if (d > worst) worst = d;
    }
    bool ok = worst < 1e-4 && nan == 0;
    bad += !ok;
    printf("M=%ld N=%ld K=%ld: max |old-new|/(1+|old|) %.3g, nan %ld, old %.3f ms, new %.3f ms (%.1fx) %s\n",
           M, N, K, worst, nan, t_old, t_new, t_old / t_new, ok ? "ok" : "MISMATCH");
    cudaFree(A); cudaFree(B); cudaFree(sa); cudaFree(sb); cudaFree(o1); cudaFree(o2);
  }
  printf("%s: %s\n", cudaGetErrorString(cudaGetLastError()), bad ? "FAILED" : "all shapes agree");
  return bad;
}
