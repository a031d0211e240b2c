#include "decide/decide.hpp"
#include "ledger/record_candidate.hpp"
#include "measure/loaded_family.hpp"
#include "round/steps.hpp"

#include "loaded_tiny.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

#include <fstream>

namespace fs = std::filesystem;
using kopt::decide::Decision;
using kopt::decide::Verdict;
using kopt::measure::LoadedFamily;
using kopt::profile::Measurement;
using kopt::test::loaded_tiny;
using kopt::test::TempDir;

namespace {

std::string hash_of(const LoadedFamily &f, const std::string &id) {
  return f.candidates.content_hash(f.family, id);
}

// A measurement of `id` with `hash`, measured beside BEST 00 (of `best_hash`) when it is not 00.
Measurement measured(const std::string &id, const std::string &hash,
                     const std::string &best_hash = "") {
  Measurement m;
  m.family = "tiny";
  m.candidate = id;
  m.hash = hash;
  m.date = "2026-11-27T10:00:00Z";
  m.config_columns = {"M"};
  m.configs.push_back({{"64"}, "small", "k", 1.0, 1.0, 0, true, {{1.0, 1.1}, {1.0, 0.9}}});
  if (!best_hash.empty()) {
    m.paired_best = "00";
    m.paired_best_hash = best_hash;
  }
  return m;
}

void write(const fs::path &path, const Measurement &m) {
  fs::create_directories(path.parent_path());
  kopt::profile::write_measurement(path, m);
}

// decide_candidate(01) against BEST 00; it must throw before it writes decision.json.
std::string decide_error(const LoadedFamily &f) {
  try {
    kopt::round::decide_candidate(f, "01", f.best(), {});
  } catch (const kopt::Error &e) {
    CHECK_FALSE(fs::exists(f.layout.decision("01")));
    return e.what();
  }
  FAIL("decide_candidate did not refuse");
  return "";
}

} // namespace

TEST_SUITE_BEGIN("decide::measured");

TEST_CASE("decide refuses a measurement of another candidate (a copy of BEST's)") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  std::string best = hash_of(f, "00");
  // Copied from BEST and relabelled with 01's hash: once "candidate is BEST, keep".
  write(f.layout.measurement("01"), measured("00", hash_of(f, "01")));
  write(f.layout.measurement("00"), measured("00", best));
  CHECK(decide_error(f) == f.layout.measurement("01").string() +
                               ": candidate: expected 01, got 00: a measurement of another "
                               "candidate; run candidate_01_bench again");
}

TEST_CASE("decide refuses a measurement of other content than the candidate's now") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  std::string best = hash_of(f, "00");
  std::string own = hash_of(f, "01");
  write(f.layout.measurement("01"), measured("01", "stale", best));
  write(f.layout.paired_best("01"), measured("00", best));
  CHECK(decide_error(f) == f.layout.measurement("01").string() + ": hash: expected " + own +
                               ", got stale: measured from other content than candidate 01's "
                               "now; run candidate_01_bench again");

  SUBCASE("a measurement that says ok and printed no hash") {
    write(f.layout.measurement("01"), measured("01", "", best));
    CHECK(decide_error(f) == f.layout.measurement("01").string() + ": hash: expected " + own +
                                 ", got (none): measured from other content than candidate 01's "
                                 "now; run candidate_01_bench again");
  }
}

TEST_CASE("decide refuses a side-by-side measurement whose BEST side is not BEST now") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  std::string best = hash_of(f, "00");
  std::string own = hash_of(f, "01");
  SUBCASE("beside another candidate") {
    Measurement m = measured("01", own, best);
    m.paired_best = "01";
    write(f.layout.measurement("01"), m);
    CHECK(decide_error(f) == f.layout.measurement("01").string() +
                                 ": paired_best: expected 00, got 01: measured beside another "
                                 "candidate than BEST; run candidate_01_bench again");
  }
  SUBCASE("beside BEST's older content") {
    write(f.layout.measurement("01"), measured("01", own, "old"));
    CHECK(decide_error(f) == f.layout.measurement("01").string() + ": paired_best_hash: expected " +
                                 best +
                                 ", got old: measured beside other content than BEST 00's; run "
                                 "candidate_01_bench again");
  }
  SUBCASE("BEST's samples of other content") {
    write(f.layout.measurement("01"), measured("01", own, best));
    write(f.layout.paired_best("01"), measured("00", "forged"));
    CHECK(decide_error(f) == f.layout.paired_best("01").string() + ": hash: expected " + best +
                                 ", got forged: measured from other content than candidate 00's "
                                 "now; run candidate_01_bench again");
  }
}

TEST_CASE("a failed measurement without a hash is decided failed, bound to the content now") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  Measurement m = measured("01", "", hash_of(f, "00"));
  m.status = "failed";
  m.reason = "harness killed by signal 11";
  m.configs.clear();
  write(f.layout.measurement("01"), m);
  write(f.layout.paired_best("01"), measured("00", hash_of(f, "00")));
  Decision d = kopt::round::decide_candidate(f, "01", f.best(), {});
  CHECK(d.verdict == Verdict::failed);
  CHECK(d.hash == hash_of(f, "01"));
  SUBCASE("candidate-first: it failed in round 1, before BEST's harness ran") {
    m.paired_best_hash = "";
    write(f.layout.measurement("01"), m);
    Measurement best = measured("00", "");
    best.status = "failed";
    best.reason = "not measured: the side-by-side run stopped when the other side failed";
    best.configs.clear();
    write(f.layout.paired_best("01"), best);
    Decision first = kopt::round::decide_candidate(f, "01", f.best(), {});
    CHECK(first.verdict == Verdict::failed);
    CHECK(first.reason.find("harness killed by signal 11") != std::string::npos);
  }
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("ledger::record_candidate");

namespace {

// A keep decision of candidate `id` with `hash`, against BEST 00, written where record reads it.
void write_keep(const LoadedFamily &f, const std::string &id, const std::string &hash) {
  Decision d;
  d.family = "tiny";
  d.candidate = id;
  d.hash = hash;
  d.best = "00";
  d.best_hash = hash_of(f, "00");
  d.verdict = Verdict::keep;
  d.reason = "every class improved beyond noise (overall -50.00%)";
  fs::create_directories(f.layout.results_dir("01"));
  kopt::decide::write_decision(f.layout.decision("01"), d);
}

std::string record_error(const LoadedFamily &f) {
  try {
    kopt::ledger::record_candidate(f.layout, f.family, f.candidates, "01");
  } catch (const kopt::Error &e) {
    CHECK_FALSE(fs::exists(f.layout.ledger)); // nothing written, not even the baseline
    return e.what();
  }
  FAIL("record_candidate did not refuse");
  return "";
}

} // namespace

TEST_CASE("record refuses a decision whose hash is not the candidate's content hash") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  std::string own = hash_of(f, "01");
  std::string file = f.layout.decision("01").string();
  SUBCASE("a decision.json edited by hand") {
    write_keep(f, "01", "abc");
    CHECK(record_error(f) ==
          file + ": hash: expected " + own +
              ", got abc: candidate 01's content is not what was decided "
              "(changed since, or edited); run kopt decide --candidate 01 again");
  }
  SUBCASE("the candidate edited after its decision") {
    write_keep(f, "01", own);
    std::ofstream(tmp.path() / "tiny" / "candidates" / "01" / "tiny_kernel.hpp", std::ios::app)
        << "// faster now\n";
    CHECK(record_error(f) == file + ": hash: expected " + hash_of(f, "01") + ", got " + own +
                                 ": candidate 01's content is not what was decided (changed "
                                 "since, or edited); run kopt decide --candidate 01 again");
  }
}

TEST_CASE("record refuses a decision of another candidate") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  write_keep(f, "00", hash_of(f, "00"));
  CHECK(record_error(f) == f.layout.decision("01").string() +
                               ": candidate: expected 01, got 00: a decision of another "
                               "candidate; run kopt decide --candidate 01 again");
}

TEST_CASE("record refuses a measurement that is no longer the one decided") {
  TempDir tmp;
  LoadedFamily f = loaded_tiny(tmp);
  std::string own = hash_of(f, "01");
  write_keep(f, "01", own);
  write(f.layout.measurement("01"), measured("01", "other"));
  CHECK(record_error(f) ==
        f.layout.measurement("01").string() + ": hash: expected " + own +
            ", got other: measured from other content than candidate 01's now; run "
            "candidate_01_bench and "
            "kopt decide --candidate 01 again");
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("decide::read_decision");

namespace {

nlohmann::json decision_json() {
  Decision d;
  d.family = "tiny";
  d.candidate = "01";
  d.hash = "h01";
  d.best = "00";
  d.best_hash = "h00";
  d.verdict = Verdict::tie;
  d.reason = "no class changed beyond noise";
  d.classes.push_back({"small", 1, 2.0, 2.0, 1.0, 0.0, true, -0.01, 0.01});
  return kopt::decide::to_json(d);
}

} // namespace

TEST_CASE("a decision's options, verdict and numbers are what decide can write") {
  CHECK(kopt::decide::decision_from_json(decision_json(), "d.json").verdict == Verdict::tie);
  nlohmann::json j = decision_json();
  SUBCASE("noise") {
    j["noise"] = -1;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: noise: expected a finite number in [0, 1], got -1");
  }
  SUBCASE("noise written as null (NaN)") {
    j["noise"] = nullptr;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: field 'noise' has the wrong type");
  }
  SUBCASE("max_regression") {
    j["max_regression"] = 5;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: max_regression: expected a finite number in [0, 1], got 5");
  }
  SUBCASE("confidence") {
    j["confidence"] = 0.1;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: confidence: expected a finite number in [0.5, 1], got 0.1");
  }
  SUBCASE("verdict") {
    j["verdict"] = "kept";
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: verdict: expected one of keep, tie, regression, split, "
                        "incorrect, failed, got 'kept'");
  }
  SUBCASE("a class's ratio") {
    j["classes"][0]["ratio"] = -2;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: classes[0]: ratio: expected a finite number >= 0, got -2");
  }
  SUBCASE("an interval upside down") {
    j["classes"][0]["high"] = -0.5;
    REQUIRE_THROWS_WITH(kopt::decide::decision_from_json(j, "d.json"),
                        "d.json: classes[0]: high: expected a finite number >= -0.01, got -0.5");
  }
}

TEST_SUITE_END();
