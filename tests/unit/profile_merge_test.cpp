#include "profile/bench.hpp"

#include <doctest/doctest.h>

using kopt::profile::ConfigResult;
using kopt::profile::Measurement;
using kopt::profile::merge_rounds;

namespace {

// One round's run of one config: its launches' times and, when it compared, its error.
Measurement run(std::vector<double> samples, bool compared, double err = 0) {
  Measurement m;
  m.candidate = "01";
  m.hash = "h01";
  ConfigResult c;
  c.values = {"1"};
  c.us = samples.front();
  c.rounds = {std::move(samples)};
  c.err_known = compared;
  c.err = compared ? err : 0;
  m.configs.push_back(c);
  return m;
}

} // namespace

TEST_SUITE_BEGIN("profile::merge");

TEST_CASE("merged rounds keep every round's samples and the median of the rounds' medians") {
  Measurement m = merge_rounds({run({3, 1, 2}, true), run({5, 4, 6}, false), run({9}, false)});
  REQUIRE(m.ok());
  REQUIRE(m.configs.size() == 1);
  CHECK(m.configs[0].rounds == std::vector<std::vector<double>>{{3, 1, 2}, {5, 4, 6}, {9}});
  CHECK(m.configs[0].us == 5);
}

TEST_CASE("the error comes from the rounds that compared; none compared leaves it unknown") {
  SUBCASE("one checked round decides correctness") {
    Measurement m = merge_rounds({run({1}, false), run({1}, true, 0.25), run({1}, false)});
    CHECK(m.configs[0].err_known);
    CHECK(m.configs[0].err == 0.25);
  }
  SUBCASE("the worst of several checked rounds") {
    Measurement m = merge_rounds({run({1}, true, 0.5), run({1}, true, 0)});
    CHECK(m.configs[0].err_known);
    CHECK(m.configs[0].err == 0.5);
  }
  SUBCASE("no checked round") {
    Measurement m = merge_rounds({run({1}, false), run({1}, false)});
    CHECK_FALSE(m.configs[0].err_known);
  }
}

TEST_CASE("a binary that changed between rounds fails the measurement, naming the round") {
  Measurement second = run({1}, false);
  second.hash = "h02";
  Measurement m = merge_rounds({run({1}, true), second});
  CHECK_FALSE(m.ok());
  CHECK(m.reason == "round 2 of 2: the harness printed hash h02 after h01 (the binary changed "
                    "during the measurement)");
}

TEST_CASE("a round that failed is named among the rounds planned, not those run") {
  Measurement crashed = run({1}, false);
  crashed.status = "failed";
  crashed.reason = "harness crashed (signal 11)";
  Measurement m = merge_rounds({crashed}, 6);
  CHECK_FALSE(m.ok());
  CHECK(m.reason == "round 1 of 6: harness crashed (signal 11)");
}

TEST_CASE("the first round whose profiler failed names why the measurement is unprofiled") {
  using kopt::profile::Source;
  auto profiled = [](Measurement m) {
    m.measured_by = Source::cupti;
    return m;
  };
  auto unprofiled = [](Measurement m, const std::string &why) {
    m.measured_by = Source::events;
    m.profiled = false;
    m.reason = why;
    return m;
  };
  Measurement m = merge_rounds({profiled(run({1}, false)), unprofiled(run({1}, false), "first"),
                                unprofiled(run({1}, false), "second")});
  CHECK(m.ok());
  CHECK_FALSE(m.profiled);
  CHECK(m.measured_by == Source::events);
  CHECK(m.reason == "round 2 of 3: first");
}

TEST_SUITE_END();
