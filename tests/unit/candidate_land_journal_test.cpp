#include "candidate/land_journal.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using kopt::candidate::CandidateSet;
using kopt::candidate::LandJournal;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family with 03 on 00 (its own header), unrecorded; 01 is BEST and lands.
kopt::spec::Family tiny_family(TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  tmp.write("tiny/candidates/03/candidate.json",
            R"({"id": "03", "base": "00", "hypothesis": "h"})");
  tmp.write("tiny/candidates/03/tiny_kernel.hpp", "// 03's kernel\n");
  return kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
}

// Every file under `dir` with its bytes: what a landing leaves, to compare two of them.
std::map<std::string, std::string> tree_of(const fs::path &dir) {
  std::map<std::string, std::string> tree;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      tree[fs::relative(entry.path(), dir).string()] = kopt::util::read_file(entry.path());
    }
  }
  return tree;
}

// A landing of 01 (00 settled, 03 rebased) with a ledger line and no commit, and its state folder.
struct Landing {
  TempDir tmp;
  kopt::spec::Family family = tiny_family(tmp);
  kopt::spec::Layout layout{tmp.path() / "state"};
  LandJournal journal;
  std::vector<nlohmann::json> recorded; ///< what the ledger step was given, in order

  Landing() {
    CandidateSet set = CandidateSet::discover(family);
    journal = kopt::candidate::journal_of(
        set, kopt::candidate::plan_land(family, set, "01", {"00"}, false));
    journal.patch_dir = layout.ledger / "landed";
    journal.patches = {{"00", "no patch, a test's bytes\n"}};
    journal.ledger_line = {{"kind", "land"}, {"candidate", "01"}};
  }
  kopt::candidate::RecordLine record() {
    return [this](const nlohmann::json &line) { recorded.push_back(line); };
  }
  fs::path path() const { return kopt::candidate::land_journal_path(layout); }
};

// A pid that ran and is gone: a killed writer's.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::_exit(0);
  }
  ::waitpid(pid, nullptr, 0);
  return pid;
}

} // namespace

TEST_SUITE_BEGIN("candidate::land_journal");

TEST_CASE("the journal reads back as written, any bytes included") {
  LandJournal journal;
  journal.id = "01";
  journal.hash = "abc";
  std::string every;
  for (int b = 0; b < 256; ++b) {
    every += static_cast<char>(b);
  }
  for (const std::string bytes : {std::string(), std::string("a"), std::string("ab"),
                                  std::string("abc"), std::string("abcd"), every}) {
    journal.files["f" + std::to_string(bytes.size())] = bytes;
  }
  journal.folders["01"] = {{"candidate.json", "{\"id\": \"01\"}\n"}};
  journal.removed = {"00"};
  journal.patch_dir = "/ledger/landed";
  journal.patches = {{"00", "\xff\xfe not UTF-8\n"}};
  journal.ledger_line = {{"kind", "land"}};
  journal.commit_message = "kopt: land";
  nlohmann::json j = nlohmann::json::parse(kopt::util::dump_json(to_json(journal)));
  LandJournal back = kopt::candidate::land_journal_from_json(j, "land.journal");
  CHECK(back.id == "01");
  CHECK(back.hash == "abc");
  CHECK(back.files == journal.files);
  CHECK(back.folders == journal.folders);
  CHECK(back.removed == journal.removed);
  CHECK(back.patch_dir == journal.patch_dir);
  CHECK(back.patches == journal.patches);
  CHECK(back.ledger_line == journal.ledger_line);
  CHECK(back.commit_message == "kopt: land");
}

TEST_CASE("a journal that names a folder outside the candidates, or bytes not base64, is refused") {
  LandJournal journal;
  journal.id = "01";
  nlohmann::json j = to_json(journal);
  j["removed"] = {"../src"};
  CHECK_THROWS_WITH_AS(kopt::candidate::land_journal_from_json(j, "land.journal"),
                       "land.journal: removed: '../src' is no candidate id", kopt::Error);
  j = to_json(journal);
  j["files"] = {{"a.hpp", "not*base64"}};
  CHECK_THROWS_WITH_AS(kopt::candidate::land_journal_from_json(j, "land.journal"),
                       "land.journal: files.a.hpp: not base64 (a '*')", kopt::Error);
  j = to_json(journal);
  j["folders"] = {{"01", {{"../../outside.hpp", ""}}}};
  CHECK_THROWS_WITH_AS(kopt::candidate::land_journal_from_json(j, "land.journal"),
                       "land.journal: folders.01: '../../outside.hpp' is no relative path inside "
                       "the folder",
                       kopt::Error);
  j.erase("commit_message");
  CHECK_THROWS_AS(kopt::candidate::land_journal_from_json(j, "land.journal"), kopt::Error);
}

TEST_CASE("a landing writes the tree, the patches and the ledger line, then removes its journal") {
  Landing landing;
  kopt::util::RealProcessRunner runner;
  CHECK(kopt::candidate::run_land(landing.family, landing.layout, landing.journal, landing.record(),
                                  runner) == "");
  CHECK(!fs::exists(landing.path()));
  CHECK(!kopt::candidate::land_pending(landing.layout));
  REQUIRE(landing.recorded.size() == 1);
  CHECK(landing.recorded[0] == landing.journal.ledger_line);
  CHECK(kopt::util::read_file(landing.layout.ledger / "landed" / "00.patch") ==
        "no patch, a test's bytes\n");
  CandidateSet after = CandidateSet::discover(landing.family);
  CHECK(after.get("01").spec.base.empty());
  CHECK(after.get("03").spec.base == "01");
  CHECK(!fs::exists(landing.family.candidates_dir / "00"));
  CHECK(kopt::util::read_file(landing.family.dir / "tiny_kernel.hpp") ==
        kopt::util::read_file(fixture("gen/tiny/candidates/01/tiny_kernel.hpp")));
}

TEST_CASE("a journal in place is completed, whatever of it ran; twice gives the same tree") {
  Landing done;
  kopt::util::RealProcessRunner runner;
  kopt::candidate::run_land(done.family, done.layout, done.journal, done.record(), runner);
  std::map<std::string, std::string> landed = tree_of(done.family.dir);

  // Killed after the journal and half the folders, with a staging folder and a temp file left.
  Landing killed;
  kopt::util::write_json_atomic(killed.path(), to_json(killed.journal));
  kopt::candidate::apply_tree(killed.family, killed.journal);
  fs::path staging = killed.family.candidates_dir / (".new-03-" + std::to_string(dead_pid()));
  killed.tmp.write("tiny/candidates/" + staging.filename().string() + "/candidate.json.tmp.x1",
                   "{\"id\"");
  killed.tmp.write("tiny/tiny_kernel.hpp.tmp.AbCdEf", "// half");
  REQUIRE(kopt::candidate::land_pending(killed.layout));
  std::vector<std::string> notes = kopt::candidate::complete_land(
      killed.family, killed.layout, killed.record(), runner, kopt::candidate::FamilyLock::take);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "completed the interrupted land of candidate 01 from " +
                        killed.path().string() +
                        " (2 temp files and staging folders of its writes removed): the family's "
                        "files, candidate folders, ledger line are the landing's");
  CHECK(!fs::exists(killed.path()));
  CHECK(!fs::exists(staging));
  CHECK(tree_of(killed.family.dir) == landed);
  CHECK(killed.recorded.size() == 1);
  // Nothing pending: nothing done, nothing said.
  CHECK(kopt::candidate::complete_land(killed.family, killed.layout, killed.record(), runner)
            .empty());
  CHECK(killed.recorded.size() == 1);
}

TEST_CASE("a journal that never completed is rolled back: its temp file goes, the tree stays") {
  Landing landing;
  std::map<std::string, std::string> before = tree_of(landing.family.dir);
  landing.tmp.write("state/land.journal.tmp.Q1w2E3", "{\"candidate\": \"01\", \"fol");
  REQUIRE(kopt::candidate::land_pending(landing.layout));
  kopt::util::RealProcessRunner runner;
  std::vector<std::string> notes =
      kopt::candidate::complete_land(landing.family, landing.layout, landing.record(), runner);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].starts_with("rolled back an interrupted land: its journal " +
                             landing.path().string() + " was never completed"));
  CHECK(!kopt::candidate::land_pending(landing.layout));
  CHECK(tree_of(landing.family.dir) == before);
  CHECK(landing.recorded.empty());
}

TEST_CASE("a step that fails keeps the journal, naming it; the next command completes it") {
  Landing landing;
  kopt::util::RealProcessRunner runner;
  auto full = [](const nlohmann::json &) {
    throw kopt::Error("attempts.jsonl: No space left on device");
  };
  CHECK_THROWS_WITH_AS(
      kopt::candidate::run_land(landing.family, landing.layout, landing.journal, full, runner),
      ("attempts.jsonl: No space left on device; the land of candidate 01 is "
       "kept in " +
       landing.path().string() +
       ": the next kopt command on this family completes it (once the cause is "
       "fixed)")
          .c_str(),
      kopt::Error);
  CHECK(fs::exists(landing.path()));
  CHECK_THROWS_WITH_AS(
      kopt::candidate::complete_land(landing.family, landing.layout, full, runner),
      ("attempts.jsonl: No space left on device; while completing the land of candidate 01 "
       "kept in " +
       landing.path().string() + ": fix the cause and run kopt again")
          .c_str(),
      kopt::Error);
  CHECK(fs::exists(landing.path()));
  CHECK(kopt::candidate::complete_land(landing.family, landing.layout, landing.record(), runner)
            .size() == 1);
  CHECK(landing.recorded.size() == 1);
  CHECK(!fs::exists(landing.path()));
}

TEST_SUITE_END();
