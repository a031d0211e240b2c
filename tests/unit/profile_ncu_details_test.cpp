#include "profile/ncu_details.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::test::fixture;
namespace pr = kopt::profile;

TEST_SUITE_BEGIN("profile::ncu_details");

TEST_CASE("real details page: four launches with sections, stalls, configs from NVTX") {
  auto path = fixture("ncu/ncu_details_sections_h200.csv");
  auto launches = pr::parse_ncu_details(kopt::util::read_file(path), path.string());
  REQUIRE(launches.size() == 4);
  const pr::LaunchDetails &small = launches[0];
  CHECK(small.config == 0);
  CHECK(small.kernel == "void gemm_a8w8_blockscale<16, 64, 1, 4, 4>(Params)");
  CHECK(small.grid == "(1, 80, 1)");
  CHECK(small.get("Occupancy", "Theoretical Occupancy") == doctest::Approx(31.25));
  CHECK(small.get("Occupancy", "Achieved Occupancy") == doctest::Approx(6.25));
  CHECK(small.get("GPU Speed Of Light Throughput", "Duration") > 1000);
  CHECK(small.get("Occupancy", "no such metric") == -1);
  CHECK_FALSE(small.top_rule.empty());
  pr::Bottleneck b = pr::judge_bottleneck(small);
  CHECK(b.limiter == "occupancy (grid too small)");
  CHECK(b.top_stall == "wait");

  const pr::LaunchDetails &large = launches[3];
  CHECK(large.config == 3);
  CHECK(large.kernel == "void gemm_a8w8_blockscale<64, 128, 2, 2, 3>(Params)");
  CHECK(large.get("Occupancy", "Block Limit Registers") == 2);
  CHECK(pr::judge_bottleneck(large).limiter == "occupancy (registers)");
}

TEST_CASE("a saturated memory unit is named") {
  pr::LaunchDetails launch;
  launch.metrics = {{"GPU Speed Of Light Throughput/Memory Throughput", 81},
                    {"GPU Speed Of Light Throughput/Compute (SM) Throughput", 24},
                    {"GPU Speed Of Light Throughput/DRAM Throughput", 2.4},
                    {"GPU Speed Of Light Throughput/L1/TEX Cache Throughput", 81}};
  CHECK(pr::judge_bottleneck(launch).limiter == "memory throughput (L1/TEX)");
}

TEST_CASE("output without a details CSV says what is missing") {
  CHECK_THROWS_WITH(pr::parse_ncu_details("==PROF== No kernels were profiled.\n", "x.csv"),
                    "x.csv: no ncu details CSV (a header with \"ID\" and \"Metric Name\"); was "
                    "it run with --csv --page details? ncu profiled no kernel");
}

TEST_SUITE_END();
