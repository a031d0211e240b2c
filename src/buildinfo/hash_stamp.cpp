#include "buildinfo/hash_stamp.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <fstream>

namespace kopt::buildinfo {

void stamp_hash(const std::filesystem::path &binary, const std::string &hash) {
  const bool hex = std::all_of(hash.begin(), hash.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  if (hash.size() != 32 || !hex) {
    throw Error(binary.string() + ": the hash to stamp must be 32 lowercase hex digits, got '" +
                hash + "'");
  }
  const std::string bytes = util::read_file(binary);
  const size_t at = bytes.find(kHashSlotMarker);
  if (at == std::string::npos) {
    throw Error(binary.string() + ": no kopt hash slot (is it a harness linked with "
                                  "KernelOpt::harness?)");
  }
  if (bytes.find(kHashSlotMarker, at + 1) != std::string::npos) {
    throw Error(binary.string() + ": the kopt hash slot marker occurs more than once");
  }
  const size_t offset = at + kHashSlotMarker.size();
  if (bytes.size() < offset + hash.size() + 1) {
    throw Error(binary.string() + ": the kopt hash slot is cut short");
  }
  std::fstream out(binary, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(offset));
  out.write(hash.c_str(), static_cast<std::streamsize>(hash.size() + 1)); // with its NUL
  if (!out.flush()) {
    throw Error(binary.string() + ": cannot write the hash slot");
  }
}

} // namespace kopt::buildinfo
