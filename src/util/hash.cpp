#include "util/hash.hpp"

#include "util/read_file.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>

namespace kopt::util {

struct Hasher::State {
  XXH3_state_t xxh;
};

Hasher::Hasher() : state_(new State) { XXH3_128bits_reset(&state_->xxh); }

Hasher::~Hasher() { delete state_; }

Hasher &Hasher::add(std::string_view data) {
  // The length goes first so that piece boundaries are part of the hash.
  unsigned long long size = data.size();
  XXH3_128bits_update(&state_->xxh, &size, sizeof size);
  XXH3_128bits_update(&state_->xxh, data.data(), data.size());
  return *this;
}

std::string Hasher::hex() const {
  XXH128_hash_t h = XXH3_128bits_digest(&state_->xxh);
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

std::string hash_file(const std::filesystem::path &path) {
  Hasher hasher;
  hasher.add(read_file(path, Input::binary));
  return hasher.hex();
}

} // namespace kopt::util
