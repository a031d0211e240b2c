#pragma once

// The cuda backend of the harness, header-only so that only a family's own harness (compiled by
// nvcc, C++17) needs the CUDA toolkit: checked calls, device buffers, the event timer with its
// L2 flush, and the per-config NVTX range the ncu profiler attributes kernels by.

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"
#include "kopt/harness/timer.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <string>
#include <utility>

namespace kopt::harness::cuda {

/// Throws Error `file:line: what: <cuda error name>: <text>` when `status` is not cudaSuccess.
inline void check(cudaError_t status, const char *what, const char *file, int line) {
  if (status != cudaSuccess) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

/// Checks a CUDA runtime call (or a launch's cudaGetLastError()) where it is written.
#define KOPT_CUDA_CHECK(call) ::kopt::harness::cuda::check((call), #call, __FILE__, __LINE__)

/// `count` elements of T in device memory from cudaMalloc (never managed memory), freed on
/// destruction.
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) {
      KOPT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&data_), count_ * sizeof(T)));
    }
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) {
      cudaFree(data_); // an error here is the sticky error of an earlier fault, already reported
    }
  }

  /// Returns the device pointer (nullptr when empty).
  T *get() const { return data_; }
  /// Returns the element count.
  std::size_t size() const { return count_; }
  /// Returns the size in bytes.
  std::size_t bytes() const { return count_ * sizeof(T); }

private:
  T *data_ = nullptr;
  std::size_t count_ = 0;
};

/// An NVTX range for the lifetime of the object; a family opens one per config named
/// `config_<index> ...`, which `kopt bench` under ncu --nvtx attributes kernel launches by.
class NvtxRange {
public:
  explicit NvtxRange(const std::string &name) { nvtxRangePushA(name.c_str()); }
  NvtxRange(const NvtxRange &) = delete;
  NvtxRange &operator=(const NvtxRange &) = delete;
  ~NvtxRange() { nvtxRangePop(); }
};

/// Times a run with CUDA events recorded on `stream` around Problem::run(), after overwriting a
/// buffer twice the size of the L2 cache so that every timed run starts from a cold L2. The
/// problem must launch its work on the same stream.
class EventTimer final : public Timer {
public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {
    int device = 0;
    int l2_bytes = 0;
    KOPT_CUDA_CHECK(cudaGetDevice(&device));
    KOPT_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    std::size_t flush = 2 * static_cast<std::size_t>(l2_bytes);
    flush_ = DeviceBuffer<unsigned char>(flush < (64u << 20) ? (64u << 20) : flush);
    KOPT_CUDA_CHECK(cudaEventCreate(&start_));
    KOPT_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  double time_run(Problem &problem) override {
    KOPT_CUDA_CHECK(cudaMemsetAsync(flush_.get(), ++flush_value_, flush_.bytes(), stream_));
    KOPT_CUDA_CHECK(cudaEventRecord(start_, stream_));
    problem.run();
    KOPT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    KOPT_CUDA_CHECK(cudaEventSynchronize(stop_));
    problem.sync(); // surfaces a fault in the run as this config's error
    float ms = 0;
    KOPT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return 1000.0 * ms;
  }
  const char *name() const override { return "events"; }

private:
  cudaStream_t stream_;
  DeviceBuffer<unsigned char> flush_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  unsigned char flush_value_ = 0;
};

} // namespace kopt::harness::cuda
