#include "profile/harness_csv.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::test::TempDir;

TEST_SUITE_BEGIN("profile::harness_csv");

TEST_CASE("reads config columns, kernel, time and error") {
  TempDir dir;
  auto file = dir.write("r.csv", "M,N,K,kernel,us_kopt,err_kopt\n"
                                 "16,256,256,gemm_16x64x64,12.5,0\n"
                                 "17,256,300,gemm_32x32x32,\"1,234.5\",\n");
  auto rows = kopt::profile::read_harness_results(file, {"M", "N", "K"}, "kopt");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].values == std::vector<std::string>{"16", "256", "256"});
  CHECK(rows[0].kernel == "gemm_16x64x64");
  CHECK(rows[0].us == doctest::Approx(12.5));
  CHECK(rows[0].err == 0.0);
  CHECK(rows[1].us == doctest::Approx(1234.5));
  CHECK_FALSE(rows[1].err.has_value());
}

TEST_CASE("reads every timed run's time from the samples column, when there is one") {
  TempDir dir;
  auto file = dir.write("r.csv", "M,kernel,us_kopt,err_kopt,samples_kopt\n"
                                 "16,k,2,0,1.5;2;2.5\n"
                                 "32,k,3,0,\n");
  auto rows = kopt::profile::read_harness_results(file, {"M"}, "kopt");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].samples == std::vector<double>{1.5, 2, 2.5});
  CHECK(rows[1].samples.empty());
  auto bad = dir.write("b.csv", "M,kernel,us_kopt,err_kopt,samples_kopt\n16,k,2,0,1.5;x\n");
  CHECK_THROWS_WITH_AS(kopt::profile::read_harness_results(bad, {"M"}, "kopt"),
                       (bad.string() + ":2: samples_kopt: expected a number, got 'x'").c_str(),
                       kopt::Error);
}

TEST_CASE("a missing column names the file and the column") {
  TempDir dir;
  auto file = dir.write("r.csv", "M,N,K,kernel,us_kopt\n16,256,256,k,1\n");
  CHECK_THROWS_WITH_AS(kopt::profile::read_harness_results(file, {"M", "N", "K"}, "kopt"),
                       (file.string() + ": missing column 'err_kopt' (columns: M, N, K, kernel, "
                                        "us_kopt)")
                           .c_str(),
                       kopt::Error);
  auto no_config = dir.write("c.csv", "M,N,kernel,us_kopt,err_kopt\n16,256,k,1,0\n");
  CHECK_THROWS_WITH_AS(
      kopt::profile::read_harness_results(no_config, {"M", "N", "K"}, "kopt"),
      (no_config.string() + ": missing column 'K' (columns: M, N, kernel, us_kopt, err_kopt)")
          .c_str(),
      kopt::Error);
}

TEST_CASE("a harness of another impl: the error names both impls and what to make the same") {
  TempDir dir;
  auto file = dir.write("r.csv", "rows,cols,kernel,us_softmax,err_softmax\n4,8,k,1,0\n");
  CHECK_THROWS_WITH_AS(kopt::profile::read_harness_results(file, {"rows", "cols"}, "row_softmax"),
                       (file.string() + ": the harness wrote 'us_softmax' where kopt reads "
                                        "'us_row_softmax': the harness's FamilySpec::impl is "
                                        "'softmax' and family.json's \"impl\" is 'row_softmax': "
                                        "make them the same")
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("a bad number names file, line and column") {
  TempDir dir;
  auto file = dir.write("r.csv", "M,kernel,us_kopt,err_kopt\n16,k,1,0\n32,k,fast,0\n");
  CHECK_THROWS_WITH_AS(kopt::profile::read_harness_results(file, {"M"}, "kopt"),
                       (file.string() + ":3: us_kopt: expected a number, got 'fast'").c_str(),
                       kopt::Error);
}

TEST_CASE("the harness's hash line") {
  CHECK(kopt::profile::harness_hash("kopt-candidate: 01 abc123\nrest\n") == "abc123");
  CHECK(kopt::profile::harness_hash("noise\nkopt-candidate: 07 ff00\n") == "ff00");
  CHECK(kopt::profile::harness_hash("no such line\n").empty());
}

TEST_SUITE_END();
