#pragma once
// The L2 flush before each timed run of bench/standalone.cu and bench/anchor.cu: a kernel that
// reads a buffer of twice the L2 size and writes nothing. It leaves L2 full of clean lines, so
// the timed kernel pays for its own misses only. A flush that writes (cudaMemset of the buffer)
// leaves L2 full of dirty lines instead, and the timed kernel pays for writing them back: about
// 10-13 us on an H100 (50 MiB of L2), the same for every kernel, which hides most of a decode
// shape's time. `write = true` keeps that old flush, to show the difference.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace bench_flush {

__global__ void read_all(const uint4 *buf, std::size_t n, unsigned *sink) {
  unsigned x = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(buf + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9E3779B9u) *sink = x; // never true for the buffer's contents: keeps the loads
}

struct Flush {
  unsigned char *buf = nullptr;
  unsigned *sink = nullptr;
  std::size_t bytes = 0;
  bool write = false;
  explicit Flush(bool write_flush = false) : write(write_flush) {
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0) != cudaSuccess ||
        cudaMalloc(&buf, bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 64u << 20)) !=
            cudaSuccess ||
        cudaMalloc(&sink, sizeof *sink) != cudaSuccess ||
        cudaMemset(buf, 0x11, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      std::fprintf(stderr, "flush: cannot set up the L2 flush buffer\n");
      std::exit(1);
    }
  }
  void run(int i) {
    if (write) {
      cudaMemsetAsync(buf, i & 0xFF, bytes);
    } else {
      read_all<<<1024, 256>>>(reinterpret_cast<const uint4 *>(buf), bytes / sizeof(uint4), sink);
    }
  }
};

} // namespace bench_flush
