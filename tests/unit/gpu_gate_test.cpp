#include "temp_dir.hpp"

#include "gpu/binding.hpp"
#include "gpu/claim.hpp"
#include "gpu/gate.hpp"
#include "gpu/resource_spec.hpp"
#include "gpu/smi.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <functional>
#include <unistd.h>

#include <deque>
#include <sstream>

using kopt::gpu::GpuTool;
using kopt::test::fixture;
using kopt::util::read_file;

namespace {

// Answers each command line (argv[0]'s name plus its arguments) with scripted outputs in turn;
// the last one repeats.
class FakeRunner : public kopt::util::ProcessRunner {
public:
  void on(const std::string &command, std::vector<std::string> outputs, int exit_code = 0) {
    scripts_[command] = {std::deque<std::string>(outputs.begin(), outputs.end()), exit_code};
  }

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    std::string name = command.argv[0].substr(command.argv[0].rfind('/') + 1);
    std::vector<std::string> args(command.argv.begin() + 1, command.argv.end());
    std::string key = name + " " + kopt::util::join(args, " ");
    calls.push_back(key);
    kopt::util::ProcessResult result;
    auto it = scripts_.find(key);
    if (it == scripts_.end()) {
      result.exit_code = 127;
      result.err = "unexpected command " + key + "\n";
      return result;
    }
    auto &[outputs, exit_code] = it->second;
    result.exit_code = exit_code;
    result.out = outputs.front();
    if (exit_code != 0) {
      result.err = outputs.front();
      result.out.clear();
    }
    if (outputs.size() > 1) {
      outputs.pop_front();
    }
    return result;
  }

  std::vector<std::string> calls;

private:
  std::map<std::string, std::pair<std::deque<std::string>, int>> scripts_;
};

class FakeClock : public kopt::gpu::Clock {
public:
  double now_s() override { return now; }
  void sleep_s(double seconds) override {
    now += seconds;
    sleeps.push_back(seconds);
  }
  double now = 1000;
  std::vector<double> sleeps;
};

kopt::gpu::ProgramFinder only(const std::string &tool) {
  return [tool](const std::string &program) {
    return program == tool ? "/usr/bin/" + program : std::string();
  };
}

const std::string kQuery = "nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,"
                           "memory.total --format=csv,noheader,nounits";
const std::string kApps =
    "nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv";
const std::string kIdleQuery = "0, GPU-7fc74ca0-d9de-b741-d9f2-9f1683f6bffd, NVIDIA H200, 0, 0, "
                               "143771\n1, GPU-11111111-2222-3333-4444-555555555555, NVIDIA "
                               "H200, 3, 0, 143771\n";

} // namespace

TEST_SUITE_BEGIN("gpu::gate");

TEST_CASE("nvidia-smi --query-gpu, busy") {
  auto gpus = kopt::gpu::parse_nvidia_query(read_file(fixture("gpu/smi_query_busy.csv")), "q");
  REQUIRE(gpus.size() == 1);
  CHECK(gpus[0].index == 0);
  CHECK(gpus[0].uuid == "GPU-7fc74ca0-d9de-b741-d9f2-9f1683f6bffd");
  CHECK(gpus[0].name == "NVIDIA H200");
  CHECK(gpus[0].utilization_pct == 100);
  CHECK(gpus[0].memory_used_mib == 5047);
  CHECK(gpus[0].memory_total_mib == 143771);
}

TEST_CASE("nvidia-smi --query-gpu with another field list, idle") {
  auto gpus = kopt::gpu::parse_nvidia_query(
      read_file(fixture("gpu/smi_query_idle_name_util_memused_memtotal_smclock.csv")), "q",
      {"index", "name", "utilization.gpu", "memory.used", "memory.total", "clocks.sm"});
  REQUIRE(gpus.size() == 1);
  CHECK(gpus[0].name == "NVIDIA H200");
  CHECK(gpus[0].utilization_pct == 0);
  CHECK(gpus[0].memory_used_mib == 0);
  CHECK(gpus[0].uuid.empty());
}

TEST_CASE("nvidia-smi --query-gpu errors name the line") {
  REQUIRE_THROWS_WITH(kopt::gpu::parse_nvidia_query("\n0, GPU-1, H200, 0\n", "q"),
                      "q:2: expected 6 fields (index, uuid, name, utilization.gpu, memory.used, "
                      "memory.total), got 4");
  REQUIRE_THROWS_WITH(kopt::gpu::parse_nvidia_query("0, GPU-1, H200, busy, 0, 1\n", "q"),
                      "q:1: utilization.gpu: expected a number, got 'busy'");
  auto unknown = kopt::gpu::parse_nvidia_query("0, GPU-1, H200, [N/A], [N/A], 1\n", "q");
  CHECK(unknown[0].utilization_pct == -1);
}

TEST_CASE("nvidia-smi --query-compute-apps, busy and idle") {
  auto busy = kopt::gpu::parse_nvidia_apps(read_file(fixture("gpu/smi_apps_busy.csv")), "a");
  REQUIRE(busy.size() == 1);
  CHECK(busy[0].gpu_uuid == "GPU-7fc74ca0-d9de-b741-d9f2-9f1683f6bffd");
  CHECK(busy[0].pid == 602);
  CHECK(busy[0].name == "python3");
  CHECK(busy[0].used_mib == 5038);
  CHECK(kopt::gpu::parse_nvidia_apps(read_file(fixture("gpu/smi_apps_idle.csv")), "a").empty());
  REQUIRE_THROWS_WITH(kopt::gpu::parse_nvidia_apps("gpu_uuid, process_name\n", "a"),
                      "a: missing column 'pid' (columns: gpu_uuid, process_name)");
}

TEST_CASE("rocm-smi --json: cards and unattributed KFD processes") {
  auto busy = kopt::gpu::parse_rocm_smi_json(read_file(fixture("gpu/rocm_smi_busy.json")), "r");
  REQUIRE(busy.gpus.size() == 2);
  CHECK(busy.gpus[1].index == 1);
  CHECK(busy.gpus[1].utilization_pct == 97);
  CHECK(busy.gpus[1].memory_used_pct == 37);
  CHECK(busy.gpus[1].memory_used_mib == -1);
  REQUIRE(busy.processes.size() == 1);
  CHECK(busy.processes[0].pid == 248944);
  CHECK(busy.processes[0].name == "python");
  CHECK(busy.processes[0].gpu == -1);
  CHECK(busy.processes[0].used_mib == doctest::Approx(77420392448.0 / 1048576));

  auto idle = kopt::gpu::parse_rocm_smi_json(read_file(fixture("gpu/rocm_smi_idle.json")), "r");
  CHECK(idle.processes.empty());
  CHECK(idle.gpus[1].utilization_pct == 2);

  REQUIRE_THROWS_WITH(kopt::gpu::parse_rocm_smi_json("{\"card0\": ", "r"),
                      doctest::Contains("r:1:"));
}

TEST_CASE("rocm-smi text output") {
  auto sample =
      kopt::gpu::parse_rocm_smi_text(read_file(fixture("gpu/rocm_smi_showpids.txt")), "t");
  REQUIRE(sample.gpus.size() == 2);
  CHECK(sample.gpus[0].utilization_pct == 0);
  CHECK(sample.gpus[1].utilization_pct == 97);
  CHECK(sample.gpus[1].memory_used_pct == 37);
  REQUIRE(sample.processes.size() == 1);
  CHECK(sample.processes[0].pid == 248944);
  CHECK(sample.processes[0].name == "python");
  auto idle = kopt::gpu::parse_rocm_smi_text(read_file(fixture("gpu/rocm_smi_idle.txt")), "t");
  REQUIRE(idle.gpus.size() == 2);
  CHECK(idle.gpus[1].utilization_pct == 1);
  CHECK(idle.gpus[1].memory_used_pct == 0);
  CHECK(idle.processes.empty());
  auto none = kopt::gpu::parse_rocm_smi_text(
      "GPU[0]\t\t: GPU use (%): 0\nKFD process information:\nNo KFD PIDs currently running\n", "t");
  CHECK(none.processes.empty());
}

TEST_CASE("amd-smi metric --json, both layouts") {
  auto list = kopt::gpu::parse_amd_smi_metric(read_file(fixture("gpu/amd_smi_metric.json")), "m");
  REQUIRE(list.size() == 2);
  CHECK(list[0].utilization_pct == 0);
  CHECK(list[0].memory_used_mib == 283);
  CHECK(list[1].utilization_pct == 87);
  CHECK(list[1].memory_total_mib == 196592);

  auto wrapped =
      kopt::gpu::parse_amd_smi_metric(read_file(fixture("gpu/amd_smi_metric_gpu_data.json")), "m");
  REQUIRE(wrapped.size() == 2);
  CHECK(wrapped[0].utilization_pct == 1);
  CHECK(wrapped[1].utilization_pct == -1);
  CHECK(wrapped[1].memory_used_mib == -1);

  REQUIRE_THROWS_WITH(kopt::gpu::parse_amd_smi_metric("{\"gpus\": []}", "m"),
                      "m: expected a JSON list of GPUs or {\"gpu_data\": [...]}");
  REQUIRE_THROWS_WITH(kopt::gpu::parse_amd_smi_metric("[{\"usage\": {}}]", "m"),
                      "m: gpu entry 0: expected an integer \"gpu\" index");
}

TEST_CASE("amd-smi process --json") {
  auto processes =
      kopt::gpu::parse_amd_smi_process(read_file(fixture("gpu/amd_smi_process.json")), "p");
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].gpu == 1);
  CHECK(processes[0].pid == 4242);
  CHECK(processes[0].name == "python3");
  CHECK(processes[0].used_mib == 121000);
}

TEST_CASE("the idle rule over a sample pair") {
  kopt::gpu::SmiSample first;
  first.gpus = {{0, "", "a", 0, 100, 1000, -1},
                {1, "", "b", 2, 100, 1000, -1},
                {2, "", "c", 9, 100, 1000, -1},
                {3, "", "d", 1, 100, 1000, -1},
                {4, "", "e", 0, 50, 1000, -1}};
  kopt::gpu::SmiSample second = first;
  second.gpus[3].memory_used_mib = 300;
  second.processes = {{1, "", 77, "python3", 10}};
  auto verdicts = kopt::gpu::judge(first, second, {});
  REQUIRE(verdicts.size() == 5);
  CHECK(verdicts[0].idle);
  CHECK(verdicts[1].reason == "compute process 77 (python3)");
  CHECK(verdicts[2].reason == "utilisation 9% > 5%");
  CHECK(verdicts[3].reason == "memory grew from 100 to 300 MiB");
  CHECK(kopt::gpu::most_idle_first(verdicts) == std::vector<int>{4, 0});
}

TEST_CASE("the gate reads nvidia-smi twice and binds with CUDA_VISIBLE_DEVICES") {
  FakeRunner runner;
  FakeClock clock;
  runner.on(kQuery, {read_file(fixture("gpu/smi_query_busy.csv")) + "1, GPU-2, NVIDIA H200, 0, "
                                                                    "0, 143771\n"});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_busy.csv"))});
  kopt::gpu::Gate gate(runner, clock, {}, only("nvidia-smi"));
  auto report = gate.check();
  REQUIRE(report.ok());
  CHECK(report.tool == GpuTool::nvidia_smi);
  CHECK(runner.calls == std::vector<std::string>{kQuery, kApps, kQuery, kApps});
  CHECK(clock.sleeps == std::vector<double>{0.25});
  REQUIRE(report.gpus.size() == 2);
  CHECK(report.gpus[0].reason == "compute process 602 (python3); utilisation 100% > 5%");
  CHECK(report.idle == std::vector<int>{1});
  CHECK(kopt::gpu::binding_env(report.tool, 1) ==
        std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "1"}});
  CHECK(kopt::gpu::binding_env(GpuTool::rocm_smi, 3) ==
        std::map<std::string, std::string>{{"HIP_VISIBLE_DEVICES", "3"}});
}

TEST_CASE("memory growing between the two samples is not idle") {
  FakeRunner runner;
  FakeClock clock;
  runner.on(kQuery,
            {"0, GPU-1, NVIDIA H200, 0, 0, 143771\n", "0, GPU-1, NVIDIA H200, 0, 812, 143771\n"});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_idle.csv"))});
  kopt::gpu::Gate gate(runner, clock, {}, only("nvidia-smi"));
  auto report = gate.check();
  REQUIRE(report.gpus.size() == 1);
  CHECK_FALSE(report.gpus[0].idle);
  CHECK(report.gpus[0].reason == "memory grew from 0 to 812 MiB");
}

TEST_CASE("amd-smi is preferred over rocm-smi because it names each process's GPU") {
  FakeRunner runner;
  FakeClock clock;
  runner.on("amd-smi metric --json", {read_file(fixture("gpu/amd_smi_metric.json"))});
  runner.on("amd-smi process --json", {read_file(fixture("gpu/amd_smi_process.json"))});
  kopt::gpu::Gate gate(runner, clock, {}, [](const std::string &program) {
    return program == "nvidia-smi" ? "" : "/opt/rocm/bin/" + program;
  });
  auto report = gate.check();
  REQUIRE(report.ok());
  CHECK(report.tool == GpuTool::amd_smi);
  CHECK(report.idle == std::vector<int>{0});
  CHECK(report.gpus[1].reason == "compute process 4242 (python3); utilisation 87% > 5%");
}

TEST_CASE("rocm-smi: a KFD process it cannot place keeps every GPU busy") {
  FakeRunner runner;
  FakeClock clock;
  runner.on("rocm-smi --showuse --showmemuse --showpids --json",
            {read_file(fixture("gpu/rocm_smi_busy.json"))});
  kopt::gpu::Gate gate(runner, clock, {}, only("rocm-smi"));
  auto busy = gate.check();
  REQUIRE(busy.ok());
  CHECK(busy.idle.empty());
  CHECK(busy.gpus[0].reason == "compute process 248944 (python)");

  runner.on("rocm-smi --showuse --showmemuse --showpids --json",
            {read_file(fixture("gpu/rocm_smi_idle.json"))});
  CHECK(gate.check().idle == std::vector<int>{0, 1});
}

TEST_CASE("rocm-smi without --json: the gate reads its text form") {
  FakeRunner runner;
  FakeClock clock;
  runner.on("rocm-smi --showuse --showmemuse --showpids --json",
            {"rocm-smi: error: unrecognized arguments: --json\n"}, 2);
  runner.on("rocm-smi --showuse --showmemuse --showpids",
            {read_file(fixture("gpu/rocm_smi_showpids.txt"))});
  kopt::gpu::Gate gate(runner, clock, {}, only("rocm-smi"));
  auto busy = gate.check();
  REQUIRE(busy.ok());
  CHECK(busy.tool == GpuTool::rocm_smi);
  CHECK(busy.idle.empty());
  CHECK(busy.gpus[0].reason == "compute process 248944 (python)");

  runner.on("rocm-smi --showuse --showmemuse --showpids",
            {read_file(fixture("gpu/rocm_smi_idle.txt"))});
  CHECK(gate.check().idle == std::vector<int>{0, 1});

  runner.on("rocm-smi --showuse --showmemuse --showpids", {"no driver\n"}, 8);
  auto failed = gate.check();
  CHECK_FALSE(failed.ok());
  CHECK(failed.error == "rocm-smi --showuse --showmemuse --showpids --json: exited with 2: "
                        "rocm-smi: error: unrecognized arguments: --json; rocm-smi --showuse "
                        "--showmemuse --showpids: exited with 8: no driver");
}

TEST_CASE("no tool on PATH: the gate says so") {
  FakeRunner runner;
  FakeClock clock;
  kopt::gpu::Gate gate(runner, clock, {}, only("none"));
  auto report = gate.check();
  CHECK(report.tool == GpuTool::none);
  CHECK(report.error == "no GPU tool found (nvidia-smi, amd-smi and rocm-smi are not on PATH)");
  auto outcome = gate.wait_for_idle();
  CHECK_FALSE(outcome.found);
  CHECK(outcome.message == report.error);
  CHECK(runner.calls.empty());
}

TEST_CASE("a failing tool is reported with its exit status") {
  FakeRunner runner;
  FakeClock clock;
  runner.on(kQuery, {"NVIDIA-SMI has failed because it couldn't communicate with the driver\n"}, 9);
  kopt::gpu::Gate gate(runner, clock, {}, only("nvidia-smi"));
  auto report = gate.check();
  CHECK(report.error ==
        "nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total "
        "--format=csv,noheader,nounits: " +
            kopt::util::ProcessResult{9}.describe(60) +
            ": NVIDIA-SMI has failed because it couldn't communicate with the driver");
}

TEST_CASE("waiting re-checks every 10 min and gives up after 60 min") {
  FakeRunner runner;
  FakeClock clock;
  runner.on(kQuery, {read_file(fixture("gpu/smi_query_busy.csv"))});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_busy.csv"))});
  kopt::gpu::Gate gate(runner, clock, {}, only("nvidia-smi"));
  auto outcome = gate.wait_for_idle();
  CHECK_FALSE(outcome.found);
  CHECK(outcome.message == "no idle GPU for 60 min");
  CHECK(outcome.waited_s >= 3600);
  // Seven checks (0, 10, ..., 60 min), each a pair 0.5 s apart, and six waits between them.
  CHECK(runner.calls.size() == 28);
  CHECK(std::count(clock.sleeps.begin(), clock.sleeps.end(), 600.0) == 5);
}

TEST_CASE("waiting ends as soon as a GPU turns idle") {
  FakeRunner runner;
  FakeClock clock;
  std::string busy = read_file(fixture("gpu/smi_query_busy.csv"));
  runner.on(kQuery, {busy, busy, busy, busy, kIdleQuery});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_idle.csv"))});
  kopt::gpu::GateOptions options;
  options.recheck_s = 60;
  options.give_up_s = 600;
  kopt::gpu::Gate gate(runner, clock, options, only("nvidia-smi"));
  auto outcome = gate.wait_for_idle();
  REQUIRE(outcome.found);
  CHECK(outcome.gpu == 0);
  CHECK(outcome.tool == GpuTool::nvidia_smi);
  CHECK(outcome.waited_s == doctest::Approx(0.25 + 60 + 0.25 + 60 + 0.25));
}

TEST_CASE("the ctest resource spec lists one slot per idle GPU") {
  auto spec = kopt::gpu::resource_spec({3, 1});
  CHECK(spec.dump() == "{\"local\":[{\"gpus\":[{\"id\":\"3\",\"slots\":1},{\"id\":\"1\",\"slots\":"
                       "1}]}],\"version\":{\"major\":1,\"minor\":0}}");
  kopt::test::TempDir temp;
  kopt::gpu::write_resource_spec(temp.path() / "resources.json", {});
  CHECK(read_file(temp.path() / "resources.json") ==
        "{\n  \"local\": [\n    {\n      \"gpus\": []\n    }\n  ],\n  \"version\": {\n    "
        "\"major\": 1,\n    \"minor\": 0\n  }\n}\n");
}

TEST_CASE("claims: N benchmarks on G idle GPUs hold one GPU each; the next waits, then gives up") {
  kopt::test::TempDir locks;
  FakeRunner runner;
  FakeClock clock;
  runner.on(kQuery, {kIdleQuery});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_idle.csv"))});
  kopt::gpu::GateOptions options;
  options.recheck_s = 60;
  options.give_up_s = 30;
  kopt::gpu::Gate gate(runner, clock, options, only("nvidia-smi"));
  std::map<std::string, std::string> no_ctest;
  auto first = kopt::gpu::claim_device(kopt::spec::Backend::cuda, gate, clock, options, no_ctest,
                                       locks.path(), nullptr);
  auto second = kopt::gpu::claim_device(kopt::spec::Backend::cuda, gate, clock, options, no_ctest,
                                        locks.path(), nullptr);
  REQUIRE(first.binding.ok);
  REQUIRE(second.binding.ok);
  CHECK(first.slot == "gpu-0"); // the most idle first (GPU 1 shows 3% use)
  CHECK(second.slot == "gpu-1");
  CHECK(first.binding.env.at("CUDA_VISIBLE_DEVICES") == "0");
  CHECK(second.binding.env.at("CUDA_VISIBLE_DEVICES") == "1");
  std::ostringstream waiting;
  auto third = kopt::gpu::claim_device(kopt::spec::Backend::cuda, gate, clock, options, no_ctest,
                                       locks.path(), &waiting, 5);
  CHECK_FALSE(third.binding.ok);
  CHECK(third.binding.gave_up);
  CHECK(third.binding.message == "no idle GPU free of other kopt benchmarks for 0.5 min");
  const std::string pid = std::to_string(::getpid()); // both held by this test
  CHECK(waiting.str() == "kopt: waiting for a GPU: GPU 0 (pid " + pid + ") and GPU 1 (pid " + pid +
                             ") are held by another kopt benchmark\n");
  first.lock.reset(); // the first benchmark ends: its GPU is free again
  auto fourth = kopt::gpu::claim_device(kopt::spec::Backend::cuda, gate, clock, options, no_ctest,
                                        locks.path(), nullptr);
  REQUIRE(fourth.binding.ok);
  CHECK(fourth.slot == "gpu-0");
}

TEST_CASE("claims: a waiter takes a GPU as soon as the benchmarks holding them end") {
  // Seen on a machine of two GPUs: rounds waited more than 7 min with both GPUs idle. While the
  // other rounds' benchmarks ran no GPU was idle, so the waiter slept the gate's 10-min recheck.
  struct ReleasingClock : FakeClock {
    std::function<void()> on_sleep;
    void sleep_s(double seconds) override {
      FakeClock::sleep_s(seconds);
      if (on_sleep) {
        on_sleep();
      }
    }
  };
  kopt::test::TempDir locks;
  FakeRunner runner;
  ReleasingClock clock;
  const std::string busy = "0, GPU-7fc74ca0-d9de-b741-d9f2-9f1683f6bffd, NVIDIA H200, 99, 9000, "
                           "143771\n1, GPU-11111111-2222-3333-4444-555555555555, NVIDIA H200, 97, "
                           "9000, 143771\n";
  // Two checks busy (the other benchmarks run, then their end lags in the utilisation), then idle.
  runner.on(kQuery, {busy, busy, busy, busy, kIdleQuery});
  runner.on(kApps, {read_file(fixture("gpu/smi_apps_idle.csv"))});
  kopt::gpu::GateOptions options; // the defaults: re-check every 10 min, give up after 60
  kopt::gpu::Gate gate(runner, clock, options, only("nvidia-smi"));
  auto other0 = kopt::util::FileLock::try_lock(locks.path() / "gpu-0.lock");
  auto other1 = kopt::util::FileLock::try_lock(locks.path() / "gpu-1.lock");
  int sleeps = 0;
  clock.on_sleep = [&] {
    if (++sleeps == 2) { // the first wait after the first check: both benchmarks end
      other0.reset();
      other1.reset();
    }
  };
  std::ostringstream waiting;
  auto claim = kopt::gpu::claim_device(kopt::spec::Backend::cuda, gate, clock, options, {},
                                       locks.path(), &waiting, 5);
  REQUIRE(claim.binding.ok);
  CHECK(claim.slot == "gpu-0");
  CHECK(claim.waited_s < 15); // two polls and three checks, not a 600 s re-check
  CHECK(std::find(clock.sleeps.begin(), clock.sleeps.end(), 600.0) == clock.sleeps.end());
  const std::string pid = std::to_string(::getpid());
  CHECK(waiting.str().starts_with("kopt: waiting for a GPU: GPU 0 (pid " + pid +
                                  ") and GPU 1 (pid " + pid +
                                  ") are held by another kopt benchmark\n"));
}

TEST_CASE("claims: a host family holds the host slot; a second claim cannot take it") {
  kopt::test::TempDir locks;
  FakeRunner runner;
  FakeClock clock;
  kopt::gpu::Gate gate(runner, clock, {}, only("nvidia-smi"));
  auto host = kopt::gpu::claim_device(kopt::spec::Backend::host, gate, clock, {}, {}, locks.path(),
                                      nullptr);
  CHECK(host.binding.ok);
  CHECK(host.slot == "host");
  CHECK(runner.calls.empty()); // no GPU tool for a host family
  CHECK(kopt::util::FileLock::try_lock(locks.path() / "host.lock") == nullptr);
  host.lock.reset();
  CHECK(kopt::util::FileLock::try_lock(locks.path() / "host.lock") != nullptr);
}

TEST_CASE("one query tells a machine whose GPUs are all alike, with their model and driver") {
  auto two = kopt::gpu::parse_one_model("NVIDIA H100 80GB HBM3, 580.159.04\n"
                                        "NVIDIA H100 80GB HBM3, 580.159.04\n");
  REQUIRE(two);
  CHECK(two->name == "NVIDIA H100 80GB HBM3");
  CHECK(two->driver == "580.159.04");
  // Two models, two drivers, nothing, or a line that is not two fields: the gate decides.
  CHECK_FALSE(kopt::gpu::parse_one_model("NVIDIA H100 80GB HBM3, 580.159.04\n"
                                         "NVIDIA H200, 580.159.04\n"));
  CHECK_FALSE(kopt::gpu::parse_one_model("NVIDIA H100 80GB HBM3, 580.159.04\n"
                                         "NVIDIA H100 80GB HBM3, 575.57.08\n"));
  CHECK_FALSE(kopt::gpu::parse_one_model(""));
  CHECK_FALSE(kopt::gpu::parse_one_model("No devices were found\n"));
  CHECK_FALSE(kopt::gpu::parse_one_model("NVIDIA H100, 580.159.04, extra\n"));
}

TEST_SUITE_END();
