#include "gpu/gate.hpp"

#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kopt::gpu {

namespace {

// The GPU tools and their programs, in the order the gate looks for them on PATH.
constexpr util::EnumName<GpuTool> kTools[] = {{GpuTool::nvidia_smi, "nvidia-smi"},
                                              {GpuTool::amd_smi, "amd-smi"},
                                              {GpuTool::rocm_smi, "rocm-smi"}};

} // namespace

const char *to_string(GpuTool tool) { return util::name_of(kTools, tool, "none"); }

double RealClock::now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void RealClock::sleep_s(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

namespace {

bool runs_on(const ComputeProcess &process, const GpuStatus &gpu) {
  if (!process.gpu_uuid.empty()) {
    return process.gpu_uuid == gpu.uuid;
  }
  // rocm-smi does not say which GPU a KFD process uses: it keeps every GPU busy.
  return process.gpu < 0 || process.gpu == gpu.index;
}

const GpuStatus *same_gpu(const SmiSample &sample, const GpuStatus &gpu) {
  for (const auto &other : sample.gpus) {
    if (other.index == gpu.index) {
      return &other;
    }
  }
  return nullptr;
}

std::string fmt(double value) { return util::format_number(value, 10); }

double memory_key(const GpuStatus &gpu) {
  return gpu.memory_used_mib >= 0 ? gpu.memory_used_mib : gpu.memory_used_pct;
}

} // namespace

std::vector<GpuVerdict> judge(const SmiSample &first, const SmiSample &second,
                              const GateOptions &options) {
  std::vector<GpuVerdict> verdicts;
  for (const auto &gpu : second.gpus) {
    const GpuStatus *before = same_gpu(first, gpu);
    if (!before) {
      before = &gpu;
    }
    GpuVerdict verdict;
    verdict.status = gpu;
    std::vector<std::string> reasons;
    std::vector<int64_t> pids;
    for (const SmiSample *sample : {&first, &second}) {
      for (const auto &process : sample->processes) {
        if (runs_on(process, gpu) &&
            std::find(pids.begin(), pids.end(), process.pid) == pids.end()) {
          pids.push_back(process.pid);
          reasons.push_back("compute process " + std::to_string(process.pid) +
                            (process.name.empty() ? "" : " (" + process.name + ")"));
        }
      }
    }
    double utilization = std::max(before->utilization_pct, gpu.utilization_pct);
    if (before->utilization_pct < 0 || gpu.utilization_pct < 0) {
      reasons.emplace_back("utilisation unknown");
    } else if (utilization > options.max_utilization_pct) {
      reasons.push_back("utilisation " + fmt(utilization) + "% > " +
                        fmt(options.max_utilization_pct) + "%");
    }
    if (before->memory_used_mib >= 0 && gpu.memory_used_mib >= 0) {
      if (gpu.memory_used_mib > before->memory_used_mib) {
        reasons.push_back("memory grew from " + fmt(before->memory_used_mib) + " to " +
                          fmt(gpu.memory_used_mib) + " MiB");
      }
    } else if (before->memory_used_pct >= 0 && gpu.memory_used_pct >= 0) {
      if (gpu.memory_used_pct > before->memory_used_pct) {
        reasons.push_back("memory grew from " + fmt(before->memory_used_pct) + "% to " +
                          fmt(gpu.memory_used_pct) + "%");
      }
    }
    verdict.idle = reasons.empty();
    verdict.reason = util::join(reasons, "; ");
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

std::vector<int> most_idle_first(const std::vector<GpuVerdict> &verdicts) {
  std::vector<const GpuStatus *> idle;
  for (const auto &verdict : verdicts) {
    if (verdict.idle) {
      idle.push_back(&verdict.status);
    }
  }
  std::stable_sort(idle.begin(), idle.end(), [](const GpuStatus *a, const GpuStatus *b) {
    if (a->utilization_pct != b->utilization_pct) {
      return a->utilization_pct < b->utilization_pct;
    }
    if (memory_key(*a) != memory_key(*b)) {
      return memory_key(*a) < memory_key(*b);
    }
    return a->index < b->index;
  });
  std::vector<int> indices;
  for (const GpuStatus *gpu : idle) {
    indices.push_back(gpu->index);
  }
  return indices;
}

std::map<std::string, std::string> binding_env(GpuTool tool, int gpu) {
  if (tool == GpuTool::none) {
    return {};
  }
  const char *name = tool == GpuTool::nvidia_smi ? "CUDA_VISIBLE_DEVICES" : "HIP_VISIBLE_DEVICES";
  return {{name, std::to_string(gpu)}};
}

Gate::Gate(util::ProcessRunner &runner, Clock &clock, GateOptions options, ProgramFinder find)
    : runner_(runner), clock_(clock), options_(options), find_(std::move(find)) {}

SmiSample Gate::sample(GpuTool tool, const std::string &program, std::string &error) {
  auto run = [&](std::vector<std::string> args) -> std::string {
    util::Command command;
    command.argv = {program};
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.timeout_s = options_.tool_timeout_s;
    util::ProcessResult result = runner_.run(command);
    if (!result.ok() && error.empty()) {
      std::string detail(util::trim(result.err.substr(0, result.err.find('\n'))));
      error = std::string(to_string(tool)) + " " + util::join(args, " ") + ": " +
              result.describe(options_.tool_timeout_s) + (detail.empty() ? "" : ": " + detail);
    }
    return result.out;
  };
  SmiSample sample;
  try {
    if (tool == GpuTool::nvidia_smi) {
      std::string query = run({"--query-gpu=" + util::join(nvidia_query_fields(), ","),
                               "--format=csv,noheader,nounits"});
      std::string apps =
          run({"--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv"});
      if (error.empty()) {
        sample.gpus = parse_nvidia_query(query, "nvidia-smi --query-gpu");
        sample.processes = parse_nvidia_apps(apps, "nvidia-smi --query-compute-apps");
      }
    } else if (tool == GpuTool::amd_smi) {
      std::string metric = run({"metric", "--json"});
      std::string process = run({"process", "--json"});
      if (error.empty()) {
        sample.gpus = parse_amd_smi_metric(metric, "amd-smi metric --json");
        sample.processes = parse_amd_smi_process(process, "amd-smi process --json");
      }
    } else {
      std::string out = run({"--showuse", "--showmemuse", "--showpids", "--json"});
      if (error.empty()) {
        sample = parse_rocm_smi_json(out, "rocm-smi --json");
      } else {
        // Older rocm-smi releases have no --json: their text form says the same.
        std::string json_error = std::move(error);
        error.clear();
        std::string text = run({"--showuse", "--showmemuse", "--showpids"});
        if (error.empty()) {
          sample = parse_rocm_smi_text(text, "rocm-smi");
        } else {
          error = json_error + "; " + error;
        }
      }
    }
  } catch (const Error &e) {
    error = e.what();
  }
  return sample;
}

GateReport Gate::check() {
  GateReport report;
  std::string program;
  for (const auto &[tool, name] : kTools) {
    program = find_(name);
    if (!program.empty()) {
      report.tool = tool;
      break;
    }
  }
  if (report.tool == GpuTool::none) {
    report.error = "no GPU tool found (nvidia-smi, amd-smi and rocm-smi are not on PATH)";
    return report;
  }
  SmiSample first = sample(report.tool, program, report.error);
  if (!report.ok()) {
    return report;
  }
  clock_.sleep_s(options_.sample_gap_s);
  SmiSample second = sample(report.tool, program, report.error);
  if (!report.ok()) {
    return report;
  }
  report.gpus = judge(first, second, options_);
  report.idle = most_idle_first(report.gpus);
  return report;
}

WaitOutcome Gate::wait_for_idle() {
  double start = clock_.now_s();
  while (true) {
    GateReport report = check();
    WaitOutcome outcome;
    outcome.tool = report.tool;
    outcome.waited_s = clock_.now_s() - start;
    if (!report.ok()) {
      outcome.message = report.error;
      return outcome;
    }
    if (!report.idle.empty()) {
      outcome.found = true;
      outcome.gpu = report.idle.front();
      for (const auto &verdict : report.gpus) {
        if (verdict.status.index == outcome.gpu) {
          outcome.name = verdict.status.name;
        }
      }
      return outcome;
    }
    if (outcome.waited_s >= options_.give_up_s) {
      outcome.message = "no idle GPU for " + fmt(options_.give_up_s / 60) + " min";
      return outcome;
    }
    clock_.sleep_s(std::min(options_.recheck_s, options_.give_up_s - outcome.waited_s));
  }
}

GateOptions gate_options_for_wait(double minutes) {
  GateOptions options;
  options.give_up_s = minutes * 60;
  options.recheck_s = std::min(options.recheck_s, std::max(options.give_up_s, 1.0));
  return options;
}

} // namespace kopt::gpu
