#include "ledger/ledger.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using kopt::decide::State;
using kopt::decide::Verdict;
using kopt::ledger::Attempt;
using kopt::ledger::Event;
using kopt::ledger::Kind;

namespace {

// Lines of each kind as the ledger writes them (docs/FORMATS.md, attempts.jsonl).
const char *const kLines[] = {
    R"({"build":"1f2e3d4c5b6a","build_flags":"-O3","candidate":"00","configs":3,"configs_hash":"c0","date":"2026-02-00","geomean_us":341.995,"hash":"h00","hypothesis":"baseline","kernels":["k_large","k_small"],"kind":"baseline","measured_by":"ncu on NVIDIA H100","target":"global"})",
    R"({"best":"00","best_hash":"h00","best_us":341.995,"build":"1f2e3d4c5b6a","build_flags":"-O3","candidate":"01","classes":[{"best_us":200.0,"candidate_us":180.0,"change":-0.1,"class":"small","interval":[-0.12,-0.08],"state":"better"},{"best_us":1000.0,"candidate_us":990.0,"change":-0.01,"class":"large","interval":null,"state":"tie"}],"configs":3,"configs_hash":"c0","consecutive_regressions":0,"date":"2026-02-01","event":"","geomean_us":300.5,"hash":"h01","hypothesis":"wider tiles","kernels":["k_large","k_small"],"kind":"attempt","measured_by":"ncu on NVIDIA H100","method":"paired","other_build":"candidate 01 measured build aa; BEST 00 build bb","overall_change":-0.05,"overall_interval":[-0.07,-0.03],"overall_state":"better","proposal":"01","reason":"every class improved","target":"global","traffic":{"best_us":50.0,"candidate_us":45.0,"change":-0.1,"class":"overall","interval":[-0.2,0.0],"state":"tie"},"verdict":"keep","weighting":"traffic"})",
    R"({"best":"01","best_hash":"h01","best_us":null,"build":"","build_flags":"","candidate":"02","classes":[],"configs":0,"configs_hash":"","consecutive_regressions":5,"date":"2026-02-02","event":"stopped","geomean_us":null,"hash":"h02","hypothesis":"","kernels":[],"kind":"attempt","measured_by":"","method":"means","overall_change":null,"overall_interval":null,"overall_state":null,"proposal":"p","reason":"no build","target":"small","traffic":null,"verdict":"failed","weighting":"equal"})",
    R"({"best":"01","candidate":"01","date":"2026-02-03","from_hash":"h01","hash":"h01b","kind":"rebase","reason":"heuristic refreshed"})",
    R"({"best":"01","candidate":"01","date":"2026-02-04","hash":"h01b","kind":"land","reason":"the family's files are 01's","rebased":["03"],"removed":["02"]})",
    R"({"date":"2026-02-05","kind":"stop","reason":"no idle GPU for 60 min"})",
};

std::string history() {
  std::string text;
  for (const char *line : kLines) {
    text += std::string(line) + "\n";
  }
  return text;
}

// The message read_attempt_records throws for `text`, "" when it reads.
std::string error_of(const kopt::test::TempDir &dir, const std::string &text) {
  try {
    kopt::ledger::read_attempt_records(dir.write("attempts.jsonl", text));
  } catch (const kopt::Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE_BEGIN("ledger");

TEST_CASE("each kind of attempts.jsonl line reads into the typed record and writes back the same") {
  kopt::test::TempDir dir;
  std::vector<Attempt> read = kopt::ledger::read_attempt_records(dir.write("a.jsonl", history()));
  REQUIRE(read.size() == std::size(kLines));
  for (size_t i = 0; i < read.size(); ++i) {
    CAPTURE(kLines[i]);
    CHECK(read[i].line == static_cast<int>(i + 1));
    CHECK(kopt::ledger::to_json(read[i]).dump() == kLines[i]);
  }
  CHECK(read[0].kind == Kind::baseline);
  CHECK(read[0].geomean_us == 341.995);
  CHECK_FALSE(read[0].verdict);
  const Attempt &keep = read[1];
  CHECK(keep.verdict == Verdict::keep);
  CHECK(keep.overall_state == State::better);
  CHECK(keep.weighting == kopt::decide::Weighting::traffic);
  CHECK(keep.method == kopt::decide::Method::paired);
  REQUIRE(keep.classes.size() == 2);
  CHECK(keep.classes[0].state == State::better);
  CHECK(keep.classes[0].interval == std::make_pair(-0.12, -0.08));
  CHECK_FALSE(keep.classes[1].interval);
  REQUIRE(keep.traffic);
  CHECK(keep.traffic->state == State::tie);
  CHECK(read[2].event == Event::stopped);
  CHECK(read[2].verdict == Verdict::failed);
  CHECK_FALSE(read[2].overall_state);
  CHECK(read[3].kind == Kind::rebase);
  CHECK(read[3].from_hash == "h01");
  CHECK(read[4].removed == std::vector<std::string>{"02"});
  CHECK(read[5].is_event());
}

TEST_CASE("the lines of a ledger recorded on an H200 write back byte for byte") {
  std::filesystem::path file = std::filesystem::path(KOPT_HARNESS_DIR) / ".." / "bench" / "data" /
                               "cuda_paged_decode" / "h200_2026-11-29" / "call6" / "attempts.jsonl";
  std::vector<std::string> lines = kopt::util::split(kopt::util::read_file(file), '\n');
  lines.pop_back(); // after the last newline
  std::vector<Attempt> read = kopt::ledger::read_attempt_records(file);
  REQUIRE(read.size() == lines.size());
  for (size_t i = 0; i < read.size(); ++i) {
    CHECK(kopt::ledger::to_json(read[i]).dump() == lines[i]);
  }
}

TEST_CASE("a line written before a field was kept reads without it") {
  kopt::test::TempDir dir;
  auto read = kopt::ledger::read_attempt_records(dir.write(
      "a.jsonl",
      R"({"kind":"attempt","date":"d","candidate":"01","hash":"h","best":"00","best_hash":"b","proposal":"","target":"global","hypothesis":"","verdict":"tie","reason":"","overall_change":0.001,"consecutive_regressions":0,"event":"","classes":[{"class":"small","change":0.001,"interval":null}]})"
      "\n"));
  REQUIRE(read.size() == 1);
  CHECK_FALSE(read[0].overall_state);
  CHECK_FALSE(read[0].weighting);
  REQUIRE(read[0].classes.size() == 1);
  CHECK_FALSE(read[0].classes[0].state);
  CHECK_FALSE(read[0].classes[0].best_us);
  CHECK(kopt::ledger::to_json(read[0].classes[0], kopt::ledger::RowShape::log).dump() ==
        R"({"change":0.001,"class":"small","interval":null,"state":""})");
}

TEST_CASE("a bad value in attempts.jsonl names the file, the line and the field") {
  kopt::test::TempDir dir;
  std::string where = (dir.path() / "attempts.jsonl").string() + ":2: ";
  auto with = [&](const std::string &from, const std::string &to) {
    std::string text = history();
    size_t at = text.find(from, text.find('\n'));
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  CHECK(error_of(dir, history()).empty());
  CHECK(error_of(dir, with(R"("verdict":"keep")", R"("verdict":"kept")")) ==
        where + "verdict: expected one of keep, tie, regression, split, incorrect, failed, got "
                "'kept'");
  CHECK(error_of(dir, with(R"("state":"better"})", R"("state":"faster"})")) ==
        where + "classes[0]: state: expected one of better, worse, tie, got 'faster'");
  CHECK(error_of(dir, with(R"("event":"")", R"("event":"gone")")) ==
        where + "event: expected one of \"\", abandoned, stopped, got 'gone'");
  CHECK(error_of(dir, with(R"("weighting":"traffic")", R"("weighting":"calls")")) ==
        where + "weighting: expected one of equal, count, traffic, got 'calls'");
  CHECK(error_of(dir, with(R"("overall_interval":[-0.07,-0.03])", R"("overall_interval":[1])")) ==
        where + "overall_interval: expected [low, high] or null, got [1]");
  CHECK(error_of(dir, with(R"("overall_state":"better")", R"("overall_state":3)")) ==
        where + "field 'overall_state' has the wrong type");
  CHECK(error_of(dir, with(R"("overall_change":-0.05)", R"("overall_change":"x")")) ==
        where + "field 'overall_change': expected a number or null, got \"x\"");
}

TEST_SUITE_END();
