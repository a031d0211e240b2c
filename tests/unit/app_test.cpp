#include "app/app.hpp"

#include "buildinfo/hash_stamp.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

namespace fs = std::filesystem;
using kopt::app::Result;
using kopt::app::Sides;
using kopt::decide::State;
using kopt::test::TempDir;

namespace {

// Plays both variants of an application: each run prints `kopt-app-us: <time>` from the side's
// script, in turn; a side may instead exit 3, hang or print nothing.
class FakeApp : public kopt::util::ProcessRunner {
public:
  std::map<std::string, std::vector<double>> times; ///< by executable: one per run, cycled
  std::map<std::string, int> runs;
  std::string fails;           ///< this executable exits 3 on its third run
  bool print_time = true;      ///< false: no kopt-app-us line (wall time)
  std::string quiet;           ///< this executable alone prints no kopt-app-us line
  std::string extra_line;      ///< this executable prints a second kopt-app-us line
  bool wall_unchanged = false; ///< every run takes as long, whatever time it prints
  /// By executable: each run's wall time in us, cycled (instead of 0.2 s of setup and its time).
  std::map<std::string, std::vector<double>> walls;
  std::string printed;      ///< every run prints this as its kopt-app-us value (not its time)
  std::string leaves;       ///< this executable leaves a process running on its second run
  bool ends_at_exit = true; ///< every run was asked to end when the application exits
  std::vector<std::string> order;

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    const std::string &exe = command.argv.at(0);
    order.push_back(exe);
    int n = runs[exe]++;
    ends_at_exit = ends_at_exit && command.ends_at_exit;
    kopt::util::ProcessResult r;
    r.exit_code = 0;
    if (exe == leaves && n == 1) {
      r.left_running = {"4242 (appd)"}; // what the real runner killed, and named
    }
    if (exe == fails && n == 2) {
      r.exit_code = 3;
      r.err = "out of memory in layer 2\n";
      return r;
    }
    double us = times.at(exe)[static_cast<size_t>(n) % times.at(exe).size()];
    // The whole run: the timed region and 0.2 s of setup, the same on both sides.
    r.seconds = 0.2 + (wall_unchanged ? 1000 : us) / 1e6;
    if (walls.count(exe)) {
      r.seconds = walls[exe][static_cast<size_t>(n) % walls[exe].size()] / 1e6;
    }
    if (print_time && exe != quiet) {
      r.out =
          "checksum: 1.5\nkopt-app-us: " + (printed.empty() ? std::to_string(us) : printed) + "\n";
    }
    if (exe == extra_line) {
      r.out += "kopt-app-us: 1\n"; // printed at exit by code of the candidate's
    }
    return r;
  }
};

kopt::spec::Family family_with_app() {
  kopt::spec::Family f;
  f.name = "gemm";
  f.timeout_s = 10;
  f.app = kopt::spec::App{};
  f.app->command = {"{exe}", "--steps", "4"};
  return f;
}

Sides sides() { return {"00", "h00", "/bin/best", "01", "h01", "/bin/cand"}; }

// BEST's keep test of 01 with traffic rows: 400 us of kernel time per run, 10% less for 01.
kopt::decide::Decision keep_test(double low = -0.12, double high = -0.08) {
  kopt::decide::Decision d;
  d.candidate = "01";
  d.hash = "h01";
  d.best = "00";
  d.best_hash = "h00";
  d.verdict = kopt::decide::Verdict::keep;
  d.file = "results/01/decision.json";
  kopt::decide::Traffic t;
  t.calls = 40;
  t.overall.config_class = "overall";
  t.overall.best_us = 400;
  t.overall.candidate_us = 360;
  t.overall.change = -0.1;
  t.overall.has_interval = true;
  t.overall.low = low;
  t.overall.high = high;
  d.traffic = t;
  return d;
}

} // namespace

TEST_SUITE_BEGIN("app");

TEST_CASE("the A/B alternates the sides and predicts from the traffic rows") {
  FakeApp fake;
  fake.times["/bin/best"] = {1000, 1004, 998, 1001};
  fake.times["/bin/cand"] = {960, 962, 959, 963};
  kopt::decide::Options options;
  Result r = kopt::app::run_ab(family_with_app(), sides(), 6, options, keep_test(), fake, {});
  REQUIRE(r.status == "ok");
  CHECK(r.timed_by == "app");
  CHECK(r.best_us.size() == 6);
  // One untimed run each, then BEST first in even rounds, the candidate first in odd ones.
  REQUIRE(fake.order.size() == 14);
  CHECK(fake.order[2] == "/bin/best");
  CHECK(fake.order[4] == "/bin/cand");
  CHECK(r.change.change == doctest::Approx(-0.04).epsilon(0.05));
  // The sides' times are geomeans over the rounds: their ratio is the change, exactly.
  CHECK(r.change.candidate_us / r.change.best_us - 1 == doctest::Approx(r.change.change));
  CHECK(r.change.state == State::better);
  CHECK(r.passes());
  // 40 us less kernel time of a ~1000 us run: -4%; the interval scales the same way.
  REQUIRE(r.prediction);
  CHECK(r.prediction->kernel_share == doctest::Approx(0.4).epsilon(0.01));
  CHECK(r.prediction->change == doctest::Approx(-0.04).epsilon(0.01));
  CHECK(r.prediction->low == doctest::Approx(-0.048).epsilon(0.01));
  CHECK(r.prediction_inside);
  std::string text = kopt::app::format_result(r);
  CHECK(text.find("predicted: -4.0") != std::string::npos);
  CHECK(text.find("app: pass") != std::string::npos);
}

TEST_CASE("an A/A ties and passes; a slower candidate fails the app test") {
  FakeApp fake;
  fake.times["/bin/best"] = {1000, 1010, 990};
  fake.times["/bin/cand"] = {1005, 995, 1000};
  kopt::decide::Options options;
  Result same = kopt::app::run_ab(family_with_app(), sides(), 6, options, std::nullopt, fake, {});
  CHECK(same.change.state == State::tie);
  CHECK(same.passes());
  CHECK_FALSE(same.prediction);
  CHECK(same.no_prediction.find("has no keep test") != std::string::npos);

  FakeApp slow;
  slow.times["/bin/best"] = {1000, 1002};
  slow.times["/bin/cand"] = {1100, 1101};
  Result r = kopt::app::run_ab(family_with_app(), sides(), 4, options, std::nullopt, slow, {});
  CHECK(r.change.state == State::worse);
  CHECK_FALSE(r.passes());
  CHECK(r.reason.find("got slower beyond 1.00%") != std::string::npos);
}

TEST_CASE("a crashing variant fails the A/B, naming its side and round") {
  FakeApp fake;
  fake.times["/bin/best"] = {1000};
  fake.times["/bin/cand"] = {900};
  fake.fails = "/bin/cand";
  Result r = kopt::app::run_ab(family_with_app(), sides(), 6, {}, std::nullopt, fake, {});
  CHECK(r.status == "failed");
  CHECK_FALSE(r.passes());
  CHECK(r.reason.find("candidate 01's application exited with 3: out of memory in layer 2") !=
        std::string::npos);
  CHECK(r.reason.find("(round 2)") !=
        std::string::npos); // its third run: warm-up, round 1, round 2
  CHECK(kopt::app::to_json(r)["change"].is_null());
}

TEST_CASE("both sides time the same way: wall time, or their own line") {
  FakeApp wall;
  wall.times["/bin/best"] = {1};
  wall.times["/bin/cand"] = {1};
  wall.print_time = false;
  Result r = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, wall, {});
  CHECK(r.timed_by == "wall");
  CHECK(r.best_us.at(0) == doctest::Approx(200001));

  // A candidate that stops printing its time cannot be compared with one that does.
  FakeApp mixed;
  mixed.times["/bin/best"] = {1000};
  mixed.times["/bin/cand"] = {1};
  mixed.quiet = "/bin/cand";
  Result m = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, mixed, {});
  CHECK(m.status == "failed");
  CHECK(m.reason.find("both sides must time the same way") != std::string::npos);
}

TEST_CASE("a printed time the runs' wall times do not show fails the A/B") {
  // Code of the candidate's that prints a second, smaller time at exit.
  FakeApp extra;
  extra.times["/bin/best"] = {1000};
  extra.times["/bin/cand"] = {1000};
  extra.extra_line = "/bin/cand";
  Result twice = kopt::app::run_ab(family_with_app(), sides(), 4, {}, std::nullopt, extra, {});
  CHECK(twice.status == "failed");
  CHECK(twice.reason.find("candidate 01's application printed 2 kopt-app-us: lines") !=
        std::string::npos);

  // A time 20% smaller from a run that takes as long: the wall times say no work was saved.
  FakeApp fake;
  fake.times["/bin/best"] = {1000, 1001};
  fake.times["/bin/cand"] = {800, 801};
  fake.wall_unchanged = true;
  Result r = kopt::app::run_ab(family_with_app(), sides(), 6, {}, std::nullopt, fake, {});
  CHECK(r.status == "failed");
  CHECK(r.reason.find("do not agree with its runs' wall times") != std::string::npos);
  CHECK_FALSE(r.passes());

  // The same saving in the wall times: it stands.
  fake.wall_unchanged = false;
  Result honest = kopt::app::run_ab(family_with_app(), sides(), 6, {}, std::nullopt, fake, {});
  CHECK(honest.status == "ok");
  REQUIRE(honest.wall_gap);
  CHECK((*honest.wall_gap)[0] == doctest::Approx(0).epsilon(0.001));
}

TEST_CASE("a run that leaves a process running fails the A/B, naming it") {
  FakeApp fake;
  fake.times["/bin/best"] = {1000};
  fake.times["/bin/cand"] = {900};
  fake.leaves = "/bin/cand";
  Result r = kopt::app::run_ab(family_with_app(), sides(), 4, {}, std::nullopt, fake, {});
  CHECK(fake.ends_at_exit); // each run ends with the application, whatever holds its output
  CHECK(r.status == "failed");
  CHECK(r.reason == "candidate 01's application left 1 process(es) running after it exited "
                    "(killed: 4242 (appd)): a run may leave nothing running (round 1)");
}

TEST_CASE("a printed time the run cannot have taken, or no number, is quoted as printed") {
  // 1e308 on both sides would tie; a time in ns (1000x) lies above the whole run's wall time.
  for (const char *printed : {"1e308", "1000000000"}) {
    FakeApp fake;
    fake.times["/bin/best"] = {1000};
    fake.times["/bin/cand"] = {1000};
    fake.printed = printed;
    Result r = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, fake, {});
    CHECK(r.status == "failed");
    CHECK(r.reason == "BEST 00's application printed 'kopt-app-us: " + std::string(printed) +
                          "', above its whole run's wall time of 201000 us: implausible (a time "
                          "in other units, or not the run's)");
  }
  FakeApp garbled;
  garbled.times["/bin/best"] = {1000};
  garbled.times["/bin/cand"] = {1000};
  garbled.printed = "12abc";
  Result r = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, garbled, {});
  CHECK(r.reason == "BEST 00's application printed 'kopt-app-us: 12abc': expected a positive "
                    "time in microseconds");
}

TEST_CASE("a faked time is refused at 3 rounds, however noisy the walls; an honest one stands") {
  // BEST times 200 ms of a 230 ms run; the candidate prints 1 us and does all the work, its
  // runs' wall times spread by +-90 ms (a busy machine): the interval over 3 rounds reaches
  // below twice the threshold, the median round does not.
  FakeApp fake;
  fake.times["/bin/best"] = {200000};
  fake.times["/bin/cand"] = {1};
  fake.walls["/bin/best"] = {230000, 230000, 231000, 229000};
  fake.walls["/bin/cand"] = {230000, 140000, 230000, 320000};
  Result r = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, fake, {});
  CHECK(r.status == "failed");
  REQUIRE(r.wall_gap);
  CHECK((*r.wall_gap)[1] < 0.02); // the interval alone let it pass
  CHECK(r.reason.find("do not agree with its runs' wall times: the timed region saved 99.50% of "
                      "BEST's time more than the whole run did in the median round of 3") !=
        std::string::npos);

  // Halving the timed region, with the untimed part varying by 15 ms on both sides: it stands.
  FakeApp honest;
  honest.times["/bin/best"] = {200000};
  honest.times["/bin/cand"] = {100000};
  honest.walls["/bin/best"] = {230000, 230000, 240000, 225000};
  honest.walls["/bin/cand"] = {130000, 145000, 128000, 135000};
  Result h = kopt::app::run_ab(family_with_app(), sides(), 3, {}, std::nullopt, honest, {});
  CHECK(h.status == "ok");
  CHECK(h.change.state == State::better);
}

TEST_CASE("a keep test of other content or another BEST predicts nothing") {
  FakeApp fake;
  fake.times["/bin/best"] = {1000};
  fake.times["/bin/cand"] = {1000};
  kopt::decide::Decision stale = keep_test();
  stale.hash = "older";
  Result r = kopt::app::run_ab(family_with_app(), sides(), 3, {}, stale, fake, {});
  CHECK_FALSE(r.prediction);
  CHECK(r.no_prediction.find("not of this content against this BEST") != std::string::npos);

  // Why there is none names the real cause: no count column under traffic weighting, another
  // weighting, or a keep test that compared no times because the code is identical.
  kopt::decide::Decision no_traffic = keep_test();
  no_traffic.traffic.reset();
  no_traffic.options.weighting = kopt::decide::Weighting::traffic;
  std::string why;
  CHECK_FALSE(kopt::app::predict(no_traffic, 1000, why));
  CHECK(why.find("kopt capture merge") != std::string::npos);
  no_traffic.options.weighting = kopt::decide::Weighting::equal;
  CHECK_FALSE(kopt::app::predict(no_traffic, 1000, why));
  CHECK(why.find("weighs every config equally") != std::string::npos);
  kopt::decide::Decision same = keep_test();
  same.traffic.reset();
  same.identical_to = "BEST 01";
  CHECK_FALSE(kopt::app::predict(same, 1000, why));
  CHECK(why == "the keep test compared no times: the candidate's code is identical to BEST 01");
}

TEST_CASE("kopt-app-us is read from the last such line; app.json reads back") {
  CHECK(kopt::app::reported_us("a\nkopt-app-us: 12.5\n") == doctest::Approx(12.5));
  CHECK(kopt::app::reported_us("  kopt-app-us: 3\nkopt-app-us: 4\n") == doctest::Approx(4));
  CHECK_FALSE(kopt::app::reported_us("no time here\n"));
  CHECK(std::isnan(*kopt::app::reported_us("kopt-app-us: soon\n")));

  FakeApp fake;
  fake.times["/bin/best"] = {1000, 1003};
  fake.times["/bin/cand"] = {950, 951};
  Result r = kopt::app::run_ab(family_with_app(), sides(), 4, {}, keep_test(), fake, {});
  TempDir tmp;
  kopt::app::write_result(tmp.path() / "app.json", r);
  Result back = kopt::app::read_result(tmp.path() / "app.json");
  CHECK(back.change.change == doctest::Approx(r.change.change));
  CHECK(back.change.state == r.change.state);
  REQUIRE(back.prediction);
  CHECK(back.prediction->change == doctest::Approx(r.prediction->change));
  CHECK(back.prediction_inside == r.prediction_inside);
}

TEST_CASE("a variant that is not built, or not of its content, is named") {
  TempDir tmp;
  Sides s = sides();
  s.best_exe = tmp.path() / "missing";
  s.candidate_exe = tmp.write("cand", "@kopt-hash-slot@" + std::string(33, '\0'));
  kopt::buildinfo::stamp_hash(s.candidate_exe, std::string(32, 'a'));
  std::vector<std::string> problems = kopt::app::identity_problems(s);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("candidate 00's application is not built") != std::string::npos);
  CHECK(problems[1].find("carries hash '" + std::string(32, 'a') + "'") != std::string::npos);
}

TEST_SUITE_END();
