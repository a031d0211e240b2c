#include "ledger/ledger.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using kopt::decide::Decision;
using kopt::ledger::Files;
using kopt::ledger::Outcome;
using kopt::ledger::Recorded;
using kopt::ledger::State;
using kopt::profile::Measurement;
using kopt::spec::CandidateSpec;

namespace fs = std::filesystem;

namespace {

Measurement measured(const std::string &id, double scale = 1) {
  Measurement m;
  m.family = "gemm";
  m.candidate = id;
  m.hash = "0123456789abcdef" + id;
  m.measured_by = kopt::profile::Source::ncu;
  m.device = "NVIDIA H100";
  m.date = "2026-02-" + id;
  m.config_columns = {"M"};
  m.configs = {{{"16"}, "small", "k" + id + "_small", 100 * scale, 0, 0, true},
               {{"32"}, "small", "k" + id + "_small", 400 * scale, 0, 0, true},
               {{"1024"}, "large", "k_large", 1000 * scale, 0, 0, true}};
  return m;
}

Recorded attempt(const Files &files, const Measurement &best, const Measurement &candidate) {
  Decision d = kopt::decide::decide(best, candidate, {});
  CandidateSpec spec{candidate.candidate, candidate.candidate == "00" ? "" : "00",
                     "idea " + candidate.candidate, "global", ""};
  return kopt::ledger::record(files, d, spec, candidate);
}

} // namespace

TEST_SUITE_BEGIN("ledger::crash");

TEST_CASE("a record that failed half way is completed by the next command, never lost") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  Measurement best = measured("00");
  REQUIRE(attempt(files, best, best).outcome == Outcome::recorded);
  std::string attempts = kopt::util::read_file(files.attempts());
  fs::path blocked;
  SUBCASE("attempts.jsonl a directory") { blocked = files.attempts(); }
  SUBCASE("performance.md a directory (its write fails after attempts.jsonl and state.json)") {
    blocked = files.performance();
  }
  fs::remove(blocked);
  fs::create_directory(blocked);
  CHECK_THROWS_AS(attempt(files, best, measured("01", 1.2)), kopt::Error);
  fs::remove(blocked);
  if (blocked == files.attempts()) {
    kopt::util::write_file_atomic(files.attempts(), attempts);
  }

  // The next command (a record of the same decision) completes or redoes 01's record: the
  // attempt is in every file of the ledger, once.
  attempt(files, best, measured("01", 1.2));
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 2);
  CHECK(kopt::util::read_file(files.attempts()).find("\"candidate\":\"01\"") != std::string::npos);
  CHECK(kopt::util::read_file(files.performance()).find("idea 01") != std::string::npos);
  State s = *kopt::ledger::read_state(files);
  CHECK(s.consecutive_regressions == 1);
  CHECK(s.recorded.size() == 1);
  CHECK(!fs::exists(files.journal()));
}

TEST_CASE("a land line is checked against BEST, and recorded once however often it is completed") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  Measurement best = measured("00");
  CHECK_THROWS_AS(kopt::ledger::land_line(files, {"00", best.hash, {}, {}}), kopt::Error);
  REQUIRE(attempt(files, best, best).outcome == Outcome::recorded);
  CHECK_THROWS_WITH_AS(kopt::ledger::land_line(files, {"01", best.hash, {}, {}}),
                       ("land: candidate 01 (hash " + best.hash.substr(0, 8) +
                        ") is not BEST: BEST is 00 (hash " + best.hash.substr(0, 8) +
                        "); only BEST lands")
                           .c_str(),
                       kopt::Error);
  nlohmann::json line =
      kopt::ledger::land_line(files, {"00", best.hash, {"03"}, {"04"}}, "2026-02-10");
  CHECK(line["reason"] == "the family's files are 00's; removed 03; rebased onto them: 04");
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 1); // only checked, nothing written
  CHECK(kopt::ledger::record_land(files, line));
  CHECK(!kopt::ledger::record_land(files, line));
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 2);
  CHECK(kopt::util::read_file(files.performance()).find("landed: the family's files are 00's") !=
        std::string::npos);
  CHECK(kopt::ledger::read_state(files)->best == "00");
}

TEST_CASE("state.json rebuilt from attempts.jsonl is the state that record wrote") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  Measurement best = measured("00");
  attempt(files, best, best);
  attempt(files, best, measured("01", 1.2));
  attempt(files, best, measured("02", 1.001));
  attempt(files, best, measured("03", 1.3));
  Measurement kept = measured("04", 0.8);
  attempt(files, best, kept);
  attempt(files, kept, measured("05", 1.25));
  State recorded = *kopt::ledger::read_state(files);
  REQUIRE(recorded.kept.size() == 2);
  REQUIRE(recorded.consecutive_regressions == 1);
  std::string md = kopt::util::read_file(files.performance());

  fs::remove(files.state());
  fs::remove(files.performance());
  kopt::ledger::Recorded r = kopt::ledger::rebuild(files, "gemm");
  CHECK(r.message == "rebuilt " + files.state().string() + " from the 6 lines of " +
                         files.attempts().string() + "; performance.md rewritten");
  CHECK(kopt::ledger::to_json(*kopt::ledger::read_state(files)) == kopt::ledger::to_json(recorded));
  CHECK(kopt::util::read_file(files.performance()) == md);
  CHECK_THROWS_WITH_AS(kopt::ledger::rebuild(files, "gemm"),
                       (files.state().string() +
                        ": readable, so it is not rebuilt; move it away first to rebuild it from " +
                        files.attempts().string())
                           .c_str(),
                       kopt::Error);
}

TEST_CASE("a missing state.json next to a non-empty attempts.jsonl is an error, not a new ledger") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  Measurement best = measured("00");
  REQUIRE(attempt(files, best, best).outcome == Outcome::recorded);
  REQUIRE(attempt(files, best, measured("01", 1.2)).outcome == Outcome::recorded);
  std::string expected = files.state().string() + ": missing, but " + files.attempts().string() +
                         " holds 2 lines of history: restore state.json (e.g. from a backup or "
                         "git), or rebuild it from attempts.jsonl with kopt ledger rebuild";

  SUBCASE("deleted") { fs::remove(files.state()); }
  SUBCASE("a dangling link") {
    fs::remove(files.state());
    fs::create_symlink(dir.path() / "nowhere.json", files.state());
    expected = files.state().string() + ": a dangling link, but " + files.attempts().string() +
               " holds 2 lines of history: restore state.json (e.g. from a backup or git), or "
               "rebuild it from attempts.jsonl with kopt ledger rebuild";
  }
  SUBCASE("a link loop") {
    fs::remove(files.state());
    fs::create_symlink(files.state(), files.state());
    expected = files.state().string() + ": a link loop, but " + files.attempts().string() +
               " holds 2 lines of history: restore state.json (e.g. from a backup or git), or "
               "rebuild it from attempts.jsonl with kopt ledger rebuild";
  }
  CHECK_THROWS_WITH_AS(kopt::ledger::read_state(files), expected.c_str(), kopt::Error);
  CHECK_THROWS_WITH_AS(attempt(files, best, best), expected.c_str(), kopt::Error);
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 2);
}

TEST_SUITE_END();
