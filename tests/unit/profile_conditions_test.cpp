#include "profile/measurement.hpp"

#include <doctest/doctest.h>

using kopt::profile::Conditions;
using kopt::profile::stale_reason;

TEST_SUITE_BEGIN("profile::Conditions");

TEST_CASE("stale_reason names the first field that differs, with both values") {
  Conditions now{"fcbae242aaaa", "NVIDIA H200", "580.1", "events", 2, 15};
  CHECK(stale_reason(now, now) == "");
  Conditions row = now;
  row.hash = "7d0a5dedbbbb";
  CHECK(stale_reason(row, now) ==
        "measured with content hash 7d0a5ded, the candidate's is now fcbae242");
  row = now;
  row.device = "NVIDIA H100";
  CHECK(stale_reason(row, now) == "measured on 'NVIDIA H100', this run is on 'NVIDIA H200'");
  row = now;
  row.driver = "";
  CHECK(stale_reason(row, now) == "measured with driver (none), now '580.1'");
  row = now;
  row.profiler = "chrono";
  CHECK(stale_reason(row, now) == "timed by 'chrono', this run by 'events'");
  row = now;
  row.repeat = 3;
  CHECK(stale_reason(row, now) == "measured with warmup 2 and repeat 3, this run uses 2 and 15");
  CHECK(stale_reason(Conditions{}, now) ==
        "no record of what measured it (written by an older kopt)");
}

TEST_CASE("a measurement's conditions") {
  kopt::profile::Measurement m;
  m.hash = "abc";
  m.device = "NVIDIA H200";
  m.driver = "580.1";
  m.measured_by = kopt::profile::Source::ncu;
  m.warmup = 2;
  m.repeat = 15;
  Conditions c = kopt::profile::conditions_of(m);
  CHECK(stale_reason(c, {"abc", "NVIDIA H200", "580.1", "ncu", 2, 15}) == "");
}

TEST_SUITE_END();
