#include "gen/tuned.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::gen::padded_m;
using kopt::gen::read_tuned_table;
using kopt::test::fixture;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("gen::tuned");

TEST_CASE("read_tuned_table") {
  std::vector<std::string> warnings;

  SUBCASE("rows of another arch are dropped, the rest sorted by shape") {
    auto file = fixture("gen/tiny/tuned.csv");
    auto rows = read_tuned_table(file, "host", warnings);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].m == 16);
    CHECK(rows[0].n == 64);
    CHECK(rows[0].k == 128);
    CHECK(rows[0].kernel == "tiny_2x1");
    CHECK(rows[0].arch == "host");
    CHECK(rows[0].cu_num == 1);
    CHECK(rows[0].us == 5.0);
    CHECK(rows[0].line == 3);
    CHECK(rows[1].m == 32);
    CHECK(rows[1].line == 2);
    CHECK(warnings.empty());
  }
  SUBCASE("no arch keeps every row") {
    auto rows = read_tuned_table(fixture("gen/tiny/tuned.csv"), "", warnings);
    CHECK(rows.size() == 3);
  }
  SUBCASE("old files without gfx, with duplicate shapes: lowest us kept, each duplicate warned") {
    auto file = fixture("gen/tuned_old.csv");
    auto rows = read_tuned_table(file, "gfx942", warnings);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].arch == "");
    CHECK(rows[0].m == 1);
    CHECK(rows[0].kernel == "a8w8_32x64");
    CHECK(rows[0].us == 5.2);
    CHECK(rows[0].line == 3);
    CHECK(rows[1].m == 32);
    CHECK(warnings == std::vector<std::string>{
                          file.string() + ":3: duplicate shape M=1 N=1280 K=8192 (also line 2); "
                                          "keeping 'a8w8_32x64' (5.2 us) from line 3",
                          file.string() + ":5: duplicate shape M=1 N=1280 K=8192 (also line 3); "
                                          "keeping 'a8w8_32x64' (5.2 us) from line 3"});
  }
  SUBCASE("the arch column may be called arch") {
    TempDir tmp;
    auto file = tmp.write("t.csv", "arch,cu_num,M,N,K,us,kernelName\ngfx950,256,1,2,3,1.0,k\n"
                                   "gfx942,304,1,2,3,0.5,j\n");
    auto rows = read_tuned_table(file, "gfx950", warnings);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].kernel == "k");
  }
  SUBCASE("a table of another arch only is refused, naming both") {
    TempDir tmp;
    auto file = tmp.write("t.csv", "gfx,cu_num,M,N,K,us,kernelName\nsm_90,132,1,2,3,1.0,k\n"
                                   "sm_90,132,4,2,3,0.5,j\n");
    CHECK_THROWS_WITH_AS(read_tuned_table(file, "sm_100", warnings),
                         (file.string() + ": the table was measured on sm_90 (line 2), the "
                                          "family's arch is sm_100: tune on a sm_100 device "
                                          "(kopt tune), or change family.json's arch")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("errors name file, line and column") {
    TempDir tmp;
    auto file = tmp.write("t.csv", "cu_num,M,N,K,us,kernelName\n304,1,2,3,1.0,k\n304,x,2,3,1,k\n");
    CHECK_THROWS_WITH_AS(read_tuned_table(file, "", warnings),
                         (file.string() + ":3: M: expected an integer, got 'x'").c_str(),
                         kopt::Error);
    auto missing = tmp.write("m.csv", "cu_num,M,N,K,kernelName\n304,1,2,3,k\n");
    CHECK_THROWS_WITH_AS(read_tuned_table(missing, "", warnings),
                         (missing.string() + ": missing column 'us' (columns: cu_num, M, N, K, "
                                             "kernelName)")
                             .c_str(),
                         kopt::Error);
    auto empty = tmp.write("e.csv", "cu_num,M,N,K,us,kernelName\n304,1,2,3,1.0,\n");
    CHECK_THROWS_WITH_AS(
        read_tuned_table(empty, "", warnings),
        (empty.string() + ":2: kernelName: expected a kernel name, got ''").c_str(), kopt::Error);
  }
}

TEST_CASE("padded_m") {
  SUBCASE("gl=0: multiples of 16 to 256, 32 to 1024, 64 to 4096, then 128") {
    struct Case {
      int64_t m, padded;
    };
    for (Case c :
         {Case{1, 16}, Case{16, 16}, Case{17, 32}, Case{255, 256}, Case{256, 256}, Case{257, 288},
          Case{1000, 1024}, Case{1024, 1024}, Case{1025, 1088}, Case{4095, 4096}, Case{4096, 4096},
          Case{4097, 4224}, Case{80000, 80000}, Case{80001, 80128}}) {
      CAPTURE(c.m);
      CHECK(padded_m(c.m, 4096, 0) == c.padded);
    }
  }
  SUBCASE("gl=1: the next power of two, 8192 for large M and N") {
    struct Case {
      int64_t m, n, padded;
    };
    for (Case c : {Case{1, 1024, 1}, Case{3, 1024, 4}, Case{64, 1024, 64}, Case{65, 1024, 128},
                   Case{5000, 1024, 8192}, Case{8192, 8192, 8192}, Case{8193, 4096, 16384},
                   Case{8193, 4097, 8192}, Case{20000, 7168, 8192}}) {
      CAPTURE(c.m);
      CAPTURE(c.n);
      CHECK(padded_m(c.m, c.n, 1) == c.padded);
    }
  }
}

TEST_SUITE_END();
