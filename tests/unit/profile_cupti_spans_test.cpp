// The CUPTI trace's spans: work launched outside every timed range that ran during one makes the
// trace refused, naming it; the harness's own work queued before a range on its stream does not.
#include "temp_dir.hpp"

#include "profile/cupti_trace.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"

#include <doctest/doctest.h>

#include <string>

using kopt::profile::attribute_cupti_trace;
using kopt::profile::parse_cupti_trace;
using kopt::profile::ProfileOptions;
using kopt::profile::ProfileReport;
using kopt::test::fixture;

namespace {

// cuda_spin's persistent_kernel cheat as the tracer would see it, 2 configs x 2 timed runs: the
// server kernel an untimed call started (line 11, stream 14) runs through every range, each
// range's spin_kernel does nothing (2 us), and the harness's L2 flush, launched before each range
// on the timer's stream 13, is still running 25 us into it.
const char *kPersistent = "cupti/persistent_kernel.cupti_trace.csv";
// The trace the tracer writes when a range ends with that server still running.
const char *kRunning = "cupti/running_kernel.cupti_trace.csv";

const std::string kServerRow = "-,kernel,1799999999995000000,1800000000103500000,14,90,\"void "
                               "spin_server<1>(SpinMailbox*, long long, long long)\"\n";

std::string text(const char *name) { return kopt::util::read_file(fixture(name)); }

// `name`'s text with `from` replaced by `to` once (the test fails when `from` is not there).
std::string edited(const char *name, const std::string &from, const std::string &to) {
  std::string t = text(name);
  size_t at = t.find(from);
  REQUIRE(at != std::string::npos);
  return t.replace(at, from.size(), to);
}

ProfileReport attribute(const std::string &trace, int configs = 2, int runs = 2) {
  ProfileOptions options;
  options.kernel_regex = "spin_kernel";
  options.runs_per_config = runs;
  return attribute_cupti_trace(parse_cupti_trace(trace, "t.csv"), configs, options, "t.csv");
}

} // namespace

TEST_SUITE_BEGIN("profile::cupti");

TEST_CASE("a kernel an untimed call started that runs during a timed run is refused, named") {
  auto trace = parse_cupti_trace(text(kPersistent), kPersistent);
  CHECK(trace.version == 2);
  REQUIRE(trace.spans.size() == 4);
  CHECK(trace.spans[1].start_ns == 1800000000001000000);
  CHECK(trace.spans[1].stop_ns == 1800000000001400000);
  CHECK(trace.spans[1].stream == 13);
  REQUIRE(trace.activities.size() == 9);
  CHECK(trace.activities[1].range == -1);
  CHECK(trace.activities[1].name == "void spin_server<1>(SpinMailbox*, long long, long long)");

  auto report = attribute(text(kPersistent));
  CHECK_FALSE(report.profiled);
  CHECK(report.reason ==
        "void spin_server<1>(SpinMailbox*, long long, long long) ran during timed run 1 of "
        "config_0 but was launched outside it (t.csv:11)");
}

TEST_CASE("the harness's flush queued before a range on the timer's stream is not the range's") {
  std::string honest = edited(kPersistent, kServerRow, "");
  auto report = attribute(honest);
  REQUIRE(report.profiled);
  // Each run is its spin_kernel alone: the flush that ran into the range is not counted.
  CHECK(report.configs[0].run_ns == std::vector<double>{2000, 2000});
  CHECK(report.configs[1].launches == 2);
}

TEST_CASE("work launched outside the ranges is refused wherever it ran in a range") {
  std::string honest = edited(kPersistent, kServerRow, "");
  auto with = [&](const std::string &row) {
    std::string t = honest;
    t.insert(t.find("# end"), row);
    return attribute(t);
  };
  SUBCASE("on another stream, done before the range's first kernel began") {
    // Released by the timed call, its work done before the no-op kernel starts.
    auto report = with("-,kernel,1800000000002001000,1800000000002020000,15,95,\"helper(int)\"\n");
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("helper(int) ran during timed run 1 of config_1 but was launched "
                             "outside it (t.csv:18)") == 0);
  }
  SUBCASE("on the timer's stream, after the range's first kernel began") {
    auto report = with("-,kernel,1800000000003100000,1800000000003300000,13,95,\"late(int)\"\n");
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("late(int) ran during timed run 2 of config_1") == 0);
  }
  SUBCASE("a copy is named as a copy") {
    auto report = with("-,memcpy,1800000000000100000,1800000000000200000,15,95,\"memcpy HtoD\"\n");
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("a memcpy HtoD ran during timed run 1 of config_0") == 0);
  }
  SUBCASE("a range whose timer recorded no event exempts nothing") {
    std::string t = honest;
    t.replace(t.find(",13,0,\"\""), 8, ",,0,\"\""); // range 0's timer stream unknown
    auto report = attribute(t);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("kopt_l2_flush_read<0>(uint4 const*, unsigned long, unsigned int*) "
                             "ran during timed run 1 of config_0") != std::string::npos);
  }
  SUBCASE("work outside every range's span is not the trace's business") {
    auto report = with("-,kernel,1800000000000500000,1800000000000900000,15,95,\"between(int)\"\n");
    CHECK(report.profiled);
  }
}

TEST_CASE("a kernel still running when a range ended, the tracer's last line, is refused") {
  auto trace = parse_cupti_trace(text(kRunning), kRunning);
  REQUIRE(trace.running.size() == 1);
  CHECK(trace.running[0].range == 0);
  auto report = attribute(text(kRunning), 1, 1);
  CHECK_FALSE(report.profiled);
  CHECK(report.reason ==
        "void spin_server<1>(SpinMailbox*, long long, long long) ran during timed run 1 of "
        "config_0 but was launched outside it: it was still running when that "
        "run ended (t.csv)");
}

TEST_CASE("a trace that cannot show what ran in its ranges is refused") {
  std::string honest = edited(kPersistent, kServerRow, "");
  SUBCASE("an older tracer's, without spans") {
    std::string t = honest;
    t.replace(t.find("trace 2"), 7, "trace 1");
    auto report = attribute(t);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("t.csv is a version 1 trace, which holds no span") == 0);
  }
  SUBCASE("a range without its span") {
    std::string row = "2,range,1800000000002000000,1800000000002400000,13,0,\"\"\n";
    std::string t = honest;
    t.erase(t.find(row), row.size());
    auto report = attribute(t);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason == "t.csv has no 'range' row (the span) of timed range 2");
  }
  SUBCASE("spans out of order") {
    std::string t = honest;
    t.replace(t.find("1,range,1800000000001000000"), 27, "1,range,1800000000000300000");
    auto report = attribute(t);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason == "t.csv:7: timed range 1 begins before range 0 ends");
  }
}

TEST_CASE("a malformed range row is an error naming the line") {
  auto error_of = [](const std::string &t) {
    try {
      parse_cupti_trace(t, "t.csv");
    } catch (const kopt::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(edited(kPersistent, "1,range,", "0,range,"))
            .find("t.csv:7: a second 'range' row for range 0 (the first is line 6)") !=
        std::string::npos);
  CHECK(error_of(edited(kPersistent, "1,range,", "-,range,"))
            .find("t.csv:7: range: expected the number of the range this row spans, got '-'") !=
        std::string::npos);
  CHECK(error_of(edited(kPersistent, "1800000000001400000,13", "1,13"))
            .find("t.csv:7: end_ns: expected at least start_ns") != std::string::npos);
  CHECK(error_of(edited(kRunning, "# running 0", "# running x")).find("t.csv:5: running") !=
        std::string::npos);
}

TEST_SUITE_END();
