#include "ledger/ledger.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::ledger::ContentCheck;
using kopt::ledger::Files;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family (candidates 00 and 01, 01 based on 00) copied into `tmp`.
struct Tiny {
  kopt::spec::Family family;
  kopt::candidate::CandidateSet candidates;
  Files files;
};

Tiny tiny(const TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  kopt::spec::Family family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
  kopt::candidate::CandidateSet candidates = kopt::candidate::CandidateSet::discover(family);
  return {std::move(family), std::move(candidates), Files{tmp.path() / "ledger"}};
}

void write_state(const Files &files, const std::string &best, const std::string &hash) {
  kopt::ledger::State state;
  state.family = "tiny";
  state.best = best;
  state.best_hash = hash;
  fs::create_directories(files.dir);
  kopt::util::write_json_atomic(files.state(), kopt::ledger::to_json(state));
}

} // namespace

TEST_SUITE_BEGIN("ledger::best");

TEST_CASE("the baseline is the candidate without a base") {
  TempDir tmp;
  Tiny t = tiny(tmp);
  CHECK(kopt::ledger::baseline(t.family, t.candidates) == "00");
}

TEST_CASE("before the first record BEST is the baseline, not recorded") {
  TempDir tmp;
  Tiny t = tiny(tmp);
  kopt::ledger::Best best = kopt::ledger::resolve_best(t.files, t.family, t.candidates);
  CHECK(best.id == "00");
  CHECK(best.hash == t.candidates.content_hash(t.family, "00"));
  CHECK_FALSE(best.recorded);

  kopt::ledger::Best named =
      kopt::ledger::resolve_best(t.files, t.family, t.candidates, ContentCheck::skip);
  CHECK(named.id == "00");
  CHECK(named.hash.empty());
  CHECK_FALSE(named.recorded);
}

TEST_CASE("with a state BEST is the ledger's, with the hash it was kept with") {
  TempDir tmp;
  Tiny t = tiny(tmp);
  std::string hash = t.candidates.content_hash(t.family, "01");
  write_state(t.files, "01", hash);
  kopt::ledger::Best best = kopt::ledger::resolve_best(t.files, t.family, t.candidates);
  CHECK(best.id == "01");
  CHECK(best.hash == hash);
  CHECK(best.recorded);
}

TEST_CASE("a BEST whose content changed since it was kept is refused, unless only named") {
  TempDir tmp;
  Tiny t = tiny(tmp);
  write_state(t.files, "01", "0000000000000000");
  std::string now = t.candidates.content_hash(t.family, "01");
  std::string dir = t.candidates.get("01").dir.string();
  CHECK_THROWS_WITH_AS(
      kopt::ledger::resolve_best(t.files, t.family, t.candidates),
      ("BEST 01's content changed since it was kept (content hash now " + now +
       ", kept as 0000000000000000; its folder is " + dir + "): restore it (e.g. git checkout -- " +
       dir +
       "), or copy the changed folder to a new candidate id and restore BEST's; a changed "
       "family.json, tuned table or heuristic changes every candidate's hash: keep such a "
       "change with kopt rebase --reason <why>")
          .c_str(),
      kopt::Error);

  kopt::ledger::Best named =
      kopt::ledger::resolve_best(t.files, t.family, t.candidates, ContentCheck::skip);
  CHECK(named.id == "01");
  CHECK(named.hash == "0000000000000000");
  CHECK(named.recorded);
}

TEST_SUITE_END();
