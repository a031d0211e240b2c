#include "spec/family.hpp"
#include "spec/formula.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>
#include <fstream>

namespace fs = std::filesystem;
using kopt::spec::Formula;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family (configs M,N,K: 16,64,128 / 32,64,128 / 100,100,2000) with `roofline` set.
fs::path tiny_with_roofline(const TempDir &tmp, const nlohmann::json &roofline) {
  fs::remove_all(tmp.path() / "tiny");
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  fs::path file = tmp.path() / "tiny" / "family.json";
  nlohmann::json j = kopt::util::read_json(file);
  j["roofline"] = roofline;
  std::ofstream(file) << j.dump(2) << "\n";
  return file;
}

} // namespace

TEST_SUITE_BEGIN("spec::roofline");

TEST_CASE("a formula over config columns: precedence, functions and the columns it reads") {
  std::map<std::string, double> v = {{"M", 16}, {"N", 6144}, {"K", 4096}};
  CHECK(Formula::parse("2*M*N*K", "f").evaluate(v) == 2.0 * 16 * 6144 * 4096);
  CHECK(Formula::parse("M*K + N*K + 4*M*(K/128) + 2*M*N", "f").evaluate(v) ==
        16 * 4096 + 6144 * 4096 + 4 * 16 * 32 + 2 * 16 * 6144);
  CHECK(Formula::parse("K", "f").evaluate(v) == 4096);
  CHECK(Formula::parse("ceil(M/5) - -1", "f").evaluate(v) == 5);
  CHECK(Formula::parse("floor(M / 5) + max(M, 3) * min(2, N)", "f").evaluate(v) == 3 + 32);
  CHECK(Formula::parse("1e3 / 8 - 0.5", "f").evaluate(v) == 124.5);
  CHECK(Formula::parse("N*K + M*N + K", "f").columns() == std::vector<std::string>{"K", "M", "N"});
  CHECK_THROWS_WITH_AS(Formula::parse("M", "f").evaluate({}), "no value for config column 'M'",
                       kopt::Error);
}

TEST_CASE("a malformed formula names where, the character and what was expected") {
  CHECK_THROWS_WITH_AS(Formula::parse("2*M*", "fam.json: roofline.flops"),
                       "fam.json: roofline.flops: expected a number, a config column or '(' at "
                       "character 5 of '2*M*', got the end",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(Formula::parse("M N", "w"),
                       "w: expected an operator (+ - * /) at character 3 of 'M N', got 'N'",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(Formula::parse("(M+N", "w"),
                       "w: expected ')' at character 5 of '(M+N', got the end", kopt::Error);
  CHECK_THROWS_WITH_AS(Formula::parse("sqrt(M)", "w"),
                       "w: expected a function ceil, floor, min or max at character 1 of "
                       "'sqrt(M)', got 's'",
                       kopt::Error);
  CHECK_THROWS_WITH_AS(Formula::parse("max(M)", "w"),
                       "w: expected ',' at character 6 of 'max(M)', got ')'", kopt::Error);
  CHECK_THROWS_AS(Formula::parse(std::string(200, '(') + "M" + std::string(200, ')'), "w"),
                  kopt::Error);
}

TEST_CASE("family.json's roofline is read and checked against every config") {
  TempDir tmp;
  SUBCASE("formulas, math and declared peaks") {
    fs::path file = tiny_with_roofline(tmp, {{"bytes", "M*K + N*K + 2*M*N"},
                                             {"flops", "2*M*N*K"},
                                             {"math", "bf16"},
                                             {"peaks",
                                              {{{"device", "Xeon"}, {"bytes_per_s", 1e11}},
                                               {{"device", "*"}, {"flops_per_s", 1e12}}}}});
    kopt::spec::Family f = kopt::spec::load_family(file);
    REQUIRE(f.roofline);
    CHECK(f.roofline->bytes->text() == "M*K + N*K + 2*M*N");
    CHECK(f.roofline->flops->evaluate({{"M", 1}, {"N", 2}, {"K", 3}}) == 12);
    CHECK(f.roofline->math == "bf16");
    REQUIRE(f.roofline->peaks.size() == 2);
    CHECK(f.roofline->peaks[0].device == "Xeon");
    CHECK(f.roofline->peaks[0].bytes_per_s == 1e11);
    CHECK(f.roofline->peaks[0].flops_per_s == 0);
    CHECK(f.roofline->peaks[1].flops_per_s == 1e12);
  }
  SUBCASE("absent: no roofline") {
    fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
    CHECK_FALSE(kopt::spec::load_family(tmp.path() / "tiny" / "family.json").roofline);
  }
}

TEST_CASE("a bad roofline fails naming the file, the field and what was expected") {
  TempDir tmp;
  auto error = [&](const nlohmann::json &roofline) {
    fs::path file = tiny_with_roofline(tmp, roofline);
    try {
      kopt::spec::load_family(file);
    } catch (const kopt::Error &e) {
      std::string text = e.what();
      size_t at = text.find(file.string());
      if (at != std::string::npos) {
        text.replace(at, file.string().size(), "family.json");
      }
      std::string configs = (file.parent_path() / "configs.csv").string();
      at = text.find(configs);
      if (at != std::string::npos) {
        text.replace(at, configs.size(), "configs.csv");
      }
      return text;
    }
    return std::string("no error");
  };
  CHECK(error({{"bytes", "M*KK"}}) == "family.json: roofline.bytes: 'KK' is not a column of "
                                      "configs.csv (columns: M, N, K), did you mean 'K'?");
  CHECK(error({{"bytes", "M - N"}}) ==
        "configs.csv:2: roofline.bytes 'M - N' is -48 for this config: expected a finite number "
        ">= 0");
  CHECK(error({{"flops", "M / (K - 128)"}}) ==
        "configs.csv:2: roofline.flops 'M / (K - 128)' is inf for this config: expected a finite "
        "number >= 0");
  CHECK(error({{"bytes", 12}}) == "family.json: roofline.bytes: expected a formula over the "
                                  "config columns (\"2*M*N*K\"), got 12");
  CHECK(error({{"math", "fp8"}}) ==
        "family.json: roofline: expected bytes, flops or both (formulas over the config columns)");
  CHECK(error({{"flops", "M"}, {"math", "fp4"}}) ==
        "family.json: roofline.math: expected one of fp8, int8, bf16, fp16, tf32, fp32, got 'fp4'");
  CHECK(error({{"bytes", "M"}, {"math", "fp8"}}) ==
        "family.json: roofline.math: names the format of flops, and roofline has none");
  CHECK(error({{"bytes", "M"}, {"peak", 1}}) ==
        "family.json: roofline.peak: unknown field, did you mean 'peaks'?");
  CHECK(error({{"bytes", "M"}, {"peaks", {{{"device", "*"}}}}}) ==
        "family.json: roofline.peaks[0]: expected bytes_per_s, flops_per_s or both");
  CHECK(error({{"bytes", "M"}, {"peaks", {{{"device", "*"}, {"bytes_per_s", -1}}}}}) ==
        "family.json: roofline.peaks[0].bytes_per_s: expected a positive number, got -1");
  CHECK(error({{"bytes", "M"}, {"peaks", {{{"bytes_per_s", 1}}}}}) ==
        "family.json: roofline.peaks[0].device: missing required field");
}

TEST_SUITE_END();
