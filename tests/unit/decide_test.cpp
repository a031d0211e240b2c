#include "decide/decide.hpp"

#include "temp_dir.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

using kopt::decide::decide;
using kopt::decide::Decision;
using kopt::decide::HarnessTime;
using kopt::decide::Options;
using kopt::decide::Request;
using kopt::decide::State;
using kopt::decide::Verdict;
using kopt::profile::Measurement;
using kopt::profile::Source;

namespace {

// Two classes of two configs each: small (M=16, M=32) and large (M=1024, M=2048); the
// candidate's times are BEST's scaled per class.
Measurement measured(const std::string &id, double small = 1, double large = 1) {
  Measurement m;
  m.family = "gemm";
  m.candidate = id;
  m.hash = "hash" + id;
  m.measured_by = Source::ncu;
  m.device = "NVIDIA H100";
  m.date = "2026-01-" + id + "T00:00:00Z";
  m.config_columns = {"M"};
  m.configs = {{{"16"}, "small", "k" + id + "_small", 100 * small, 110, 0, true},
               {{"32"}, "small", "k" + id + "_small", 200 * small, 210, 0, true},
               {{"1024"}, "large", "k" + id + "_large", 1000 * large, 1100, 0, true},
               {{"2048"}, "large", "k" + id + "_large", 4000 * large, 4100, 0, true}};
  return m;
}

Request request(const std::string &target = "global") {
  Request r;
  r.target = target;
  return r;
}

} // namespace

TEST_SUITE_BEGIN("decide");

TEST_CASE("a global candidate that improves every class is kept") {
  Decision d = decide(measured("00"), measured("01", 0.9, 0.95), request());
  CHECK(d.verdict == Verdict::keep);
  CHECK(d.reason == "every class improved beyond noise (overall -7.53%)");
  REQUIRE(d.classes.size() == 2);
  CHECK(d.classes[0].config_class == "small");
  CHECK(d.classes[0].configs == 2);
  CHECK(d.classes[0].ratio == doctest::Approx(0.9));
  CHECK(d.classes[0].best_us == doctest::Approx(141.42135));
  CHECK(d.classes[0].state == State::better);
  CHECK(d.classes[1].config_class == "large");
  CHECK(d.classes[1].change == doctest::Approx(-0.05));
  CHECK(d.winning.empty()); // split only: a keep takes every class
  REQUIRE(d.overall);
  CHECK(d.overall->configs == 4);
}

TEST_CASE("a target class improving keeps while others stay within the 2% rule") {
  SUBCASE("the other class may get worse by up to 2%") {
    Decision d = decide(measured("00"), measured("01", 0.95, 1.015), request("small"));
    CHECK(d.verdict == Verdict::keep);
    CHECK(d.reason == "target small improved -5.00%, no other class regressed more than 2%");
    CHECK(d.classes[1].state == State::worse);
  }
  SUBCASE("more than 2% worse elsewhere is a split naming the winning classes") {
    Decision d = decide(measured("00"), measured("01", 0.95, 1.03), request("small"));
    CHECK(d.verdict == Verdict::split);
    CHECK(d.reason == "small improved beyond noise while large +3.00% regressed more than 2%");
    CHECK(d.winning == std::vector<std::string>{"small"});
    CHECK(d.split_advice == "dispatch small to candidate 01's kernel (k01_small) and keep the "
                            "other classes on BEST 00's");
  }
  SUBCASE("a global candidate with a class more than 2% worse is a split too") {
    Decision d = decide(measured("00"), measured("01", 1.04, 0.9), request());
    CHECK(d.verdict == Verdict::split);
    CHECK(d.winning == std::vector<std::string>{"large"});
  }
}

TEST_CASE("regressions") {
  SUBCASE("no class improves and one is worse beyond noise") {
    Decision d = decide(measured("00"), measured("01", 1.03, 1.015), request());
    CHECK(d.verdict == Verdict::regression);
    CHECK(d.reason == "no class improved beyond noise; worse: small +3.00%, large +1.50%");
  }
  SUBCASE("the target class got worse") {
    Decision d = decide(measured("00"), measured("01", 1.015, 0.995), request("small"));
    CHECK(d.verdict == Verdict::regression);
    CHECK(d.reason == "target small regressed +1.50%");
  }
}

TEST_CASE("the overall row has a state of its own: beyond the threshold it is better or worse") {
  Decision worse = decide(measured("00"), measured("01", 19.48, 19.48), request());
  CHECK(worse.verdict == Verdict::regression);
  REQUIRE(worse.overall);
  CHECK(worse.overall->change == doctest::Approx(18.48));
  CHECK(worse.overall->state == State::worse);
  Decision better = decide(measured("00"), measured("01", 0.9, 0.95), request());
  CHECK(better.overall->state == State::better);
  Decision tie = decide(measured("00"), measured("01", 0.995, 1.003), request());
  CHECK(tie.overall->state == State::tie);
  // The table prints it, and decision.json keeps it.
  CHECK(kopt::decide::format_table(worse).find("worse") != std::string::npos);
}

TEST_CASE("ties") {
  SUBCASE("every class within noise") {
    Decision d = decide(measured("00"), measured("01", 0.995, 1.003), request());
    CHECK(d.verdict == Verdict::tie);
    CHECK(d.reason == "no class changed beyond noise (overall -0.10%)");
    CHECK(d.classes[0].state == State::tie);
  }
  SUBCASE("global needs every class") {
    Decision d = decide(measured("00"), measured("01", 0.9, 1.0), request());
    CHECK(d.verdict == Verdict::tie);
    CHECK(d.reason ==
          "target global needs every class to improve; improved: small -10.00%; not: large +0.00%");
    CHECK(d.winning.empty()); // a tie names no classes to dispatch; the reason says which moved
  }
  SUBCASE("the target within noise, another class better") {
    Decision d = decide(measured("00"), measured("01", 0.995, 0.9), request("small"));
    CHECK(d.verdict == Verdict::tie);
    CHECK(d.reason == "target small within noise (-0.50%); improved elsewhere: large -10.00%");
  }
  SUBCASE("deciding BEST against itself") {
    Decision d = decide(measured("00"), measured("00"), request());
    CHECK(d.verdict == Verdict::keep);
    CHECK(d.reason == "candidate is BEST");
    CHECK(d.overall->ratio == doctest::Approx(1));
  }
}

TEST_CASE("a small change seen twice in a row stays a tie") {
  Measurement best = measured("00");
  Decision first = decide(best, measured("01", 0.995, 0.994), request());
  CHECK(first.verdict == Verdict::tie);
  Measurement again = measured("01", 0.996, 0.993);
  again.date = "2026-01-01T01:00:00Z";
  Decision second = decide(best, again, request());
  CHECK(second.verdict == Verdict::tie);
  for (const auto &row : second.classes) {
    CHECK(row.state == State::tie);
    CHECK_FALSE(row.repeated);
  }
}

TEST_CASE("correctness") {
  SUBCASE("configs with err != 0 are named with their err") {
    Measurement c = measured("01", 0.9, 0.9);
    c.configs[1].err = 0.25;
    c.configs[2].err_known = false;
    Decision d = decide(measured("00"), c, request());
    CHECK(d.verdict == Verdict::incorrect);
    CHECK(d.reason == "2 of 4 configs have err != 0: M=32 (err 0.25), M=1024 (err not compared)");
    REQUIRE(d.incorrect.size() == 2);
    CHECK(d.incorrect[0].config == "M=32");
    CHECK(d.incorrect[0].err == 0.25);
    CHECK_FALSE(d.incorrect[1].err_known);
    CHECK(d.classes.empty());
  }
  SUBCASE("a hash that is not the candidate's content hash") {
    Request r = request();
    r.expected_hash = "hash01-expected";
    Decision d = decide(measured("00"), measured("01", 0.9, 0.9), r);
    CHECK(d.verdict == Verdict::incorrect);
    CHECK(d.reason == "hash mismatch: the harness printed hash01, candidate 01's content hash is "
                      "hash01-expected (the build did not use the candidate's sources)");
  }
  SUBCASE("a config BEST has and the candidate lacks") {
    Measurement c = measured("01", 0.9, 0.9);
    c.configs.pop_back();
    Decision d = decide(measured("00"), c, request());
    CHECK(d.verdict == Verdict::incorrect);
    CHECK(d.reason == "no result for 1 of 4 configs: M=2048");
  }
}

TEST_CASE("failed: no comparable measurement") {
  SUBCASE("a crashed candidate") {
    Measurement c = measured("01");
    c.status = "failed";
    c.reason = "harness killed by signal 11 (Segmentation fault)";
    Decision d = decide(measured("00"), c, request());
    CHECK(d.verdict == Verdict::failed);
    CHECK(d.reason == "candidate 01 failed: harness killed by signal 11 (Segmentation fault)");
  }
  SUBCASE("a missing measurement.json") {
    Decision d = decide(measured("00"),
                        kopt::decide::missing_measurement("01", "/s/results/01/measurement.json"),
                        request());
    CHECK(d.verdict == Verdict::failed);
    CHECK(d.reason ==
          "candidate 01 failed: no measurement: /s/results/01/measurement.json does not exist");
  }
  SUBCASE("BEST failed") {
    Measurement b = measured("00");
    b.status = "failed";
    b.reason = "timed out after 300 s";
    CHECK(decide(b, measured("01"), request()).reason ==
          "BEST 00 has no usable measurement: timed out after 300 s");
  }
  SUBCASE("BEST's measurement is not the ledger's BEST") {
    Request r = request();
    r.best_hash = "ledger-hash";
    CHECK(decide(measured("00"), measured("01"), r).reason ==
          "BEST 00's measurement has hash hash00, expected ledger-hash");
  }
  SUBCASE("an extra config") {
    Measurement c = measured("01");
    c.configs.push_back({{"4096"}, "large", "k", 1, 1, 0, true});
    CHECK(decide(measured("00"), c, request()).reason ==
          "configs differ from BEST's: the candidate also ran M=4096");
  }
  SUBCASE("different config columns") {
    Measurement c = measured("01");
    c.config_columns = {"N"};
    CHECK(decide(measured("00"), c, request()).reason ==
          "configs differ from BEST's: columns N vs BEST's M");
  }
  SUBCASE("different sources") {
    Measurement c = measured("01", 0.5, 0.5);
    c.measured_by = Source::events;
    Decision d = decide(measured("00"), c, request());
    CHECK(d.verdict == Verdict::failed);
    CHECK(d.reason == "not comparable: BEST measured by ncu, candidate by events (compare them "
                      "anyway with --allow-mixed-timers)");
  }
  SUBCASE("a profiler that failed leaves harness time, and the reason is said") {
    Measurement c = measured("01", 0.5, 0.5);
    c.profiled = false;
    CHECK(decide(measured("00"), c, request()).reason ==
          "not comparable: BEST measured by ncu, candidate by events (compare them anyway with "
          "--allow-mixed-timers)");
    c.reason = "unprofiled: the timed ranges in t.csv are not the harness timer's";
    CHECK(decide(measured("00"), c, request()).reason ==
          "not comparable: BEST measured by ncu, candidate by events (compare them anyway with "
          "--allow-mixed-timers); candidate's times: unprofiled: the timed ranges in t.csv are "
          "not the harness timer's");
  }
  SUBCASE("two timers: refused unless asked, and then the verdict says so") {
    Measurement c = measured("01", 0.5, 0.5);
    c.measured_by = Source::cupti;
    Decision refused = decide(measured("00"), c, request());
    CHECK(refused.verdict == Verdict::failed);
    CHECK(refused.reason.starts_with("not comparable: BEST measured by ncu, candidate by cupti"));
    Options asked;
    asked.mixed_timers = kopt::decide::MixedTimers::allow;
    Decision d = decide(measured("00"), c, request(), asked);
    CHECK(d.verdict == Verdict::keep);
    CHECK(d.reason.ends_with("; timers differ (BEST measured by ncu, candidate by cupti), "
                             "compared as asked"));
    Decision back = kopt::decide::decision_from_json(kopt::decide::to_json(d), "decision.json");
    CHECK(back.options.mixed_timers == kopt::decide::MixedTimers::allow);
  }
  SUBCASE("two builds: refused unless asked, and then the verdict says so") {
    Measurement b = measured("00");
    b.build = "aaaaaaaaaaaa";
    b.build_flags = "/usr/bin/c++ -std=c++17";
    Measurement c = measured("01", 0.5, 0.5);
    c.build = "bbbbbbbbbbbb";
    c.build_flags = "/usr/bin/c++ -O3 -DNDEBUG -std=c++17";
    Decision refused = decide(b, c, request());
    CHECK(refused.verdict == Verdict::failed);
    CHECK(refused.reason ==
          "not comparable: BEST measured build aaaaaaaaaaaa (-O0 (no -O): /usr/bin/c++ "
          "-std=c++17), candidate build bbbbbbbbbbbb (-O3: /usr/bin/c++ -O3 -DNDEBUG -std=c++17) "
          "(compare them anyway with --allow-mixed-builds)");
    Options asked;
    asked.mixed_builds = kopt::decide::MixedBuilds::allow;
    Decision d = decide(b, c, request(), asked);
    CHECK(d.verdict == Verdict::keep);
    CHECK(d.reason.find("; builds differ (BEST aaaaaaaaaaaa") != std::string::npos);
    CHECK(d.build == "bbbbbbbbbbbb");
    Decision back = kopt::decide::decision_from_json(kopt::decide::to_json(d), "decision.json");
    CHECK(back.options.mixed_builds == kopt::decide::MixedBuilds::allow);
    CHECK(back.build_flags == c.build_flags);
    // A side whose build is unknown (an older measurement) is compared, as before.
    b.build.clear();
    CHECK(decide(b, c, request()).verdict == Verdict::keep);
  }
  SUBCASE("a target class the measurement lacks") {
    Decision d = decide(measured("00"), measured("01", 0.9, 0.9), request("huge"));
    CHECK(d.verdict == Verdict::failed);
    CHECK(d.reason ==
          "target class 'huge' is not a config class of this measurement (classes: small, large)");
  }
}

TEST_CASE("counted kernels outside kernel_regex are named in the verdict and decision.json") {
  Measurement candidate = measured("01", 1, 1);
  candidate.configs[0].outside_regex = {{"helper_work", 0.99}};
  candidate.configs[1].outside_regex = {{"helper_work", 0.98}, {"memset_kernel", 0.01}};
  Decision d = decide(measured("00"), candidate, request());
  CHECK(d.verdict == Verdict::tie);
  CHECK(kopt::decide::format_verdict(d) ==
        "verdict: tie (no class changed beyond noise (overall +0.00%); counted kernels outside "
        "kernel_regex: helper_work (98.3% of the time of 2 configs), memset_kernel (1.0% of the "
        "time of 1 config))\n");
  REQUIRE(d.outside_regex.size() == 2);
  CHECK(d.outside_regex[0].share == doctest::Approx((0.99 * 100 + 0.98 * 200) / 300));
  nlohmann::json j = kopt::decide::to_json(d);
  CHECK(j["outside_kernel_regex"][0] == nlohmann::json{{"kernel", "helper_work"},
                                                       {"share", d.outside_regex[0].share},
                                                       {"configs", 2}});
  Decision back = kopt::decide::decision_from_json(j, "decision.json");
  REQUIRE(back.outside_regex.size() == 2);
  CHECK(back.outside_regex[1].kernel == "memset_kernel");
  CHECK(back.outside_regex[1].configs == 1);
}

TEST_CASE("harness time alone never keeps") {
  Measurement best = measured("00");
  Measurement candidate = measured("01", 0.5, 0.5);
  best.measured_by = candidate.measured_by = Source::events;
  SUBCASE("refused by default, with the table still filled in") {
    Decision d = decide(best, candidate, request());
    CHECK(d.verdict == Verdict::failed);
    CHECK(d.reason == "harness time alone never keeps a candidate: both measurements are events "
                      "timings (allow them with --allow-harness-time)");
    CHECK(d.classes.size() == 2);
  }
  SUBCASE("allowed with the flag") {
    Options o;
    o.harness_time = HarnessTime::allow;
    CHECK(decide(best, candidate, request(), o).verdict == Verdict::keep);
  }
  SUBCASE("chrono is the host backend's profiler and counts") {
    best.measured_by = candidate.measured_by = Source::chrono;
    CHECK(decide(best, candidate, request()).verdict == Verdict::keep);
  }
}

TEST_CASE("options change the thresholds") {
  Options o;
  o.threshold = 0.001;
  CHECK(decide(measured("00"), measured("01", 0.995, 0.995), request(), o).verdict ==
        Verdict::keep);
  o = Options{};
  o.max_regression = 0.05;
  CHECK(decide(measured("00"), measured("01", 0.95, 1.03), request("small"), o).verdict ==
        Verdict::keep);
}

TEST_CASE("changes print as signed percentages") {
  CHECK(kopt::decide::format_change(-0.0523) == "-5.23%");
  CHECK(kopt::decide::format_change(0.03) == "+3.00%");
  CHECK(kopt::decide::format_change(-0.00001) == "+0.00%");
}

TEST_CASE("the table and the verdict line") {
  Decision d = decide(measured("00"), measured("01", 0.95, 1.03), request("small"));
  CHECK(kopt::decide::format_table(d) ==
        "class   configs      best us      cand us    ratio    change  state\n"
        "small         2      141.421      134.350   0.9500    -5.00%  better\n"
        "large         2     2000.000     2060.000   1.0300    +3.00%  worse\n"
        "overall       4      531.830      526.081   0.9892    -1.08%\n"
        "unpaired: BEST and the candidate were not measured side by side with samples "
        "(decided on geomeans, threshold 1.00%)\n");
  CHECK(kopt::decide::format_verdict(d) ==
        "verdict: split (small improved beyond noise while large +3.00% regressed more than 2%)\n"
        "split advice: dispatch small to candidate 01's kernel (k01_small) and keep the other "
        "classes on BEST 00's\n");
}

TEST_CASE("decision.json round-trips and reports bad fields") {
  kopt::test::TempDir dir;
  Measurement c = measured("01", 0.9, 0.9);
  c.configs[0].err_known = false;
  for (const Decision &d : {decide(measured("00"), measured("01", 0.95, 1.03), request("small")),
                            decide(measured("00"), c, request())}) {
    auto path = dir.path() / "results" / "01" / "decision.json";
    kopt::decide::write_decision(path, d);
    CHECK(to_json(kopt::decide::read_decision(path)) == to_json(d));
  }
  auto bad = dir.write("bad.json", R"({"family": "gemm"})");
  CHECK_THROWS_WITH_AS(kopt::decide::read_decision(bad),
                       (bad.string() + ": missing field 'candidate'").c_str(), kopt::Error);
}

TEST_SUITE_END();
