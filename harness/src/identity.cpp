#include "kopt/harness/identity.hpp"

#include <cstddef>
#include <filesystem>

// The hash slot: a marker kopt stamp-hash finds in the linked executable, then room for the 32
// hex digits of the content hash and a NUL (src/buildinfo/hash_stamp.hpp holds the same
// marker). Not const and read through a volatile pointer, so that the compiler cannot fold the
// unstamped zeros into the code.
extern "C" {
char kopt_candidate_hash_slot[64] = "@kopt-hash-slot@";
}

namespace kopt::harness {

namespace {

constexpr std::size_t kMarkerSize = 16; // "@kopt-hash-slot@"
constexpr std::size_t kHashSize = 32;

} // namespace

std::string executable_candidate_id() {
  std::error_code ec;
  const std::string name = std::filesystem::read_symlink("/proc/self/exe", ec).stem().string();
  const std::string prefix = "candidate_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

std::string executable_candidate_hash() {
  const volatile char *slot = kopt_candidate_hash_slot + kMarkerSize;
  std::string hash;
  for (std::size_t i = 0; i < kHashSize && slot[i] != '\0'; ++i) {
    hash += slot[i];
  }
  return hash;
}

} // namespace kopt::harness
