#include "ledger/ledger.hpp"

#include "temp_dir.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::ledger::Files;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family (00 and 01, 01 based on 00) in `tmp`, with a copy of 01 as 02.
struct Tiny {
  kopt::spec::Family family;
  kopt::candidate::CandidateSet candidates;
  Files files;
};

Tiny tiny_with_copy(const TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  fs::path candidates = tmp.path() / "tiny" / "candidates";
  fs::copy(candidates / "01", candidates / "02", fs::copy_options::recursive);
  nlohmann::json spec = kopt::util::read_json(candidates / "02" / "candidate.json");
  spec["id"] = "02";
  kopt::util::write_json_atomic(candidates / "02" / "candidate.json", spec);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::candidate::CandidateSet set = kopt::candidate::CandidateSet::discover(family);
  return {std::move(family), std::move(set), Files{tmp.path() / "ledger"}};
}

} // namespace

TEST_SUITE_BEGIN("ledger::identical_to");

TEST_CASE("a candidate with BEST's content is identical to BEST; BEST never to itself") {
  TempDir tmp;
  Tiny t = tiny_with_copy(tmp);
  kopt::ledger::Best best{"01", t.candidates.content_hash(t.family, "01")};
  CHECK(kopt::ledger::identical_to(t.files, t.family, t.candidates, "02", best) == "BEST 01");
  CHECK(kopt::ledger::identical_to(t.files, t.family, t.candidates, "01", best) == "");
  kopt::ledger::Best baseline{"00", t.candidates.content_hash(t.family, "00")};
  CHECK(kopt::ledger::identical_to(t.files, t.family, t.candidates, "02", baseline) == "");
}

TEST_CASE("a candidate with a recorded attempt's content names that attempt") {
  TempDir tmp;
  Tiny t = tiny_with_copy(tmp);
  kopt::ledger::State state;
  state.family = "tiny";
  state.best = "00";
  state.best_hash = t.candidates.content_hash(t.family, "00");
  state.recorded.push_back({"01", t.candidates.content_hash(t.family, "01"), "regression"});
  fs::create_directories(t.files.dir);
  kopt::util::write_json_atomic(t.files.state(), kopt::ledger::to_json(state));
  kopt::ledger::Best best{state.best, state.best_hash};
  CHECK(kopt::ledger::identical_to(t.files, t.family, t.candidates, "02", best) == "01");
  CHECK(kopt::ledger::identical_to(t.files, t.family, t.candidates, "01", best) == "");
}

TEST_SUITE_END();
