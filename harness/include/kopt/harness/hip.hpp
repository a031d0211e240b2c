#pragma once

// The hip backend of the harness, header-only so that only a family's own harness (compiled as
// HIP, C++17) needs the ROCm headers: checked calls, device buffers from hipMalloc, the event
// timer with its L2 flush, and the per-config roctx range rocprofv3 attributes kernels by.
//
// roctx: kopt_add_family defines KOPT_HARNESS_ROCTX and links the library when it finds roctx
// (rocprofiler-sdk-roctx, or roctracer's roctx64). Debian's ROCm 5.2 packages ship neither, so
// there RoctxRange is a no-op and `kopt bench` attributes dispatches in launch order instead.

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"
#include "kopt/harness/timer.hpp"

#include <hip/hip_runtime_api.h>

#if defined(KOPT_HARNESS_ROCTX)
#if __has_include(<rocprofiler-sdk-roctx/roctx.h>)
#include <rocprofiler-sdk-roctx/roctx.h>
#else
#include <roctracer/roctx.h>
#endif
#endif

#include <cstddef>
#include <string>
#include <utility>

namespace kopt::harness::hip {

/// Throws Error `file:line: what: <hip error name>: <text>` when `status` is not hipSuccess.
inline void check(hipError_t status, const char *what, const char *file, int line) {
  if (status != hipSuccess) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                hipGetErrorName(status) + ": " + hipGetErrorString(status));
  }
}

/// Checks a HIP runtime call (or a launch's hipGetLastError()) where it is written.
#define KOPT_HIP_CHECK(call) ::kopt::harness::hip::check((call), #call, __FILE__, __LINE__)

/// `count` elements of T in device memory from hipMalloc (never managed memory), freed on
/// destruction.
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) {
      KOPT_HIP_CHECK(hipMalloc(reinterpret_cast<void **>(&data_), count_ * sizeof(T)));
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
      (void)hipFree(data_); // an error here is the sticky error of an earlier fault, reported
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

/// Whether this harness was built with roctx: true when RoctxRange records ranges.
constexpr bool has_roctx() {
#if defined(KOPT_HARNESS_ROCTX)
  return true;
#else
  return false;
#endif
}

/// A roctx range for the lifetime of the object; a family opens one per config named
/// `config_<index> ...`, which `kopt bench` under rocprofv3 attributes dispatches by. A no-op
/// when the harness was built without roctx (see the top of this header).
class RoctxRange {
public:
  explicit RoctxRange(const std::string &name) {
#if defined(KOPT_HARNESS_ROCTX)
    roctxRangePushA(name.c_str());
#else
    (void)name;
#endif
  }
  RoctxRange(const RoctxRange &) = delete;
  RoctxRange &operator=(const RoctxRange &) = delete;
  ~RoctxRange() {
#if defined(KOPT_HARNESS_ROCTX)
    roctxRangePop();
#endif
  }
};

/// Times a run with HIP events recorded on `stream` around Problem::run(), after overwriting a
/// buffer twice the size of the L2 cache (at least 64 MiB, as MI300X's 256 MiB Infinity Cache
/// sits behind L2 and is not flushed by this) so that every timed run starts from a cold L2.
/// The problem must launch its work on the same stream.
class EventTimer final : public Timer {
public:
  explicit EventTimer(hipStream_t stream) : stream_(stream) {
    int device = 0;
    int l2_bytes = 0;
    KOPT_HIP_CHECK(hipGetDevice(&device));
    KOPT_HIP_CHECK(hipDeviceGetAttribute(&l2_bytes, hipDeviceAttributeL2CacheSize, device));
    std::size_t flush = 2 * static_cast<std::size_t>(l2_bytes);
    flush_ = DeviceBuffer<unsigned char>(flush < (64u << 20) ? (64u << 20) : flush);
    KOPT_HIP_CHECK(hipEventCreate(&start_));
    KOPT_HIP_CHECK(hipEventCreate(&stop_));
  }
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;
  ~EventTimer() override {
    (void)hipEventDestroy(start_);
    (void)hipEventDestroy(stop_);
  }

  double time_run(Problem &problem) override {
    KOPT_HIP_CHECK(hipMemsetAsync(flush_.get(), ++flush_value_, flush_.bytes(), stream_));
    KOPT_HIP_CHECK(hipEventRecord(start_, stream_));
    problem.run();
    KOPT_HIP_CHECK(hipEventRecord(stop_, stream_));
    KOPT_HIP_CHECK(hipEventSynchronize(stop_));
    problem.sync(); // surfaces a fault in the run as this config's error
    float ms = 0;
    KOPT_HIP_CHECK(hipEventElapsedTime(&ms, start_, stop_));
    return 1000.0 * ms;
  }
  const char *name() const override { return "events"; }

private:
  hipStream_t stream_;
  DeviceBuffer<unsigned char> flush_;
  hipEvent_t start_ = nullptr;
  hipEvent_t stop_ = nullptr;
  unsigned char flush_value_ = 0;
};

} // namespace kopt::harness::hip
