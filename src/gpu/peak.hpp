#pragma once

#include <optional>
#include <string>

namespace kopt::gpu {

/// What a GPU model can do at most, from its maker's data sheet: memory bandwidth and dense
/// (not sparse) tensor throughput per number format, at its highest boost clock.
struct DevicePeak {
  std::string model;      ///< the table's name for it ("NVIDIA H200 SXM")
  double bytes_per_s = 0; ///< HBM bandwidth
  double fp8 = 0, int8 = 0, bf16 = 0, fp16 = 0, tf32 = 0, fp32 = 0; ///< flop/s; 0: no such units

  /// The peak flop/s of number format `math` (fp8, int8, bf16, fp16, tf32, fp32); for "", or
  /// for a format the model has no units for, its fastest: a work that cannot run faster
  /// than that bound is never called impossible wrongly.
  double flops_per_s(const std::string &math) const;
};

/// Returns the table's entry for `device` (a name as nvidia-smi or rocm-smi reports it, such
/// as "NVIDIA H200" or "AMD Instinct MI300X"), or nullopt for a model the table lacks.
std::optional<DevicePeak> known_peak(const std::string &device);

} // namespace kopt::gpu
