#include "kopt/harness/inputs.hpp"

#include "kopt/harness/error.hpp"

#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include <sys/random.h>

namespace kopt::harness {

std::uint64_t Rng::next_u64() {
  // splitmix64 (Steele, Lea, Flood 2014): tiny, full period, good enough for test inputs.
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float Rng::uniform() {
  // 24 random bits placed on the odd multiples of 2^-24: symmetric around 0 and never 0 itself.
  auto bits = static_cast<std::int64_t>(next_u64() >> 40);
  return static_cast<float>(static_cast<double>(2 * bits + 1 - (1LL << 24)) / 16777216.0);
}

void Rng::fill(float *data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    data[i] = uniform();
  }
}

std::uint64_t config_seed(std::uint64_t seed, std::string_view config_key) {
  std::uint64_t hash = 0xcbf29ce484222325ULL; // FNV-1a of the key, then mixed with the seed
  for (char c : config_key) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  Rng mix(seed ^ hash);
  return mix.next_u64();
}

std::uint64_t fresh_seed() {
  std::uint64_t seed = 0;
  // getrandom blocks only until the system's pool is first initialised, long before any run.
  ssize_t got = 0;
  do {
    got = getrandom(&seed, sizeof seed, 0);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof seed)) {
    throw Error(std::string("cannot draw fresh inputs: getrandom: ") + std::strerror(errno));
  }
  return seed;
}

void poison(float *data, std::size_t n) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i) {
    data[i] = nan;
  }
}

} // namespace kopt::harness
