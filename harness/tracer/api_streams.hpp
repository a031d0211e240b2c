#pragma once

// The streams that CUDA API calls name, read from the parameters CUPTI's API callbacks see: the
// CUPTI tracer (cupti_trace.cpp) keeps the last launch on each stream, so that when a timed range
// ends it can ask whether work launched outside the ranges is still running there, and learns
// the stream of the harness timer's first event record in each range.
//
// C++17, like harness code: it runs inside the harness process.

#include <cuda.h>
#include <cupti.h>

namespace kopt_tracer {

/// What an API call does to a stream, as far as the tracer cares.
enum class StreamUse {
  none,         ///< none of the calls below
  kernel,       ///< launches a kernel (cudaLaunchKernel, cuLaunchKernel and their kin)
  graph,        ///< launches a CUDA graph
  event_record, ///< records an event (cudaEventRecord, cuEventRecord and their kin)
  destroy,      ///< destroys the stream
};

/// The call `cbid` of `domain` (runtime or driver API) with CUPTI's `params`: what it does and,
/// unless none, the stream it names (null: the default stream) into `stream`.
StreamUse stream_use(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params,
                     CUstream *stream);

} // namespace kopt_tracer
