#include "temp_dir.hpp"

#include <kopt/harness/config.hpp>
#include <kopt/harness/golden.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>

using namespace kopt::harness;

TEST_SUITE_BEGIN("harness::golden");

TEST_CASE("golden round trip keeps every bit") {
  kopt::test::TempDir dir;
  std::string path = (dir.path() / "golden.bin").string();
  Golden golden;
  golden.add("M=1,N=2", {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(), 1e-30f});
  golden.add("M=3,N=4", {});
  golden.add("M=5,N=6", {3.0f});
  write_golden(path, golden);

  Golden back = read_golden(path);
  CHECK(back.source() == path);
  CHECK(back.keys() == golden.keys());
  const auto *first = back.find("M=1,N=2");
  REQUIRE(first);
  REQUIRE(first->size() == 4);
  CHECK((*first)[0] == 1.5f);
  CHECK(std::signbit((*first)[1]));
  CHECK(std::isnan((*first)[2]));
  CHECK((*first)[3] == 1e-30f);
  CHECK(back.find("M=3,N=4")->empty());
  CHECK(back.find("M=9,N=9") == nullptr);
  // No temporary file is left beside the golden.
  int files = 0;
  for ([[maybe_unused]] const auto &entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("a golden read for some configs holds only theirs") {
  kopt::test::TempDir dir;
  std::string path = (dir.path() / "golden.bin").string();
  Golden golden;
  golden.add("M=1", {1, 2, 3});
  golden.add("M=2", {4});
  golden.add("M=3", {5, 6});
  write_golden(path, golden);
  Golden some = read_golden(path, {"M=3", "M=1", "M=9"});
  CHECK(some.keys() == std::vector<std::string>{"M=1", "M=3"});
  CHECK(*some.find("M=3") == std::vector<float>{5, 6});
  CHECK(*some.find("M=1") == std::vector<float>{1, 2, 3});
  CHECK(some.find("M=2") == nullptr);

  // A skipped entry is still checked: truncated data and a repeated key are errors.
  auto cut = dir.write("cut.bin", std::string("kopt-golden 1\n1\nM=1\n2\n\0\0\0\0", 24)).string();
  REQUIRE_THROWS_WITH(read_golden(cut, {"M=2"}),
                      (cut + ": truncated golden: config M=1 should hold 2 elements").c_str());
  auto twice = dir.write("twice.bin", "kopt-golden 1\n2\nM=1\n0\nM=1\n0\n").string();
  REQUIRE_THROWS_WITH(read_golden(twice, {"M=2"}),
                      (twice + ": golden already holds config M=1").c_str());
}

TEST_CASE("golden lookup fails clearly when the configs differ") {
  Golden golden;
  golden.set_source("g.bin");
  golden.add("M=16,N=256", {1, 2});
  auto configs = parse_configs("M,N\n16,256\n32,256\n", "configs.csv");
  CHECK(golden_output(golden, configs[0], 2).size() == 2);
  REQUIRE_THROWS_WITH(golden_output(golden, configs[1], 2),
                      "g.bin: no output for config M=32,N=256 (configs.csv:3); the golden was "
                      "written for other configs (first: M=16,N=256)");
  REQUIRE_THROWS_WITH(
      golden_output(golden, configs[0], 3),
      "g.bin: config M=16,N=256 (configs.csv:2) holds 2 elements, the output has 3");
}

TEST_CASE("golden read errors name the file") {
  kopt::test::TempDir dir;
  SUBCASE("not a golden") {
    auto path = dir.write("g.bin", "M,N\n").string();
    REQUIRE_THROWS_WITH(
        read_golden(path),
        (path + ": not a kopt golden file (expected first line 'kopt-golden 1')").c_str());
  }
  SUBCASE("truncated data") {
    auto path = dir.write("g.bin", std::string("kopt-golden 1\n1\nM=1\n2\n\0\0\0\0", 24)).string();
    REQUIRE_THROWS_WITH(read_golden(path),
                        (path + ": truncated golden: config M=1 should hold 2 elements").c_str());
  }
  SUBCASE("duplicate key") {
    auto path = dir.write("g.bin", "kopt-golden 1\n2\nM=1\n0\nM=1\n0\n").string();
    REQUIRE_THROWS_WITH(read_golden(path), (path + ": golden already holds config M=1").c_str());
  }
  SUBCASE("missing") {
    std::string path = (dir.path() / "none.bin").string();
    REQUIRE_THROWS_WITH(read_golden(path), (path + ": cannot open the golden file").c_str());
  }
}

TEST_CASE("a prefetched golden hands over each config's entry, in any order, and only theirs") {
  kopt::test::TempDir dir;
  std::string path = (dir.path() / "golden.bin").string();
  Golden golden;
  golden.add("M=1,N=256", {1, 2, 3});
  golden.add("M=2,N=256", {4});
  golden.add("M=3,N=256", {5, 6});
  write_golden(path, golden);
  auto configs = parse_configs("M,N\n3,256\n1,256\n", "configs.csv");
  {
    GoldenPrefetch prefetch(path, configs);
    Golden second = prefetch.take(configs[1]); // before the first: it waits for its own entry
    CHECK(second.keys() == std::vector<std::string>{"M=1,N=256"});
    CHECK(golden_output(second, configs[1], 3) == std::vector<float>{1, 2, 3});
    CHECK(second.source() == path);
    Golden first = prefetch.take(configs[0]);
    CHECK(*first.find("M=3,N=256") == std::vector<float>{5, 6});
  }
  { GoldenPrefetch unused(path, configs); } // ended before anything was taken
  {
    GoldenPrefetch read(path, configs);
    read.wait_all(); // every entry read, the reader gone (a host run's timing needs that)
    CHECK(*read.take(configs[0]).find("M=3,N=256") == std::vector<float>{5, 6});
  }

  // A config the golden lacks, or a bad file, is an error before any run.
  auto more = parse_configs("M,N\n1,256\n9,256\n", "configs.csv");
  REQUIRE_THROWS_WITH(GoldenPrefetch(path, more),
                      (path + ": no output for config M=9,N=256 (configs.csv:3); the golden was "
                              "written for other configs (first: M=1,N=256)")
                          .c_str());
  auto cut = dir.write("cut.bin", std::string("kopt-golden 1\n1\nM=1\n2\n\0\0\0\0", 24)).string();
  auto one = parse_configs("M\n1\n", "configs.csv");
  REQUIRE_THROWS_WITH(GoldenPrefetch(cut, one),
                      (cut + ": truncated golden: config M=1 should hold 2 elements").c_str());
}

TEST_SUITE_END();
