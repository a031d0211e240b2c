#pragma once

// Per-kernel resource usage as the compiler reports it: nvcc's `-Xptxas -v` lines,
// `cuobjdump --dump-resource-usage` of a binary, and hipcc's
// `-Rpass-analysis=kernel-resource-usage` remarks. Numbers the source does not give are -1.

#include <string>
#include <string_view>
#include <vector>

namespace kopt::buildinfo {

/// One kernel's registers, spills, memory and the occupancy its registers allow.
struct KernelResources {
  std::string kernel;          ///< the mangled name
  std::string arch;            ///< "sm_90a", "gfx90a"; "" when the source does not say
  int registers = -1;          ///< per thread (VGPRs on AMD)
  int sgprs = -1;              ///< AMD scalar registers
  long stack_bytes = -1;       ///< per-thread stack frame (scratch on AMD)
  long spill_store_bytes = -1; ///< ptxas spill stores; AMD: VGPR spills (count)
  long spill_load_bytes = -1;  ///< ptxas spill loads
  long shared_bytes = -1;      ///< static shared memory / LDS per block
  long local_bytes = -1;       ///< cuobjdump LOCAL
  int barriers = -1;           ///< named barriers used
  int occupancy_waves = -1;    ///< AMD: the compiler's own waves per SIMD

  /// Returns the warps per SM the registers allow on sm_90 (64K registers, 256-register warp
  /// granularity, at most 64 warps); -1 when registers are unknown. Block size and dynamic
  /// shared memory, which the compiler does not see, may lower it further.
  int max_warps_by_registers() const;
};

/// Parses `nvcc -Xptxas -v` output (stderr); errors name `source`:line.
std::vector<KernelResources> parse_ptxas_verbose(std::string_view text, const std::string &source);

/// Parses `cuobjdump --dump-resource-usage <binary>`; kernels of every embedded arch.
std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text,
                                                            const std::string &source);

/// Parses clang/hipcc `-Rpass-analysis=kernel-resource-usage` remarks.
std::vector<KernelResources> parse_amdgpu_resource_remarks(std::string_view text,
                                                           const std::string &source);

/// Returns the demangled name ("a8w8::gemm<64, 128>(a8w8::Params)"), or `mangled` itself.
std::string demangle(const std::string &mangled);

} // namespace kopt::buildinfo
