#include "profile/analyze.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>
#include <sstream>

using kopt::test::fixture;
using kopt::test::TempDir;
namespace fs = std::filesystem;
namespace pr = kopt::profile;

namespace {

// The four configs the fixture's launches ran (config_0 .. config_3 in their NVTX ranges), one
// class each.
pr::Representatives four_classes() {
  pr::Representatives chosen;
  chosen.configs.header = {"M", "N", "K"};
  chosen.configs.rows = {{"1", "5120", "25600"},
                         {"64", "5120", "25600"},
                         {"256", "5120", "25600"},
                         {"4096", "5120", "8192"}};
  chosen.rows = {0, 1, 2, 3};
  chosen.classes = {"tiny", "small", "medium", "large"};
  return chosen;
}

} // namespace

TEST_SUITE_BEGIN("profile::analyze");

TEST_CASE("representatives: each class's middle row, classes in file order") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::util::CsvTable configs;
  configs.header = {"M", "N", "K"};
  configs.rows = {{"16", "64", "128"}, {"100", "64", "128"}, {"32", "64", "128"},
                  {"48", "64", "128"}, {"200", "64", "128"}, {"1000", "64", "128"}};
  pr::Representatives chosen = pr::representatives(family, configs);
  // M<64: rows 0, 2, 3 -> row 2; 64<=M<512: rows 1, 4 -> row 4; M>=512: row 5.
  CHECK(chosen.rows == std::vector<size_t>{2, 4, 5});
  REQUIRE(chosen.classes.size() == 3);
  CHECK(chosen.classes[0] == "M<64");
  CHECK(chosen.configs.rows.size() == 6);
}

TEST_CASE("the ncu command: details page, the four sections, the stall metrics, the kernels") {
  std::vector<std::string> argv = pr::ncu_analyze_command("gemm_.*", {"bin/candidate_01", "-x"});
  REQUIRE(argv.size() == 21);
  CHECK(argv[0] == "ncu");
  CHECK(argv[3] == "details");
  CHECK(argv[17] == "-k");
  CHECK(argv[18] == "regex:gemm_.*");
  CHECK(argv[19] == "bin/candidate_01");
  CHECK(argv[20] == "-x");
}

TEST_CASE("real details page: the longest launch names the top limiter, the others vote") {
  auto path = fixture("ncu/ncu_details_sections_h200.csv");
  auto launches = pr::parse_ncu_details(kopt::util::read_file(path), path.string());
  REQUIRE(launches.size() == 4);
  int votes = 0;
  for (const auto &launch : launches) {
    votes += pr::judge_bottleneck(launch).limiter == "occupancy (registers)" ? 1 : 0;
  }
  pr::Analysis a = pr::analyze_launches(launches, four_classes(), "01", path.string(), "gemm");
  // The M=4096 launch runs 1,932,928 ns of the four's 2,910,656: its kernel is the hottest.
  CHECK(a.kernel == "void gemm_a8w8_blockscale<64, 128, 2, 2, 3>(Params)");
  CHECK(a.top_limiter == "occupancy (registers)");
  CHECK(a.headline == "top limiter: occupancy (registers) (longest class large; " +
                          std::to_string(votes) + " of 4 classes)");
  CHECK(a.report.find("  large (4096,5120,8192) void gemm_a8w8_blockscale<64, 128, 2, 2, "
                      "3>(Params): 1933 us, ") != std::string::npos);
  CHECK(a.report.find("  tiny (1,5120,25600) ") == 0);
  CHECK(a.measured.is_null());
  CHECK(a.json["candidate"] == "01");
  CHECK(a.json["top_limiter"] == "occupancy (registers)");
  CHECK(a.json["ncu_output"] == path.string());
  REQUIRE(a.json["classes"].size() == 4);
  CHECK(a.json["classes"][0]["class"] == "tiny");
  CHECK(a.json["classes"][3]["config_values"] == "4096,5120,8192");
  CHECK(a.json["classes"][0]["limiter"] == "occupancy (grid too small)");
}

TEST_CASE("a launch outside the representatives is shown as '?'") {
  auto path = fixture("ncu/ncu_details_sections_h200.csv");
  auto launches = pr::parse_ncu_details(kopt::util::read_file(path), path.string());
  pr::Representatives two = four_classes();
  two.rows = {0, 1};
  two.classes = {"tiny", "small"};
  pr::Analysis a = pr::analyze_launches(launches, two, "01", "saved.csv", "gemm");
  CHECK(a.json["classes"][3]["class"] == "?");
  CHECK(a.json["classes"][3]["config_values"] == "?");
  CHECK(a.headline.find("(longest class ?; ") != std::string::npos);
}

TEST_CASE("no matching launch is an error naming the output and the regex") {
  CHECK_THROWS_WITH_AS(pr::analyze_launches({}, four_classes(), "01", "out.csv", "gemm_.*"),
                       "out.csv: ncu reported no launch of a kernel matching 'gemm_.*'",
                       kopt::Error);
}

TEST_CASE("a saved output cut mid-row is refused at its line") {
  auto path = fixture("ncu/ncu_details_sections_h200.csv");
  std::vector<std::string> lines = kopt::util::split(kopt::util::read_file(path), '\n');
  std::string head;
  for (size_t i = 0; i < 6; ++i) {
    head += lines[i] + "\n";
  }
  const std::string &row = lines[6]; // line 7: launch 0's first metric row
  SUBCASE("inside a quoted field") {
    std::string cut = head + row.substr(0, row.find("M=1 N") + 5);
    CHECK_THROWS_WITH_AS(
        pr::parse_ncu_details(cut, "saved.csv"),
        "saved.csv:7: the row ends inside a quoted field (the file was cut mid-row?)", kopt::Error);
  }
  SUBCASE("between fields, before the metric's value") {
    std::string cut = head + row.substr(0, row.find("(Params)\"") + 9) + "\n";
    CHECK_THROWS_WITH_AS(pr::parse_ncu_details(cut, "saved.csv"),
                         "saved.csv:7: 7 fields, but the Metric Value column is field 17 (the file "
                         "was cut mid-row?)",
                         kopt::Error);
  }
  SUBCASE("whole rows still read") {
    CHECK(pr::parse_ncu_details(head + row + "\n", "saved.csv").size() == 1);
  }
}

TEST_CASE("a metrics CSV that is no details page is refused, naming the file") {
  // --metrics gpu__time_duration.sum has the details layout but no SpeedOfLight section: every
  // launch would read as 0 us.
  auto path = fixture("ncu/ncu_nvtx_details.csv");
  auto launches = pr::parse_ncu_details(kopt::util::read_file(path), path.string());
  REQUIRE(!launches.empty());
  CHECK_THROWS_WITH_AS(pr::analyze_launches(launches, four_classes(), "01", path.string(), ".*"),
                       (path.string() +
                        ": launch 0 (scale_kernel(float *, int, float)) has no 'GPU Speed Of "
                        "Light Throughput' Duration: not ncu's details page with the SpeedOfLight "
                        "section (ncu --csv --page details --section SpeedOfLight)")
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("analyze refuses a family that is not cuda") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::spec::Layout layout(tmp.path() / "state");
  kopt::util::RealProcessRunner runner;
  std::ostringstream err;
  CHECK_THROWS_WITH_AS(
      pr::analyze(
          family, layout, {"00", "", ""}, runner, [] { return pr::RunSetup{}; }, err),
      (family.file.string() + ": backend: kopt analyze profiles cuda families with ncu; '" +
       kopt::spec::to_string(family.backend) + "' has no profiler report yet")
          .c_str(),
      kopt::Error);
}

TEST_SUITE_END();
