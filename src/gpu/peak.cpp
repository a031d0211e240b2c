#include "gpu/peak.hpp"

#include <algorithm>
#include <array>

namespace kopt::gpu {

namespace {

constexpr double T = 1e12;

// Each entry: a part of the device's name, tried in order (so "GH200" before "H200" and "H100
// PCIe" before "H100"). NVIDIA: the H200, H100 and A100 data sheets (SXM unless named);
// AMD: the Instinct MI300X, MI325X and MI250X data sheets (matrix cores).
struct Entry {
  const char *name_part;
  DevicePeak peak;
};

const std::array<Entry, 10> kTable = {{
    {"GH200",
     {"NVIDIA GH200", 4.9 * T, 1979 * T, 1979 * T, 989.5 * T, 989.5 * T, 494.7 * T, 67 * T}},
    {"H200 NVL",
     {"NVIDIA H200 NVL", 4.8 * T, 1671 * T, 1671 * T, 835.5 * T, 835.5 * T, 417.5 * T, 60 * T}},
    {"H200",
     {"NVIDIA H200 SXM", 4.8 * T, 1979 * T, 1979 * T, 989.5 * T, 989.5 * T, 494.7 * T, 67 * T}},
    {"H100 PCIe",
     {"NVIDIA H100 PCIe", 2.0 * T, 1513 * T, 1513 * T, 756 * T, 756 * T, 378 * T, 51 * T}},
    {"H100 NVL",
     {"NVIDIA H100 NVL", 3.9 * T, 1671 * T, 1671 * T, 835 * T, 835 * T, 417.5 * T, 60 * T}},
    {"H100",
     {"NVIDIA H100 SXM", 3.35 * T, 1979 * T, 1979 * T, 989.5 * T, 989.5 * T, 494.7 * T, 67 * T}},
    {"A100", {"NVIDIA A100 80GB SXM", 2.039 * T, 0, 624 * T, 312 * T, 312 * T, 156 * T, 19.5 * T}},
    {"MI325X",
     {"AMD Instinct MI325X", 6.0 * T, 2614.9 * T, 2614.9 * T, 1307.4 * T, 1307.4 * T, 653.7 * T,
      163.4 * T}},
    {"MI300X",
     {"AMD Instinct MI300X", 5.3 * T, 2614.9 * T, 2614.9 * T, 1307.4 * T, 1307.4 * T, 653.7 * T,
      163.4 * T}},
    {"MI250X", {"AMD Instinct MI250X", 3.2768 * T, 0, 383 * T, 383 * T, 383 * T, 0, 95.7 * T}},
}};

} // namespace

double DevicePeak::flops_per_s(const std::string &math) const {
  double fastest = std::max({fp8, int8, bf16, fp16, tf32, fp32});
  double rate = math == "fp8"    ? fp8
                : math == "int8" ? int8
                : math == "bf16" ? bf16
                : math == "fp16" ? fp16
                : math == "tf32" ? tf32
                : math == "fp32" ? fp32
                                 : 0;
  return rate > 0 ? rate : fastest;
}

std::optional<DevicePeak> known_peak(const std::string &device) {
  for (const Entry &entry : kTable) {
    if (device.find(entry.name_part) != std::string::npos) {
      return entry.peak;
    }
  }
  return std::nullopt;
}

} // namespace kopt::gpu
