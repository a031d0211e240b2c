#pragma once

#include "spec/formula.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kopt::spec {

class Fields;

/// A device's limits that a family declares itself (family.json `roofline.peaks`): for a CPU,
/// whose limits no table knows, or to replace the table's figures.
struct Peak {
  std::string device;     ///< a part of the measurement's device name; "*" for any device
  double bytes_per_s = 0; ///< memory bandwidth; 0: not declared
  double flops_per_s = 0; ///< arithmetic throughput; 0: not declared
};

/// The work every config must do (family.json `roofline`): the bytes it must move to and from
/// device memory and the arithmetic it must do, each a formula over the config's columns. A
/// time below what the device's peaks allow for that work is impossible (see docs/KEEP.md).
struct Roofline {
  std::optional<Formula> bytes;
  std::optional<Formula> flops;
  /// The number format whose peak throughput bounds `flops` (fp8, int8, bf16, fp16, tf32,
  /// fp32); "": the device's fastest.
  std::string math;
  std::vector<Peak> peaks; ///< consulted in order, before kopt's table of devices
};

/// The number formats `roofline.math` may name.
const std::vector<std::string> &math_formats();

/// Reads family.json's `roofline` object (`roofline` is its Fields); checks each formula's
/// columns against `header` (the configs file's) and its value on every row of the configs
/// file `configs`: a finite number >= 0, errors naming the file, line and formula.
Roofline load_roofline(const Fields &roofline, const std::string &configs);

} // namespace kopt::spec
