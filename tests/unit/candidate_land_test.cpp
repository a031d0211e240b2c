#include "candidate/land.hpp"
#include "candidate/new_candidate.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using kopt::candidate::CandidateSet;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// The tiny family with 01 (its own header), 02 on 01 (an instance template of its own) and 03
// on 00 (another header), none recorded.
kopt::spec::Family tiny_family(TempDir &tmp) {
  fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
  tmp.write("tiny/candidates/02/candidate.json", R"({"id": "02", "base": "01"})");
  tmp.write("tiny/candidates/02/instances/tiny_big.in", "// 02's big instance\n");
  tmp.write("tiny/candidates/03/candidate.json",
            R"({"id": "03", "base": "00", "hypothesis": "h"})");
  tmp.write("tiny/candidates/03/tiny_kernel.hpp", "// 03's kernel\n");
  return kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
}

} // namespace

TEST_SUITE_BEGIN("candidate::land");

TEST_CASE("landing keeps the landed content and every rebased candidate's") {
  TempDir tmp;
  kopt::spec::Family family = tiny_family(tmp);
  CandidateSet before = CandidateSet::discover(family);
  std::map<std::string, std::string> hashes;
  for (const auto &c : before.all()) {
    hashes[c.id()] = before.content_hash(family, c.id());
  }
  // 00 and 01 are settled (recorded); 03 is not, and is rebased onto 01's files.
  kopt::candidate::LandPlan plan = kopt::candidate::plan_land(family, before, "01", {"00"}, false);
  CHECK(plan.written == std::vector<std::string>{"tiny_kernel.hpp"});
  CHECK(plan.removed == std::vector<std::string>{"00"});
  REQUIRE(plan.rebased.size() == 2);
  kopt::candidate::apply_land(family, before, plan);

  CandidateSet after = CandidateSet::discover(family);
  REQUIRE(after.all().size() == 3);
  CHECK(after.get("01").spec.base.empty());
  CHECK(!fs::exists(family.candidates_dir / "01" / "tiny_kernel.hpp"));
  CHECK(after.get("02").spec.base == "01");
  CHECK(after.get("03").spec.base == "01");
  CHECK(after.get("03").spec.hypothesis == "h");
  CHECK(!fs::exists(family.candidates_dir / "00"));
  for (const std::string id : {"01", "02", "03"}) {
    CHECK(after.content_hash(family, id) == hashes[id]);
  }
  CHECK(kopt::util::read_file(family.dir / "tiny_kernel.hpp") ==
        kopt::util::read_file(fixture("gen/tiny/candidates/01/tiny_kernel.hpp")));
}

TEST_CASE("a candidate that cannot keep its content on the landed files refuses the landing") {
  TempDir tmp;
  kopt::spec::Family family = tiny_family(tmp);
  CandidateSet set = CandidateSet::discover(family);
  std::string header = kopt::util::read_file(family.dir / "tiny_kernel.hpp");
  // 02 overrides tiny_big's template; 03 (unrecorded) has no override to say "the family's".
  CHECK_THROWS_WITH_AS(kopt::candidate::plan_land(family, set, "02", {"00", "01"}, false),
                       "land: candidates 03 cannot keep their content on 02's files (02 overrides "
                       "an instance template they do not): record them first, or give "
                       "--drop-unrecorded; nothing written",
                       kopt::Error);
  CHECK(kopt::util::read_file(family.dir / "tiny_kernel.hpp") == header);
  kopt::candidate::LandPlan plan = kopt::candidate::plan_land(family, set, "02", {}, true);
  CHECK(plan.removed == std::vector<std::string>{"00", "01", "03"});
  CHECK(plan.rebased.empty());
  kopt::candidate::apply_land(family, set, plan);
  CHECK(kopt::util::read_file(family.dir / "instances" / "tiny_big.in") ==
        "// 02's big instance\n");
  CHECK(CandidateSet::discover(family).content_hash(family, "02") ==
        set.content_hash(family, "02"));
}

TEST_CASE("a killed writer's staging folders go, and a folder it moved aside comes back") {
  TempDir tmp;
  kopt::spec::Family family = tiny_family(tmp);
  // A pid above Linux's largest: the writer is gone. 03 was moved aside and not yet replaced.
  fs::path staging = family.candidates_dir / ".new-02-4194400";
  tmp.write("tiny/candidates/.new-02-4194400/candidate.json", R"({"id": "02"})");
  fs::rename(family.candidates_dir / "03", family.candidates_dir / ".old-03-4194400");
  tmp.write("tiny/candidates/.old-01-4194400/candidate.json", R"({"id": "01"})");
  kopt::candidate::NewRequest request;
  request.id = "04";
  request.base = "00";
  kopt::candidate::write_candidate_folder(family.candidates_dir / "04", request,
                                          {{"tiny_kernel.hpp", "// 04\n"}});
  CHECK(!fs::exists(staging));
  CHECK(!fs::exists(family.candidates_dir / ".old-03-4194400"));
  CHECK(!fs::exists(family.candidates_dir / ".old-01-4194400"));
  CHECK(kopt::util::read_file(family.candidates_dir / "03" / "tiny_kernel.hpp") ==
        "// 03's kernel\n");
  CHECK(kopt::util::read_file(family.candidates_dir / "01" / "candidate.json").find("\"base\"") !=
        std::string::npos); // 01 itself, not the stale copy moved aside
  CHECK(CandidateSet::discover(family).all().size() == 5);
}

TEST_SUITE_END();
