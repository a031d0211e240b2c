#include "heuristic/fit.hpp"
#include "tune/tune.hpp"

#include "temp_dir.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace kopt::heuristic;
using kopt::test::fixture;

namespace {

// The kernel that wins a shape in the synthetic tables: 5 arms over K, M and M*N, where one
// kernel ("a") is everywhere the runner-up, so no single split helps on its own.
std::string known_rule(int64_t m, int64_t n, int64_t k) {
  if (k == 128) {
    return m * n <= 300000 ? "a" : "b";
  }
  if (m <= 16) {
    return "c";
  }
  return m * n <= 2000000 ? "d" : "e";
}

std::string synthetic_table() {
  std::string text = "M,N,K,kernel,us,err\n";
  const std::string kernels = "abcde";
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
           {1024, 128}, {4096, 128}, {2048, 512}, {4096, 4096}, {8192, 1024}, {1536, 7168}}) {
    for (int64_t m : {1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048}) {
      std::string winner = known_rule(m, n, k);
      for (size_t i = 0; i < kernels.size(); ++i) {
        std::string name(1, kernels[i]);
        double base = 10 + static_cast<double>(m * n * k) / 1e7;
        double us = base * (name == winner ? 1.0 : 1.1 + 0.1 * static_cast<double>(i));
        text += std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + "," + name +
                "," + std::to_string(us) + ",0\n";
      }
    }
  }
  return text;
}

Results table(const std::string &text) {
  return parse_results(kopt::util::parse_csv(text, "full.csv"));
}

std::string error_of(const std::string &text) {
  try {
    table(text);
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_SUITE_BEGIN("heuristic::fit");

TEST_CASE("the fit recovers a known 5-arm rule") {
  Results r = table(synthetic_table());
  REQUIRE(r.shapes.size() == 60);
  FitOptions options;
  options.max_arms = 8;
  RuleList rules = fit(r, options);
  CHECK(rules.rules.size() == 5);
  CHECK(rules.kernels() == std::vector<std::string>{"a", "b", "c", "d", "e"});
  CHECK(rules.rules.back().conditions.empty());
  Evaluation e = evaluate_rules(r, rules, "a", 0);
  CHECK(e.total.matched == 60);
  CHECK(e.total.geomean() == doctest::Approx(1.0));
  CHECK(e.total.default_geomean() > 1.05);
  // The fitted file is the family's "heuristic" shape and parses back to the same rules.
  RuleList again = parse_rules(to_json(rules), r.columns, "heuristic.json");
  CHECK(to_json(again) == to_json(rules));
}

TEST_CASE("fewer arms: the best rule list of that size, never worse than one kernel") {
  Results r = table(synthetic_table());
  FitOptions options;
  options.max_arms = 1;
  RuleList one = fit(r, options);
  REQUIRE(one.rules.size() == 1);
  CHECK(one.rules[0].kernel == "a"); // the everywhere runner-up
  options.max_arms = 3;
  RuleList three = fit(r, options);
  CHECK(three.rules.size() <= 3);
  CHECK(evaluate_rules(r, three, "a", 0).total.geomean() <
        evaluate_rules(r, one, "a", 0).total.geomean());
}

TEST_CASE("misses: every shape whose pick is not the tuned kernel, slowest first") {
  Results r = table(synthetic_table());
  // "b" where K is 128, else "e": a miss costs 1.2x where "b" loses, 1.5x where "e" loses.
  RuleList rules = parse_rules(nlohmann::json::parse(R"j({"rules": [
        {"if": [["K", "==", 128]], "kernel": "b"}, {"kernel": "e"}]})j"),
                               r.columns, "h.json");
  Evaluation e = evaluate_rules(r, rules, "a", 0);
  size_t expected = 0;
  for (const auto &s : r.shapes) {
    expected += known_rule(s.dims[0], s.dims[1], s.dims[2]) != (s.dims[2] == 128 ? "b" : "e");
  }
  REQUIRE(expected > 3);
  CHECK(e.total.misses.size() == expected);
  CHECK(e.total.matched + expected == e.total.shapes);
  nlohmann::json j = to_json(e);
  REQUIRE(j["misses"].size() == expected);
  CHECK(j["misses"][0]["pick"] == "e");
  CHECK(j["misses"][0]["slowdown"].get<double>() == doctest::Approx(1.5).epsilon(1e-3));
  CHECK(j["misses"][expected - 1]["pick"] == "b");
  CHECK(j["misses"][expected - 1]["slowdown"].get<double>() == doctest::Approx(1.2).epsilon(1e-3));
  std::string text = to_text(e, 3);
  CHECK(text.find("misses, slowest first (3 of " + std::to_string(expected) + "):") !=
        std::string::npos);
  CHECK(text.find("| e | ") != std::string::npos);  // a row: "| M=..,N=..,K=.. | e | d | 1.5x |"
  CHECK(text.find(" | b | ") == std::string::npos); // the 1.2x misses are past the first three
  CHECK(to_text(e).find("misses") == std::string::npos); // not asked for
}

TEST_CASE("holdout: fit on the other (N,K) groups, score the held-out ones") {
  Results r = table(synthetic_table());
  FitOptions options;
  std::vector<std::string> holdout = parse_holdout(r, "4096,4096; 1024,128");
  CHECK(holdout == std::vector<std::string>{"N=4096,K=4096", "N=1024,K=128"});
  Evaluation e = evaluate_holdout(r, holdout, options, "a", 0);
  CHECK(e.total.shapes == 20);
  CHECK(e.groups.size() == 2);
  CHECK_THROWS_WITH_AS(parse_holdout(r, "4096,4097"),
                       "--holdout: N=4096,K=4097 is not a group of full.csv (groups: "
                       "N=1024,K=128; N=1536,K=7168; N=2048,K=512; N=4096,K=128; N=4096,K=4096; "
                       "N=8192,K=1024)",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(parse_holdout(r, "4096"),
                       "--holdout: '4096': a group of full.csv is 2 values, N,K (the config "
                       "columns other than M), got 1",
                       kopt::Error);
  Evaluation folds = evaluate_folds(r, 3, options, "a", 0);
  CHECK(folds.total.shapes == 60);
  CHECK(folds.groups.size() == 6);
}

TEST_CASE("unusable timings: err != 0 never wins, unknown features are named") {
  Results r = table("M,N,K,kernel,us,err\n1,256,256,a,5,0.5\n1,256,256,b,9,0\n"
                    "2,256,256,a,5,\n2,256,256,b,9,\n");
  CHECK(r.shapes[0].best() == "b");
  CHECK(r.shapes[1].best() == "a"); // err not compared: usable
  FitOptions options;
  options.features = {"M*Q"};
  CHECK_THROWS_WITH_AS(fit(r, options),
                       "heuristic fit: full.csv: feature 'M*Q': unknown feature 'Q' (dispatch "
                       "columns: M, N, K), did you mean 'M'?",
                       kopt::Error);
  options.features = {"fill(64x0,264)"};
  CHECK_THROWS_WITH_AS(fit(r, options),
                       doctest::Contains("expected fill(<BM>x<BN>,<C>) with positive integers"),
                       kopt::Error);
}

TEST_CASE("a wave-fill feature recovers a rule that products of M, N, K cannot") {
  // Kernel "wide" wins where its 64x128 tiles fill whole waves of 8 slots (fill >= 75%), kernel
  // "narrow" elsewhere: a rule over fill(64x128,8), not a threshold on M, N or M*N.
  std::string text = "M,N,K,kernel,us,err\n";
  std::vector<std::string> truth;
  for (int64_t m : {64, 128, 192, 256, 320, 384, 448, 512}) {
    for (int64_t n : {128, 256, 384, 512, 640}) {
      const int64_t tiles = (m / 64) * (n / 128);
      const int64_t fill = 100 * tiles / ((tiles + 7) / 8 * 8);
      const bool wide = fill >= 75;
      const std::string shape = std::to_string(m) + "," + std::to_string(n) + ",64,";
      text += shape + "wide," + (wide ? "10" : "13") + ",0\n";
      text += shape + "narrow," + (wide ? "12" : "11") + ",0\n";
    }
  }
  Results r = table(text);
  FitOptions options;
  options.max_arms = 2;
  options.features = {"M", "N", "K", "M*N", "fill(64x128,8)"};
  RuleList with_fill = fit(r, options);
  Evaluation e = evaluate_rules(r, with_fill, "narrow", 0);
  CHECK(e.total.matched == e.total.shapes);
  REQUIRE(with_fill.rules.size() == 2);
  CHECK(with_fill.rules[0].conditions.at(0).feature == "fill(64x128,8)");
  options.features = {"M", "N", "K", "M*N"};
  Evaluation without = evaluate_rules(r, fit(r, options), "narrow", 0);
  CHECK(without.total.matched < without.total.shapes);
}

TEST_CASE("malformed full.csv: missing column, bad number, bad config value") {
  CHECK(error_of("M,N,K,kernel,us\n1,2,3,a,4\n").find("full.csv: missing column 'err'") == 0);
  CHECK(error_of("M,N,K,kernel,us,err\n1,2,3,a,4,0\n1,2,3,b,x,0\n") ==
        "full.csv:3: us: expected a number, got 'x'");
  CHECK(error_of("M,N,K,kernel,us,err\n1,2,3,a,4,0\n1,2,3,b,4,bad\n") ==
        "full.csv:3: err: expected a number, got 'bad'");
  CHECK(error_of("M,N,K,kernel,us,err\n1,2.5,3,a,4,0\n") ==
        "full.csv:2: N: expected an integer, got '2.5'");
  CHECK(error_of("M,N,K,kernel,us,err\n1,2,3,a,0,0\n") ==
        "full.csv:2: us: expected a time > 0, got '0'");
  CHECK(error_of("kernel,us,err\na,1,0\n") == "full.csv: expected config columns before 'kernel'");
  // A word among a column's numbers is an error; a column of words only is a label.
  CHECK(error_of("M,N,K,kernel,us,err\n1,2,3,a,4,0\n1,x,3,a,4,0\n") ==
        "full.csv:3: N: expected an integer, got 'x'");
}

TEST_CASE("a config column of names (a model) is a label, not a dimension of the shape") {
  Results r = table("model,batch,ctx_max,kernel,us,err\n"
                    "llama3.1-8b,1,4096,s0,9,\nllama3.1-8b,1,4096,s1,5,\n"
                    "gemma2-9b,8,512,s0,2,\ngemma2-9b,8,512,s1,3,\n");
  CHECK(r.columns == std::vector<std::string>{"batch", "ctx_max"});
  REQUIRE(r.shapes.size() == 2);
  CHECK(r.shapes[0].dims == std::vector<int64_t>{1, 4096});
  CHECK(r.shapes[0].tuned == "s1");
  CHECK(r.shapes[1].tuned == "s0");
  // Without M, N and K the tuned table is the shapes' own columns and the choice.
  kopt::spec::Family family;
  family.instances = {{"s0", {}}, {"s1", {}}};
  CHECK(kopt::tune::tuned_table(r, family, {"sm_90", 132}) ==
        "batch,ctx_max,kernelName,kernelId,us,errRatio\n"
        "1,4096,s1,1,5.000,0\n"
        "8,512,s0,0,2.000,0\n");
}

TEST_CASE("aiter PR 3316's 7-arm rule is expressible as heuristic.json") {
  RuleList rules = parse_rules(kopt::util::read_json(fixture("heuristic/aiter_3316.json")),
                               {"M", "N", "K"}, "aiter_3316.json");
  CHECK(rules.kernels().size() == 7);
  auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return evaluate(rules, {"M", "N", "K"}, {m, n, k});
  };
  CHECK(pick(16, 4096, 128) == "a8w8_bs_16x64_k128_v1");
  CHECK(pick(256, 4096, 128) == "a8w8_bs_32x64_k128_v1");
  CHECK(pick(4096, 4096, 128) == "a8w8_bs_64x64_k128_v1");
  CHECK(pick(64, 4096, 7168) == "a8w8_bs_16x64_k256_v1");
  CHECK(pick(256, 4096, 7168) == "a8w8_bs_64x64_k256_v1");
  CHECK(pick(1024, 4096, 256) == "a8w8_bs_64x64_k256_v1");
  CHECK(pick(512, 4096, 7168) == "a8w8_bs_64x128_k128_v3");
  CHECK(pick(4096, 4096, 7168) == "a8w8_bs_128x128_k128_v3");
}

TEST_CASE("tuned table: aiter's columns, fastest kernel with err 0 per shape, the rows' device") {
  kopt::spec::Family family;
  family.arch = "sm_80"; // the device's arch wins
  family.impl = "kopt";
  family.instances = {{"a", {}}, {"b", {}}};
  Results r = table("M,N,K,kernel,us,err\n16,128,256,a,2,0.1\n16,128,256,b,4,0\n"
                    "32,128,256,a,1,0\n32,128,256,b,3,0\n");
  std::string text = kopt::tune::tuned_table(r, family, {"sm_90", 132});
  CHECK(text == "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
                "sm_90,132,16,128,256,kopt,1,0,4.000,b,0.262144,0,0\n"
                "sm_90,132,32,128,256,kopt,0,0,1.000,a,2.09715,0,0\n");
}

TEST_SUITE_END();
