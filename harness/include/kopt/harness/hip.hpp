#pragma once

// The hip backend of the harness, header-only so that only a family's own harness (compiled as
// HIP, C++17) needs the ROCm headers: checked calls, device buffers from hipMalloc, the event
// timer with its L2 flush and the device check of an output (gpu.hpp's, over the HIP runtime),
// and the per-config roctx range rocprofv3 attributes kernels by.
//
// roctx: kopt_add_family defines KOPT_HARNESS_ROCTX and links the library when it finds roctx
// (rocprofiler-sdk-roctx, or roctracer's roctx64). Debian's ROCm 5.2 packages ship neither, so
// there RoctxRange is a no-op and `kopt bench` attributes dispatches in launch order instead.

#include <hip/hip_runtime.h> // the flush kernel (compiled as HIP, by hipcc or CMake's HIP language)
#include <hip/hip_runtime_api.h>

#include "kopt/harness/compare_kernel.hpp" // device code: after the runtime's headers
#include "kopt/harness/flush_kernel.hpp"
#include "kopt/harness/gpu.hpp"

#if defined(KOPT_HARNESS_ROCTX)
#if __has_include(<rocprofiler-sdk-roctx/roctx.h>)
#include <rocprofiler-sdk-roctx/roctx.h>
#else
#include <roctracer/roctx.h>
#endif
#endif

#include <cstddef>
#include <string>

namespace kopt::harness::hip {

/// The L2 flush's read (gpu::EventTimer, flush_kernel.hpp). A template, so that every
/// translation unit may define it.
template <int = 0>
__global__ void kopt_l2_flush_read(const uint4 *words, std::size_t count, unsigned *never) {
  gpu::l2_flush_read(words, count, never);
}

/// Marks the end of a timed run in a kernel trace (gpu::EventTimer): rocprofv3 traces every
/// dispatch, so the harness's own work after the run (the check's reference and comparison, the
/// next run's fills) is told from the candidate's by this empty kernel.
template <int = 0> __global__ void kopt_timed_end() {}

/// The HIP runtime as gpu.hpp calls it: its types, its success value and the calls it makes.
struct Runtime {
  using Status = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  static constexpr Status success = hipSuccess;

  static const char *error_name(Status status) { return hipGetErrorName(status); }
  static const char *error_string(Status status) { return hipGetErrorString(status); }
  static Status malloc(void **ptr, std::size_t bytes) { return hipMalloc(ptr, bytes); }
  static Status free(void *ptr) { return hipFree(ptr); }
  /// hipMalloc and hipFree, the stream unused: HIP's stream-ordered pool (hipMallocAsync) is the
  /// analogue of CUDA's, not used here since it has not been run on AMD hardware.
  static Status malloc_async(void **ptr, std::size_t bytes, Stream) {
    return hipMalloc(ptr, bytes);
  }
  static Status free_async(void *ptr, Stream) { return hipFree(ptr); }
  static Status get_device(int *device) { return hipGetDevice(device); }
  static Status l2_cache_bytes(int *bytes, int device) {
    return hipDeviceGetAttribute(bytes, hipDeviceAttributeL2CacheSize, device);
  }
  /// gcnArchName without its feature flags: "gfx942" of "gfx942:sramecc+:xnack-".
  static Status arch(std::string *arch, int device) {
    hipDeviceProp_t properties{};
    Status status = hipGetDeviceProperties(&properties, device);
    const std::string name = properties.gcnArchName;
    *arch = name.substr(0, name.find(':'));
    return status;
  }
  static Status compute_units(int *units, int device) {
    return hipDeviceGetAttribute(units, hipDeviceAttributeMultiprocessorCount, device);
  }
  static Status memset_async(void *ptr, int value, std::size_t bytes, Stream stream) {
    return hipMemsetAsync(ptr, value, bytes, stream);
  }
  /// Reads `bytes` (a multiple of 16) at `ptr` on `stream` and writes nothing.
  static Status read_async(const void *ptr, std::size_t bytes, Stream stream) {
    kopt_l2_flush_read<>
        <<<1024, 256, 0, stream>>>(static_cast<const uint4 *>(ptr), bytes / 16, nullptr);
    return hipGetLastError();
  }
  static Status mark_timed_end(Stream stream) {
    kopt_timed_end<><<<1, 1, 0, stream>>>();
    return hipGetLastError();
  }
  static Status copy_device_async(void *dst, const void *src, std::size_t bytes, Stream stream) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream);
  }
  static Status copy_to_host_async(void *dst, const void *src, std::size_t bytes, Stream stream) {
    return hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost, stream);
  }
  static Status stream_synchronize(Stream stream) { return hipStreamSynchronize(stream); }
  /// Launches the device check's comparison (compare_kernel.hpp) on `stream`.
  static Status compare_async(const void *output, gpu::Dtype dtype, const float *reference,
                              std::size_t n, Tolerance tolerance, gpu::DeviceTally *tally,
                              Stream stream) {
    gpu::launch_compare(output, dtype, reference, n, tolerance, tally, stream);
    return hipGetLastError();
  }
  static Status event_create(Event *event) { return hipEventCreate(event); }
  static Status event_destroy(Event event) { return hipEventDestroy(event); }
  static Status event_record(Event event, Stream stream) { return hipEventRecord(event, stream); }
  static Status event_synchronize(Event event) { return hipEventSynchronize(event); }
  static Status event_elapsed_ms(float *ms, Event start, Event stop) {
    return hipEventElapsedTime(ms, start, stop);
  }
  // rocprofv3 traces every dispatch and kopt drops the warm-ups by count: nothing to mark.
  static Status profiler_start() { return hipSuccess; }
  static Status profiler_stop() { return hipSuccess; }
};

/// Checks a HIP runtime call (or a launch's hipGetLastError()) where it is written: throws Error
/// `file:line: call: <error name>: <text>` when it returns no hipSuccess.
#define KOPT_HIP_CHECK(call)                                                                       \
  ::kopt::harness::gpu::check<::kopt::harness::hip::Runtime>((call), #call, __FILE__, __LINE__)

/// `count` elements of T in device memory from hipMalloc (never managed memory), freed on
/// destruction.
template <typename T> using DeviceBuffer = gpu::DeviceBuffer<T, Runtime>;

/// Times a run with HIP events on a stream, after an L2 flush (see gpu::EventTimer); the
/// problem must launch its work on the stream the timer is constructed with.
using EventTimer = gpu::EventTimer<Runtime>;

/// The device check of one output (see gpu::DeviceCheck): Problem::check_output snapshots the
/// output, computes its reference, then compares the two on the device.
using DeviceCheck = gpu::DeviceCheck<Runtime>;

/// How an output's elements are stored, for DeviceCheck.
using gpu::Dtype;

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

} // namespace kopt::harness::hip
