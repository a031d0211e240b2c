#include "measure/measure.hpp"

#include "loaded_tiny.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
using kopt::measure::LoadedFamily;
using kopt::profile::Measurement;
using kopt::test::loaded_tiny;
using kopt::test::TempDir;

namespace {

// 01's results folder as a side-by-side run left it: its measurement and BEST's beside it.
void measured_beside_best(const LoadedFamily &f) {
  Measurement m;
  m.family = "tiny";
  m.candidate = "01";
  m.status = "ok";
  m.date = "2026-01-01T00:00:00Z";
  fs::create_directories(f.layout.results_dir("01"));
  kopt::profile::write_measurement(f.layout.measurement("01"), m);
  m.candidate = "00";
  kopt::profile::write_measurement(f.layout.paired_best("01"), m);
}

} // namespace

TEST_SUITE_BEGIN("measure");

TEST_CASE("write_failed dates the failed measurement and removes the BEST measured beside it") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  measured_beside_best(f);
  std::string before = kopt::util::utc_now();
  Measurement written = kopt::measure::write_failed(f, "01", "identity: symbol clock_gettime");
  std::string after = kopt::util::utc_now();
  CHECK_FALSE(fs::exists(f.layout.paired_best("01")));
  Measurement m = kopt::profile::read_measurement(f.layout.measurement("01"));
  CHECK(m.status == "failed");
  CHECK_FALSE(m.ok());
  CHECK(m.reason == "identity: symbol clock_gettime");
  CHECK(m.family == "tiny");
  CHECK(m.candidate == "01");
  CHECK(m.hash == f.candidates.content_hash(f.family, "01"));
  CHECK(m.date >= before);
  CHECK(m.date <= after);
  CHECK(written.date == m.date);
  CHECK(written.reason == m.reason);
}

TEST_CASE("a refused identity stops the steps before the device and the golden") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  fs::create_directories(tmp.path() / "not-a-build");
  kopt::measure::Request request;
  request.id = "01";
  request.best = f.best();
  request.identity_dir = (tmp.path() / "not-a-build").string();
  request.hold = kopt::measure::Hold::bind; // a host family's binding needs no gate
  std::ostringstream progress;
  bool held = false;
  kopt::measure::Notes notes;
  notes.held = [&](const kopt::gpu::Binding &) { held = true; };
  kopt::measure::Prepared prepared = kopt::measure::prepare(f, request, progress, notes);
  REQUIRE(prepared.failure);
  CHECK(prepared.failure->step == "identity");
  CHECK(prepared.failure->reason.starts_with("identity: `ninja -C " + request.identity_dir +
                                             " -t deps` "));
  CHECK(prepared.failure->recorded() == prepared.failure->reason);
  CHECK_FALSE(held);
  CHECK_FALSE(prepared.held.binding.ok);
  CHECK_FALSE(fs::exists(f.layout.golden()));
}

TEST_CASE("a failed build records its first error; the targets are built once each") {
  kopt::measure::Failure build{"build", "building candidate_00, candidate_01 exit 1",
                               "[1/2] c++ a.cpp\nk.hpp:3:1: error: expected ';'\n"
                               "ninja: build stopped: subcommand failed.\n"};
  CHECK(build.recorded() ==
        "building candidate_00, candidate_01 exit 1: k.hpp:3:1: error: expected ';'");
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  kopt::measure::Request request;
  request.id = "01";
  request.best = f.best(); // the baseline 00 before the first record
  request.prefix = "p_";
  CHECK(kopt::measure::targets(f, request) ==
        std::vector<std::string>{"p_candidate_00", "p_candidate_01"});
  request.id = "00";
  CHECK(kopt::measure::targets(f, request) == std::vector<std::string>{"p_candidate_00"});
}

TEST_SUITE_END();
