#include "ledger/ledger.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using kopt::decide::Decision;
using kopt::decide::Verdict;
using kopt::ledger::Files;
using kopt::ledger::Outcome;
using kopt::ledger::Recorded;
using kopt::ledger::State;
using kopt::profile::Measurement;
using kopt::spec::CandidateSpec;

namespace {

// Two classes, small (M=16, M=32) and large (M=1024); the candidate's times are scaled per class.
Measurement measured(const std::string &id, double small = 1, double large = 1,
                     const std::string &hash = "") {
  Measurement m;
  m.family = "gemm";
  m.candidate = id;
  m.hash = hash.empty() ? "0123456789abcdef" + id : hash;
  m.measured_by = kopt::profile::Source::ncu;
  m.device = "NVIDIA H100";
  m.date = "2026-02-" + id;
  m.config_columns = {"M"};
  m.configs = {{{"16"}, "small", "k" + id + "_small", 100 * small, 0, 0, true},
               {{"32"}, "small", "k" + id + "_small", 400 * small, 0, 0, true},
               {{"1024"}, "large", "k_large", 1000 * large, 0, 0, true}};
  return m;
}

CandidateSpec spec(const std::string &id, const std::string &proposal = "") {
  return {id, id == "00" ? "" : "00", "idea " + id, "global", proposal};
}

// Decides `candidate` against `best` and records it.
Recorded attempt(const Files &files, const Measurement &best, const Measurement &candidate,
                 const std::string &proposal = "", kopt::ledger::Options options = {}) {
  Decision d = kopt::decide::decide(best, candidate, {});
  return kopt::ledger::record(files, d, spec(candidate.candidate, proposal), candidate, options);
}

Files baseline(const kopt::test::TempDir &dir) {
  Files files{dir.path() / "ledger"};
  Measurement m = measured("00");
  Recorded r = attempt(files, m, m);
  REQUIRE(r.outcome == Outcome::recorded);
  return files;
}

// The rows of performance.md's table under `heading` ("" for the results table at the top).
std::vector<std::string> table_rows(const std::string &md, const std::string &heading) {
  size_t from = heading.empty() ? 0 : md.find("\n" + heading + "\n");
  REQUIRE(from != std::string::npos);
  size_t to = md.find("\n## ", from + 1);
  std::vector<std::string> rows;
  for (const auto &line : kopt::util::split(md.substr(from, to - from), '\n')) {
    if (line.rfind("| 2026", 0) == 0) {
      rows.push_back(line);
    }
  }
  return rows;
}

// A table row's cells, trimmed.
std::vector<std::string> cells(const std::string &row) {
  std::vector<std::string> out;
  for (const auto &c : kopt::util::split(row.substr(1, row.size() - 2), '|')) {
    out.emplace_back(kopt::util::trim(c));
  }
  return out;
}

// A content hash that is `hash` whatever BEST is.
std::function<std::string(const std::string &)> hash_is(const std::string &hash) {
  return [hash](const std::string &) { return hash; };
}

} // namespace

TEST_SUITE_BEGIN("ledger");

TEST_CASE("the baseline record creates the state") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  State s = *kopt::ledger::read_state(files);
  CHECK(s.family == "gemm");
  CHECK(s.best == "00");
  CHECK(s.best_hash == "0123456789abcdef00");
  REQUIRE(s.kept.size() == 1);
  CHECK(s.kept[0].status == "baseline");
  CHECK(s.kept[0].kernels == std::vector<std::string>{"k00_small", "k_large"});
  CHECK(s.kept[0].geomean_us == doctest::Approx(341.995));
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 1);
  CHECK(kopt::ledger::summary_line(s) ==
        "BEST 00 (hash 01234567), consecutive regressions 0, running");
}

TEST_CASE("without a state only the baseline is recorded") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  SUBCASE("a candidate first") {
    CHECK_THROWS_WITH_AS(
        attempt(files, measured("00"), measured("01", 0.9, 0.9)),
        (files.state().string() + ": no ledger yet: record the baseline 00 first").c_str(),
        kopt::Error);
  }
  SUBCASE("a baseline that failed") {
    Measurement m = measured("00");
    m.configs[0].err = 0.5;
    CHECK_THROWS_WITH_AS(attempt(files, m, m),
                         "baseline 00 cannot be recorded: incorrect (1 of 3 configs have err != "
                         "0: M=16 (err 0.5))",
                         kopt::Error);
  }
  CHECK_FALSE(std::filesystem::exists(files.state()));
}

TEST_CASE("a keep makes the candidate BEST and adds a row") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 1.03, 1.0));
  Recorded r = attempt(files, measured("00"), measured("02", 0.9, 0.9));
  CHECK(r.outcome == Outcome::recorded);
  CHECK(r.message == "02 kept: BEST is now 02");
  CHECK(r.state.best == "02");
  CHECK(r.state.best_hash == "0123456789abcdef02");
  CHECK(r.state.consecutive_regressions == 0);
  CHECK(r.state.recent_regressions.empty());
  REQUIRE(r.state.kept.size() == 2);
  CHECK(r.state.kept[1].change == doctest::Approx(-0.1));
  CHECK(to_json(*kopt::ledger::read_state(files)) == to_json(r.state));
  CHECK(kopt::util::read_file(files.performance()) ==
        "# gemm: performance\n"
        "\n"
        "Generated by `kopt record`: the baseline and kept candidates (state.json), then every "
        "recorded\nattempt (attempts.jsonl).\n"
        "\n"
        "| date | candidate | hash | status | target | kernel(s) | metric | geomean us | change "
        "vs best | hypothesis |\n"
        "|---|---|---|---|---|---|---|---:|---:|---|\n"
        "| 2026-02-00 | 00 | 01234567 | baseline | global | k00_small, k_large | ncu on NVIDIA "
        "H100 | "
        "341.995 | - | idea 00 |\n"
        "| 2026-02-02 | 02 | 01234567 | keep | global | k02_small, k_large | ncu on NVIDIA H100 | "
        "307.796 | -10.00% | idea 02 |\n"
        "\n"
        "## Attempts\n"
        "\n"
        "Every line of attempts.jsonl in record order: the verdict against the BEST of its day, "
        "each\nclass's change and the overall change (candidate / BEST - 1).\n"
        "\n"
        "| date | candidate | hash | verdict | vs BEST | target | per class | overall | "
        "hypothesis |\n"
        "|---|---|---|---|---|---|---|---:|---|\n"
        "| 2026-02-00 | 00 | 01234567 | baseline | - | - | - | - | - |\n"
        "| 2026-02-01 | 01 | 01234567 | regression | 00 | global | small: +3.00%; large: +0.00% | "
        "+1.99% | idea 01 |\n"
        "| 2026-02-02 | 02 | 01234567 | keep | 00 | global | small: -10.00%; large: -10.00% | "
        "-10.00% | idea 02 |\n");
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 3);
}

TEST_CASE("a row names the build it measured, and a keep of another build says so") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  Measurement candidate = measured("01", 0.9, 0.9);
  best.build = candidate.build = "0123456789ab";
  best.build_flags = candidate.build_flags = "/usr/bin/c++ -O3 -DNDEBUG";
  Recorded r = attempt(files, best, candidate);
  REQUIRE(r.state.kept.size() == 2);
  CHECK(r.state.kept[1].measured_by == "ncu on NVIDIA H100, build 0123456789ab (-O3)");
  CHECK(r.message.find("00's row by ncu on NVIDIA H100:") != std::string::npos);
  CHECK(kopt::util::read_file(files.performance()).find("build 0123456789ab (-O3)") !=
        std::string::npos);
}

TEST_CASE("a keep measured on another machine than BEST's row says so; its row names the GPU") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  Measurement candidate = measured("01", 0.9, 0.9);
  best.device = candidate.device = "NVIDIA H200";
  Recorded r = attempt(files, best, candidate);
  CHECK(r.message == "01 kept: BEST is now 01 (measured by ncu on NVIDIA H200; 00's row by ncu "
                     "on NVIDIA H100: performance.md's geomean us of the two rows compare "
                     "machines or builds, the change compares the candidates)");
  REQUIRE(r.state.kept.size() == 2);
  CHECK(r.state.kept[0].measured_by == "ncu on NVIDIA H100");
  CHECK(r.state.kept[1].measured_by == "ncu on NVIDIA H200");
  std::vector<std::string> rows = table_rows(kopt::util::read_file(files.performance()), "");
  REQUIRE(rows.size() >= 2);
  CHECK(cells(rows[1])[6] == "ncu on NVIDIA H200");
  SUBCASE("the next keep on the same machine: the plain message") {
    Measurement next = measured("02", 0.8, 0.8);
    next.device = "NVIDIA H200";
    CHECK(attempt(files, candidate, next).message == "02 kept: BEST is now 02");
  }
}

TEST_CASE("a side-by-side keep carries its interval into state.json, performance.md and the "
          "history; a ledger without intervals still loads") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  // 4 rounds of 3 launches per config, a little jitter, the candidate 10% faster throughout.
  auto sampled = [](const std::string &id, double scale) {
    Measurement m = measured(id, scale, scale);
    for (auto &c : m.configs) {
      for (int k = 0; k < 4; ++k) {
        c.rounds.push_back({c.us * (1 + 0.001 * k), c.us * (1 - 0.001 * k), c.us});
      }
    }
    return m;
  };
  Measurement best = sampled("00", 1);
  Measurement candidate = sampled("01", 0.9);
  candidate.paired_best = "00";
  candidate.paired_best_hash = best.hash;
  Recorded r = attempt(files, best, candidate);
  REQUIRE(r.outcome == Outcome::recorded);
  REQUIRE(r.state.kept.size() == 2);
  REQUIRE(r.state.kept[1].interval.has_value());
  CHECK(r.state.kept[1].interval->first < -0.09);
  CHECK(r.state.kept[1].interval->second > -0.11);
  std::string md = kopt::util::read_file(files.performance());
  CHECK(md.find("| -10.00% [") != std::string::npos);
  std::string history = kopt::util::read_file(files.attempts());
  CHECK(history.find("\"interval\"") != std::string::npos);

  // state.json as written before intervals existed: the field absent everywhere.
  nlohmann::json old = nlohmann::json::parse(kopt::util::read_file(files.state()));
  for (auto &row : old["kept"]) {
    row.erase("interval");
  }
  kopt::util::write_file_atomic(files.state(), old.dump(2));
  auto loaded = kopt::ledger::read_state(files);
  REQUIRE(loaded.has_value());
  CHECK_FALSE(loaded->kept[1].interval.has_value());
  CHECK(loaded->best == "01");
}

TEST_CASE("regressions count, keep a window of 5 summaries and stop the loop") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  SUBCASE("a regression is summarised") {
    Recorded r = attempt(files, best, measured("01", 1.05, 1.0));
    CHECK(r.message == "01 regressed: 1 of 5 consecutive regressions");
    REQUIRE(r.state.recent_regressions.size() == 1);
    const auto &summary = r.state.recent_regressions[0];
    CHECK(summary.best == "00");
    CHECK(summary.candidate == "01");
    CHECK(summary.hypothesis == "idea 01");
    CHECK(summary.classes[0].config_class == "small");
    CHECK(summary.classes[0].best_us == doctest::Approx(200));
    CHECK(summary.classes[0].candidate_us == doctest::Approx(210));
    CHECK(summary.classes[1].change == doctest::Approx(0));
    CHECK(summary.overall.change == doctest::Approx(0.033063));
  }
  SUBCASE("the window holds the last 5") {
    kopt::ledger::Options options;
    options.max_consecutive = 10;
    for (int i = 1; i <= 7; ++i) {
      attempt(files, best, measured("0" + std::to_string(i), 1.05, 1.0), "", options);
    }
    State s = *kopt::ledger::read_state(files);
    CHECK(s.consecutive_regressions == 7);
    REQUIRE(s.recent_regressions.size() == 5);
    CHECK(s.recent_regressions.front().candidate == "03");
    CHECK(s.recent_regressions.back().candidate == "07");
    CHECK_FALSE(s.stopped);
  }
  SUBCASE("5 in a row stop the loop and write the Stop Summary") {
    Recorded r;
    for (int i = 1; i <= 5; ++i) {
      r = attempt(files, best, measured("0" + std::to_string(i), 1.05, 1.0));
    }
    CHECK(r.message == "05 regressed: 5 of 5 consecutive regressions; stopped");
    CHECK(r.state.stopped);
    CHECK(r.state.stop_reason == "5 consecutive measured regressions");
    CHECK(r.state.stop_date == "2026-02-05");
    std::string md = kopt::util::read_file(files.performance());
    CHECK(md.find("## Stop Summary\n\n- stop time: 2026-02-05\n- stop reason: 5 consecutive "
                  "measured regressions\n- BEST: 00 (hash 01234567)\n- best geomean: 341.995 us "
                  "(ncu on NVIDIA H100)\n- consecutive regressions: 5\n") != std::string::npos);
    CHECK(md.find("| 01 (01234567) vs 00 | 2026-02-01 | idea 01 | global | small: 200.000 -> "
                  "210.000 (+5.00%); large: 1000.000 -> 1000.000 (+0.00%) | 341.995 -> 353.302 "
                  "| +3.31% |\n") != std::string::npos);
    CHECK(md.find("| 05 (01234567) vs 00 |") != std::string::npos);
    // The results table holds the baseline alone; the regressions are in the Attempts table.
    CHECK(table_rows(md, "").size() == 1);
    CHECK(table_rows(md, "## Attempts").size() == 6);
    CHECK_THROWS_WITH_AS(attempt(files, best, measured("06", 0.5, 0.5)),
                         (files.state().string() +
                          ": the ledger stopped on 2026-02-05 (5 consecutive measured "
                          "regressions); no more attempts are recorded")
                             .c_str(),
                         kopt::Error);
  }
}

TEST_CASE("only a keep resets the counter: ties, failures and splits leave it") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  attempt(files, best, measured("01", 1.05, 1.0));
  attempt(files, best, measured("02", 1.05, 1.0));
  SUBCASE("tie") {
    Recorded r = attempt(files, best, measured("03", 1.001, 1.0));
    CHECK(r.message == "03 tied with BEST: regression counter unchanged");
    CHECK(r.state.consecutive_regressions == 2);
    CHECK(r.state.recent_regressions.size() == 2);
  }
  SUBCASE("failed") {
    Measurement crashed = measured("03");
    crashed.status = "failed";
    crashed.reason = "timed out after 300 s";
    Recorded r = attempt(files, best, crashed);
    CHECK(r.message == "03 failed (no comparable measurement): regression counter unchanged");
    CHECK(r.state.consecutive_regressions == 2);
    CHECK(r.state.recent_regressions.size() == 2);
  }
  SUBCASE("split") {
    Recorded r = attempt(files, best, measured("03", 0.8, 1.1));
    CHECK(r.message == "03 split: regression counter unchanged (dispatch small to candidate 03's "
                       "kernel (k03_small) and keep the other classes on BEST 00's)");
    CHECK(r.state.consecutive_regressions == 2);
    CHECK(r.state.recent_regressions.size() == 2);
  }
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 4);
}

TEST_CASE("an agent cannot dodge the stop by alternating regressions with cheap outcomes") {
  // A failing build, a wrong output and a tie (a comment changed) cost nothing to make; were they
  // to reset the counter, regressions between them would never reach the stop.
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  int id = 1;
  auto next = [&] { return (id < 10 ? "0" : "") + std::to_string(id++); };
  Recorded r;
  for (int i = 0; i < 5; ++i) {
    r = attempt(files, best, measured(next(), 1.05, 1.0));
    CHECK(r.state.consecutive_regressions == i + 1);
    if (i == 4) {
      break;
    }
    Measurement cheap = measured(next(), 1.001, 1.0); // a tie
    if (i == 1) {
      cheap.status = "failed";
      cheap.reason = "the build failed";
    } else if (i == 2) {
      cheap = measured(cheap.candidate, 0.9, 0.9);
      cheap.configs[0].err = 0.5;
    }
    r = attempt(files, best, cheap, "p" + std::to_string(i));
    CHECK(r.state.consecutive_regressions == i + 1);
  }
  CHECK(r.state.stopped);
  CHECK(r.state.stop_reason == "5 consecutive measured regressions");
  // The ledger rebuilt from attempts.jsonl says the same.
  kopt::ledger::State rebuilt =
      kopt::ledger::rebuild_state(kopt::ledger::read_attempts(files.attempts()), "gemm");
  CHECK(rebuilt.stopped);
  CHECK(rebuilt.consecutive_regressions == 5);
}

TEST_CASE("an incorrect proposal gets 3 repair attempts, then it is abandoned") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  attempt(files, best, measured("01", 1.05, 1.0));
  Recorded r;
  for (int i = 1; i <= 3; ++i) {
    Measurement broken = measured("02", 0.9, 0.9, "repair" + std::to_string(i));
    broken.configs[2].err = 0.125;
    r = attempt(files, best, broken, "fast-path");
    CHECK(r.state.repair_attempts.at("fast-path") == i);
    if (i < 3) {
      CHECK(r.message ==
            "02 incorrect: repair attempt " + std::to_string(i) + " of 3 for proposal fast-path");
      CHECK(r.state.consecutive_regressions == 1);
      CHECK(r.state.abandoned.empty());
    }
  }
  CHECK(r.message == "02 incorrect: repair attempt 3 of 3 for proposal fast-path; proposal "
                     "abandoned");
  CHECK(r.state.abandoned == std::vector<std::string>{"fast-path"});
  CHECK(r.state.consecutive_regressions == 1); // an abandoned proposal resets nothing
  CHECK(r.state.recent_regressions.size() == 1);
  CHECK(kopt::ledger::format_status(r.state).starts_with(
      "family: gemm\n"
      "BEST: 00 (hash 01234567), geomean 341.995 us (ncu on NVIDIA H100)\n"
      "consecutive regressions: 1\n"
      "repair attempts: fast-path 3 (abandoned)\n"
      "stopped: no\n"));
}

TEST_CASE("performance.md holds the baseline and kept rows, then every attempt") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  attempt(files, best, measured("01", 1.05, 1.0));
  attempt(files, best, measured("02", 1.001, 1.0));
  Measurement broken = measured("03", 0.5, 0.5);
  broken.configs[0].err = 1;
  attempt(files, best, broken);
  attempt(files, best, measured("04", 0.8, 1.1));
  attempt(files, best, measured("05", 0.9, 0.9));
  attempt(files, measured("05", 0.9, 0.9), measured("06", 1.05, 1.05));
  std::string md = kopt::util::read_file(files.performance());
  std::vector<std::string> kept;
  for (const auto &row : table_rows(md, "")) {
    kept.push_back(cells(row)[1] + " " + cells(row)[3]);
  }
  CHECK(kept == std::vector<std::string>{"00 baseline", "05 keep"});
  std::vector<std::string> attempts;
  for (const auto &row : table_rows(md, "## Attempts")) {
    attempts.push_back(cells(row)[1] + " " + cells(row)[3] + " vs " + cells(row)[4]);
  }
  CHECK(attempts == std::vector<std::string>{"00 baseline vs -", "01 regression vs 00",
                                             "02 tie vs 00", "03 incorrect vs 00", "04 split vs 00",
                                             "05 keep vs 00", "06 regression vs 05"});
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 7);
}

TEST_CASE("performance.md's Attempts table is attempts.jsonl in record order") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  attempt(files, best, measured("01", 1.05, 1.0));
  attempt(files, best, measured("02", 1.001, 1.0));
  Measurement faster = measured("03", 0.9, 0.9);
  attempt(files, best, faster);
  attempt(files, faster, measured("04", 1.0, 1.0));
  std::string md = kopt::util::read_file(files.performance());
  CHECK(
      table_rows(md, "## Attempts") ==
      std::vector<std::string>{
          "| 2026-02-00 | 00 | 01234567 | baseline | - | - | - | - | - |",
          "| 2026-02-01 | 01 | 01234567 | regression | 00 | global | small: +5.00%; large: +0.00% "
          "| +3.31% | idea 01 |",
          "| 2026-02-02 | 02 | 01234567 | tie | 00 | global | small: +0.10%; large: +0.00% | "
          "+0.07% | idea 02 |",
          "| 2026-02-03 | 03 | 01234567 | keep | 00 | global | small: -10.00%; large: -10.00% | "
          "-10.00% | idea 03 |",
          "| 2026-02-04 | 04 | 01234567 | regression | 03 | global | small: +11.11%; large: "
          "+11.11% | +11.11% | idea 04 |"});
  // The results table and the Stop Summary are as before: the baseline and the keep only.
  CHECK(table_rows(md, "").size() == 2);
  CHECK(md.find("## Stop Summary") == std::string::npos);
  // Written under the lock with the attempt being recorded: rendering the files as they are
  // now gives the same text.
  CHECK(kopt::ledger::render_performance(*kopt::ledger::read_state(files),
                                         kopt::ledger::read_attempts(files.attempts())) == md);

  SUBCASE("a stop and the events show in the verdict; cells are escaped") {
    kopt::ledger::stop_no_idle_gpu(files, "gemm", "2026-03-01T10:00:00Z");
    std::vector<std::string> rows =
        table_rows(kopt::util::read_file(files.performance()), "## Attempts");
    REQUIRE(rows.size() == 6);
    CHECK(rows.back() == "| 2026-03-01T10:00:00Z | - | - | stopped: no idle GPU for 60 min | - "
                         "| - | - | - | - |");
    nlohmann::json line = kopt::ledger::read_attempts(files.attempts())[1];
    line["event"] = "stopped";
    line["hypothesis"] = "a | b\nc";
    line.erase("classes");
    CHECK(table_rows(kopt::ledger::render_performance(State{}, {line}), "## Attempts") ==
          std::vector<std::string>{"| 2026-02-01 | 01 | 01234567 | regression (stopped) | 00 | "
                                   "global | - | +3.31% | a \\| b c |"});
  }
}

TEST_CASE("recording the same attempt twice does not count twice") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  Measurement best = measured("00");
  attempt(files, best, measured("01", 1.05, 1.0));
  std::string before = kopt::util::read_file(files.state());
  Recorded r = attempt(files, best, measured("01", 1.05, 1.0));
  CHECK(r.outcome == Outcome::duplicate);
  CHECK(r.message == "candidate 01 (hash 01234567) was already recorded as regression against "
                     "BEST 00; nothing changed");
  CHECK(r.state.consecutive_regressions == 1);
  CHECK(kopt::util::read_file(files.state()) == before);
  CHECK(kopt::test::nonempty_lines(files.attempts()) == 2);

  SUBCASE("a new verdict for the same hash is new information") {
    Recorded tie = attempt(files, best, measured("01", 1.001, 1.0));
    CHECK(tie.outcome == Outcome::recorded);
    CHECK(tie.state.consecutive_regressions == 1); // recorded, and only a keep resets
  }
  SUBCASE("BEST itself") {
    CHECK(attempt(files, best, best).outcome == Outcome::candidate_is_best);
  }
}

TEST_CASE("a decision made against another BEST is refused") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 0.9, 0.9));
  CHECK_THROWS_WITH_AS(
      attempt(files, measured("00"), measured("02", 0.8, 0.8)),
      ("decision: the decision for 02 was made against BEST 00 (hash 01234567), but the ledger's "
       "BEST is 01 (hash 01234567, " +
       files.state().string() + "): run kopt decide --candidate 02 again")
          .c_str(),
      kopt::Error);
}

TEST_CASE("rebase carries BEST over a family change: a new hash, a rebase line, decisions "
          "against the new content record") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 1.03, 1.0)); // a regression, recorded against 00
  Measurement best = measured("00", 1, 1, "fedcba9876543210");
  SUBCASE("before the rebase a decision against the new content is stale") {
    CHECK_THROWS_AS(attempt(files, best, measured("02", 0.9, 0.9)), kopt::Error);
  }
  SUBCASE("after it, it records") {
    std::string asked;
    auto hash_now = [&](const std::string &best) {
      asked = best;
      return std::string("fedcba9876543210");
    };
    Recorded r =
        kopt::ledger::rebase(files, hash_now, "heuristic refreshed", "2026-03-02T00:00:00Z");
    CHECK(asked == "00");
    CHECK(r.outcome == Outcome::recorded);
    CHECK(r.message == "rebased BEST 00: content hash 01234567 -> fedcba98 (heuristic "
                       "refreshed); the next keep test measures it beside the candidate");
    State s = *kopt::ledger::read_state(files);
    CHECK(s.best == "00");
    CHECK(s.best_hash == "fedcba9876543210");
    CHECK(s.recorded.empty());
    CHECK(s.consecutive_regressions == 1);
    std::vector<nlohmann::json> lines = kopt::ledger::read_attempts(files.attempts());
    REQUIRE(lines.size() == 3);
    CHECK(lines[2] == nlohmann::json{{"kind", "rebase"},
                                     {"date", "2026-03-02T00:00:00Z"},
                                     {"candidate", "00"},
                                     {"best", "00"},
                                     {"from_hash", "0123456789abcdef00"},
                                     {"hash", "fedcba9876543210"},
                                     {"reason", "heuristic refreshed"}});
    std::vector<std::string> rows =
        table_rows(kopt::util::read_file(files.performance()), "## Attempts");
    REQUIRE(rows.size() == 3);
    CHECK(cells(rows[2])[3] == "rebase from 01234567: heuristic refreshed");
    CHECK(attempt(files, best, measured("02", 0.9, 0.9)).message == "02 kept: BEST is now 02");
  }
  SUBCASE("the same hash again changes nothing") {
    std::string state = kopt::util::read_file(files.state());
    Recorded r = kopt::ledger::rebase(files, hash_is("0123456789abcdef00"), "nothing");
    CHECK(r.outcome == Outcome::identical);
    CHECK(r.message == "BEST 00's content hash is already 01234567: nothing to rebase");
    CHECK(kopt::util::read_file(files.state()) == state);
    CHECK(kopt::test::nonempty_lines(files.attempts()) == 2);
  }
  SUBCASE("a blank reason, no ledger or a stopped one are refused") {
    CHECK_THROWS_WITH_AS(kopt::ledger::rebase(files, hash_is("x"), "  "),
                         "rebase: a reason is required: why BEST's content changed (e.g. "
                         "\"heuristic refreshed from the sweeps of 16\")",
                         kopt::Error);
    Files none{dir.path() / "none"};
    CHECK_THROWS_WITH_AS(kopt::ledger::rebase(none, hash_is("x"), "why"),
                         (none.state().string() + ": no ledger yet: nothing to rebase").c_str(),
                         kopt::Error);
    kopt::ledger::stop_no_idle_gpu(files, "gemm", "2026-03-01T10:00:00Z");
    CHECK_THROWS_WITH_AS(kopt::ledger::rebase(files, hash_is("x"), "why"),
                         (files.state().string() +
                          ": the ledger stopped on 2026-03-01T10:00:00Z (no idle GPU for 60 "
                          "min); nothing is rebased")
                             .c_str(),
                         kopt::Error);
  }
}

TEST_CASE("a bad state.json is reported and never overwritten") {
  kopt::test::TempDir dir;
  Files files{dir.path() / "ledger"};
  SUBCASE("a missing field") {
    dir.write("ledger/state.json", R"({"family": "gemm"})");
    CHECK_THROWS_WITH_AS(attempt(files, measured("00"), measured("01", 0.9, 0.9)),
                         (files.state().string() + ": missing field 'best'").c_str(), kopt::Error);
    CHECK(kopt::util::read_file(files.state()) == R"({"family": "gemm"})");
  }
  SUBCASE("not JSON") {
    dir.write("ledger/state.json", "{\"family\": ");
    CHECK_THROWS_WITH_AS(attempt(files, measured("00"), measured("01", 0.9, 0.9)),
                         doctest::Contains((files.state().string() + ":1:").c_str()), kopt::Error);
    CHECK(kopt::util::read_file(files.state()) == "{\"family\": ");
  }
  CHECK_FALSE(std::filesystem::exists(files.performance()));
  CHECK_FALSE(std::filesystem::exists(files.attempts()));
}

TEST_CASE("no idle GPU for 60 min stops the loop") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  State s = kopt::ledger::stop_no_idle_gpu(files, "gemm", "2026-03-01T10:00:00Z");
  CHECK(s.stopped);
  CHECK(s.stop_reason == "no idle GPU for 60 min");
  CHECK(kopt::ledger::summary_line(s) ==
        "BEST 00 (hash 01234567), consecutive regressions 0, stopped: no idle GPU for 60 min");
  std::string md = kopt::util::read_file(files.performance());
  CHECK(md.find("- stop reason: no idle GPU for 60 min\n") != std::string::npos);
  CHECK(md.find("No measured regressions in the window.\n") != std::string::npos);
  CHECK(kopt::ledger::stop_no_idle_gpu(files, "gemm", "later").stop_date == "2026-03-01T10:00:00Z");
}

TEST_CASE("state.json round-trips") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 1.05, 1.0));
  State s = *kopt::ledger::read_state(files);
  CHECK(kopt::ledger::to_json(kopt::ledger::state_from_json(kopt::ledger::to_json(s), "x")) ==
        kopt::ledger::to_json(s));
}

TEST_CASE("a decision read from a file names it when it is stale or of another candidate") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 0.9, 0.9));
  std::filesystem::path path = dir.path() / "results" / "02" / "decision.json";
  kopt::decide::write_decision(path, kopt::decide::decide(measured("00"), measured("02"), {}));
  Decision stale = kopt::decide::read_decision(path);
  CHECK(stale.file == path.string());
  CHECK_THROWS_WITH_AS(kopt::ledger::record(files, stale, spec("02"), measured("02")),
                       (path.string() +
                        ": the decision for 02 was made against BEST 00 (hash 01234567), but the "
                        "ledger's BEST is 01 (hash 01234567, " +
                        files.state().string() + "): run kopt decide --candidate 02 again")
                           .c_str(),
                       kopt::Error);
  // The issue's case: candidate.json of 00 beside a decision for "0".
  Decision other = stale;
  other.candidate = "0";
  CHECK_THROWS_WITH_AS(
      kopt::ledger::record(files, other, spec("00"), Measurement{}),
      (path.string() + ": the decision is for candidate '0', but the candidate recorded is '00'")
          .c_str(),
      kopt::Error);
  CHECK_THROWS_WITH_AS(
      kopt::ledger::record(files, stale, spec("02"), measured("03")),
      (path.string() + ": the decision is for candidate '02', but the measurement is for '03'")
          .c_str(),
      kopt::Error);
}

TEST_CASE("attempts.jsonl is checked line by line on read") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 0.9, 0.9));
  std::string good = kopt::util::read_file(files.attempts());
  REQUIRE(kopt::ledger::read_attempts(files.attempts()).size() == 2);
  std::string state = kopt::util::read_file(files.state());
  std::string where = files.attempts().string();

  auto refused = [&](const std::string &text, const std::string &message) {
    kopt::util::write_file_atomic(files.attempts(), text);
    CHECK_THROWS_WITH_AS(kopt::ledger::read_attempts(files.attempts()), message.c_str(),
                         kopt::Error);
    // record() reads the ledger first: it refuses the same way and writes nothing.
    CHECK_THROWS_WITH_AS(attempt(files, measured("01"), measured("02", 0.8, 0.8)), message.c_str(),
                         kopt::Error);
    CHECK(kopt::util::read_file(files.state()) == state);
    CHECK(kopt::util::read_file(files.attempts()) == text);
  };
  SUBCASE("a last line cut by a killed process") {
    refused(good + R"({"kind": "attempt", "candidate": "0)",
            where + ":3:36: invalid JSON: invalid string: missing closing quote; last read: "
                    "'\"0'");
  }
  SUBCASE("garbage") {
    refused("\x01garbage\n", where + ":1:1: invalid JSON: invalid literal; last read: '<U+0001>'");
  }
  SUBCASE("an empty line") {
    refused("\n" + good, where + ":1: empty line (expected one JSON object per line)");
  }
  SUBCASE("not an object") {
    refused(good + "[1, 2]\n", where + ":3: expected a JSON object, got [1,2]");
  }
  SUBCASE("an unknown kind") {
    refused(R"({"kind": "keep"})"
            "\n",
            where + R"(:1: kind: expected baseline, attempt, rebase, land or stop, got "keep")");
  }
  SUBCASE("a rebase line without its old hash") {
    refused(R"({"kind": "rebase", "date": "d", "candidate": "00", "best": "00", "hash": "h", )"
            R"("reason": "r"})"
            "\n",
            where + ":1: missing field 'from_hash'");
  }
  SUBCASE("a missing field") {
    refused(R"({"kind": "stop", "date": "2026-11-25"})"
            "\n",
            where + ":1: missing field 'reason'");
  }
  SUBCASE("a field of the wrong type") {
    refused(R"({"kind": "stop", "date": 5, "reason": "x"})"
            "\n",
            where + ":1: field 'date': expected a string, got 5");
  }
  SUBCASE("a counter out of range") {
    nlohmann::json line = nlohmann::json::parse(kopt::util::split(good, '\n')[1]);
    line["consecutive_regressions"] = -3;
    refused(good + line.dump() + "\n",
            where + ":3: field 'consecutive_regressions': expected an integer from 0 to "
                    "2147483647, got -3");
  }
}

TEST_CASE("the lines record writes read back as typed records that write the same lines") {
  kopt::test::TempDir dir;
  Files files = baseline(dir);
  attempt(files, measured("00"), measured("01", 0.9, 0.9));
  attempt(files, measured("01", 0.9, 0.9), measured("02", 1.2, 1.2));
  kopt::ledger::rebase(files, hash_is("feedbead"), "heuristic refreshed", "2026-03-01");
  std::vector<std::string> lines = kopt::util::split(kopt::util::read_file(files.attempts()), '\n');
  lines.pop_back(); // after the last newline
  REQUIRE(lines.size() == 4);
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    auto a = kopt::ledger::attempt_from_json(nlohmann::json::parse(lines[i]), "attempts.jsonl");
    CHECK(kopt::ledger::to_json(a).dump() == lines[i]);
  }
  auto read = kopt::ledger::read_attempt_records(files.attempts());
  CHECK(read[1].verdict == Verdict::keep);
  CHECK(read[2].verdict == Verdict::regression);
  CHECK(read[2].classes.at(0).state == kopt::decide::State::worse);
  CHECK(read[3].kind == kopt::ledger::Kind::rebase);
}

TEST_SUITE_END();
