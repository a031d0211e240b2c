#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kopt::util {

/// A 128-bit content hash (XXH3) fed piece by piece; `hex()` gives 32 lowercase hex digits.
class Hasher {
public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher &) = delete;
  Hasher &operator=(const Hasher &) = delete;

  /// Feeds `data` followed by a separator, so ("ab","c") and ("a","bc") hash differently.
  Hasher &add(std::string_view data);

  /// Returns the hash of everything added so far.
  std::string hex() const;

private:
  struct State; // XXH3's state, inlined in hash.cpp so kopt needs no xxhash library at run time
  State *state_;
};

/// Returns the hex content hash of one file's bytes.
std::string hash_file(const std::filesystem::path &path);

} // namespace kopt::util
