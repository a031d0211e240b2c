#pragma once

// The cuda backend of the harness, header-only so that only a family's own harness (compiled by
// nvcc, C++17) needs the CUDA toolkit: checked calls, device buffers, the event timer with its
// L2 flush and the device check of an output (gpu.hpp's, over the CUDA runtime), and the
// per-config NVTX range the ncu profiler attributes kernels by.

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "kopt/harness/compare_kernel.hpp" // device code: after the runtime's headers
#include "kopt/harness/flush_kernel.hpp"
#include "kopt/harness/gpu.hpp"

#include <cstddef>
#include <string>

namespace kopt::harness::cuda {

/// The L2 flush's read (gpu::EventTimer, flush_kernel.hpp). A template, so that every
/// translation unit may define it.
template <int = 0>
__global__ void kopt_l2_flush_read(const uint4 *words, std::size_t count, unsigned *never) {
  gpu::l2_flush_read(words, count, never);
}

/// The CUDA runtime as gpu.hpp calls it: its types, its success value and the calls it makes.
struct Runtime {
  using Status = cudaError_t;
  using Stream = cudaStream_t;
  using Event = cudaEvent_t;
  static constexpr Status success = cudaSuccess;

  static const char *error_name(Status status) { return cudaGetErrorName(status); }
  static const char *error_string(Status status) { return cudaGetErrorString(status); }
  static Status malloc(void **ptr, std::size_t bytes) { return cudaMalloc(ptr, bytes); }
  static Status free(void *ptr) { return cudaFree(ptr); }
  /// Stream-ordered, from the device's default pool, which keeps what is freed for the next
  /// allocation (its release threshold raised once per process): a harness that makes and drops
  /// each config's buffers every round pays for cudaMalloc and cudaFree (a device-wide wait
  /// each) once per process instead of once per buffer and round.
  static Status malloc_async(void **ptr, std::size_t bytes, Stream stream) {
    static const Status pool = [] {
      int device = 0;
      cudaMemPool_t pool = nullptr;
      Status status = cudaGetDevice(&device);
      if (status == cudaSuccess) {
        status = cudaDeviceGetDefaultMemPool(&pool, device);
      }
      unsigned long long keep_all = ~0ull;
      return status == cudaSuccess
                 ? cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all)
                 : status;
    }();
    return pool == cudaSuccess ? cudaMallocAsync(ptr, bytes, stream) : pool;
  }
  static Status free_async(void *ptr, Stream stream) { return cudaFreeAsync(ptr, stream); }
  static Status get_device(int *device) { return cudaGetDevice(device); }
  static Status l2_cache_bytes(int *bytes, int device) {
    return cudaDeviceGetAttribute(bytes, cudaDevAttrL2CacheSize, device);
  }
  /// "sm_<major><minor>", as nvcc's -arch names it.
  static Status arch(std::string *arch, int device) {
    int major = 0;
    int minor = 0;
    Status status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (status == cudaSuccess) {
      status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    }
    *arch = "sm_" + std::to_string(major) + std::to_string(minor);
    return status;
  }
  static Status compute_units(int *units, int device) {
    return cudaDeviceGetAttribute(units, cudaDevAttrMultiProcessorCount, device);
  }
  static Status memset_async(void *ptr, int value, std::size_t bytes, Stream stream) {
    return cudaMemsetAsync(ptr, value, bytes, stream);
  }
  /// Reads `bytes` (a multiple of 16) at `ptr` on `stream` and writes nothing.
  static Status read_async(const void *ptr, std::size_t bytes, Stream stream) {
    kopt_l2_flush_read<>
        <<<1024, 256, 0, stream>>>(static_cast<const uint4 *>(ptr), bytes / 16, nullptr);
    return cudaGetLastError();
  }
  /// ncu profiles only between profiler start and stop, so a timed run's end needs no mark.
  static Status mark_timed_end(Stream) { return cudaSuccess; }
  static Status copy_device_async(void *dst, const void *src, std::size_t bytes, Stream stream) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
  }
  static Status copy_to_host_async(void *dst, const void *src, std::size_t bytes, Stream stream) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
  }
  static Status stream_synchronize(Stream stream) { return cudaStreamSynchronize(stream); }
  /// Launches the device check's comparison (compare_kernel.hpp) on `stream`.
  static Status compare_async(const void *output, gpu::Dtype dtype, const float *reference,
                              std::size_t n, Tolerance tolerance, gpu::DeviceTally *tally,
                              Stream stream) {
    gpu::launch_compare(output, dtype, reference, n, tolerance, tally, stream);
    return cudaGetLastError();
  }
  static Status event_create(Event *event) { return cudaEventCreate(event); }
  static Status event_destroy(Event event) { return cudaEventDestroy(event); }
  static Status event_record(Event event, Stream stream) { return cudaEventRecord(event, stream); }
  static Status event_synchronize(Event event) { return cudaEventSynchronize(event); }
  static Status event_elapsed_ms(float *ms, Event start, Event stop) {
    return cudaEventElapsedTime(ms, start, stop);
  }
  static Status profiler_start() { return cudaProfilerStart(); }
  static Status profiler_stop() { return cudaProfilerStop(); }
};

/// Checks a CUDA runtime call (or a launch's cudaGetLastError()) where it is written: throws Error
/// `file:line: call: <error name>: <text>` when it returns no cudaSuccess.
#define KOPT_CUDA_CHECK(call)                                                                      \
  ::kopt::harness::gpu::check<::kopt::harness::cuda::Runtime>((call), #call, __FILE__, __LINE__)

/// `count` elements of T in device memory from cudaMalloc (never managed memory), freed on
/// destruction; given a stream, from the stream-ordered pool (Runtime::malloc_async).
template <typename T> using DeviceBuffer = gpu::DeviceBuffer<T, Runtime>;

/// Times a run with CUDA events on a stream, after an L2 flush (see gpu::EventTimer); the
/// problem must launch its work on the stream the timer is constructed with.
using EventTimer = gpu::EventTimer<Runtime>;

/// The device check of one output (see gpu::DeviceCheck): Problem::check_output snapshots the
/// output, computes its reference, then compares the two on the device.
using DeviceCheck = gpu::DeviceCheck<Runtime>;

/// How an output's elements are stored, for DeviceCheck.
using gpu::Dtype;

/// An NVTX range for the lifetime of the object; a family opens one per config named
/// `config_<index> ...`, which `kopt bench` under ncu --nvtx attributes kernel launches by.
class NvtxRange {
public:
  explicit NvtxRange(const std::string &name) { nvtxRangePushA(name.c_str()); }
  NvtxRange(const NvtxRange &) = delete;
  NvtxRange &operator=(const NvtxRange &) = delete;
  ~NvtxRange() { nvtxRangePop(); }
};

} // namespace kopt::harness::cuda
