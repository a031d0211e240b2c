#pragma once

// What the cuda and hip backends of the harness share, written once over a runtime R: checked
// calls, device buffers, the event timer with its L2 flush and the device check of an output.
// R is a backend's `Runtime` struct (cuda.hpp, hip.hpp): the runtime's Status, Stream and Event
// types, its success value and one-line wrappers of the calls made here. This header includes no
// runtime's headers, so a hip harness never sees CUDA's and a cuda harness never sees ROCm's, and
// holds no device code, so its unit test builds with a host compiler (the kernels R launches are
// in the backends, compare_kernel.hpp and flush_kernel.hpp).

#include "kopt/harness/error.hpp"
#include "kopt/harness/problem.hpp"
#include "kopt/harness/timer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

namespace kopt::harness::gpu {

/// Throws Error `file:line: what: <error name>: <text>` when `status` is not R::success.
template <class R>
void check(typename R::Status status, const char *what, const char *file, int line) {
  if (status != R::success) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                R::error_name(status) + ": " + R::error_string(status));
  }
}

// Checks a call of R's where it is written here; the backends' own macros name their runtime.
#define KOPT_GPU_CHECK(R, call) ::kopt::harness::gpu::check<R>((call), #call, __FILE__, __LINE__)

/// `count` elements of T in device memory from R::malloc (cudaMalloc, hipMalloc; never managed
/// memory), freed on destruction. Given a stream, from R::malloc_async on it and freed in its
/// order: memory a harness allocates again every round is then reused, not allocated again.
template <class T, class R> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) {
      KOPT_GPU_CHECK(R, R::malloc(reinterpret_cast<void **>(&data_), count_ * sizeof(T)));
    }
  }
  DeviceBuffer(std::size_t count, typename R::Stream stream)
      : count_(count), stream_(stream), ordered_(true) {
    if (count_ > 0) {
      KOPT_GPU_CHECK(
          R, R::malloc_async(reinterpret_cast<void **>(&data_), count_ * sizeof(T), stream_));
    }
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)),
        stream_(other.stream_), ordered_(other.ordered_) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    std::swap(stream_, other.stream_);
    std::swap(ordered_, other.ordered_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) {
      // An error here is the sticky error of an earlier fault, reported where it happened.
      (void)(ordered_ ? R::free_async(data_, stream_) : R::free(data_));
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
  typename R::Stream stream_{};
  bool ordered_ = false; // from R::malloc_async on stream_
};

/// Times a run with R's events recorded on `stream` around Problem::run(), after reading a buffer
/// twice the size of the L2 cache (at least 64 MiB, as MI300X's 256 MiB Infinity Cache sits
/// behind L2 and is not flushed by this) so that every timed run starts from a cold L2. The
/// flush reads (R::read_async, a kernel that loads the buffer and stores nothing): it leaves L2
/// full of clean lines. A flush that writes the buffer leaves it full of dirty lines instead,
/// whose write-back the timed run then pays for: 2-10 us per run on an H100, the same for every
/// kernel, which shrinks every measured ratio of a short kernel. The buffer is written once, at
/// construction. The problem must launch its work on the same stream.
template <class R> class EventTimer final : public Timer {
public:
  explicit EventTimer(typename R::Stream stream) : stream_(stream) {
    int device = 0;
    int l2_bytes = 0;
    KOPT_GPU_CHECK(R, R::get_device(&device));
    KOPT_GPU_CHECK(R, R::l2_cache_bytes(&l2_bytes, device));
    KOPT_GPU_CHECK(R, R::arch(&device_.arch, device));
    KOPT_GPU_CHECK(R, R::compute_units(&device_.compute_units, device));
    flush_ = DeviceBuffer<unsigned char, R>(
        std::max(2 * static_cast<std::size_t>(l2_bytes), std::size_t{64} << 20));
    KOPT_GPU_CHECK(R, R::memset_async(flush_.get(), 1, flush_.bytes(), stream_));
    KOPT_GPU_CHECK(R, R::event_create(&start_));
    KOPT_GPU_CHECK(R, R::event_create(&stop_));
  }
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;
  ~EventTimer() override {
    (void)R::event_destroy(start_);
    (void)R::event_destroy(stop_);
  }

  double time_run(Problem &problem) override {
    KOPT_GPU_CHECK(R, R::read_async(flush_.get(), flush_.bytes(), stream_));
    // Only timed runs lie between profiler start and stop: a profiler told to wait for the
    // start (ncu --profile-from-start off) leaves the warm-ups and the flush alone. kopt counts
    // every launch in between as the candidate's work (profile/ncu.hpp), so the harness's own
    // launches (this flush, the output's poisoning before it) must stay outside.
    KOPT_GPU_CHECK(R, R::profiler_start());
    KOPT_GPU_CHECK(R, R::event_record(start_, stream_));
    problem.run();
    KOPT_GPU_CHECK(R, R::event_record(stop_, stream_));
    KOPT_GPU_CHECK(R, R::event_synchronize(stop_));
    KOPT_GPU_CHECK(R, R::profiler_stop());
    // After the stop: a profiler that sees every launch (rocprofv3's trace) ends the run here;
    // what follows on the stream (the check, the next run's fills) is the harness's work.
    KOPT_GPU_CHECK(R, R::mark_timed_end(stream_));
    problem.sync(); // surfaces a fault in the run as this config's error
    float ms = 0;
    KOPT_GPU_CHECK(R, R::event_elapsed_ms(&ms, start_, stop_));
    return 1000.0 * ms;
  }
  const char *name() const override { return "events"; }
  DeviceIdentity device() const override { return device_; }

private:
  DeviceIdentity device_;
  typename R::Stream stream_;
  DeviceBuffer<unsigned char, R> flush_;
  typename R::Event start_ = nullptr;
  typename R::Event stop_ = nullptr;
};

/// How an output's elements are stored; the device check reads each as its own type.
enum class Dtype { fp32, bf16, fp16 };

/// Returns the size of one element of `dtype` in bytes.
constexpr std::size_t dtype_bytes(Dtype dtype) { return dtype == Dtype::fp32 ? 4 : 2; }

/// What R::compare_async reduces on the device, and DeviceCheck copies back instead of the output
/// (32 bytes). The maxima are the bits of non-negative doubles, which order as unsigned integers
/// do, so an atomic max of the bits is the max of the values.
struct DeviceTally {
  unsigned long long mismatches = 0;   ///< elements outside tolerance, NaN included
  unsigned long long nans = 0;         ///< elements where the output or the reference is NaN
  unsigned long long max_abs_bits = 0; ///< the largest |x - g| of the other elements
  unsigned long long max_rel_bits = 0; ///< the largest |x - g| / |g| of those with g != 0
};

/// Returns the Comparison of `elements` elements that `tally` holds.
inline Comparison to_comparison(const DeviceTally &tally, std::size_t elements) {
  static_assert(sizeof(double) == sizeof(tally.max_abs_bits), "a double is 64 bits");
  Comparison c;
  c.elements = elements;
  c.mismatches = static_cast<std::size_t>(tally.mismatches);
  c.nans = static_cast<std::size_t>(tally.nans);
  std::memcpy(&c.max_abs, &tally.max_abs_bits, sizeof c.max_abs);
  std::memcpy(&c.max_rel, &tally.max_rel_bits, sizeof c.max_rel);
  return c;
}

/// The device side of Problem::check_output for one output of `count` elements of a Dtype: a
/// snapshot of the output, taken first, and a comparison of that snapshot with a reference,
/// element by element on the device (R::compare_async), of which only a DeviceTally comes back.
/// Everything runs on the harness's stream, in order, after the run it checks.
template <class R> class DeviceCheck {
public:
  DeviceCheck() = default;
  /// Allocates the snapshot and the tally of an output of `count` elements of `dtype`, checked
  /// on `stream`.
  DeviceCheck(Dtype dtype, std::size_t count, typename R::Stream stream)
      : dtype_(dtype), count_(count), stream_(stream),
        snapshot_(count * dtype_bytes(dtype), stream), tally_(1, stream) {}

  /// Copies the output at `output` (device memory, `count` elements) into the snapshot, device
  /// to device on the stream: the first step of a check, so that work the candidate left running
  /// elsewhere cannot complete the output while the reference is being computed.
  void snapshot(const void *output) {
    KOPT_GPU_CHECK(R, R::copy_device_async(snapshot_.get(), output, snapshot_.bytes(), stream_));
    snapshotted_ = true;
  }

  /// Compares every element of the snapshot with `reference` (fp32 device memory, `count`
  /// elements) under `tolerance`, as compare() does on the host: |x - g| <= atol + rtol * |g|,
  /// NaN always failing. Waits for the stream and returns the result. Throws Error when no
  /// snapshot was taken since the last comparison.
  Comparison compare(const float *reference, Tolerance tolerance) {
    if (!snapshotted_) {
      throw Error("DeviceCheck::compare: no snapshot of the output was taken first");
    }
    snapshotted_ = false;
    DeviceTally tally;
    KOPT_GPU_CHECK(R, R::memset_async(tally_.get(), 0, sizeof tally, stream_));
    KOPT_GPU_CHECK(R, R::compare_async(snapshot_.get(), dtype_, reference, count_, tolerance,
                                       tally_.get(), stream_));
    KOPT_GPU_CHECK(R, R::copy_to_host_async(&tally, tally_.get(), sizeof tally, stream_));
    KOPT_GPU_CHECK(R, R::stream_synchronize(stream_));
    return to_comparison(tally, count_);
  }

private:
  Dtype dtype_ = Dtype::fp32;
  std::size_t count_ = 0;
  typename R::Stream stream_{};
  DeviceBuffer<unsigned char, R> snapshot_;
  DeviceBuffer<DeviceTally, R> tally_;
  bool snapshotted_ = false;
};

#undef KOPT_GPU_CHECK

} // namespace kopt::harness::gpu
