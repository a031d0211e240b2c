#include "buildinfo/hash_stamp.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <fstream>

namespace kopt::buildinfo {

namespace {

// The file offset of the hash in `binary`'s slot (just past the marker); throws Error naming the
// file when the slot is missing, not unique, or cut short.
size_t slot_offset(const std::filesystem::path &binary) {
  // Read in chunks (a harness with fat device code can be hundreds of MB), keeping the last
  // marker-size - 1 bytes so that a marker across two chunks is found.
  if (std::string why = util::why_not_regular(binary); !why.empty()) {
    throw Error(binary.string() + ": " + why);
  }
  std::ifstream in(binary, std::ios::binary);
  if (!in) {
    throw Error(binary.string() + ": cannot read it");
  }
  constexpr size_t kChunk = size_t{1} << 20;
  const size_t keep = kHashSlotMarker.size() - 1;
  std::string window;
  size_t window_offset = 0; // file offset of window[0]
  size_t at = std::string::npos;
  size_t file_size = 0;
  std::string chunk(kChunk, '\0');
  while (in.read(chunk.data(), static_cast<std::streamsize>(kChunk)) || in.gcount() > 0) {
    const size_t got = static_cast<size_t>(in.gcount());
    file_size += got;
    window.append(chunk, 0, got);
    for (size_t pos = window.find(kHashSlotMarker); pos != std::string::npos;
         pos = window.find(kHashSlotMarker, pos + 1)) {
      if (at != std::string::npos && window_offset + pos != at) {
        throw Error(binary.string() + ": the kopt hash slot marker occurs more than once");
      }
      at = window_offset + pos;
    }
    if (window.size() > keep) {
      window_offset += window.size() - keep;
      window.erase(0, window.size() - keep);
    }
  }
  if (at == std::string::npos) {
    throw Error(binary.string() + ": no kopt hash slot (is it a harness linked with "
                                  "KernelOpt::harness?)");
  }
  const size_t offset = at + kHashSlotMarker.size();
  if (file_size < offset + 33) {
    throw Error(binary.string() + ": the kopt hash slot is cut short");
  }
  return offset;
}

} // namespace

void stamp_hash(const std::filesystem::path &binary, const std::string &hash) {
  const bool hex = std::all_of(hash.begin(), hash.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  if (hash.size() != 32 || !hex) {
    throw Error(binary.string() + ": the hash to stamp must be 32 lowercase hex digits, got '" +
                hash + "'");
  }
  const size_t offset = slot_offset(binary);
  std::fstream out(binary, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(offset));
  out.write(hash.c_str(), static_cast<std::streamsize>(hash.size() + 1)); // with its NUL
  if (!out.flush()) {
    throw Error(binary.string() + ": cannot write the hash slot");
  }
}

std::string stamped_hash(const std::filesystem::path &binary) {
  const size_t offset = slot_offset(binary);
  std::ifstream in(binary, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string slot(33, '\0');
  in.read(slot.data(), 33);
  return slot.substr(0, slot.find('\0'));
}

void record_built_hash(const std::filesystem::path &binary, const std::filesystem::path &gen_dir) {
  util::write_file_atomic(gen_dir / kBuiltHashFile, util::hash_file(binary) + "\n");
}

std::string built_hash(const std::filesystem::path &gen_dir) {
  const std::filesystem::path file = gen_dir / kBuiltHashFile;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    return "";
  }
  return std::string(util::trim(util::read_file(file)));
}

} // namespace kopt::buildinfo
