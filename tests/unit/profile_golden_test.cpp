#include "profile/bench.hpp"

#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"

#include <doctest/doctest.h>
#include <fstream>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// A baseline harness that writes a golden and prints the hash it was built with.
class GoldenWriter : public kopt::util::ProcessRunner {
public:
  std::string hash = "h00";
  int runs = 0;

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    ++runs;
    for (size_t i = 0; i + 1 < command.argv.size(); ++i) {
      if (command.argv[i] == "--write-golden") {
        std::ofstream(command.argv[i + 1]) << "kopt-golden 1\n0\n";
      }
    }
    kopt::util::ProcessResult result;
    result.exit_code = 0;
    result.out = "kopt-candidate: 00 " + hash + "\n";
    return result;
  }
};

// A baseline harness that fails, saying why on its stderr.
class FailingGolden : public kopt::util::ProcessRunner {
public:
  kopt::util::ProcessResult run(const kopt::util::Command &) override {
    kopt::util::ProcessResult result;
    result.exit_code = 1;
    result.err = "harness: [1/3] M=16,N=64,K=64 started\n"
                 "harness: configs.csv:2: column 'K': expected an integer, got 'x'\n";
    return result;
  }
};

} // namespace

TEST_SUITE_BEGIN("profile::golden");

TEST_CASE("a golden that cannot be made shows the harness's own error line") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::spec::Layout layout(tmp.path() / "state");
  tmp.write("state/bin/candidate_00", "a harness");
  FailingGolden harness;
  std::string message;
  try {
    kopt::profile::ensure_golden(family, layout, "00", "h00", harness);
  } catch (const kopt::Error &e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("cannot make the golden: baseline 00's harness exited with 1") == 0);
  CHECK(message.find("configs.csv:2: column 'K': expected an integer, got 'x'") !=
        std::string::npos);
  CHECK(message.find("(log: ") != std::string::npos);
}

TEST_CASE("the golden is keyed by the configs' content and the baseline's hash") {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::spec::Layout layout(tmp.path() / "state");
  tmp.write("state/bin/candidate_00", "a harness");
  GoldenWriter harness;

  CHECK(kopt::profile::golden_stale_reason(family, layout, "h00") == "no golden yet");
  CHECK(kopt::profile::ensure_golden(family, layout, "00", "h00", harness) ==
        "golden written from candidate 00");
  CHECK(kopt::profile::ensure_golden(family, layout, "00", "h00", harness) ==
        "golden up to date (from candidate 00)");
  CHECK(harness.runs == 1);
  nlohmann::json info = kopt::util::read_json(layout.golden_info());
  CHECK(info.at("configs_hash").get<std::string>().size() == 32);

  SUBCASE("a shape added to the configs file at the same path remakes it") {
    std::ofstream(family.configs, std::ios::app) << "64,64,128\n";
    CHECK_FALSE(kopt::profile::golden_is_current(family, layout, "h00"));
    CHECK(kopt::profile::golden_stale_reason(family, layout, "h00") == "configs.csv changed");
    CHECK(kopt::profile::ensure_golden(family, layout, "00", "h00", harness) ==
          "golden remade: configs.csv changed (from candidate 00)");
    CHECK(harness.runs == 2);
    CHECK(kopt::profile::golden_is_current(family, layout, "h00"));
  }
  SUBCASE("a new baseline remakes it") {
    harness.hash = "h01";
    CHECK(kopt::profile::ensure_golden(family, layout, "00", "h01", harness) ==
          "golden remade: the baseline's content hash changed (from candidate 00)");
    CHECK(harness.runs == 2);
  }
  SUBCASE("a golden.json from before the configs' hash was kept remakes it") {
    info.erase("configs_hash");
    kopt::util::write_json_atomic(layout.golden_info(), info);
    CHECK(kopt::profile::golden_stale_reason(family, layout, "h00") == "configs.csv changed");
  }
  SUBCASE("the same configs at another path keep it") {
    fs::copy_file(family.configs, tmp.path() / "moved.csv");
    family.configs = tmp.path() / "moved.csv";
    CHECK(kopt::profile::golden_is_current(family, layout, "h00"));
  }
}

TEST_SUITE_END();
