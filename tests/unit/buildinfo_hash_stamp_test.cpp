#include "buildinfo/hash_stamp.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <kopt/harness/identity.hpp>

#include <cstring>
#include <doctest/doctest.h>
#include <filesystem>
#include <string>

extern "C" char kopt_candidate_hash_slot[64];

namespace fs = std::filesystem;
using kopt::buildinfo::kHashSlotMarker;
using kopt::buildinfo::stamp_hash;
using kopt::test::TempDir;

namespace {

const std::string kHash = "0123456789abcdef0123456789abcdef";

std::string slot(const std::string &hash = "") {
  std::string s(kHashSlotMarker);
  std::string room(48, '\0');
  room.replace(0, hash.size(), hash);
  return s + room;
}

} // namespace

TEST_SUITE_BEGIN("buildinfo::hash_stamp");

TEST_CASE("the harness library's slot opens with the marker kopt stamps after") {
  CHECK(std::string(kopt_candidate_hash_slot, kHashSlotMarker.size()) == kHashSlotMarker);
  CHECK(kopt::harness::executable_candidate_hash() == ""); // this binary was never stamped
  std::memcpy(kopt_candidate_hash_slot + kHashSlotMarker.size(), kHash.c_str(), kHash.size() + 1);
  CHECK(kopt::harness::executable_candidate_hash() == kHash);
  std::memset(kopt_candidate_hash_slot + kHashSlotMarker.size(), 0, kHash.size() + 1);
}

TEST_CASE("stamp_hash writes the hash after the marker and nothing else") {
  TempDir tmp;
  fs::path binary = tmp.path() / "candidate_07";
  const std::string before = "\x7f"
                             "ELF head" +
                             slot() + "tail bytes";
  tmp.write("candidate_07", before);
  fs::permissions(binary, fs::perms::owner_all);
  stamp_hash(binary, kHash);
  CHECK(kopt::util::read_file(binary) == "\x7f"
                                         "ELF head" +
                                             slot(kHash) + "tail bytes");
  CHECK((fs::status(binary).permissions() & fs::perms::owner_exec) != fs::perms::none);
  stamp_hash(binary, "ffffffffffffffffffffffffffffffff"); // a re-stamp replaces it
  CHECK(kopt::util::read_file(binary).find("@kopt-hash-slot@ffffffff") != std::string::npos);
}

TEST_CASE("stamp_hash finds a slot across its 1 MiB read chunks") {
  TempDir tmp;
  fs::path binary = tmp.path() / "candidate_big";
  const std::string head((size_t{1} << 20) - 5, 'x'); // the marker straddles the first chunk
  const std::string tail(size_t{3} << 20, 'y');
  tmp.write("candidate_big", head + slot() + tail);
  stamp_hash(binary, kHash);
  CHECK(kopt::util::read_file(binary) == head + slot(kHash) + tail);
  tmp.write("candidate_big", head + slot() + tail + slot()); // and a second one far behind it
  CHECK_THROWS_WITH_AS(stamp_hash(binary, kHash), doctest::Contains("more than once"), kopt::Error);
}

TEST_CASE("stamp_hash errors name the file") {
  TempDir tmp;
  fs::path binary = tmp.path() / "candidate_07";
  SUBCASE("no file") {
    CHECK_THROWS_WITH_AS(stamp_hash(binary, kHash), doctest::Contains("candidate_07: cannot read"),
                         kopt::Error);
  }
  SUBCASE("no slot") {
    tmp.write("candidate_07", "no marker here");
    CHECK_THROWS_WITH_AS(stamp_hash(binary, kHash),
                         doctest::Contains("candidate_07: no kopt hash slot"), kopt::Error);
  }
  SUBCASE("two slots") {
    tmp.write("candidate_07", slot() + slot());
    CHECK_THROWS_WITH_AS(stamp_hash(binary, kHash), doctest::Contains("more than once"),
                         kopt::Error);
  }
  SUBCASE("a slot cut short") {
    tmp.write("candidate_07", std::string(kHashSlotMarker) + "0123");
    CHECK_THROWS_WITH_AS(stamp_hash(binary, kHash), doctest::Contains("cut short"), kopt::Error);
  }
  SUBCASE("a malformed hash, and the file is left as it was") {
    tmp.write("candidate_07", slot());
    CHECK_THROWS_WITH_AS(stamp_hash(binary, "0123ABC"),
                         doctest::Contains("must be 32 lowercase hex digits, got '0123ABC'"),
                         kopt::Error);
    CHECK(kopt::util::read_file(binary) == slot());
  }
}

TEST_SUITE_END();
