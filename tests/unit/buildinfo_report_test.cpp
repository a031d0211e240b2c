#include "buildinfo/build_report.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

namespace bi = kopt::buildinfo;

namespace {

// Two runs of a build with one candidate of family "fam": a cold run, then an edit of one
// instance (a.cpp) that recompiles it and relinks. The link has two outputs (one command).
const char *kTwoRuns = "# ninja log v5\n"
                       "3\t400\t0\tCMakeFiles/other.dir/x.cpp.o\t8b8b\n"
                       "5\t700\t102\tCMakeFiles/candidate_01.dir/harness.cpp.o\t5e6f\n"
                       "0\t900\t100\tCMakeFiles/candidate_01.dir/kopt/fam/gen/01/instances/"
                       "a.cpp.o\t1a2b\n"
                       "2\t1500\t101\tCMakeFiles/candidate_01.dir/kopt/fam/gen/01/instances/"
                       "b.cpp.o\t3c4d\n"
                       "1500\t1600\t103\tkopt/fam/bin/candidate_01\t7a7a\n"
                       "1500\t1600\t103\tkopt/fam/bin/candidate_01.map\t7a7a\n"
                       "10\t1010\t200\tCMakeFiles/candidate_01.dir/kopt/fam/gen/01/instances/"
                       "a.cpp.o\t9c9c\n"
                       "1010\t1110\t201\tkopt/fam/bin/candidate_01\t7a7a\n"
                       "1010\t1110\t201\tkopt/fam/bin/candidate_01.map\t7a7a\n";

bi::CacheResult no_cache(const std::string &) { return bi::CacheResult::unknown; }

} // namespace

TEST_SUITE_BEGIN("buildinfo::build_report");

TEST_CASE(".ninja_log versions 5 to 7 parse; others are refused with file:line") {
  for (int version : {5, 6, 7}) {
    CAPTURE(version);
    std::string text = "# ninja log v" + std::to_string(version) +
                       "\n0\t12\t1700000000123456789\tout.o\tdeadbeefdeadbeef\n";
    bi::NinjaLog log = bi::parse_ninja_log(text, ".ninja_log");
    CHECK(log.version == version);
    REQUIRE(log.entries.size() == 1);
    CHECK(log.entries[0].end_ms == 12);
    CHECK(log.entries[0].mtime == 1700000000123456789);
    CHECK(log.entries[0].output == "out.o");
    CHECK(log.entries[0].line == 2);
  }
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("# ninja log v4\n", "b/.ninja_log"),
                       "b/.ninja_log:1: version: expected a ninja log version from 5 to 7, got 4",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("ninja\n", "L"),
                       "L:1: header: expected '# ninja log v<N>', got 'ninja'", kopt::Error);
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("# ninja log v5\n1\t2\t3\tout.o\n", "L"),
                       "L:2: expected 5 tab-separated fields (start, end, mtime, output, hash), "
                       "got 4",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("# ninja log v6\n1\tx\t3\tout.o\tab\n", "L"),
                       "L:2: end: expected an integer, got 'x'", kopt::Error);
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("# ninja log v6\n9\t2\t3\tout.o\tab\n", "L"),
                       "L:2: end: 2 is before start 9", kopt::Error);
  CHECK_THROWS_WITH_AS(bi::parse_ninja_log("# ninja log v7\n1\t2\t3\tout.o\tzz\n", "L"),
                       "L:2: hash: expected a hexadecimal command hash, got 'zz'", kopt::Error);
}

TEST_CASE("the newest run is isolated; multi-output commands group by hash") {
  bi::NinjaLog log = bi::parse_ninja_log(kTwoRuns, "L");
  std::vector<bi::LogEntry> run = bi::latest_run(log);
  REQUIRE(run.size() == 3);
  CHECK(run[0].start_ms == 10);
  std::vector<bi::LoggedCommand> commands = bi::group_commands(run);
  REQUIRE(commands.size() == 2);
  CHECK(commands[1].outputs ==
        std::vector<std::string>{"kopt/fam/bin/candidate_01", "kopt/fam/bin/candidate_01.map"});

  SUBCASE("a repeated output starts a run even when the end time does not go back") {
    std::string text = "# ninja log v6\n0\t100\t0\ta.o\t1\n0\t150\t0\tb.o\t2\n"
                       "0\t2000\t0\ta.o\t1\n";
    auto newest = bi::latest_run(bi::parse_ninja_log(text, "L"));
    REQUIRE(newest.size() == 1);
    CHECK(newest[0].end_ms == 2000);
  }
  SUBCASE("restat lines (mtime 0, an unchanged output) stay in their run") {
    std::string text = "# ninja log v5\n0\t100\t0\tgen.stamp\taa\n100\t300\t5\ta.o\tbb\n"
                       "0\t10\t0\tgen.stamp\taa\n";
    auto newest = bi::latest_run(bi::parse_ninja_log(text, "L"));
    REQUIRE(newest.size() == 1);
    CHECK(newest[0].output == "gen.stamp");
  }
  SUBCASE("an empty log has an empty newest run") {
    CHECK(bi::latest_run(bi::parse_ninja_log("# ninja log v5\n", "L")).empty());
  }
}

TEST_CASE("the report: TU times, efficiency, families, slowest first") {
  bi::NinjaLog log = bi::parse_ninja_log(kTwoRuns, "L");
  SUBCASE("the newest run: one TU and the link") {
    bi::BuildReport report =
        bi::make_report(log, 2, [](const std::string &) { return bi::CacheResult::miss; });
    CHECK(report.commands == 2);
    REQUIRE(report.tus.size() == 1);
    CHECK(report.tus[0].instance == "a");
    CHECK(report.tus[0].candidate == "01");
    CHECK(report.tus[0].family == "fam");
    CHECK(report.tus[0].seconds == doctest::Approx(1.0));
    CHECK(report.wall_s == doctest::Approx(1.1));
    CHECK(report.efficiency == doctest::Approx(1.0 / (1.1 * 2)));
    CHECK(report.misses == 1);
    REQUIRE(report.families.size() == 1);
    CHECK(report.families[0].wall_s == doctest::Approx(1.1));
  }
  SUBCASE("the whole first run, when it is the only one") {
    std::string first(kTwoRuns, std::string(kTwoRuns).find("10\t1010"));
    bi::BuildReport report = bi::make_report(bi::parse_ninja_log(first, "L"), 4, no_cache);
    REQUIRE(report.tus.size() == 4);
    CHECK(report.tus[0].instance == "b"); // 1.498 s, the slowest
    CHECK(report.tus[1].instance == "a");
    CHECK(report.tus[2].object == "CMakeFiles/candidate_01.dir/harness.cpp.o");
    CHECK(report.tus[2].family == "fam"); // the harness belongs to its candidate's family
    CHECK(report.tus[3].family == "");
    CHECK(report.tu_sum_s == doctest::Approx(0.9 + 1.498 + 0.695 + 0.397));
    CHECK(report.wall_s == doctest::Approx(1.6));
    CHECK(report.efficiency == doctest::Approx((0.9 + 1.498 + 0.695 + 0.397) / (1.6 * 4)));
    REQUIRE(report.families.size() == 1);
    CHECK(report.families[0].tus == 3);
    CHECK(report.families[0].compile_s == doctest::Approx(0.9 + 1.498 + 0.695));

    nlohmann::json j = bi::to_json(report);
    CHECK(j["tus"].size() == 4);
    CHECK(j["tus"][0]["instance"] == "b");
    CHECK(j["ccache"]["hits"] == 0);
    CHECK(j["families"][0]["name"] == "fam");

    std::string text = bi::format_report(report, 2);
    CHECK(text.find("4 TUs, wall 1.6 s") != std::string::npos);
    CHECK(text.find("harness.cpp.o") == std::string::npos); // only the top 2 are listed

    bi::BudgetCheck within = bi::check_budget(report, "fam", 2, 2);
    CHECK(within.ok);
    bi::BudgetCheck over = bi::check_budget(report, "fam", 1, 1);
    CHECK_FALSE(over.ok);
    CHECK(over.message == "family fam: the newest build took 1.6 s, over its compile budget of "
                          "1 s (family.json compile_budget_s); slowest TUs:\n"
                          "  1.5 s  CMakeFiles/candidate_01.dir/kopt/fam/gen/01/instances/"
                          "b.cpp.o\n");
  }
  CHECK_THROWS_WITH_AS(bi::make_report(log, 0, no_cache),
                       "build-report: jobs: expected at least 1, got 0", kopt::Error);
}

TEST_CASE("ccache stats logs: hits, misses, pass-through") {
  CHECK(bi::parse_ccache_stats_log("# a.cpp\ndirect_cache_hit\nlocal_storage_hit\n") ==
        bi::CacheResult::direct_hit);
  CHECK(bi::parse_ccache_stats_log("# a.cpp\ndirect_cache_miss\npreprocessed_cache_hit\n") ==
        bi::CacheResult::preprocessed_hit);
  CHECK(bi::parse_ccache_stats_log("# a.cpp\ncache_miss\ndirect_cache_miss\n"
                                   "local_storage_write\npreprocessed_cache_miss\n") ==
        bi::CacheResult::miss);
  CHECK(bi::parse_ccache_stats_log("# a.cu\nunsupported_compiler_option\n") ==
        bi::CacheResult::uncacheable);
  CHECK(bi::parse_ccache_stats_log("") == bi::CacheResult::unknown);
}

TEST_CASE("read_build_report reads the log and each object's stats log") {
  kopt::test::TempDir tmp;
  tmp.write(".ninja_log", "# ninja log v6\n0\t40\t1\tCMakeFiles/candidate_02.dir/h.cpp.o\tcd\n"
                          "0\t300\t1\tCMakeFiles/candidate_02.dir/kopt/f/gen/02/instances/k.cpp.o"
                          "\tab\n");
  tmp.write("CMakeFiles/candidate_02.dir/kopt/f/gen/02/instances/k.cpp.o", "obj");
  tmp.write("CMakeFiles/candidate_02.dir/kopt/f/gen/02/instances/k.cpp.o.kopt-ccache",
            "# k.cpp\ndirect_cache_hit\n");
  bi::BuildReport report = bi::read_build_report(tmp.path(), 1);
  REQUIRE(report.tus.size() == 2);
  CHECK(report.tus[0].cache == bi::CacheResult::direct_hit);
  CHECK(report.tus[1].cache == bi::CacheResult::unknown);
  CHECK(report.hits == 1);
  CHECK(report.direct_hits == 1);
  CHECK(report.families[0].hits == 1);
  kopt::test::TempDir empty;
  CHECK_THROWS_WITH_AS(bi::read_build_report(empty.path(), 1),
                       ((empty.path() / ".ninja_log").string() +
                        ": no ninja log: build the folder with the Ninja generator first")
                           .c_str(),
                       kopt::Error);
}

TEST_SUITE_END();
