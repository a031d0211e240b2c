#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kopt::harness {

/// The seed used when --seed is not given.
constexpr std::uint64_t default_seed = 1234;

/// Warm-up runs per config of a benchmark, when neither --warmup nor the family says otherwise.
constexpr int default_warmup = 2;

/// Timed runs per config of --benchmark, when neither --repeat nor the family says otherwise.
constexpr int default_repeat = 15;

/// Timed runs per config of --full-benchmark, when --repeat does not say otherwise.
constexpr int default_full_repeat = 50;

/// A small random generator (splitmix64) whose output is fixed by its seed on every compiler and
/// platform, unlike std::uniform_real_distribution, so a golden written on one machine holds on
/// another.
class Rng {
public:
  /// Starts the sequence of `seed`.
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  /// Returns the next 64 random bits.
  std::uint64_t next_u64();

  /// Returns a float uniform in (-1, 1) that is never exactly 0, so inputs are never all zeros.
  float uniform();

  /// Fills `n` floats with uniform() values.
  void fill(float *data, std::size_t n);

  /// Fills every element of `data` with uniform() values.
  void fill(std::vector<float> &data) { fill(data.data(), data.size()); }

private:
  std::uint64_t state_;
};

/// Returns the seed of one config's inputs from the run's seed and the config's key: keyed, not
/// indexed, so a config gets the same inputs whichever other configs the file holds (its golden
/// entry is found by key too).
std::uint64_t config_seed(std::uint64_t seed, std::string_view config_key);

/// Returns a seed no one can know before it is drawn (the system's entropy source): the inputs of
/// every warm-up and timed run, so a candidate can neither remember outputs across runs nor
/// compute them before the run.
std::uint64_t fresh_seed();

/// Overwrites `n` floats with a quiet NaN, so an element the kernel never writes fails the check.
void poison(float *data, std::size_t n);

/// Overwrites every element of `data` with a quiet NaN.
inline void poison(std::vector<float> &data) { poison(data.data(), data.size()); }

} // namespace kopt::harness
