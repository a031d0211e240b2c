#include "heuristic/fit.hpp"

#include "temp_dir.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace kopt::heuristic;
using kopt::test::fixture;

namespace {

const std::string kHeader =
    "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n";

// An aiter row: the columns a winners-only table carries, tflops and bw made up.
std::string row(const std::string &group, int64_t m, int64_t n, int64_t k, const std::string &name,
                double us, int split_k = 0) {
  return group + "," + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) +
         ",ck,3," + std::to_string(split_k) + "," + std::to_string(us) + "," + name +
         ",1.5,100,0.0\n";
}

// Two (N,K) pairs where "small" wins up to M=64 and "big" above.
std::string winners_table(const std::string &group = "gfx942,304") {
  std::string text = kHeader;
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1280, 5120}, {5120, 1024}}) {
    for (int64_t m : {16, 32, 64, 128, 256, 512}) {
      text += row(group, m, n, k, m <= 64 ? "small" : "big", 10.0 + static_cast<double>(m));
    }
  }
  return text;
}

ReadOptions with_group(const std::string &group) {
  ReadOptions options;
  options.group = group;
  return options;
}

std::string error_of(const std::string &text, const ReadOptions &options = {}) {
  try {
    parse_results(kopt::util::parse_csv(text, "tuned.csv"), options);
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "no error";
}

Results winners(const std::string &text, const ReadOptions &options = {}) {
  return parse_results(kopt::util::parse_csv(text, "tuned.csv"), options);
}

} // namespace

TEST_SUITE_BEGIN("heuristic::winners");

TEST_CASE("an aiter tuned table is read as it is: one group, the winner per shape") {
  Results r = winners(winners_table());
  CHECK(r.winners_only);
  CHECK(r.table_group == "gfx942,304");
  CHECK(r.columns == std::vector<std::string>{"M", "N", "K"});
  REQUIRE(r.shapes.size() == 12);
  CHECK(r.shapes[0].dims == std::vector<int64_t>{16, 1280, 5120});
  CHECK(r.shapes[0].tuned == "small");
  CHECK(r.shapes[0].line == 2);
  CHECK(r.shapes[0].kernels.size() == 1);
  CHECK(r.kernels() == std::vector<std::string>{"big", "small"});
  CHECK(most_frequent(r) == "big"); // 6 each: the first by name
  CHECK(all_groups(r) == std::vector<std::string>{"N=1280,K=5120", "N=5120,K=1024"});

  SUBCASE("old tables without gfx: the group is cu_num alone") {
    std::string text = "cu_num,M,N,K,us,kernelName\n80,16,256,512,3.5,a\n80,32,256,512,4,b\n";
    Results old = winners(text);
    CHECK(old.table_group == "80");
    CHECK(old.shapes.size() == 2);
  }
  SUBCASE("kernelName+splitK labels") {
    std::string text = kHeader + row("gfx942,304", 16, 256, 512, "a", 3, 2) +
                       row("gfx942,304", 32, 256, 512, "a", 4, 0);
    ReadOptions options;
    options.label = KernelLabel::name_and_split_k;
    Results split = winners(text, options);
    CHECK(split.shapes[0].tuned == "a+splitK=2");
    CHECK(split.shapes[1].tuned == "a+splitK=0");
    CHECK(instance_of(split.shapes[0].tuned) == "a");
    CHECK(winners(text).shapes[0].tuned == "a");
  }
}

TEST_CASE("(gfx, cu_num) groups: one heuristic each, chosen with --group") {
  std::string two = winners_table() + row("gfx950,256", 16, 1280, 5120, "big", 9);
  CHECK(error_of(two) == "tuned.csv: rows of 2 (gfx, cu_num) groups, each its own heuristic: "
                         "choose one with --group (groups: gfx942,304 (12 rows); gfx950,256 (1 "
                         "rows))");
  CHECK(winners(two, with_group("gfx950, 256")).shapes.size() == 1);
  CHECK(winners(two, with_group("gfx942,304")).shapes.size() == 12);
  CHECK(error_of(two, with_group("gfx942,80")) ==
        "--group: 'gfx942,80' is not a (gfx, cu_num) group of tuned.csv (groups: gfx942,304 (12 "
        "rows); gfx950,256 (1 rows))");
  CHECK(error_of("M,N,K,kernel,us,err\n1,2,3,a,4,0\n", with_group("gfx942,304")) ==
        "--group: tuned.csv is not an aiter tuned table (no kernelName column): it has no "
        "(gfx, cu_num) groups");
}

TEST_CASE("bad rows of a winners-only table name file:line and the column") {
  const std::string g = "gfx942,304";
  SUBCASE("a missing column") {
    CHECK(error_of("gfx,cu_num,M,N,K,kernelName\ngfx942,304,16,256,512,a\n") ==
          "tuned.csv: missing column 'us' (columns: gfx, cu_num, M, N, K, kernelName)");
    CHECK(error_of("gfx,cu_num,M,K,us,kernelName\ngfx942,304,16,512,3,a\n") ==
          "tuned.csv: missing column 'N' (columns: gfx, cu_num, M, K, us, kernelName)");
    ReadOptions split;
    split.label = KernelLabel::name_and_split_k;
    CHECK(error_of("gfx,cu_num,M,N,K,us,kernelName\ngfx942,304,16,256,512,3,a\n", split) ==
          "tuned.csv: missing column 'splitK' (columns: gfx, cu_num, M, N, K, us, kernelName)");
  }
  SUBCASE("duplicate shapes: another winner is an error, the same winner keeps the faster row") {
    std::string text = kHeader + row(g, 16, 256, 512, "a", 3) + row(g, 32, 256, 512, "a", 4) +
                       row(g, 16, 256, 512, "b", 2);
    CHECK(error_of(text) == "tuned.csv:4: duplicate shape M=16,N=256,K=512 with another winner: "
                            "'b' here, 'a' on line 2 (a tuned table names one winner per shape)");
    Results same = winners(kHeader + row(g, 16, 256, 512, "a", 3) + row(g, 16, 256, 512, "a", 2));
    REQUIRE(same.shapes.size() == 1);
    CHECK(same.shapes[0].kernels.at("a").us == 2);
    CHECK(same.shapes[0].kernels.at("a").line == 3);
  }
  SUBCASE("bad values") {
    CHECK(error_of(kHeader + row(g, 16, 256, 512, "a", 3) +
                   "gfx942,304,x,256,512,ck,3,0,4,a,1,1,0\n") ==
          "tuned.csv:3: M: expected an integer, got 'x'");
    CHECK(error_of(kHeader + "gfx942,3o4,16,256,512,ck,3,0,4,a,1,1,0\n") ==
          "tuned.csv:2: cu_num: expected an integer, got '3o4'");
    CHECK(error_of(kHeader + row(g, 16, 256, 512, "a", 0)) ==
          "tuned.csv:2: us: expected a time > 0, got '0.000000'");
    CHECK(error_of(kHeader + row(g, 16, 256, 512, " ", 3)) ==
          "tuned.csv:2: kernelName: expected a kernel name, got ''");
  }
  SUBCASE("a kernelName absent from the family") {
    Results r = winners(kHeader + row(g, 16, 256, 512, "a", 3) + row(g, 32, 256, 512, "zz", 4) +
                        row(g, 64, 256, 512, "yy", 4));
    CHECK_THROWS_WITH_AS(check_instances(r, {"a", "b"}, "tiny"),
                         "tuned.csv:3: kernelName: 'zz' is not an instance of family 'tiny'",
                         kopt::Error);
    CHECK_NOTHROW(check_instances(r, {"a", "zz", "yy"}, "tiny"));
    Results full = parse_results(
        kopt::util::parse_csv("M,N,K,kernel,us,err\n1,2,3,a,4,0\n1,2,3,q,5,0\n", "full.csv"));
    CHECK_THROWS_WITH_AS(check_instances(full, {"a"}, "tiny"),
                         "full.csv:3: kernel: 'q' is not an instance of family 'tiny'",
                         kopt::Error);
  }
}

TEST_CASE("winners only: the fit classifies, eval reports match rates and no slowdown") {
  Results r = winners(winners_table());
  RuleList rules = fit(r, FitOptions{});
  REQUIRE(rules.rules.size() == 2);
  Evaluation e = evaluate_rules(r, rules, "big", 0.01);
  CHECK(e.winners_only);
  CHECK(e.total.matched == 12);
  CHECK(e.total.baseline_matched == 6);
  CHECK(e.total.default_matched == 6);
  CHECK(e.baseline == "big");
  std::string text = to_text(e);
  CHECK(text.find("shapes: 12 of tuned.csv (gfx942,304), winners only") == 0);
  CHECK(text.find("match vs tuned: 100% (12/12)\n") != std::string::npos);
  CHECK(text.find("most frequent kernel alone (big): 50% (6/12); misses 0 vs 6\n") !=
        std::string::npos);
  CHECK(text.find("geomean slowdown vs tuned: not measured") != std::string::npos);
  CHECK(text.find("worst slowdown vs tuned: not measured") != std::string::npos);
  CHECK(text.find("1x") == std::string::npos);
  nlohmann::json j = to_json(e);
  CHECK(j["geomean_slowdown"].is_null());
  CHECK(j["worst_slowdown"].is_null());
  CHECK(j["winners_only"] == true);
  CHECK(j["baseline_match"] == doctest::Approx(0.5));

  SUBCASE("a miss has no slowdown: the pick was never timed there") {
    RuleList one;
    one.rules.push_back({{}, "big"});
    Evaluation miss = evaluate_rules(r, one, "big", 0.01);
    CHECK(miss.total.matched == 6);
    CHECK(miss.total.misses.size() == 6);
    CHECK(miss.total.misses[0].slowdown == 0);
    CHECK(to_text(miss, 1).find("| small | no timing |") != std::string::npos);
  }
}

TEST_CASE("holdout: what a group is, and a seeded split anyone can redo") {
  Results r = winners(winners_table());
  CHECK_THROWS_WITH_AS(parse_holdout(r, "1280"),
                       "--holdout: '1280': a group of tuned.csv (gfx942,304) is 2 values, N,K "
                       "(the config columns other than M), got 1",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(parse_holdout(r, "1280,1024"),
                       "--holdout: N=1280,K=1024 is not a group of tuned.csv (gfx942,304) "
                       "(groups: N=1280,K=5120; N=5120,K=1024)",
                       kopt::Error);
  Evaluation e = evaluate_holdout(r, parse_holdout(r, "5120,1024"), FitOptions{}, "big", 0.01);
  CHECK(e.winners_only);
  CHECK(e.held_out == std::vector<std::string>{"N=5120,K=1024"});
  CHECK(e.total.shapes == 6);

  // 12 groups N=1..12: a 30% split holds out round(3.6) = 4 of them, the same ones every time.
  std::string text = kHeader;
  for (int64_t n = 1; n <= 12; ++n) {
    text += row("gfx942,304", 16, n, 512, "a", 1) + row("gfx942,304", 32, n, 512, "b", 1);
  }
  Results twelve = winners(text);
  std::vector<std::string> held = seeded_groups(twelve, 0.3, 1);
  CHECK(held.size() == 4);
  CHECK(held == seeded_groups(twelve, 0.3, 1));
  CHECK(held == std::vector<std::string>{"N=12,K=512", "N=2,K=512", "N=3,K=512", "N=8,K=512"});
  CHECK(seeded_groups(twelve, 0.3, 2) != held);
  CHECK(seeded_groups(twelve, 0.01, 1).size() == 1);  // at least one
  CHECK(seeded_groups(twelve, 0.99, 1).size() == 11); // one is left to fit on
  CHECK_THROWS_WITH_AS(seeded_groups(twelve, 1, 1),
                       "--holdout-seeded: expected a fraction of the groups between 0 and 1, "
                       "got 1",
                       kopt::Error);
  Results one = winners(kHeader + row("gfx942,304", 16, 1, 512, "a", 1));
  CHECK_THROWS_WITH_AS(seeded_groups(one, 0.3, 1),
                       "--holdout-seeded: tuned.csv (gfx942,304) has 1 group (N,K): nothing is "
                       "left to fit on when it is held out",
                       kopt::Error);
}

TEST_CASE("aiter's own table: the fit reaches 99% in sample, and the emitted C++ agrees") {
  Results r = read_results(fixture("aiter/a8w8_blockscale_tuned_gemm_qwen3_vl_32b.csv"));
  REQUIRE(r.shapes.size() == 8172);
  CHECK(r.table_group == "gfx942,304");
  CHECK(all_groups(r).size() == 12);
  FitOptions options;
  options.max_arms = 16;
  const std::vector<std::string> tiles = {"16x64",  "32x64",   "64x64",  "16x128", "32x128",
                                          "64x128", "128x128", "128x64", "64x256"};
  options.features = {"M", "N", "K", "M*N"};
  for (const auto &t : tiles) {
    options.features.push_back("fill(" + t + ",304)");
    options.features.push_back("waves(" + t + ",304)");
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    for (size_t j = i + 1; j < tiles.size(); ++j) {
      options.features.push_back("waves(" + tiles[i] + ",304)/waves(" + tiles[j] + ",304)");
    }
  }
  RuleList rules = fit(r, options);
  Evaluation e = evaluate_rules(r, rules, most_frequent(r), 0);
  CHECK(e.total.matched >= 8091); // 99.0%
  CHECK(e.total.baseline_matched == 7833);

  if (kopt::util::find_program("g++").empty()) {
    return;
  }
  // The emitted dispatch picks what evaluate() picks on every shape of the table.
  kopt::test::TempDir tmp;
  std::string shapes, expected;
  for (const auto &s : r.shapes) {
    shapes += "{" + std::to_string(s.dims[0]) + "," + std::to_string(s.dims[1]) + "," +
              std::to_string(s.dims[2]) + "},";
    expected += evaluate(rules, r.columns, s.dims) + "\n";
  }
  tmp.write("main.cpp",
            "#include <cstdint>\n#include <cstdio>\n"
            "static const char* pick(const std::int64_t* dims) {\n" +
                emit_cpp(rules, r.columns) +
                "}\nint main() {\n  static const std::int64_t shapes[][3] = {" + shapes +
                "};\n  for (const auto& s : shapes) std::printf(\"%s\\n\", pick(s));\n}\n");
  kopt::util::RealProcessRunner runner;
  auto built = runner.run({{"g++", "-std=c++17", "-O1", (tmp.path() / "main.cpp").string(), "-o",
                            (tmp.path() / "pick").string()},
                           {},
                           {},
                           300});
  INFO(built.err);
  REQUIRE(built.ok());
  auto ran = runner.run({{(tmp.path() / "pick").string()}, {}, {}, 60});
  CHECK(ran.out == expected);
}

TEST_SUITE_END();
