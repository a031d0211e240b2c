#include "profile/bench.hpp"

#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "temp_dir.hpp"
#include "util/process.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// A harness that ends as scripted, with `log` on its stderr.
class EndingHarness : public kopt::util::ProcessRunner {
public:
  kopt::util::ProcessResult ending;

  kopt::util::ProcessResult run(const kopt::util::Command &) override { return ending; }
};

// The reason run_harness gives for a harness that ended as `ending`.
std::string reason_for(const kopt::util::ProcessResult &ending) {
  TempDir tmp;
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  // Not host: a host run makes this test process a subreaper, and then the orphans of later
  // tests would be its children (util_process_test counts them).
  family.backend = kopt::spec::Backend::cuda;
  kopt::spec::Layout layout(tmp.path() / "state");
  tmp.write("state/bin/candidate_01", "a harness");
  EndingHarness harness;
  harness.ending = ending;
  kopt::profile::Measurement m = kopt::profile::run_harness(
      family, layout, "01", kopt::profile::HarnessMode::correctness, harness);
  CHECK(m.status == "failed");
  return m.reason;
}

const char *kLog = "harness: correctness of 3 configs\n"
                   "harness: timed by chrono\n"
                   "harness: [1/3] M=16,N=64,K=128 started\n"
                   "harness: [1/3] M=16,N=64,K=128 kernel=tiny_1x2 checked=0\n"
                   "harness: [2/3] M=32,N=64,K=128 started\n"
                   "harness: [2/3] M=32,N=64,K=128 kernel=tiny_1x2 checked=0\n"
                   "harness: [3/3] M=100,N=100,K=2000 started\n";

} // namespace

TEST_SUITE_BEGIN("profile::harness_failure");

TEST_CASE("a harness killed by a signal is reported with the config it died on") {
  kopt::util::ProcessResult killed;
  killed.signal = 11;
  killed.err = kLog;
  CHECK(reason_for(killed) ==
        "harness killed by signal 11 (Segmentation fault), died on config 3/3 M=100,N=100,K=2000: "
        "harness: [2/3] M=32,N=64,K=128 kernel=tiny_1x2 checked=0\n"
        "harness: [3/3] M=100,N=100,K=2000 started");
}

TEST_CASE("a harness that failed after its last config names none") {
  kopt::util::ProcessResult failed;
  failed.exit_code = 1;
  failed.err = std::string(kLog) + "harness: [3/3] M=100,N=100,K=2000 kernel=tiny_big checked=0\n"
                                   "harness: error: cannot write out.csv\n";
  CHECK(reason_for(failed) == "harness exited with 1: "
                              "harness: [3/3] M=100,N=100,K=2000 kernel=tiny_big checked=0\n"
                              "harness: error: cannot write out.csv");
}

TEST_SUITE_END();
