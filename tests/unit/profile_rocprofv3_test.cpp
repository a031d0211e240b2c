#include "temp_dir.hpp"

#include "profile/rocprofv3.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::profile::ProfileOptions;
using kopt::test::fixture;

namespace {

ProfileOptions with_regex(const std::string &regex, int per_config = 0) {
  ProfileOptions options;
  options.kernel_regex = regex;
  options.launches_per_config = per_config;
  return options;
}

const std::string kGemm = "void gemm_kernel<\"tile_128x128\">(float*, float const*, int)";

} // namespace

TEST_SUITE_BEGIN("profile::rocprofv3");

TEST_CASE("the command line traces kernels and roctx ranges into a named CSV") {
  auto argv = kopt::profile::rocprofv3_command("out/07", "bench", {"./harness", "--benchmark"});
  CHECK(argv == std::vector<std::string>{"rocprofv3", "--kernel-trace", "--marker-trace",
                                         "--output-format", "csv", "-d", "out/07", "-o", "bench",
                                         "--", "./harness", "--benchmark"});
  auto plain = kopt::profile::rocprofv3_command("d", "n", {"h"}, kopt::profile::MarkerTrace::no);
  CHECK(plain == std::vector<std::string>{"rocprofv3", "--kernel-trace", "--output-format", "csv",
                                          "-d", "d", "-o", "n", "--", "h"});
}

TEST_CASE("the 2024 layout (18 columns) is read in launch order") {
  auto dispatches = kopt::profile::read_kernel_trace(fixture("rocprofv3/kernel_trace.csv"));
  REQUIRE(dispatches.size() == 7);
  CHECK(dispatches[0].dispatch_id == 1);
  CHECK(dispatches[0].agent == "1");
  CHECK(dispatches[0].kernel ==
        "void addition_kernel<float>(float*, float const*, float const*, int, int)");
  CHECK(dispatches[0].duration_ns() == 48744);
  CHECK(dispatches[0].line == 2);
  CHECK(dispatches[1].dispatch_id == 2);
  CHECK(dispatches[6].dispatch_id == 13);

  auto report =
      kopt::profile::attribute_dispatches(dispatches, {}, with_regex("kernel"), "kernel_trace.csv");
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 1);
  CHECK(report.configs[0].launches == 7);
  CHECK(report.configs[0].range.empty());

  // Without ranges, a kernel outside the regex could belong to any config: nothing is guessed.
  auto outside = kopt::profile::attribute_dispatches(dispatches, {}, with_regex("addition", 2),
                                                     "kernel_trace.csv");
  CHECK_FALSE(outside.profiled);
  CHECK(outside.reason ==
        "kernel_trace.csv: kernels outside 'addition' (subtract_kernel(float*, float const*, float "
        "const*, int, int), multiply_kernel(float*, float const*, float const*, int, int)) ran, "
        "and without config_<index> ranges they cannot be attributed to configs");
}

TEST_CASE("the current layout (22 columns, Agent_Id \"Agent 7\") with unescaped quotes") {
  auto dispatches = kopt::profile::read_kernel_trace(fixture("rocprofv3/kernel_trace_22col.csv"));
  REQUIRE(dispatches.size() == 6);
  CHECK(dispatches[0].agent == "Agent 7");
  CHECK(dispatches[0].kernel == kGemm);
  CHECK(dispatches[3].kernel == "__amd_rocclr_fillBufferAligned");

  SUBCASE("roctx ranges attribute dispatches; warm-up outside them is not counted") {
    auto markers = kopt::profile::read_marker_trace(fixture("rocprofv3/marker_api_trace.csv"));
    REQUIRE(markers.size() == 3);
    auto report =
        kopt::profile::attribute_dispatches(dispatches, markers, with_regex("gemm_kernel"), "t");
    REQUIRE(report.profiled);
    REQUIRE(report.configs.size() == 2);
    CHECK(report.configs[0].range == "config_0 M=128 N=4096 K=7168");
    // No harness flush marks the fill as the harness's poisoning: inside the range, it counts.
    CHECK(report.configs[0].launches == 3);
    CHECK(report.configs[0].mean_ns() == doctest::Approx(23000.0 / 3));
    CHECK(report.configs[0].kernel_names() ==
          std::vector<std::string>{kGemm, "__amd_rocclr_fillBufferAligned"});
    REQUIRE(report.configs[0].outside_regex().size() == 1);
    CHECK(report.configs[0].outside_regex()[0].ns == 1000);
    CHECK(report.configs[1].mean_us() == doctest::Approx(21.0));
  }
  SUBCASE("without ranges every launch belongs to config 0") {
    ProfileOptions options = with_regex("gemm");
    options.flush = kopt::profile::HarnessFlush::inside; // the fill may be the harness's
    auto report = kopt::profile::attribute_dispatches(dispatches, {}, options, "t");
    REQUIRE(report.configs.size() == 1);
    CHECK(report.configs[0].launches == 6);
    CHECK(report.configs[0].mean_ns() == doctest::Approx(74000.0 / 6));
  }
}

TEST_CASE("every dispatch of a timed run counts: other kernels, other streams; the harness's not") {
  // kernel_trace_22col.csv as the harness's timer makes it, 2 timed runs per config: warm-up,
  // then per run a poisoning fill and the L2 flush before the candidate's dispatches; config_0
  // runs helper_work before the gemm, config_1 a second gemm on another queue and stream.
  auto dispatches =
      kopt::profile::read_kernel_trace(fixture("rocprofv3/kernel_trace_attribution.csv"));
  auto markers = kopt::profile::read_marker_trace(fixture("rocprofv3/marker_api_trace.csv"));
  ProfileOptions options = with_regex("gemm_kernel");
  options.runs_per_config = 2;
  options.flush = kopt::profile::HarnessFlush::inside;
  auto report = kopt::profile::attribute_dispatches(dispatches, markers, options, "t");
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 2);

  const auto &other_kernel = report.configs[0];
  CHECK(other_kernel.launches == 4); // not the warm-up, fills or flushes
  CHECK(other_kernel.run_ns == std::vector<double>{11000, 11000});
  CHECK(other_kernel.kernel_names() == std::vector<std::string>{"helper_work(float*, int)", kGemm});
  REQUIRE(other_kernel.outside_regex().size() == 1);
  CHECK(other_kernel.outside_regex()[0].ns == 20000);

  const auto &two_streams = report.configs[1];
  CHECK(two_streams.launches == 4);
  CHECK(two_streams.run_ns == std::vector<double>{11000, 11000});
  CHECK(two_streams.outside_regex().empty());

  options.runs_per_config = 3; // a candidate's own "flush" would show as one too many
  auto extra = kopt::profile::attribute_dispatches(dispatches, markers, options, "t");
  CHECK_FALSE(extra.profiled);
  CHECK(extra.reason == "t: config_0: 2 launches of the harness's L2 flush (kopt_l2_flush_read), "
                        "expected 3, one per timed run");

  // Where the flush cannot be in the output (ncu's timed window), a kernel named like it is the
  // candidate's: it counts like any other.
  options.runs_per_config = 0;
  options.flush = kopt::profile::HarnessFlush::outside;
  auto counted = kopt::profile::attribute_dispatches(dispatches, markers, options, "t");
  REQUIRE(counted.profiled);
  CHECK(counted.configs[0].launches == 10);
}

TEST_CASE("the rocpd convert layout (Guid first) found under <dir>/<hostname>/<pid>_*") {
  kopt::test::TempDir temp;
  temp.write("out/host-1/4242_kernel_trace.csv",
             kopt::util::read_file(fixture("rocprofv3/rocpd_kernel_trace.csv")));
  temp.write("out/host-1/4242_marker_api_trace.csv",
             kopt::util::read_file(fixture("rocprofv3/marker_api_trace.csv")));
  auto report = kopt::profile::read_rocprofv3_output(temp.path() / "out", with_regex("gemm"));
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 2);
  CHECK(report.configs[0].mean_ns() == doctest::Approx(23000.0 / 3));
  CHECK(report.configs[1].mean_ns() == doctest::Approx(21000));
}

TEST_CASE("the -o name pattern <dir>/<name>_kernel_trace.csv is found too") {
  kopt::test::TempDir temp;
  auto path = temp.write("bench_kernel_trace.csv",
                         kopt::util::read_file(fixture("rocprofv3/kernel_trace.csv")));
  CHECK(kopt::profile::find_rocprofv3_file(temp.path(), "kernel_trace.csv") == path);
  CHECK_FALSE(kopt::profile::find_rocprofv3_file(temp.path(), "marker_api_trace.csv"));

  auto report = kopt::profile::read_rocprofv3_output(temp.path(), with_regex("subtract"));
  CHECK_FALSE(report.profiled); // the other kernels cannot be attributed without ranges
  report = kopt::profile::read_rocprofv3_output(temp.path(), with_regex("_kernel"));
  REQUIRE(report.profiled);
  CHECK(report.configs[0].launches == 7);

  auto none = kopt::profile::read_rocprofv3_output(temp.path(), with_regex("gemm"));
  CHECK_FALSE(none.profiled);
  CHECK(none.reason.rfind(path.string() + ": no launch of a kernel matching 'gemm' (kernels seen: ",
                          0) == 0);

  temp.write("again/1_kernel_trace.csv", "x\n");
  REQUIRE_THROWS_WITH(kopt::profile::find_rocprofv3_file(temp.path(), "kernel_trace.csv"),
                      (temp.path().string() + ": expected one *kernel_trace.csv, found 2: " +
                       (temp.path() / "again/1_kernel_trace.csv").string() + ", " + path.string())
                          .c_str());
}

TEST_CASE("no kernel trace at all makes the measurement unprofiled") {
  kopt::test::TempDir temp;
  auto report = kopt::profile::read_rocprofv3_output(temp.path(), with_regex("gemm"));
  CHECK_FALSE(report.profiled);
  CHECK(report.reason ==
        temp.path().string() + ": rocprofv3 wrote no *kernel_trace.csv (no kernel was traced)");
}

TEST_CASE("kernel_stats.csv has the header of hip_api_stats.csv") {
  auto stats = kopt::profile::read_kernel_stats(fixture("rocprofv3/hip_api_stats.csv"));
  REQUIRE(stats.size() == 17);
  CHECK(stats[0].name == "hipStreamCreateWithFlags");
  CHECK(stats[0].calls == 4);
  CHECK(stats[0].total_ns == 262497406);
  CHECK(stats[0].average_ns == doctest::Approx(65624351.5));
  CHECK(stats[16].name == "hipSetDevice");
  CHECK(stats[16].max_ns == 660);
}

TEST_CASE("malformed kernel traces name the file, the line and the column") {
  kopt::test::TempDir temp;
  std::string good = kopt::util::read_file(fixture("rocprofv3/kernel_trace_22col.csv"));

  SUBCASE("truncated CSV") {
    auto path = temp.write("cut.csv", good.substr(0, good.size() - 30));
    REQUIRE_THROWS_WITH(
        kopt::profile::read_kernel_trace(path),
        (path.string() + ":7: expected 22 fields as in the header, got 12").c_str());
  }
  SUBCASE("missing column") {
    auto path = temp.write("k.csv", "\"Kind\",\"Kernel_Name\",\"Start_Timestamp\"\n"
                                    "\"KERNEL_DISPATCH\",\"k\",1\n");
    REQUIRE_THROWS_WITH(kopt::profile::read_kernel_trace(path),
                        (path.string() + ": missing column 'End_Timestamp' (columns: Kind, "
                                         "Kernel_Name, Start_Timestamp)")
                            .c_str());
  }
  SUBCASE("a timestamp that is not a number") {
    auto path = temp.write("t.csv", "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"
                                    "\"k\",10,\n");
    REQUIRE_THROWS_WITH(kopt::profile::read_kernel_trace(path),
                        (path.string() + ":2: End_Timestamp: expected an integer, got ''").c_str());
  }
  SUBCASE("end before start") {
    auto path = temp.write("e.csv", "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"
                                    "\"k\",10,5\n");
    REQUIRE_THROWS_WITH(
        kopt::profile::read_kernel_trace(path),
        (path.string() + ":2: End_Timestamp: 5 is before Start_Timestamp 10").c_str());
  }
}

TEST_SUITE_END();
