#include "candidate/candidate.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// Copies the tiny family into `tmp` and returns its folder.
fs::path tiny_dir(const TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  return tmp.path() / "tiny";
}

} // namespace

TEST_SUITE_BEGIN("candidate::CandidateSet");

TEST_CASE("discover, get and chain") {
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  tmp.write("tiny/candidates/02/candidate.json",
            R"({"id": "02", "base": "01", "hypothesis": "on top of 01", "proposal": "01"})");
  fs::create_directories(dir / "candidates" / ".git");
  auto family = kopt::spec::load_family(dir / "family.json");
  auto set = kopt::candidate::CandidateSet::discover(family);

  REQUIRE(set.all().size() == 3);
  CHECK(set.all()[0].id() == "00");
  CHECK(set.all()[1].id() == "01");
  CHECK(set.all()[2].id() == "02");
  CHECK(set.get("01").spec.target == "M<64");
  CHECK(set.get("01").spec.proposal == "01");
  CHECK(set.get("02").spec.proposal == "01");
  CHECK(set.get("00").spec.target == "global");
  CHECK(set.get("00").spec.base.empty());
  CHECK(set.get("02").dir == dir / "candidates" / "02");

  std::vector<std::string> chain;
  for (const auto *c : set.chain("02")) {
    chain.push_back(c->id());
  }
  CHECK(chain == std::vector<std::string>{"02", "01", "00"});

  CHECK_THROWS_WITH_AS(set.get("07"), "unknown candidate '07' (candidates: 00, 01, 02)",
                       kopt::Error);
}

TEST_CASE("bad candidate folders") {
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  auto family = kopt::spec::load_family(dir / "family.json");
  fs::path candidates = dir / "candidates";

  SUBCASE("a folder without candidate.json is skipped and listed") {
    fs::create_directories(candidates / "scratch");
    auto set = kopt::candidate::CandidateSet::discover(family);
    CHECK(set.skipped() == std::vector<fs::path>{candidates / "scratch"});
    CHECK(set.all().size() == 2);
    CHECK_THROWS_WITH_AS(set.get("scratch"), "unknown candidate 'scratch' (candidates: 00, 01)",
                         kopt::Error);
  }
  SUBCASE("a missing base") {
    tmp.write("tiny/candidates/03/candidate.json", R"({"id": "03", "base": "09"})");
    CHECK_THROWS_WITH_AS(kopt::candidate::CandidateSet::discover(family),
                         ((candidates / "03" / "candidate.json").string() +
                          ": base: unknown candidate '09' (candidates: 00, 01, 03)")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("a base cycle") {
    tmp.write("tiny/candidates/03/candidate.json", R"({"id": "03", "base": "04"})");
    tmp.write("tiny/candidates/04/candidate.json", R"({"id": "04", "base": "03"})");
    CHECK_THROWS_WITH_AS(kopt::candidate::CandidateSet::discover(family),
                         ((candidates / "03" / "candidate.json").string() +
                          ": base: the base chain is a cycle: 03 -> 04 -> 03")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("an id that is not the folder name") {
    tmp.write("tiny/candidates/03/candidate.json", R"({"id": "04", "base": "00"})");
    CHECK_THROWS_WITH_AS(kopt::candidate::CandidateSet::discover(family),
                         ((candidates / "03" / "candidate.json").string() +
                          ": id: '04' does not match the folder name '03'")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("an unknown field in candidate.json") {
    tmp.write("tiny/candidates/03/candidate.json", R"({"id": "03", "bsae": "00"})");
    CHECK_THROWS_WITH_AS(kopt::candidate::CandidateSet::discover(family),
                         ((candidates / "03" / "candidate.json").string() +
                          ": bsae: unknown field, did you mean 'base'?")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("an id that is not digits") {
    tmp.write("tiny/candidates/x1/candidate.json", R"({"id": "x1"})");
    CHECK_THROWS_WITH_AS(kopt::candidate::CandidateSet::discover(family),
                         ((candidates / "x1" / "candidate.json").string() +
                          ": id: expected two to 64 digits, got 'x1'")
                             .c_str(),
                         kopt::Error);
  }
}

TEST_CASE("resolve_sources walks the chain, then the family folder") {
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  tmp.write("tiny/candidates/02/candidate.json", R"({"id": "02", "base": "01"})");
  auto family = kopt::spec::load_family(dir / "family.json");
  auto set = kopt::candidate::CandidateSet::discover(family);

  auto base = set.resolve_sources(family, "00");
  CHECK(base.size() == 2);
  CHECK(base.at("tiny_kernel.hpp") == dir / "tiny_kernel.hpp");
  CHECK(base.at("instance.cpp.in") == dir / "instance.cpp.in");

  auto two = set.resolve_sources(family, "02");
  CHECK(two.at("tiny_kernel.hpp") == dir / "candidates" / "01" / "tiny_kernel.hpp");
  CHECK(two.at("instance.cpp.in") == dir / "instance.cpp.in");

  SUBCASE("a file found nowhere") {
    fs::remove(dir / "instance.cpp.in");
    CHECK_THROWS_WITH_AS(set.resolve_sources(family, "02"),
                         ("instance.cpp.in: not found in candidate 02's chain (02 -> 01 -> 00) "
                          "nor in the family folder " +
                          dir.string())
                             .c_str(),
                         kopt::Error);
  }
}

TEST_CASE("content_hash follows the resolved editable files only") {
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  auto family = kopt::spec::load_family(dir / "family.json");
  auto set = kopt::candidate::CandidateSet::discover(family);
  std::string h00 = set.content_hash(family, "00");
  std::string h01 = set.content_hash(family, "01");
  CHECK(h00.size() == 32);
  CHECK(h00 != h01);
  CHECK(set.content_hash(family, "00") == h00);

  SUBCASE("an editable file of the candidate changes") {
    tmp.write("tiny/candidates/01/tiny_kernel.hpp", "#pragma once // changed\n");
    CHECK(set.content_hash(family, "01") != h01);
    CHECK(set.content_hash(family, "00") == h00);
  }
  SUBCASE("an editable file of the family folder changes") {
    tmp.write("tiny/instance.cpp.in", "int {{symbol}}(int x) { return x; }\n");
    CHECK(set.content_hash(family, "01") != h01);
    CHECK(set.content_hash(family, "00") != h00);
  }
  SUBCASE("the baseline's header changes: 01 has its own copy") {
    tmp.write("tiny/tiny_kernel.hpp", "#pragma once // changed\n");
    CHECK(set.content_hash(family, "00") != h00);
    CHECK(set.content_hash(family, "01") == h01);
  }
  SUBCASE("the tuned table changes") {
    tmp.write("tiny/tuned.csv",
              "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n");
    CHECK(set.content_hash(family, "00") != h00);
  }
  SUBCASE("non-editable files change") {
    tmp.write("tiny/harness.cpp", "int main() { return 1; }\n");
    tmp.write("tiny/candidates/01/notes.md", "tried 4x4 first\n");
    tmp.write("tiny/candidates/01/other.hpp", "#pragma once\n");
    CHECK(set.content_hash(family, "00") == h00);
    CHECK(set.content_hash(family, "01") == h01);
  }
}

TEST_CASE("why_not_plain_inside: regular files through folders alone") {
  using kopt::candidate::Missing;
  using kopt::candidate::why_not_plain_inside;
  TempDir tmp;
  fs::path root = tmp.path() / "root";
  tmp.write("root/instances/a.in", "a\n");
  tmp.write("outside/b.in", "b\n");
  fs::create_symlink("/etc/passwd", root / "instances" / "passwd.in");
  fs::create_directory_symlink(tmp.path() / "outside", root / "linked");
  CHECK(why_not_plain_inside(root, "instances/a.in", Missing::refused) == "");
  CHECK(why_not_plain_inside(root, "instances/passwd.in", Missing::refused) ==
        "is a symlink to /etc/passwd");
  CHECK(why_not_plain_inside(root, "linked/b.in", Missing::refused) ==
        "is under linked, which is a symlink to " + (tmp.path() / "outside").string());
  CHECK(why_not_plain_inside(root, "instances", Missing::refused) == "is a folder");
  CHECK(why_not_plain_inside(root, "../outside/b.in", Missing::refused) == "leaves the folder");
  CHECK(why_not_plain_inside(root, "instances/new.in", Missing::refused) == "does not exist");
  CHECK(why_not_plain_inside(root, "new/new.in", Missing::allowed) == "");
  CHECK(why_not_plain_inside(root, "/dev/null", Missing::refused) == "leaves the folder");

  // write_files refuses before it writes anything: the first file is not written either.
  CHECK_THROWS_WITH_AS(
      kopt::candidate::write_files(root, {{"a.hpp", "x\n"}, {"linked/b.in", "overwritten\n"}}),
      ((root / "linked/b.in").string() + " is under linked, which is a symlink to " +
       (tmp.path() / "outside").string() + ": kopt writes regular files inside " + root.string() +
       " only; refused, nothing written")
          .c_str(),
      kopt::Error);
  CHECK(!fs::exists(root / "a.hpp"));
  CHECK(kopt::util::read_file(tmp.path() / "outside" / "b.in") == "b\n");
}

TEST_CASE("an unknown id: the id of the same number, or that it was landed") {
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  auto family = kopt::spec::load_family(dir / "family.json");
  auto set = kopt::candidate::CandidateSet::discover(family);
  CHECK(kopt::candidate::same_number("1", {"00", "01"}) == "01");
  CHECK(kopt::candidate::same_number("001", {"00", "01"}) == "01");
  CHECK(kopt::candidate::same_number("0", {"00", "01"}) == "00");
  CHECK(kopt::candidate::same_number("01", {"00", "01"}) == "");
  CHECK(kopt::candidate::same_number("1a", {"00", "01"}) == "");
  CHECK(kopt::candidate::same_number("7", {"00", "01"}) == "");
  CHECK_THROWS_WITH_AS(
      set.get("1"), "unknown candidate '1', did you mean '01'? (candidates: 00, 01)", kopt::Error);

  SUBCASE("a landed id names its patch, by value too") {
    fs::path landed = tmp.path() / "ledger" / "landed";
    tmp.write("ledger/landed/03.patch", "--- a\n+++ b\n");
    set.set_landed_dir(landed);
    std::string expected =
        "candidate '03' was landed: kopt land removed its folder; its patch is " +
        (landed / "03.patch").string() + " (candidates: 00, 01)";
    CHECK_THROWS_WITH_AS(set.get("03"), expected.c_str(), kopt::Error);
    CHECK_THROWS_WITH_AS(set.get("3"), expected.c_str(), kopt::Error);
    CHECK_THROWS_WITH_AS(set.get("1"),
                         "unknown candidate '1', did you mean '01'? (candidates: 00, 01)",
                         kopt::Error);
  }
}

TEST_CASE("an id over 64 digits: refused naming the id rule, never the OS's 'File name too long'") {
  std::string id64(64, '1');
  std::string id300(300, '1');
  CHECK(kopt::spec::is_canonical_candidate_id(id64));
  CHECK_FALSE(kopt::spec::is_canonical_candidate_id(id64 + "1"));
  CHECK(kopt::spec::candidate_id_rule() == "two to 64 digits");
  TempDir tmp;
  fs::path dir = tiny_dir(tmp);
  auto set = kopt::candidate::CandidateSet::discover(kopt::spec::load_family(dir / "family.json"));
  CHECK_THROWS_WITH_AS(set.get(id300),
                       ("'" + id300.substr(0, 80) +
                        "... (300 bytes)' is not a candidate id: expected two to 64 digits "
                        "(candidates: 00, 01)")
                           .c_str(),
                       kopt::Error);
  // A candidate.json whose id or base is over the rule is named at its field.
  fs::path folder = dir / "candidates" / (id64 + "1");
  tmp.write(fs::relative(folder / "candidate.json", tmp.path()).string(),
            "{\"id\": \"" + id64 + "1\", \"base\": \"00\"}");
  CHECK_THROWS_WITH_AS(kopt::spec::load_candidate_spec(folder / "candidate.json", id64 + "1"),
                       ((folder / "candidate.json").string() +
                        ": id: expected two to 64 digits, got '" + id64.substr(0, 64) + "1'")
                           .c_str(),
                       kopt::Error);
}

TEST_SUITE_END();
