#include "temp_dir.hpp"

#include "profile/ncu.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::profile::ProfileOptions;
using kopt::profile::read_ncu_output;
using kopt::test::fixture;

namespace {

ProfileOptions with_regex(const std::string &regex, int per_config = 0) {
  ProfileOptions options;
  options.kernel_regex = regex;
  options.launches_per_config = per_config;
  return options;
}

} // namespace

TEST_SUITE_BEGIN("profile::ncu");

TEST_CASE("the command line profiles one metric with NVTX for every kernel, by default only the "
          "timed runs") {
  using kopt::profile::NcuLaunches;
  std::vector<std::string> common = {"ncu",
                                     "--csv",
                                     "--print-units",
                                     "base",
                                     "--metrics",
                                     "gpu__time_duration.sum",
                                     "--clock-control",
                                     "none",
                                     "--nvtx"};
  std::vector<std::string> timed = common;
  timed.insert(timed.end(), {"--profile-from-start", "off", "--cache-control", "none", "./harness",
                             "--benchmark"});
  std::vector<std::string> all = common;
  all.insert(all.end(), {"./harness", "--benchmark"});
  CHECK(kopt::profile::ncu_command({"./harness", "--benchmark"}) == timed);
  CHECK(kopt::profile::ncu_command({"./harness", "--benchmark"}, NcuLaunches::all) == all);
}

TEST_CASE("ncu's own line says when it profiled nothing") {
  CHECK(kopt::profile::ncu_profiled_nothing("==PROF== Disconnected\n==WARNING== No kernels were "
                                            "profiled.\n"));
  CHECK_FALSE(kopt::profile::ncu_profiled_nothing("\"ID\",\"Kernel Name\"\n"));
}

TEST_CASE("config ranges are named config_<index> followed by a space or the end") {
  CHECK(kopt::profile::config_index_of_range("config_0 M=65536") == 0);
  CHECK(kopt::profile::config_index_of_range("config_12") == 12);
  CHECK(kopt::profile::config_index_of_range("config_x M=1") == -1);
  CHECK(kopt::profile::config_index_of_range("config_1x") == -1);
  CHECK(kopt::profile::config_index_of_range("warmup") == -1);
}

TEST_CASE("program lines and ==PROF== lines precede the CSV; separators are read") {
  auto report = read_ncu_output(fixture("ncu/gpu_time_duration_h200.csv"), with_regex("fmak"));
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 1);
  const auto &config = report.configs[0];
  CHECK(config.config == 0);
  CHECK(config.launches == 5);
  REQUIRE(config.run_ns.size() == 5);
  double sum = 0;
  for (double ns : config.run_ns) {
    sum += ns;
  }
  CHECK(sum == doctest::Approx(config.total_ns));
  CHECK(config.mean_ns() == doctest::Approx(278214.4));
  CHECK(config.mean_us() == doctest::Approx(278.2144));
  CHECK(config.kernel_names() == std::vector<std::string>{"fmak(float *, int)"});
  CHECK(config.range.empty());
}

TEST_CASE("without ranges launches map to configs in order") {
  auto report = read_ncu_output(fixture("ncu/mixed_stdout_copy.csv"), with_regex("^copyk", 1));
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 5);
  CHECK(report.configs[0].mean_ns() == doctest::Approx(535264));
  CHECK(report.configs[4].config == 4);
  CHECK(report.configs[4].mean_ns() == doctest::Approx(534176));

  auto uneven = read_ncu_output(fixture("ncu/mixed_stdout_copy.csv"), with_regex("copyk", 2));
  CHECK_FALSE(uneven.profiled);
  CHECK(uneven.reason == fixture("ncu/mixed_stdout_copy.csv").string() +
                             ": 5 matching launches do not divide into 2 per config");
}

TEST_CASE("NVTX ranges map launches to configs (details page)") {
  auto report = read_ncu_output(fixture("ncu/ncu_nvtx_details.csv"), with_regex("scale_kernel"));
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 3);
  CHECK(report.configs[0].range == "config_0 M=65536");
  CHECK(report.configs[0].launches == 3);
  CHECK(report.configs[0].mean_ns() == doctest::Approx(7232.0 / 3));
  CHECK(report.configs[1].range == "config_1 M=1048576");
  CHECK(report.configs[1].mean_ns() == doctest::Approx(4960));
  CHECK(report.configs[2].config == 2);
  CHECK(report.configs[2].mean_ns() == doctest::Approx(144992.0 / 3));
  CHECK(report.configs[2].kernel_names() ==
        std::vector<std::string>{"scale_kernel(float *, int, float)"});
  CHECK(report.find(1) == &report.configs[1]);
  CHECK(report.find(7) == nullptr);
}

TEST_CASE("NVTX ranges map launches to configs (raw page with a units row)") {
  auto report = read_ncu_output(fixture("ncu/ncu_nvtx_raw.csv"), with_regex("scale"));
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 3);
  CHECK(report.configs[0].mean_ns() == doctest::Approx(7424.0 / 3));
  CHECK(report.configs[1].mean_ns() == doctest::Approx(5056));
  CHECK(report.configs[2].mean_ns() == doctest::Approx(48533.0 + 1.0 / 3));
}

TEST_CASE("every launch in a timed run counts; kernels outside the regex are named") {
  // ncu_nvtx_details.csv with, per timed run, helper_work before scale_kernel in config_0 and a
  // second scale_kernel on stream 13 in config_1.
  ProfileOptions options = with_regex("scale_kernel");
  options.runs_per_config = 3;
  auto report = read_ncu_output(fixture("ncu/ncu_nvtx_attribution.csv"), options);
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 3);

  const auto &other_kernel = report.configs[0];
  CHECK(other_kernel.launches == 6);
  CHECK(other_kernel.run_ns == std::vector<double>{97344 + 2656, 97344 + 2176, 97344 + 2400});
  CHECK(other_kernel.mean_ns() == doctest::Approx(97344 + 7232.0 / 3));
  REQUIRE(other_kernel.outside_regex().size() == 1);
  CHECK(other_kernel.outside_regex()[0].kernel == "helper_work(float *, int)");
  CHECK(other_kernel.outside_regex()[0].launches == 3);
  CHECK(other_kernel.outside_regex()[0].ns == 3 * 97344);

  const auto &two_streams = report.configs[1];
  CHECK(two_streams.launches == 6);
  CHECK(two_streams.run_ns == std::vector<double>{5536 + 3104, 4704 + 2880, 4640 + 2912});
  CHECK(two_streams.outside_regex().empty());

  CHECK(report.configs[2].run_ns == std::vector<double>{49216, 47808, 47968});

  options.runs_per_config = 4;
  auto uneven = read_ncu_output(fixture("ncu/ncu_nvtx_attribution.csv"), options);
  CHECK_FALSE(uneven.profiled);
  CHECK(uneven.reason == fixture("ncu/ncu_nvtx_attribution.csv").string() +
                             ": config_0: 6 launches do not divide into 4 timed runs");
}

TEST_CASE("a config whose timed runs hold no kernel matching the regex says what they hold") {
  auto report =
      read_ncu_output(fixture("ncu/ncu_nvtx_attribution.csv"), with_regex("scale_kernel|helper"));
  REQUIRE(report.profiled);
  auto none = read_ncu_output(fixture("ncu/ncu_nvtx_attribution.csv"), with_regex("helper"));
  CHECK_FALSE(none.profiled);
  CHECK(none.reason == fixture("ncu/ncu_nvtx_attribution.csv").string() +
                           ": config_1: no launch of a kernel matching 'helper' in its timed runs "
                           "(kernels: scale_kernel(float *, int, float))");
}

TEST_CASE("the harness's flush is known by its exact name, however a profiler spells it") {
  using kopt::profile::is_harness_flush;
  CHECK_FALSE(is_harness_flush("kopt_l2_flush_read(float *, int)")); // anyone's may be
  CHECK(is_harness_flush("void kopt::harness::cuda::kopt_l2_flush_read<0>(const uint4 *, "
                         "unsigned long, unsigned int *)"));
  CHECK(is_harness_flush("void kopt::harness::hip::kopt_l2_flush_read<0>(uint4 const*, unsigned "
                         "long, unsigned int*)"));
  CHECK_FALSE(is_harness_flush("my_kopt_l2_flush_read"));
  CHECK_FALSE(is_harness_flush("void evil::kopt_l2_flush_read<0>(float*)"));
  CHECK_FALSE(is_harness_flush("kopt_l2_flush_read_v2(float*)"));
}

TEST_CASE("in a trace, a timed run ends at the harness's end mark: its check is not the run") {
  using kopt::profile::KernelLaunch;
  const std::string flush = "void kopt::harness::hip::kopt_l2_flush_read<0>(uint4 const*, "
                            "unsigned long, unsigned int*)";
  const std::string end = "void kopt::harness::hip::kopt_timed_end<0>()";
  const std::string range = "config_0 M=64";
  // Warm-up, then two timed runs, each followed by the check's reference and compare kernels
  // and the next run's fill and poison.
  std::vector<KernelLaunch> launches = {{"gemm_64x64", 900, range},
                                        {"fill_inputs", 50, range},
                                        {"__amd_rocclr_fillBuffer", 5, range},
                                        {flush, 400, range},
                                        {"gemm_64x64", 1000, range},
                                        {"helper_work", 100, range},
                                        {end, 1, range},
                                        {"reference_gemm", 90000, range},
                                        {"kopt_compare", 70, range},
                                        {"fill_inputs", 50, range},
                                        {"__amd_rocclr_fillBuffer", 5, range},
                                        {flush, 400, range},
                                        {"gemm_64x64", 1010, range},
                                        {end, 1, range},
                                        {"reference_gemm", 90000, range}};
  kopt::profile::ProfileOptions options;
  options.kernel_regex = "gemm_";
  options.runs_per_config = 2;
  options.flush = kopt::profile::HarnessFlush::inside;
  auto report = kopt::profile::attribute_launches(launches, true, options, "trace");
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 1);
  CHECK(report.configs[0].run_ns == std::vector<double>{1100, 1010});
  // A candidate's own end mark (a second one in a run) leaves the trace unprofiled.
  launches.insert(launches.begin() + 5, {end, 1, range});
  auto forged = kopt::profile::attribute_launches(launches, true, options, "trace");
  CHECK_FALSE(forged.profiled);
  CHECK(forged.reason == "trace: config_0: timed run 1 has 2 launches of the harness's end mark "
                         "(kopt_timed_end), expected 1");
}

TEST_CASE("only launches whose kernel name matches the regex count") {
  auto report = read_ncu_output(fixture("ncu/ncu_nvtx_details.csv"), with_regex("gemm"));
  CHECK_FALSE(report.profiled);
  CHECK(report.reason == fixture("ncu/ncu_nvtx_details.csv").string() +
                             ": no launch of a kernel matching 'gemm' (kernels seen: "
                             "scale_kernel(float *, int, float))");
}

TEST_CASE("\"No kernels were profiled\" makes the measurement unprofiled") {
  SUBCASE("no kernel matched -k") {
    auto path = fixture("ncu/ncu_no_match.csv");
    auto report = read_ncu_output(path, with_regex("no_such_kernel"));
    CHECK_FALSE(report.profiled);
    CHECK(report.configs.empty());
    CHECK(report.available_kernels == std::vector<std::string>{"scale_kernel"});
    CHECK(report.reason ==
          path.string() + ": ncu: No kernels were profiled (available kernels: scale_kernel)");
  }
  SUBCASE("the NVTX filter matched nothing") {
    auto path = fixture("ncu/ncu_nvtx_include.csv");
    auto report = read_ncu_output(path, with_regex(".*"));
    CHECK_FALSE(report.profiled);
    CHECK(report.available_kernels.empty());
    CHECK(report.reason == path.string() + ": ncu: No kernels were profiled");
  }
}

TEST_CASE("malformed ncu output names the file, the line and the column") {
  kopt::test::TempDir temp;
  std::string good = kopt::util::read_file(fixture("ncu/gpu_time_duration_h200.csv"));

  SUBCASE("truncated CSV") {
    auto path = temp.write("cut.csv", good.substr(0, good.size() - 40));
    REQUIRE_THROWS_WITH(
        read_ncu_output(path, with_regex("fmak")),
        (path.string() + ":18: expected 15 fields as in the header, got 13").c_str());
  }
  SUBCASE("missing column") {
    auto path = temp.write("nounit.csv", "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n"
                                         "\"0\",\"k\",\"gpu__time_duration.sum\",\"1\"\n");
    REQUIRE_THROWS_WITH(read_ncu_output(path, with_regex("k")),
                        (path.string() + ": missing column 'Metric Unit' (columns: ID, Kernel "
                                         "Name, Metric Name, Metric Value)")
                            .c_str());
  }
  SUBCASE("not a number") {
    auto path = temp.write(
        "nan.csv",
        "noise\n\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
        "\"0\",\"k\",\"gpu__time_duration.sum\",\"ns\",\"n/a\"\n");
    REQUIRE_THROWS_WITH(read_ncu_output(path, with_regex("k")),
                        (path.string() + ":3: Metric Value: expected a number, got 'n/a'").c_str());
  }
  SUBCASE("unknown unit") {
    auto path = temp.write(
        "unit.csv", "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
                    "\"0\",\"k\",\"gpu__time_duration.sum\",\"cycle\",\"12\"\n");
    REQUIRE_THROWS_WITH(
        read_ncu_output(path, with_regex("k")),
        (path.string() + ":2: Metric Unit: expected a time unit (ns, us, ms, s), got 'cycle'")
            .c_str());
  }
  SUBCASE("no CSV at all") {
    auto path = temp.write("none.csv", "==PROF== Connected to process 1\nhello\n");
    REQUIRE_THROWS_WITH(
        read_ncu_output(path, with_regex("k")),
        (path.string() + ": no ncu CSV header (\"ID\",...,\"Kernel Name\",...) in the output")
            .c_str());
  }
}

TEST_SUITE_END();
