#pragma once

// The plausibility gate: a config's time below what the device's peaks allow for the work the
// family declares (family.json `roofline`) is impossible, and refused; each class's fraction of
// that limit (its speed of light) says how far is left.

#include "profile/measurement.hpp"
#include "spec/roofline.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::decide {

struct Decision;

/// One config class against the device's limits. A config's limit is the longer of the times
/// its declared bytes take at the memory bandwidth and its flops at the peak throughput; a
/// fraction is the geomean of limit / time over the class's configs (1 is the speed of light).
struct ClassLight {
  std::string config_class; ///< "overall" for the row over every config
  int configs = 0;
  double limit_us = 0;           ///< geomean of the configs' limits
  double best_fraction = 0;      ///< of BEST's times
  double candidate_fraction = 0; ///< of the candidate's times
};

/// How far each class's times are from the device's limits: decision.json's speed_of_light.
struct SpeedOfLight {
  std::string device; ///< the measurement's device
  /// The rates the limits come from and whose they are: "4.8 TB/s, 1979 TFLOP/s fp8 (kopt's
  /// table: NVIDIA H200 SXM)".
  std::string peak;
  std::string missing;             ///< why there are no fractions; "" when there are
  std::vector<ClassLight> classes; ///< in the decision's class order, then "overall"
};

/// Sets `d.speed_of_light` from the two measurements under `roofline`, and refuses an
/// impossible measurement: when a config of either side took less than its limit, a verdict
/// reached on times (keep, tie, regression, split) becomes `failed`, the reason naming each
/// such config, its time, its limit and the figure behind it.
void apply_roofline(Decision &d, const profile::Measurement &best,
                    const profile::Measurement &candidate, const spec::Roofline &roofline);

/// Returns the per-class fractions as fixed-width text for `kopt decide` ("" without them).
std::string format_speed_of_light(const SpeedOfLight &light);

/// Returns the fractions as one sentence for the report ("speed of light on ...: M<32 43.0%
/// (BEST 41.2%), ...").
std::string describe_speed_of_light(const SpeedOfLight &light);

/// Serialises the fractions (stable key order).
nlohmann::json to_json(const SpeedOfLight &light);

/// Reads them back; errors name `where` and the field.
SpeedOfLight speed_of_light_from_json(const nlohmann::json &j, const std::string &where);

} // namespace kopt::decide
