#include "temp_dir.hpp"

#include "profile/bench.hpp"
#include "profile/cupti_trace.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/read_file.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using kopt::profile::attribute_cupti_trace;
using kopt::profile::parse_cupti_trace;
using kopt::profile::ProfileOptions;
using kopt::test::fixture;

namespace {

// The blockscale GEMM's BEST, one benchmark run on an H100: 73 configs, 5 timed runs each.
const char *kTrace = "cupti/blockscale_best.cupti_trace.csv";

std::string trace_text() { return kopt::util::read_file(fixture(kTrace)); }

ProfileOptions options(int runs, const std::string &regex = "gemm_a8w8_blockscale") {
  ProfileOptions o;
  o.kernel_regex = regex;
  o.runs_per_config = runs;
  return o;
}

// The trace with `from` replaced by `to` once (the test fails when `from` is not there).
std::string edited(const std::string &from, const std::string &to) {
  std::string text = trace_text();
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

kopt::profile::ProfileReport attribute(const std::string &text, int configs = 73, int runs = 5) {
  return attribute_cupti_trace(parse_cupti_trace(text, "trace.csv"), configs, options(runs),
                               "trace.csv");
}

} // namespace

TEST_SUITE_BEGIN("profile::cupti");

TEST_CASE("a real trace: range r is timed run r % repeat of config r / repeat") {
  auto trace = parse_cupti_trace(trace_text(), kTrace);
  CHECK(trace.complete);
  CHECK(trace.ranges == 365);
  CHECK(trace.dropped == 0);
  CHECK(trace.anomalies.empty());
  REQUIRE(trace.activities.size() == 365);
  CHECK(trace.activities[0].kind == "kernel");
  CHECK(trace.activities[0].name ==
        "void a8w8::gemm_a8w8_blockscale<16, 64, 1, 4, 6>(a8w8::Params)");
  CHECK(trace.activities[0].end_ns - trace.activities[0].start_ns == 37025);

  auto report = attribute_cupti_trace(trace, 73, options(5), kTrace);
  REQUIRE(report.profiled);
  REQUIRE(report.configs.size() == 73);
  const auto &first = report.configs[0];
  CHECK(first.range == "config_0");
  REQUIRE(first.run_ns.size() == 5);
  // Runs 0-4 of the trace's first lines: 37025, 36993, 36448, 36513, 36545 ns.
  CHECK(first.run_ns == std::vector<double>{37025, 36993, 36448, 36513, 36545});
  CHECK(first.launches == 5);
  REQUIRE(first.kernels.size() == 1);
  CHECK(first.kernels[0].family);
  CHECK(first.outside_regex().empty());
  // The last config is M=8192: its kernel takes about 1.9 ms.
  CHECK(report.configs[72].mean_us() > 1900);
  CHECK(report.configs[72].mean_us() < 2000);
}

TEST_CASE("every kernel, copy and set in a range counts; those outside kernel_regex are named") {
  std::string text = trace_text();
  size_t end = text.find("# end");
  REQUIRE(end != std::string::npos);
  text.insert(end, "0,memcpy,1795824653785509574,1795824653785519574,14,201,\"memcpy DtoD\"\n"
                   "0,kernel,1795824653785509574,1795824653785529574,14,202,\"void spare(int)\"\n");
  auto report = attribute(text);
  REQUIRE(report.profiled);
  const auto &first = report.configs[0];
  // The copy and the spare kernel start together as the GEMM (472549 .. 509574) ends: the run is
  // busy until the spare kernel's end.
  CHECK(first.run_ns[0] == 37025 + 20000);
  CHECK(first.launches == 7);
  auto outside = first.outside_regex();
  REQUIRE(outside.size() == 2);
  CHECK(outside[0].kernel == "[memcpy DtoD]");
  CHECK(outside[1].kernel == "void spare(int)");
  CHECK(outside[1].ns == 20000);
}

TEST_CASE("overlapping launches count once: a programmatic dependent launch adds its tail") {
  // A merge kernel launched as a programmatic dependent of the GEMM (472549 .. 509574): its CTAs
  // start 7451 ns after the GEMM and wait for it, and it ends 5426 ns after it. Summing the two
  // durations would count the wait: 37025 + 35000 ns.
  std::string text = trace_text();
  size_t end = text.find("# end");
  REQUIRE(end != std::string::npos);
  text.insert(end, "0,kernel,1795824653785480000,1795824653785515000,13,201,\"void merge(int)\"\n");
  auto report = attribute(text);
  REQUIRE(report.profiled);
  const auto &first = report.configs[0];
  CHECK(first.run_ns[0] == 37025 + 5426);
  CHECK(first.run_ns[1] == 36993); // the other runs are as they were
  CHECK(first.total_ns == doctest::Approx(37025 + 5426 + 36993 + 36448 + 36513 + 36545));
  REQUIRE(first.kernels.size() == 2);
  CHECK(first.kernels[1].ns == 35000); // a kernel's own time is still its whole duration
  // A launch that starts after a gap adds its own duration, not the gap.
  text = trace_text();
  text.insert(text.find("# end"),
              "0,kernel,1795824653785600000,1795824653785610000,13,202,\"void late(int)\"\n");
  CHECK(attribute(text).configs[0].run_ns[0] == 37025 + 10000);
}

TEST_CASE("a trace kopt cannot trust is unprofiled, saying why") {
  SUBCASE("cut off before its end") {
    std::string text = trace_text();
    text.resize(text.find("# end"));
    auto report = attribute(text);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("incomplete (no '# end' line)") != std::string::npos);
  }
  SUBCASE("a profiler stop out of turn (work hidden from the range)") {
    auto report = attribute(edited("# dropped 0\n", "# dropped 0\n# anomaly a profiler stop "
                                                    "outside any timed range (after range 3)\n"));
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("not the harness timer's") != std::string::npos);
    CHECK(report.reason.find("after range 3") != std::string::npos);
  }
  SUBCASE("records dropped") {
    auto report = attribute(edited("# dropped 0", "# dropped 12"));
    CHECK_FALSE(report.profiled);
    CHECK(report.reason == "CUPTI dropped 12 activity records (trace.csv)");
  }
  SUBCASE("a CUPTI call failed") {
    auto report = attribute(edited("# dropped 0\n", "# dropped 0\n# error cuptiSubscribe: "
                                                    "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS\n"));
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("cuptiSubscribe") != std::string::npos);
  }
  SUBCASE("another number of ranges than configs x runs") {
    auto report = attribute(trace_text(), 73, 6);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason == "trace.csv has 365 timed ranges, expected 73 configs x 6 timed runs");
  }
  SUBCASE("a timed run that launched nothing") {
    std::string text = trace_text();
    size_t line = text.find("\n7,kernel");
    REQUIRE(line != std::string::npos);
    text.erase(line, text.find('\n', line + 1) - line);
    auto report = attribute(text);
    CHECK_FALSE(report.profiled);
    CHECK(report.reason == "timed run 3 of config_1 launched no kernel, copy or set (trace.csv)");
  }
  SUBCASE("no kernel of the family in a config") {
    auto report = attribute_cupti_trace(parse_cupti_trace(trace_text(), "t"), 73,
                                        options(5, "no_such_kernel"), "t");
    CHECK_FALSE(report.profiled);
    CHECK(report.reason.find("no kernel matching 'no_such_kernel' in config_0") !=
          std::string::npos);
  }
}

TEST_CASE("a malformed trace is an error naming the line and the field") {
  auto error_of = [](const std::string &text) {
    try {
      parse_cupti_trace(text, "t.csv");
    } catch (const kopt::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(edited("\n3,kernel,", "\n3,kernal,"))
            .find("t.csv:9: kind: expected kernel, memcpy, memset or range, got 'kernal'") !=
        std::string::npos);
  CHECK(error_of(edited("\n3,kernel,", "\n400,kernel,"))
            .find("t.csv:9: range: expected a range below 365") != std::string::npos);
  CHECK(error_of(edited("# ranges 365", "# ranges lots")).find("t.csv:2: ranges") !=
        std::string::npos);
  CHECK(error_of(edited(",1795824653785509574,13,200,", ",1,13,200,"))
            .find("t.csv:6: end_ns: expected at least start_ns") != std::string::npos);
  CHECK(
      error_of(trace_text() + "0,kernel,1,2,3,4,\"k\"\n").find("expected nothing after '# end'") !=
      std::string::npos);
}

TEST_CASE("the tracer is found through KOPT_CUPTI_TRACER, or beside kopt") {
  kopt::test::TempDir dir;
  auto lib = dir.write("libkopt_cupti_trace.so", "not a library, only found");
  setenv("KOPT_CUPTI_TRACER", lib.c_str(), 1);
  CHECK(kopt::profile::find_cupti_tracer() == lib);
  setenv("KOPT_CUPTI_TRACER", (dir.path() / "missing.so").c_str(), 1);
  CHECK(kopt::profile::find_cupti_tracer().empty());
  setenv("KOPT_CUPTI_TRACER", "", 1);
  CHECK(kopt::profile::find_cupti_tracer().empty());
  unsetenv("KOPT_CUPTI_TRACER");
}

TEST_CASE("no trace file: unprofiled, saying the harness left none") {
  kopt::test::TempDir dir;
  auto report = kopt::profile::read_cupti_output(dir.path() / "cupti_trace.csv", 1, options(1));
  CHECK_FALSE(report.profiled);
  CHECK(report.reason.find("left no CUPTI trace") != std::string::npos);
}

// run_harness with the tracer: a fake harness that writes its results CSV and, when the tracer
// was injected, the trace the tracer would write.
namespace {

namespace fs = std::filesystem;

class TracedHarness : public kopt::util::ProcessRunner {
public:
  kopt::util::Command seen;
  bool write_trace = true;
  std::string trace_text; // written instead of the trace below, when set
  int exit_code = 0;

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    seen = command;
    auto out = std::find(command.argv.begin(), command.argv.end(), "--out");
    REQUIRE(out != command.argv.end());
    std::ofstream(*(out + 1)) << "M,N,K,kernel,us_tiny,err_tiny,samples_tiny,checked_tiny,"
                                 "check_tiny\n"
                                 "16,64,128,tiny_1x2,50,,50;50,2,\n"
                                 "32,64,128,tiny_1x2,50,,50;50,2,\n"
                                 "100,100,2000,tiny_big,50,,50;50,2,\n";
    auto trace = command.env.find("KOPT_CUPTI_TRACE");
    if (!trace_text.empty() && trace != command.env.end()) {
      std::ofstream(trace->second) << trace_text;
    } else if (write_trace && trace != command.env.end()) {
      // 3 configs x 2 runs: config c's run r takes 1000 (c + 1) + 10 r ns, plus a copy in run 0
      // of config 2.
      std::ofstream file(trace->second);
      file << "# kopt cupti trace 2\n# ranges 6\n# calls 12\n# dropped 0\n"
              "range,kind,start_ns,end_ns,stream,correlation,name\n";
      for (int r = 0; r < 6; ++r) {
        file << r << ",range," << 10000 * r << "," << 10000 * r + 5000 << ",7,0,\"\"\n";
      }
      for (int r = 0; r < 6; ++r) {
        file << r << ",kernel,100," << 100 + 1000 * (r / 2 + 1) + 10 * (r % 2) << ",7," << r
             << ",\"void tiny_kernel<1>(float*)\"\n";
      }
      file << "4,memcpy,3200,3700,7,40,\"memcpy DtoD\"\n# end\n"; // after the kernel
    }
    kopt::util::ProcessResult result;
    result.exit_code = exit_code;
    result.out = "kopt-candidate: 01 hash01\n";
    return result;
  }
};

struct TracedRun {
  kopt::test::TempDir tmp;
  kopt::spec::Family family;
  kopt::spec::Layout layout{tmp.path() / "state"};
  TracedHarness harness;
  kopt::profile::RunSetup setup;
  fs::path tracer;

  TracedRun() {
    fs::copy(fixture("gen/tiny"), tmp.path() / "tiny", fs::copy_options::recursive);
    family = kopt::spec::load_family(tmp.path() / "tiny" / "family.json");
    family.backend = kopt::spec::Backend::cuda;
    family.warmup = 0;
    family.repeat = 2;
    tmp.write("state/bin/candidate_01", "a harness");
    tracer = tmp.write("lib/libkopt_cupti_trace.so", "the tracer");
    setenv("KOPT_CUPTI_TRACER", tracer.c_str(), 1);
  }
  ~TracedRun() { unsetenv("KOPT_CUPTI_TRACER"); }

  kopt::profile::Measurement run() {
    return kopt::profile::run_harness(family, layout, "01", kopt::profile::HarnessMode::benchmark,
                                      harness, setup);
  }
};

} // namespace

TEST_CASE("a CUDA benchmark is traced: the tracer injected, each range a run's sample") {
  TracedRun t;
  auto m = t.run();
  REQUIRE(m.ok());
  CHECK(t.harness.seen.env.at("CUDA_INJECTION64_PATH") == t.tracer.string());
  fs::path trace = t.layout.results_dir("01") / "cupti_trace.csv";
  CHECK(t.harness.seen.env.at("KOPT_CUPTI_TRACE") == trace.string());
  CHECK(m.measured_by == kopt::profile::Source::cupti);
  CHECK(m.profiled);
  REQUIRE(m.configs.size() == 3);
  CHECK(m.configs[0].rounds == std::vector<std::vector<double>>{{1.0, 1.01}});
  CHECK(m.configs[2].rounds == std::vector<std::vector<double>>{{3.5, 3.01}}); // the copy counts
  // A copy is never one of the family's kernels: it is named where the time went.
  REQUIRE(m.configs[2].outside_regex.size() == 1);
  CHECK(m.configs[2].outside_regex[0].kernel == "[memcpy DtoD]");
  CHECK(m.configs[1].outside_regex.empty());
  CHECK(m.configs[1].harness_us == 50);
  CHECK(kopt::profile::benchmark_conditions(t.family, t.setup, "hash01").profiler == "cupti");
}

TEST_CASE("a trace the harness did not write this time is never read") {
  TracedRun t;
  t.harness.write_trace = false;
  t.tmp.write("state/results/01/cupti_trace.csv", "an earlier run's trace");
  auto m = t.run();
  CHECK(m.ok());
  CHECK_FALSE(m.profiled);
  CHECK(m.reason.find("left no CUPTI trace") != std::string::npos);
}

TEST_CASE("a harness the tracer ended fails naming the kernel it found running") {
  TracedRun t;
  t.harness.trace_text = kopt::util::read_file(fixture("cupti/running_kernel.cupti_trace.csv"));
  t.harness.exit_code = 3;
  auto m = t.run();
  CHECK_FALSE(m.ok());
  INFO(m.reason);
  CHECK(m.reason.find("void spin_server<1>(SpinMailbox*, long long, long long) ran during timed "
                      "run 1 of config_0 "
                      "but was launched outside it: it was still running when that run ended") ==
        0);
  CHECK(m.reason.find("; harness exited with 3") != std::string::npos);
}

TEST_CASE("profiler ncu: no tracer injected") {
  TracedRun t;
  t.setup.profiler = "ncu";
  auto m = t.run();
  CHECK(t.harness.seen.env.count("CUDA_INJECTION64_PATH") == 0);
  CHECK(m.measured_by != kopt::profile::Source::cupti);
}

// run_side_by_side under the tracer: each side's rounds served by one harness process.
namespace {

// A harness serving rounds (--serve): each "run TOKEN FILE" writes that round's results and
// answers; at its end it writes the trace of every round it ran. Config c's run r of round j
// takes base (c + 1) + 100 j + 10 r ns, base 1000 for candidate 00 and 900 for 01.
class ServedConversation : public kopt::util::Conversation {
public:
  ServedConversation(std::vector<std::string> &events, std::string id, fs::path trace,
                     int fail_round, int wrong_round = 0)
      : events_(events), id_(std::move(id)), trace_(std::move(trace)), fail_round_(fail_round),
        wrong_round_(wrong_round) {}

  bool ask(const std::string &line, const std::string &reply, double) override {
    std::istringstream words(line);
    std::string run, token, file;
    words >> run >> token >> file;
    REQUIRE(run == "run");
    REQUIRE(reply == "kopt-run-done " + token);
    ++rounds_;
    events_.push_back(id_ + " round " + std::to_string(rounds_));
    if (rounds_ == fail_round_) {
      died_ = true;
      return false;
    }
    std::string check = rounds_ == wrong_round_ ? "timed run 1: 3 of 64 outputs wrong" : "";
    std::ofstream(file) << "M,N,K,kernel,us_tiny,err_tiny,samples_tiny,checked_tiny,check_tiny\n"
                           "16,64,128,tiny_1x2,50,,50;50,2,\n"
                           "32,64,128,tiny_1x2,50,,50;50,2,"
                        << check
                        << "\n"
                           "100,100,2000,tiny_big,50,,50;50,2,\n";
    return true;
  }

  void close_input() override { events_.push_back(id_ + " input closed"); }

  kopt::util::ProcessResult finish(double) override {
    kopt::util::ProcessResult result;
    result.out = "kopt-candidate: " + id_ + " hash" + id_ + "\n";
    if (died_) {
      result.signal = 11;
      result.err = "harness: [2/3] M=32,N=64,K=128 started\n";
      return result;
    }
    result.exit_code = 0;
    std::ofstream file(trace_);
    file << "# kopt cupti trace 2\n# ranges " << 6 * rounds_ << "\n# calls 1\n# dropped 0\n"
         << "range,kind,start_ns,end_ns,stream,correlation,name\n";
    for (int r = 0; r < 6 * rounds_; ++r) {
      file << r << ",range," << 10000 * r << "," << 10000 * r + 5000 << ",7,0,\"\"\n";
    }
    const int base = id_ == "00" ? 1000 : 900;
    for (int r = 0; r < 6 * rounds_; ++r) {
      const int j = r / 6, c = r % 6 / 2;
      file << r << ",kernel,0," << base * (c + 1) + 100 * j + 10 * (r % 2) << ",7," << r
           << ",\"void tiny_kernel<1>(float*)\"\n";
    }
    file << "# end\n";
    return result;
  }

private:
  std::vector<std::string> &events_;
  std::string id_;
  fs::path trace_;
  int fail_round_;
  int wrong_round_;
  int rounds_ = 0;
  bool died_ = false;
};

class ServingRunner : public kopt::util::ProcessRunner {
public:
  std::vector<std::string> events;
  std::vector<kopt::util::Command> started;
  std::map<std::string, int> fail_round;  // candidate -> the round its harness dies in
  std::map<std::string, int> wrong_round; // candidate -> the round whose checked run is wrong

  kopt::util::ProcessResult run(const kopt::util::Command &) override {
    FAIL("a served side runs no one-shot harness");
    return {};
  }

  std::unique_ptr<kopt::util::Conversation> start(const kopt::util::Command &command) override {
    started.push_back(command);
    std::string id = command.argv.front().substr(command.argv.front().size() - 2);
    events.push_back(id + " started");
    return std::make_unique<ServedConversation>(events, id, command.env.at("KOPT_CUPTI_TRACE"),
                                                fail_round.count(id) ? fail_round.at(id) : 0,
                                                wrong_round.count(id) ? wrong_round.at(id) : 0);
  }
};

struct ServedRun {
  TracedRun base;
  ServingRunner runner;

  ServedRun() {
    base.tmp.write("state/bin/candidate_00", "BEST's harness");
    base.tmp.write("state/golden/golden.bin", "a golden");
  }

  kopt::profile::SideBySide
  run(kopt::profile::Arrangement arrangement = kopt::profile::Arrangement::best_first) {
    return kopt::profile::run_side_by_side(base.family, base.layout, "00", "01", 3, runner,
                                           base.setup, kopt::util::Progress::none(), arrangement);
  }
};

bool has(const std::vector<std::string> &argv, const std::string &arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

} // namespace

TEST_CASE("under the tracer each side's rounds are served by one harness, in turns") {
  ServedRun t;
  auto side = t.run();
  CHECK(t.runner.events == std::vector<std::string>{"00 started", "00 round 1", "01 started",
                                                    "01 round 1", "01 round 2", "00 round 2",
                                                    "00 round 3", "01 round 3", "00 input closed",
                                                    "01 input closed"});
  REQUIRE(t.runner.started.size() == 2);
  for (const auto &command : t.runner.started) {
    CHECK(has(command.argv, "--serve"));
    CHECK_FALSE(has(command.argv, "--out"));
    CHECK(command.env.at("CUDA_INJECTION64_PATH") == t.base.tracer.string());
  }
  // Both sides compare their first round with the golden: the same work besides their code.
  CHECK(has(t.runner.started[0].argv, "--golden"));
  CHECK(has(t.runner.started[1].argv, "--golden"));
  CHECK(side.candidate.arrangement == "best-first");
  REQUIRE(side.candidate.ok());
  REQUIRE(side.best.ok());
  CHECK(side.candidate.measured_by == kopt::profile::Source::cupti);
  CHECK(side.candidate.hash == "hash01");
  CHECK(side.best.hash == "hash00");
  // Each round timed by its own share of the trace: config 1, 1800 + 100 j (+ 10) ns.
  REQUIRE(side.candidate.configs.size() == 3);
  CHECK(side.candidate.configs[1].rounds ==
        std::vector<std::vector<double>>{{1.8, 1.81}, {1.9, 1.91}, {2.0, 2.01}});
  CHECK(side.best.configs[0].rounds ==
        std::vector<std::vector<double>>{{1.0, 1.01}, {1.1, 1.11}, {1.2, 1.21}});
  CHECK(fs::exists(t.base.layout.results_dir("01") / "rounds" / "candidate-01.log"));
}

TEST_CASE("candidate-first: the candidate's harness starts first and goes first in odd rounds") {
  ServedRun t;
  auto side = t.run(kopt::profile::Arrangement::candidate_first);
  CHECK(t.runner.events == std::vector<std::string>{"01 started", "01 round 1", "00 started",
                                                    "00 round 1", "00 round 2", "01 round 2",
                                                    "01 round 3", "00 round 3", "00 input closed",
                                                    "01 input closed"});
  REQUIRE(side.candidate.ok());
  CHECK(side.candidate.arrangement == "candidate-first");
  CHECK(side.best.arrangement == "candidate-first");
}

TEST_CASE("a wrong checked run ends the measurement after its round, BEST's turn included") {
  for (auto arrangement :
       {kopt::profile::Arrangement::best_first, kopt::profile::Arrangement::candidate_first}) {
    ServedRun t;
    t.runner.wrong_round["01"] = 1;
    auto side = t.run(arrangement);
    CAPTURE(kopt::profile::to_string(arrangement));
    // Round 1 of both sides, whichever went first, then no more.
    CHECK(std::count(t.runner.events.begin(), t.runner.events.end(), "00 round 1") == 1);
    CHECK(std::count(t.runner.events.begin(), t.runner.events.end(), "01 round 1") == 1);
    CHECK(std::count(t.runner.events.begin(), t.runner.events.end(), "00 round 2") == 0);
    CHECK(std::count(t.runner.events.begin(), t.runner.events.end(), "01 round 2") == 0);
    REQUIRE(side.best.ok());
    CHECK(side.candidate.paired_best_hash == "hash00"); // decided as incorrect, beside BEST
    REQUIRE(kopt::profile::failed_check(side.candidate) != nullptr);
  }
}

TEST_CASE(
    "a served harness that dies fails its side, naming the round of those planned and the config") {
  ServedRun t;
  t.runner.fail_round["01"] = 2;
  auto side = t.run();
  CHECK_FALSE(side.candidate.ok());
  INFO(side.candidate.reason);
  CHECK(side.candidate.reason.find("round 2 of 3: harness killed by signal 11") == 0);
  CHECK(side.candidate.reason.find("died on config 2/3 M=32,N=64,K=128") != std::string::npos);
  // The measurement stopped there: BEST ran no more rounds.
  CHECK(t.runner.events[t.runner.events.size() - 2] == "01 round 2");
  CHECK(t.runner.events.back() == "00 input closed"); // the candidate's harness had ended
}

TEST_SUITE_END();
