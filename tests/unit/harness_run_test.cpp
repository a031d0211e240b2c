#include "temp_dir.hpp"

#include <kopt/harness/error.hpp>
#include <kopt/harness/run.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>

using namespace kopt::harness;

namespace {

// A problem whose output is its input times a factor; `broken` leaves the last element unset,
// which the poison must reveal.
class ScaleProblem : public Problem {
public:
  ScaleProblem(std::int64_t n, float factor, bool broken)
      : input_(n), output_(n), factor_(factor), broken_(broken) {}
  void fill_inputs(Rng &rng) override { rng.fill(input_); }
  void poison_output() override { poison(output_); }
  void run() override {
    for (std::size_t i = 0; i + (broken_ ? 1 : 0) < input_.size(); ++i) {
      output_[i] = input_[i] * factor_;
    }
  }
  std::vector<float> output() override { return output_; }
  // The family's reference: the input doubled, whatever factor the "candidate" uses.
  std::optional<Comparison> check_output() override {
    std::vector<float> got = output_;
    std::vector<float> reference(input_.size());
    for (std::size_t i = 0; i < input_.size(); ++i) {
      reference[i] = input_[i] * 2;
    }
    return compare(got, reference, Tolerance{});
  }

private:
  std::vector<float> input_, output_;
  float factor_;
  bool broken_;
};

// A candidate kernel that cheats: `kernel` gets the inputs, the output and the call's number
// (from 1) and does what it likes; the reference is the input doubled.
using CheatKernel = std::function<void(const std::vector<float> &, std::vector<float> &, int)>;

class CheatProblem : public Problem {
public:
  CheatProblem(std::size_t n, CheatKernel kernel) : input_(n), output_(n), kernel_(kernel) {}
  void fill_inputs(Rng &rng) override {
    inputs_ = rng;
    rng.fill(input_);
  }
  void poison_output() override { poison(output_); }
  void run() override { kernel_(input_, output_, ++calls_); }
  std::vector<float> output() override { return output_; }
  // The reference's inputs are made again from their seed: the kernel may have changed its own.
  std::optional<Comparison> check_output() override {
    std::vector<float> got = output_;
    std::vector<float> reference(input_.size());
    Rng again = inputs_;
    again.fill(reference);
    for (float &x : reference) {
      x *= 2;
    }
    return compare(got, reference, Tolerance{});
  }

private:
  Rng inputs_{0};
  std::vector<float> input_, output_;
  CheatKernel kernel_;
  int calls_ = 0;
};

FamilySpec cheat_family(CheatKernel kernel) {
  FamilySpec spec;
  spec.impl = "test";
  spec.kernels = {"k"};
  spec.dispatch = [](const Config &) { return "k"; };
  spec.make_problem = [kernel](const Config &c, const std::string &) {
    return std::make_unique<CheatProblem>(static_cast<std::size_t>(c.get_int("N")), kernel);
  };
  return spec;
}

void doubled(const std::vector<float> &in, std::vector<float> &out) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = in[i] * 2;
  }
}

// Counts what the harness asks of a problem, to check what a run without a golden skips.
struct Calls {
  int poison = 0;
  int run = 0;
  int output = 0;
  int compared = 0;         ///< compare_output calls the problem answered
  bool on_device = false;   ///< whether it answers compare_output (as a device family does)
  float device_error = 0.f; ///< the max_abs it reports there
};

class CountingProblem : public Problem {
public:
  explicit CountingProblem(Calls &calls) : calls_(calls) {}
  void fill_inputs(Rng &) override {}
  void poison_output() override { ++calls_.poison; }
  void run() override { ++calls_.run; }
  std::vector<float> output() override {
    ++calls_.output;
    return {1, 2, 3};
  }
  std::optional<Comparison> compare_output(const std::vector<float> &golden) override {
    if (!calls_.on_device) {
      return std::nullopt;
    }
    ++calls_.compared;
    Comparison c;
    c.elements = golden.size();
    c.max_abs = calls_.device_error;
    c.mismatches = calls_.device_error > 0 ? 1 : 0;
    return c;
  }

private:
  Calls &calls_;
};

FamilySpec counting_family(Calls &calls) {
  FamilySpec spec;
  spec.impl = "test";
  spec.kernels = {"k"};
  spec.dispatch = [](const Config &) { return "k"; };
  spec.make_problem = [&calls](const Config &, const std::string &) {
    return std::make_unique<CountingProblem>(calls);
  };
  return spec;
}

FamilySpec scale_family(float factor, bool broken) {
  FamilySpec spec;
  spec.impl = "test";
  spec.candidate_id = "00";
  spec.candidate_hash = "abc";
  spec.kernels = {"small", "large"};
  spec.dispatch = [](const Config &c) { return c.get_int("N") < 100 ? "small" : "large"; };
  spec.make_problem = [=](const Config &c, const std::string &) {
    return std::make_unique<ScaleProblem>(c.get_int("N"), factor, broken);
  };
  return spec;
}

Options parse(std::vector<std::string> args, const FamilySpec &spec) {
  return parse_options(args, spec);
}

} // namespace

TEST_SUITE_BEGIN("harness::run");

TEST_CASE("options follow the mode's defaults") {
  FamilySpec spec = scale_family(1, false);
  spec.warmup = 3;
  spec.repeat = 9;
  Options bench = parse({"--configs", "c.csv", "--benchmark"}, spec);
  CHECK(bench.mode == Mode::benchmark);
  CHECK(bench.warmup == 3);
  CHECK(bench.repeat == 9);
  CHECK(bench.seed == 1234);
  Options full = parse({"--configs", "c.csv", "--full-benchmark", "--seed", "7"}, spec);
  CHECK(full.repeat == 50);
  CHECK(full.seed == 7);
  Options correct = parse({"--configs", "c.csv", "--correctness", "--repeat", "5"}, spec);
  CHECK(correct.repeat == 1);
  CHECK(correct.warmup == 0);
  Options golden =
      parse({"--write-golden", "g.bin", "--configs", "c.csv", "--kernel", "small"}, spec);
  CHECK(golden.mode == Mode::write_golden);
  CHECK(golden.write_golden == "g.bin");
  CHECK(golden.kernel == "small");
}

TEST_CASE("to_args writes what parse_options reads back, in every mode") {
  FamilySpec spec = scale_family(1, false);
  spec.warmup = 3;
  spec.repeat = 9;
  auto same = [](const Options &a, const Options &b) {
    return a.mode == b.mode && a.configs == b.configs && a.write_golden == b.write_golden &&
           a.golden == b.golden && a.out == b.out && a.warmup == b.warmup && a.repeat == b.repeat &&
           a.seed == b.seed && a.kernel == b.kernel && a.one_cpu == b.one_cpu && a.serve == b.serve;
  };
  Options bench;
  bench.mode = Mode::benchmark;
  bench.configs = "c.csv";
  bench.out = "r.csv";
  bench.golden = "g.bin";
  bench.warmup = 0;
  bench.repeat = 4;
  bench.kernel = "small";
  CHECK(to_args(bench) == std::vector<std::string>{"--configs", "c.csv", "--benchmark", "--out",
                                                   "r.csv", "--golden", "g.bin", "--warmup", "0",
                                                   "--repeat", "4", "--kernel", "small"});
  CHECK(same(parse_options(to_args(bench), spec), bench));
  Options pinned = bench;
  pinned.one_cpu = true;
  CHECK(to_args(pinned).back() == "--one-cpu");
  CHECK(same(parse_options(to_args(pinned), spec), pinned));
  Options served = bench;
  served.out.clear();
  served.serve = true;
  CHECK(to_args(served).back() == "--serve");
  CHECK(same(parse_options(to_args(served), spec), served));
  Options full = bench;
  full.mode = Mode::full_benchmark;
  full.seed = 7;
  full.kernel.clear();
  CHECK(same(parse_options(to_args(full), spec), full));
  Options correct;
  correct.configs = "c.csv";
  correct.golden = "g.bin";
  CHECK(to_args(correct) ==
        std::vector<std::string>{"--configs", "c.csv", "--correctness", "--golden", "g.bin"});
  CHECK(same(parse_options(to_args(correct), spec), correct));
  Options golden;
  golden.mode = Mode::write_golden;
  golden.configs = "c.csv";
  golden.write_golden = "g.bin";
  CHECK(to_args(golden) ==
        std::vector<std::string>{"--configs", "c.csv", "--write-golden", "g.bin"});
  CHECK(same(parse_options(to_args(golden), spec), golden));
}

TEST_CASE("option errors") {
  FamilySpec spec = scale_family(1, false);
  REQUIRE_THROWS_WITH(parse({"--configs", "c.csv", "--benchmark", "--kernel", "tiny"}, spec),
                      "--kernel tiny: not compiled in this candidate (compiled: small, large)");
  REQUIRE_THROWS_WITH(parse({"--configs", "c.csv", "--benchmark", "--repeat", "x"}, spec),
                      "--repeat: expected a non-negative integer, got 'x'");
  REQUIRE_THROWS_WITH(parse({"--configs", "c.csv", "--benchmark", "--out"}, spec),
                      "--out: expected a value");
  REQUIRE_THROWS_WITH(parse({"--configs", "c.csv", "--benchmark", "--correctness"}, spec),
                      ("give exactly one of --correctness, --benchmark, --full-benchmark, "
                       "--write-golden\n" +
                       usage())
                          .c_str());
  REQUIRE_THROWS_WITH(parse({"--benchmark"}, spec),
                      ("--configs FILE is required\n" + usage()).c_str());
  REQUIRE_THROWS_WITH(parse({"--configs", "c.csv", "--correctness", "--serve"}, spec),
                      ("--serve: runs --benchmark or --full-benchmark only\n" + usage()).c_str());
  REQUIRE_THROWS_WITH(
      parse({"--configs", "c.csv", "--benchmark", "--serve", "--out", "r.csv"}, spec),
      ("--serve: each run's results file comes from stdin; give no --out\n" + usage()).c_str());
}

TEST_CASE("write a golden, then compare a correct and a broken candidate") {
  kopt::test::TempDir dir;
  auto configs = parse_configs("N\n10\n200\n", "c.csv");
  std::string golden = (dir.path() / "golden.bin").string();
  std::ostringstream log;

  FamilySpec baseline = scale_family(2, false);
  auto written = run_configs(
      configs, parse({"--configs", "c.csv", "--write-golden", golden}, baseline), baseline, log);
  CHECK(results_csv(configs, written, "test").find(",small,") != std::string::npos);
  CHECK_FALSE(written[0].comparison.has_value());

  auto same = run_configs(
      configs,
      parse({"--configs", "c.csv", "--benchmark", "--golden", golden, "--repeat", "3"}, baseline),
      baseline, log);
  REQUIRE(same[1].comparison);
  CHECK(same[0].comparison->error() == 0.0);
  CHECK(same[1].comparison->error() == 0.0);
  CHECK(same[1].kernel == "large");

  FamilySpec broken = scale_family(2, true);
  auto bad = run_configs(
      configs,
      parse({"--configs", "c.csv", "--correctness", "--golden", golden, "--kernel", "small"},
            broken),
      broken, log);
  CHECK(bad[0].comparison->error() == doctest::Approx(0.1));
  CHECK(bad[0].comparison->nans == 1);
  CHECK(bad[1].kernel == "small");
  std::string csv = results_csv(configs, bad, "test");
  CHECK(csv.substr(0, csv.find('\n')) ==
        "N,kernel,us_test,err_test,samples_test,checked_test,check_test");
  CHECK(csv.find("\n200,small,") != std::string::npos);
  // A correctness run times each config once: one sample, the median itself.
  REQUIRE(bad[1].samples.size() == 1);
  CHECK(bad[1].samples[0] == bad[1].us);
  CHECK(csv.find(",0.005,") != std::string::npos);
  CHECK(log.str().find("harness: [2/2] N=200 kernel=small") != std::string::npos);

  auto other = parse_configs("N\n10\n300\n", "other.csv");
  REQUIRE_THROWS_WITH(
      run_configs(other,
                  parse({"--configs", "c.csv", "--correctness", "--golden", golden}, baseline),
                  baseline, log),
      (golden + ": no output for config N=300 (other.csv:3); the golden was "
                "written for other configs (first: N=10)")
          .c_str());
}

TEST_CASE("without a golden the output is poisoned before every run but not copied back") {
  kopt::test::TempDir dir;
  auto configs = parse_configs("N\n1\n2\n", "c.csv");
  std::ostringstream log;
  Calls calls;
  FamilySpec spec = counting_family(calls);
  std::vector<std::string> bench = {"--configs", "c.csv", "--benchmark", "--warmup", "2",
                                    "--repeat",  "3"};
  auto results = run_configs(configs, parse(bench, spec), spec, log);
  CHECK(calls.run == 2 * 5);
  // Every timed run's time is kept, and the reported time is their median.
  REQUIRE(results[0].samples.size() == 3);
  std::vector<double> sorted = results[0].samples;
  std::sort(sorted.begin(), sorted.end());
  CHECK(results[0].us == sorted[1]);
  std::string csv = results_csv(configs, results, "t");
  CHECK(std::count(csv.begin(), csv.end(), ';') == 2 * 2);
  CHECK(calls.output == 0);
  CHECK(calls.poison == calls.run);
  CHECK_FALSE(results[0].comparison.has_value());
  // The counting family has no reference: its runs are unchecked, and the results say so.
  CHECK(results[0].checked == 0);
  CHECK(csv.find(",0,\n") != std::string::npos);

  // Writing the golden and comparing with it read every config's output once, after poisoning
  // before every run.
  std::string golden = (dir.path() / "golden.bin").string();
  calls = Calls{};
  run_configs(configs, parse({"--configs", "c.csv", "--write-golden", golden}, spec), spec, log);
  CHECK(calls.output == 2);
  CHECK(calls.poison == calls.run);
  calls = Calls{};
  bench.insert(bench.end(), {"--golden", golden});
  results = run_configs(configs, parse(bench, spec), spec, log);
  // One more run per config: the one on the golden's seeded inputs, before the warm-ups.
  CHECK(calls.output == 2);
  CHECK(calls.run == 2 * 6);
  CHECK(calls.poison == calls.run);
  REQUIRE(results[1].comparison);
  CHECK(results[1].comparison->error() == 0.0);
}

TEST_CASE("a family that compares on the device is given the golden, and no output is read") {
  kopt::test::TempDir dir;
  auto configs = parse_configs("N\n1\n2\n", "c.csv");
  std::ostringstream log;
  Calls calls;
  FamilySpec spec = counting_family(calls);
  std::string golden = (dir.path() / "golden.bin").string();
  run_configs(configs, parse({"--configs", "c.csv", "--write-golden", golden}, spec), spec, log);
  calls = Calls{};
  calls.on_device = true;
  calls.device_error = 0.5f;
  auto results = run_configs(
      configs, parse({"--configs", "c.csv", "--benchmark", "--golden", golden}, spec), spec, log);
  CHECK(calls.compared == 2);
  CHECK(calls.output == 0);
  REQUIRE(results[0].comparison);
  CHECK(results[0].comparison->elements == 3);
  CHECK(results[0].comparison->mismatches == 1);
  CHECK(results[0].error() > 0);
}

TEST_CASE("a run pinned to one CPU reads its golden before any run, on no thread of its own") {
  kopt::test::TempDir dir;
  auto configs = parse_configs("N\n64\n128\n", "c.csv");
  std::ostringstream log;
  const auto threads = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Threads:", 0) == 0) {
        return std::stoi(line.substr(8));
      }
    }
    return -1;
  };
  int most = 0;
  FamilySpec spec = cheat_family([&](const std::vector<float> &in, std::vector<float> &out, int) {
    most = std::max(most, threads());
    doubled(in, out);
  });
  std::string golden = (dir.path() / "golden.bin").string();
  run_configs(configs, parse({"--configs", "c.csv", "--write-golden", golden}, spec), spec, log);
  const int before = threads();
  REQUIRE(before > 0);
  most = 0;
  auto results = run_configs(
      configs,
      parse({"--configs", "c.csv", "--benchmark", "--golden", golden, "--repeat", "3", "--one-cpu"},
            spec),
      spec, log);
  CHECK(most == before);
  REQUIRE(results[1].comparison);
  CHECK(results[1].comparison->error() == 0.0);
  CHECK(results[1].check.empty());
}

TEST_CASE("every timed run is checked, on fresh inputs") {
  auto configs = parse_configs("N\n64\n", "c.csv");
  std::ostringstream log;
  std::vector<std::string> bench = {"--configs", "c.csv", "--benchmark", "--warmup", "1",
                                    "--repeat",  "5"};
  std::vector<std::vector<float>> seen;
  FamilySpec honest = cheat_family([&](const std::vector<float> &in, std::vector<float> &out, int) {
    seen.push_back(in);
    doubled(in, out);
  });
  auto results = run_configs(configs, parse(bench, honest), honest, log);
  CHECK(results[0].checked == 5);
  CHECK(results[0].check.empty());
  CHECK_FALSE(results[0].error().has_value());
  // No two runs, warm-up included, see the same inputs.
  REQUIRE(seen.size() == 6);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    for (std::size_t j = i + 1; j < seen.size(); ++j) {
      CHECK(seen[i] != seen[j]);
    }
  }
}

TEST_CASE("cheats are caught by the checked runs") {
  auto configs = parse_configs("N\n64\n", "c.csv");
  std::ostringstream log;
  std::vector<std::string> bench = {"--configs", "c.csv", "--benchmark", "--warmup", "1",
                                    "--repeat",  "5"};
  auto caught = [&](CheatKernel kernel) {
    FamilySpec spec = cheat_family(std::move(kernel));
    Result result = run_configs(configs, parse(bench, spec), spec, log)[0];
    REQUIRE(result.error().has_value());
    CHECK(*result.error() > 0);
    return result.check;
  };
  SUBCASE("memoized by address: works on the first call, copies its answer afterwards") {
    std::map<const float *, std::vector<float>> memo;
    std::string check = caught([&](const std::vector<float> &in, std::vector<float> &out, int) {
      auto it = memo.find(in.data());
      if (it != memo.end()) {
        out = it->second;
        return;
      }
      doubled(in, out);
      memo[in.data()] = out;
    });
    // Every output of the copied answer is wrong but for the rare one whose old and new inputs
    // lie within the tolerance (about 1 run in 280 on uniform inputs): the count is not asserted.
    INFO(check);
    CHECK(check.rfind("timed run 1: ", 0) == 0);
    CHECK(check.find(" of 64 outputs wrong (0 NaN, max abs ") != std::string::npos);
  }
  SUBCASE("works only when the output was poisoned: every run is poisoned") {
    // Not caught, and that is right: poisoning every run leaves it nothing to tell apart.
    FamilySpec spec = cheat_family([](const std::vector<float> &in, std::vector<float> &out, int) {
      if (std::isnan(out[0])) {
        doubled(in, out);
      }
    });
    CHECK(run_configs(configs, parse(bench, spec), spec, log)[0].check.empty());
  }
  SUBCASE("writes the output on some calls only") {
    std::string check = caught([](const std::vector<float> &in, std::vector<float> &out, int n) {
      if (n % 2 == 1) {
        doubled(in, out);
      }
    });
    CHECK(check == "timed run 1: 64 of 64 outputs wrong (64 NaN, max abs 0)");
  }
  SUBCASE("zeroes its inputs, so that a zero output is right for them") {
    std::string check = caught([](const std::vector<float> &in, std::vector<float> &out, int) {
      std::fill(const_cast<std::vector<float> &>(in).begin(),
                const_cast<std::vector<float> &>(in).end(), 0.0f);
      std::fill(out.begin(), out.end(), 0.0f);
    });
    CHECK(check.rfind("timed run 1: 64 of 64 outputs wrong (0 NaN", 0) == 0);
  }
  SUBCASE("pinned to one CPU, works on more than one") {
    // A host timer that reports the process's CPU time as three times the run's (what two
    // extra threads on other CPUs give), so the rule is tested whatever the machine's load.
    struct ThreeCpuTimer final : Timer {
      double time_run(Problem &problem) override {
        problem.run();
        problem.sync();
        return 2000;
      }
      const char *name() const override { return "three-cpu"; }
      bool runs_on_host() const override { return true; }
      double cpu_us() const override { return 6000; }
    };
    FamilySpec spec = cheat_family(
        [](const std::vector<float> &in, std::vector<float> &out, int) { doubled(in, out); });
    spec.make_timer = [] { return std::make_unique<ThreeCpuTimer>(); };
    std::vector<std::string> pinned = bench;
    pinned.push_back("--one-cpu");
    CHECK(run_configs(configs, parse(pinned, spec), spec, log)[0].check ==
          "timed run 1: the kernel used 6000 us of CPU time in 2000 us: it ran on more than the "
          "one CPU it is pinned to");
    // Unpinned (no --one-cpu), the same kernel is a multi-threaded kernel, and correct.
    CHECK(run_configs(configs, parse(bench, spec), spec, log)[0].check.empty());
  }
  SUBCASE("leaves the work to a thread that outlives the call") {
    // The thread only sleeps here (one that wrote the output later would outlive the buffers):
    // what is caught is that it still runs when the call has returned.
    std::string check = caught([](const std::vector<float> &, std::vector<float> &, int) {
      std::thread([] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }).detach();
    });
    CHECK(check == "timed run 1: the kernel left 1 thread(s) running after it returned");
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the detached threads end
  }
}

TEST_SUITE_END();
