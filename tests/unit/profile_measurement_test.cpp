#include "profile/measurement.hpp"

#include "util/error.hpp"

#include <doctest/doctest.h>

#include <limits>

using kopt::profile::Measurement;
using kopt::profile::measurement_from_json;

namespace {

// A measurement of 01 with one config M=64 whose `us` and samples are given.
nlohmann::json with_times(const nlohmann::json &us, const nlohmann::json &samples) {
  Measurement m;
  m.family = "tiny";
  m.candidate = "01";
  m.hash = "h01";
  m.config_columns = {"M"};
  m.configs.push_back({{"64"}, "small", "k", 1.0, 1.0, 0, true, {}});
  nlohmann::json j = kopt::profile::to_json(m);
  j["configs"][0]["us"] = us;
  j["configs"][0]["samples"] = samples;
  return j;
}

} // namespace

TEST_SUITE_BEGIN("profile::measurement");

TEST_CASE("times are positive and finite") {
  CHECK(measurement_from_json(with_times(2.5, {{2.0, 3.0}}), "m.json").configs[0].us == 2.5);
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(2.5, {{2.0, -3.0}}), "m.json"),
                      "m.json: configs[0] (M=64): samples[0][1]: expected a positive finite time "
                      "in us, got -3");
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(0, {{2.0}}), "m.json"),
                      "m.json: configs[0] (M=64): us: expected a positive finite time in us, "
                      "got 0");
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(-1.5, nlohmann::json::array()), "m.json"),
                      "m.json: configs[0] (M=64): us: expected a positive finite time in us, "
                      "got -1.5");
  // JSON has no NaN or infinity: nlohmann writes NaN as null (and refuses 1e999 when it reads);
  // a reader given parsed JSON may still meet one.
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(nullptr, {{2.0}}), "m.json"),
                      "m.json: configs[0]: field 'us' has the wrong type");
  REQUIRE_THROWS_WITH(
      measurement_from_json(with_times(2.5, {{std::numeric_limits<double>::infinity()}}), "m.json"),
      "m.json: configs[0] (M=64): samples[0][0]: expected a positive finite time in us, got inf");
}

TEST_CASE("samples are plausible and agree with us") {
  // 1e-300 us with a normal `us`: the keep test would read an impossible speed-up.
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(2.5, {{1e-300, 1e-300}}), "m.json"),
                      "m.json: configs[0] (M=64): samples[0][0]: expected at least 0.001 us (1 ns, "
                      "the finest time a timer gives), got 1e-300");
  REQUIRE_THROWS_WITH(measurement_from_json(with_times(9.3, {{1.8, 1.9, 2.0}}), "m.json"),
                      "m.json: configs[0] (M=64): us: expected a time within the samples (1.8 to "
                      "2), got 9.3");
  REQUIRE_THROWS_WITH(
      measurement_from_json(with_times(9.3, {{1.8, 2.0}, {1.9, 2.1}, {2.0, 2.2}}), "m.json"),
      "m.json: configs[0] (M=64): us: expected the median of the rounds' sample medians, 2, got "
      "9.3");
  // Merged rounds: us is the median of the medians; the CSV's rounding is allowed.
  CHECK(measurement_from_json(with_times(2.0005, {{1.8, 2.0}, {1.9, 2.1}, {2.0, 2.2}}), "m.json")
            .configs[0]
            .us == 2.0005);
  // A profiler's us is the runs' mean: within the samples.
  CHECK(measurement_from_json(with_times(4.0, {{1.0, 2.0, 9.0}}), "m.json").configs[0].us == 4.0);
}

TEST_CASE("values are one per config column, as the configs file's") {
  nlohmann::json j = with_times(2.5, {{2.5}});
  j["configs"][0]["values"] = {"64", "128"};
  REQUIRE_THROWS_WITH(measurement_from_json(j, "m.json"),
                      "m.json: configs[0]: values: expected 1 (one per config column), got 2");
  j["configs"][0]["values"] = {std::string("3\0"
                                           "2",
                                           3)};
  REQUIRE_THROWS_WITH(measurement_from_json(j, "m.json"),
                      "m.json: configs[0]: values[0]: expected no control bytes");
  j["configs"][0]["values"] = {64};
  REQUIRE_THROWS_WITH(measurement_from_json(j, "m.json"),
                      "m.json: configs[0]: field 'values' has the wrong type");
}

TEST_CASE("how busy the machine was: written when taken, a share of its CPU time") {
  nlohmann::json j = with_times(2.5, {{2.0, 3.0}});
  CHECK_FALSE(j.contains("others_cpu")); // not taken: not written
  CHECK(measurement_from_json(j, "m.json").others_cpu == -1);
  Measurement m = measurement_from_json(j, "m.json");
  m.others_cpu = 0.42;
  j = kopt::profile::to_json(m);
  CHECK(j["others_cpu"] == 0.42);
  CHECK(measurement_from_json(j, "m.json").others_cpu == 0.42);
  j["others_cpu"] = 1.5;
  REQUIRE_THROWS_WITH(measurement_from_json(j, "m.json"),
                      "m.json: field 'others_cpu': expected a share of the machine's CPU time in "
                      "[0, 1], got 1.5");
  j["others_cpu"] = "busy";
  CHECK_THROWS_WITH(measurement_from_json(j, "m.json"), doctest::Contains("others_cpu"));
}

TEST_SUITE_END();
