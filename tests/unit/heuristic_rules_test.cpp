#include "heuristic/rules.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <doctest/doctest.h>

using kopt::heuristic::RuleList;
using kopt::test::fixture;

namespace {

const std::vector<std::string> kColumns = {"M", "N", "K"};

RuleList fixture_rules() {
  return kopt::heuristic::parse_rules(kopt::util::read_json(fixture("heuristic/rules.json")),
                                      kColumns, "rules.json");
}

std::string parse_error(const std::string &text) {
  try {
    kopt::heuristic::parse_rules(nlohmann::json::parse(text), kColumns, "h.json");
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_SUITE_BEGIN("heuristic::rules");

TEST_CASE("parse and evaluate") {
  RuleList rules = fixture_rules();
  REQUIRE(rules.rules.size() == 4);
  CHECK(rules.rules[0].conditions.size() == 2);
  CHECK(rules.rules[0].conditions[1].feature == "M*N");
  CHECK(rules.rules[0].conditions[1].op == "<=");
  CHECK(rules.rules[0].conditions[1].value == 307200);
  CHECK(rules.rules[3].conditions.empty());
  CHECK(rules.kernels() == std::vector<std::string>{"k16x64", "k32x64", "k64x64"});
  CHECK_FALSE(rules.empty());

  using kopt::heuristic::evaluate;
  CHECK(evaluate(rules, kColumns, {16, 1280, 128}) == "k16x64");  // M*N = 20480
  CHECK(evaluate(rules, kColumns, {480, 640, 128}) == "k16x64");  // M*N = 307200 exactly
  CHECK(evaluate(rules, kColumns, {481, 640, 128}) == "k64x64");  // just above
  CHECK(evaluate(rules, kColumns, {16, 1280, 8192}) == "k16x64"); // M < 32, N != 7168
  CHECK(evaluate(rules, kColumns, {16, 7168, 8192}) == "k32x64"); // N == 7168
  CHECK(evaluate(rules, kColumns, {4096, 4096, 4096}) == "k32x64");

  SUBCASE("no rule holds") {
    RuleList partial;
    partial.rules.push_back({{{"K", "==", 128}}, "k"});
    CHECK(evaluate(partial, kColumns, {1, 1, 256}) == "");
    CHECK(evaluate(RuleList{}, kColumns, {1, 1, 256}) == "");
  }
  SUBCASE("wrong number of dims") {
    CHECK_THROWS_WITH_AS(evaluate(rules, kColumns, {1, 2}),
                         "heuristic: expected 3 dimensions (M, N, K), got 2", kopt::Error);
  }
}

TEST_CASE("to_json gives back the same rules") {
  RuleList rules = fixture_rules();
  nlohmann::json j = kopt::heuristic::to_json(rules);
  CHECK(j == kopt::util::read_json(fixture("heuristic/rules.json")));
  RuleList again = kopt::heuristic::parse_rules(j, kColumns, "again");
  CHECK(kopt::heuristic::to_json(again) == j);
}

TEST_CASE("parse errors name the rule and the field") {
  CHECK(parse_error(R"({"rules": [{"if": [["MN", "<", 1]], "kernel": "a"}]})") ==
        "h.json: rules[0].if[0][0]: unknown feature 'MN' (dispatch columns: M, N, K), did you "
        "mean 'M'?");
  // Case aside first: 'k' is one edit from 'M' and 'N' too, but it is 'K' in lower case.
  CHECK(parse_error(R"({"rules": [{"if": [["k", "<", 1]], "kernel": "a"}]})") ==
        "h.json: rules[0].if[0][0]: unknown feature 'k' (dispatch columns: M, N, K), did you "
        "mean 'K'?");
  CHECK(parse_error(R"({"rules": [{"kernel": "a"}, {"if": [["M", "=<", 1]], "kernel": "b"}]})") ==
        "h.json: rules[1].if[0][1]: expected one of <, <=, ==, !=, >=, >, got '=<'");
  CHECK(parse_error(R"({"rules": [{"if": [["M", "<", 1.5]], "kernel": "a"}]})") ==
        "h.json: rules[0].if[0][2]: expected an integer, got 1.5");
  CHECK(parse_error(R"({"rules": [{"if": [["M", "<"]], "kernel": "a"}]})") ==
        "h.json: rules[0].if[0]: expected [feature, op, value], got an array");
  CHECK(parse_error(R"({"rules": [{"if": []}]})") ==
        "h.json: rules[0].kernel: missing required field");
  CHECK(parse_error(R"({"rules": [{"kernel": "a", "iff": []}]})") ==
        "h.json: rules[0].iff: unknown field, did you mean 'if'?");
  CHECK(parse_error(R"({"rule": []})") == "h.json: rule: unknown field, did you mean 'rules'?");
  CHECK(parse_error(R"([])") == "h.json: expected an object {\"rules\": [...]}, got an array");
}

TEST_CASE("emit_cpp") {
  SUBCASE("the fixture's rules, deterministically") {
    RuleList rules = fixture_rules();
    std::string code = kopt::heuristic::emit_cpp(rules, kColumns);
    CHECK(code == kopt::heuristic::emit_cpp(fixture_rules(), kColumns));
    CHECK(code ==
          "  // rule 0: K == 128 && M*N <= 307200\n"
          "  if (dims[2] == std::int64_t{128} && (dims[0] * dims[1]) <= std::int64_t{307200}) {\n"
          "    return \"k16x64\";\n"
          "  }\n"
          "  // rule 1: K == 128\n"
          "  if (dims[2] == std::int64_t{128}) {\n"
          "    return \"k64x64\";\n"
          "  }\n"
          "  // rule 2: M < 32 && N != 7168\n"
          "  if (dims[0] < std::int64_t{32} && dims[1] != std::int64_t{7168}) {\n"
          "    return \"k16x64\";\n"
          "  }\n"
          "  return \"k32x64\"; // rule 3\n");
  }
  SUBCASE("no unconditional rule falls through to nullptr") {
    RuleList rules;
    rules.rules.push_back({{{"K", ">=", -5}}, "k"});
    CHECK(kopt::heuristic::emit_cpp(rules, kColumns) == "  // rule 0: K >= -5\n"
                                                        "  if (dims[2] >= std::int64_t{-5}) {\n"
                                                        "    return \"k\";\n"
                                                        "  }\n"
                                                        "  return nullptr;\n");
  }
  SUBCASE("no rules at all") {
    CHECK(kopt::heuristic::emit_cpp(RuleList{}, kColumns) == "  (void)dims;\n  return nullptr;\n");
  }
}

TEST_CASE("fill, waves and ratio features: parsed, evaluated and emitted alike") {
  RuleList rules = kopt::heuristic::parse_rules(nlohmann::json::parse(R"j({"rules": [
        {"if": [["fill( 64x128 , 264)", ">=", 90], ["K", ">", 1000]], "kernel": "k64x128"},
        {"if": [["fill(16x64,132)", "<", 50]], "kernel": "k16x64"},
        {"if": [[" waves( 32x64 ,8) / waves(64x64,8) ", "<=", 1500]], "kernel": "k32x64"},
        {"if": [["waves(16x64,132)", ">", 3]], "kernel": "k16x64_many"},
        {"kernel": "k64x64"}]})j"),
                                                kColumns, "h.json");
  CHECK(rules.rules[0].conditions[0].feature == "fill(64x128,264)"); // written canonically
  CHECK(rules.rules[2].conditions[0].feature == "waves(32x64,8)/waves(64x64,8)");
  auto fill = kopt::heuristic::parse_feature("fill(64x128,264)", kColumns, "f");
  CHECK(fill.value({64, 128, 1}) == 0);             // 1 tile of 264 slots: 100 * 1 / 264
  CHECK(fill.value({64 * 12, 128 * 22, 1}) == 100); // 264 tiles: one full wave
  CHECK(fill.value({64 * 12, 128 * 23, 1}) == 52);  // 276 tiles in 2 waves of 264
  CHECK(fill.value({0, 128, 1}) == 100);            // no tiles
  auto waves = kopt::heuristic::parse_feature("waves(64x128,264)", kColumns, "f");
  CHECK(waves.value({64 * 12, 128 * 22, 1}) == 1); // 264 tiles
  CHECK(waves.value({64 * 12, 128 * 23, 1}) == 2); // 276 tiles
  CHECK(waves.value({0, 128, 1}) == 0);
  auto ratio = kopt::heuristic::parse_feature("waves(32x64,8)/waves(64x64,8)", kColumns, "f");
  CHECK(ratio.value({64, 64, 1}) == 1000);     // 2 tiles and 1 tile: one wave each
  CHECK(ratio.value({64, 64 * 8, 1}) == 2000); // 16 tiles in 2 waves against 8 in 1
  CHECK(ratio.value({0, 64, 1}) == 0);         // no waves below: 0
  CHECK(kopt::heuristic::parse_feature("M*N / K", kColumns, "f").value({4, 8, 16}) == 2000);
  CHECK(kopt::heuristic::evaluate(rules, kColumns, {64 * 12, 128 * 22, 4096}) == "k64x128");
  CHECK(kopt::heuristic::evaluate(rules, kColumns, {16, 64, 4096}) == "k16x64");
  for (const char *bad : {"fill(64x128)", "fill(64x0,264)", "fill(64,128,264)", "fill(ax1,2)"}) {
    CHECK_THROWS_WITH_AS(kopt::heuristic::parse_feature(bad, kColumns, "f"),
                         doctest::Contains("expected fill(<BM>x<BN>,<C>)"), kopt::Error);
  }
  CHECK_THROWS_WITH_AS(kopt::heuristic::parse_feature("waves(64x128)", kColumns, "f"),
                       doctest::Contains("expected waves(<BM>x<BN>,<C>)"), kopt::Error);
  CHECK_THROWS_WITH_AS(kopt::heuristic::parse_feature("fill(64x128,264)", {"K", "N"}, "f"),
                       doctest::Contains("needs dispatch column M"), kopt::Error);
  CHECK_THROWS_WITH_AS(kopt::heuristic::parse_feature("M/N/K", kColumns, "f"),
                       doctest::Contains("'M/N/K': a ratio's sides are products, fills or waves"),
                       kopt::Error);
  CHECK_THROWS_WITH_AS(kopt::heuristic::parse_feature("waves(16x64,8)/Q", kColumns, "f"),
                       doctest::Contains("unknown feature 'Q'"), kopt::Error);

  if (kopt::util::find_program("g++").empty()) {
    return;
  }
  // The emitted C++ picks what evaluate() picks on a grid of shapes.
  kopt::test::TempDir tmp;
  std::string grid;
  for (std::int64_t m : {1, 16, 64, 250, 768, 1000, 4096}) {
    for (std::int64_t n : {64, 1536, 2816, 7168}) {
      for (std::int64_t k : {512, 4096}) {
        grid += "{" + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) + "},";
      }
    }
  }
  tmp.write("main.cpp",
            "#include <cstdint>\n#include <cstdio>\n"
            "static const char* pick(const std::int64_t* dims) {\n" +
                kopt::heuristic::emit_cpp(rules, kColumns) +
                "}\nint main() {\n  const std::int64_t shapes[][3] = {" + grid +
                "};\n  for (const auto& s : shapes) std::printf(\"%s\\n\", pick(s));\n}\n");
  kopt::util::RealProcessRunner runner;
  auto built =
      runner.run({{"g++", "-std=c++17", "-Wall", "-Werror", (tmp.path() / "main.cpp").string(),
                   "-o", (tmp.path() / "pick").string()},
                  {},
                  {},
                  120});
  INFO(built.err);
  REQUIRE(built.ok());
  auto ran = runner.run({{(tmp.path() / "pick").string()}, {}, {}, 60});
  std::string expected;
  for (std::int64_t m : {1, 16, 64, 250, 768, 1000, 4096}) {
    for (std::int64_t n : {64, 1536, 2816, 7168}) {
      for (std::int64_t k : {512, 4096}) {
        expected += kopt::heuristic::evaluate(rules, kColumns, {m, n, k}) + "\n";
      }
    }
  }
  CHECK(ran.out == expected);
  for (const auto &rule : rules.rules) { // the grid reaches every rule
    CHECK(expected.find(rule.kernel + "\n") != std::string::npos);
  }
}

TEST_SUITE_END();
