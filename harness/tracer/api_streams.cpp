#include "api_streams.hpp"

#include <cuda_runtime_api.h>

namespace kopt_tracer {

namespace {

StreamUse runtime_use(CUpti_CallbackId cbid, const void *params, CUstream *stream) {
  switch (cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    *stream = static_cast<const cudaLaunchKernel_v7000_params *>(params)->stream;
    return StreamUse::kernel;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    *stream = static_cast<const cudaLaunchCooperativeKernel_v9000_params *>(params)->stream;
    return StreamUse::kernel;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
    const cudaLaunchConfig_t *config =
        static_cast<const cudaLaunchKernelExC_v11060_params *>(params)->config;
    *stream = config ? config->stream : nullptr;
    return StreamUse::kernel;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    *stream = static_cast<const cudaGraphLaunch_v10000_params *>(params)->stream;
    return StreamUse::graph;
  case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
  case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000:
    *stream = static_cast<const cudaEventRecord_v3020_params *>(params)->stream;
    return StreamUse::event_record;
  case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010:
  case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010:
    *stream = static_cast<const cudaEventRecordWithFlags_v11010_params *>(params)->stream;
    return StreamUse::event_record;
  case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
  case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050:
    *stream = static_cast<const cudaStreamDestroy_v5050_params *>(params)->stream;
    return StreamUse::destroy;
  default:
    return StreamUse::none;
  }
}

StreamUse driver_use(CUpti_CallbackId cbid, const void *params, CUstream *stream) {
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    *stream = static_cast<const cuLaunchKernel_params *>(params)->hStream;
    return StreamUse::kernel;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    *stream = static_cast<const cuLaunchCooperativeKernel_params *>(params)->hStream;
    return StreamUse::kernel;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const CUlaunchConfig *config = static_cast<const cuLaunchKernelEx_params *>(params)->config;
    *stream = config ? config->hStream : nullptr;
    return StreamUse::kernel;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
    *stream = static_cast<const cuGraphLaunch_params *>(params)->hStream;
    return StreamUse::graph;
  case CUPTI_DRIVER_TRACE_CBID_cuEventRecord:
  case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz:
    *stream = static_cast<const cuEventRecord_params *>(params)->hStream;
    return StreamUse::event_record;
  case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags:
  case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz:
    *stream = static_cast<const cuEventRecordWithFlags_params *>(params)->hStream;
    return StreamUse::event_record;
  case CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy:
  case CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2:
    *stream = static_cast<const cuStreamDestroy_v2_params *>(params)->hStream;
    return StreamUse::destroy;
  default:
    return StreamUse::none;
  }
}

} // namespace

StreamUse stream_use(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params,
                     CUstream *stream) {
  if (params == nullptr) {
    return StreamUse::none;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return runtime_use(cbid, params, stream);
  }
  return domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_use(cbid, params, stream) : StreamUse::none;
}

} // namespace kopt_tracer
