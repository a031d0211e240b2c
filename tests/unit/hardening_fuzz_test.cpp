// Inputs the fuzz targets (tests/fuzz) found breaking a reader's contract, each kept as a fixture
// in tests/fixtures/hardening/fuzz/: a value or a kopt::Error that names the input and where.
#include "decide/decide.hpp"
#include "fileapi/reply.hpp"
#include "gen/tuned.hpp"
#include "gpu/smi.hpp"
#include "profile/analyze.hpp"
#include "profile/ncu_details.hpp"
#include "spec/family.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <algorithm>
#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("hardening");

TEST_CASE("a configs row without a class column's value names the file and line") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  fs::path configs = tmp.path() / "tiny" / "configs.csv";
  // Read before the configs change: load_family refuses such a file itself (spec_family_test),
  // and representatives() must hold on its own for a file edited after that.
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  fs::copy_file(fixture("hardening/fuzz/configs_empty_class_value.csv"), configs,
                fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH_AS(
      kopt::profile::representatives(family, kopt::util::read_csv(configs)),
      (configs.string() + ":4: config class column 'M': expected a number, got ''").c_str(),
      kopt::Error);
}

TEST_CASE("an ncu launch with invalid UTF-8 in a field is written with U+FFFD") {
  // Grid Size "(\xff\xff\xff\xff256, 1, 1)": the launch's JSON (analyze.json, analyze --json)
  // must serialise through kopt's writer, not throw nlohmann's type_error.316.
  fs::path path = fixture("hardening/fuzz/ncu_kernel_name_invalid_utf8.csv");
  auto launches = kopt::profile::parse_ncu_details(kopt::util::read_file(path), path.string());
  auto bad = std::find_if(launches.begin(), launches.end(), [](const auto &l) {
    return l.grid == "(\xff\xff\xff\xff"
                     "256, 1, 1)";
  });
  REQUIRE(bad != launches.end());
  nlohmann::json j = kopt::profile::to_json(*bad, kopt::profile::judge_bottleneck(*bad));
  CHECK(kopt::util::dump_json(j).find("(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                      "256, 1, 1)") != std::string::npos);
}

TEST_CASE("a File API index naming a missing file is a kopt::Error naming both") {
  // The fuzz layout: the index, then f1.json, f2.json... separated by lines of "====".
  TempDir tmp;
  fs::path reply = tmp.path() / "build" / ".cmake" / "api" / "v1" / "reply";
  std::string text = kopt::util::read_file(fixture("hardening/fuzz/fileapi_reply_file_gone.txt"));
  std::vector<std::string> files;
  for (size_t at = 0;;) {
    size_t next = text.find("\n====\n", at);
    files.push_back(text.substr(at, next == std::string::npos ? next : next - at));
    if (next == std::string::npos) {
      break;
    }
    at = next + 6;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    tmp.write("build/.cmake/api/v1/reply/" +
                  (i == 0 ? std::string("index-0.json") : "f" + std::to_string(i) + ".json"),
              files[i]);
  }
  CHECK_THROWS_WITH_AS(kopt::fileapi::read_reply(tmp.path() / "build"),
                       ((reply / "f2.json").string() + ": referenced by " +
                        (reply / "index-0.json").string() + " but gone")
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("a rocm-smi GPU index too large for an int names the line") {
  // The fuzz input's first byte picked the text parser; the rest is rocm-smi's text output
  // with "GPU[12147483648]" on line 6 (std::stoi threw std::out_of_range).
  std::string text =
      kopt::util::read_file(fixture("hardening/fuzz/rocm_smi_text_huge_gpu_index.bin")).substr(1);
  CHECK_THROWS_WITH_AS(kopt::gpu::parse_rocm_smi_text(text, "rocm-smi.txt"),
                       "rocm-smi.txt:6: GPU index: expected an integer from 0 to 65535, got "
                       "'12147483648'",
                       kopt::Error);
}

TEST_CASE("a decision.json count too large for an int names the field") {
  // "overall": {"configs": <a 112-digit integer>}: nlohmann reads it as a double (7.8e108), and
  // a plain get<int> cast it out of range (undefined behaviour; UBSan's float-cast-overflow).
  fs::path path = fixture("hardening/fuzz/decision_configs_huge.json");
  CHECK_THROWS_WITH_AS(kopt::decide::read_decision(path),
                       (path.string() + ": overall: field 'configs': expected an integer from 0 "
                                        "to 2147483647, got 7.777777777777777e+108")
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("a tuned table's M beyond any shape names the line; padded M never overflows") {
  // M = 6148914691236517125: aiter's padding (the next power of two) overflowed int64.
  TempDir tmp;
  fs::path file = tmp.path() / "tuned.csv";
  fs::copy_file(fixture("hardening/fuzz/tuned_huge_m.csv"), file);
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH_AS(kopt::gen::read_tuned_table(file, "gfx942", warnings),
                       (file.string() + ":2: M: expected an integer from 1 to 2147483647, got "
                                        "6148914691236517125")
                           .c_str(),
                       kopt::Error);
  CHECK(kopt::gen::padded_m(INT64_MAX, 1, 1) == INT64_MAX);
  CHECK(kopt::gen::padded_m(INT64_MAX - 3, 1, 0) == INT64_MAX - 3);
  CHECK(kopt::gen::padded_m(5000, 1, 1) == 8192);
  CHECK(kopt::gen::padded_m(300, 1, 0) == 320);
}

TEST_SUITE_END();
