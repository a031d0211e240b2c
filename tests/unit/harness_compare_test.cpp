#include <kopt/harness/compare.hpp>
#include <kopt/harness/inputs.hpp>
#include <kopt/harness/timer.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace kopt::harness;

TEST_SUITE_BEGIN("harness::compare");

TEST_CASE("error is the fraction outside tolerance, NaN included") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> golden = {1.0f, 2.0f, 0.0f, 4.0f, inf, 100.0f, 5.0f, 6.0f};
  std::vector<float> output = {1.0f, 2.0f + 1e-5f, 1e-6f, nan, inf, 100.5f, 5.0f, 6.0f};
  Comparison c = compare(output, golden, Tolerance{});
  CHECK(c.elements == 8);
  CHECK(c.nans == 2);       // the NaN output and inf - inf
  CHECK(c.mismatches == 3); // both NaNs and 100.5 vs 100
  CHECK(c.error() == doctest::Approx(3.0 / 8.0));
  CHECK(c.max_abs == doctest::Approx(0.5));
  CHECK(c.max_rel == doctest::Approx(0.005));
}

TEST_CASE("a NaN golden never matches, even a NaN output") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Comparison c = compare({nan}, {nan}, Tolerance{});
  CHECK(c.mismatches == 1);
  CHECK(c.error() == 1.0);
}

TEST_CASE("equal outputs have error 0 and sizes must match") {
  CHECK(compare({1, 2, 3}, {1, 2, 3}, Tolerance{}).error() == 0.0);
  CHECK(compare({}, {}, Tolerance{}).error() == 0.0);
  REQUIRE_THROWS_WITH(compare({1, 2}, {1}, Tolerance{}), "output has 2 elements, the golden 1");
}

TEST_CASE("dtype tolerances") {
  CHECK(tolerance_for("fp32").atol == 1e-5);
  CHECK(tolerance_for("fp32").rtol == 1e-4);
  REQUIRE_THROWS_WITH(tolerance_for("int4"),
                      "unknown output dtype 'int4' (expected fp32, fp16, bf16, fp8)");
}

TEST_CASE("median") {
  CHECK(median({3.0}) == 3.0);
  CHECK(median({5.0, 1.0, 3.0}) == 3.0);
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median({9.0, 1.0, 100.0, 2.0, 3.0}) == 3.0);
  REQUIRE_THROWS_WITH(median({}), "median of no values");
}

TEST_CASE("inputs are seeded, never zero and differ per config") {
  Rng a(config_seed(1234, "M=16"));
  Rng b(config_seed(1234, "M=16"));
  Rng c(config_seed(1234, "M=32"));
  std::vector<float> x(10000), y(10000), z(10000);
  a.fill(x);
  b.fill(y);
  c.fill(z);
  CHECK(x == y);
  CHECK(x != z);
  for (float v : x) {
    REQUIRE(v != 0.0f);
    REQUIRE(v > -1.0f);
    REQUIRE(v < 1.0f);
  }
  std::vector<float> out(3);
  poison(out);
  CHECK(std::isnan(out[2]));
}

TEST_SUITE_END();
