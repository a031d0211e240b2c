#include "gpu/binding.hpp"

#include "util/text.hpp"

#include <cstdlib>

namespace kopt::gpu {

int ctest_gpu_id(const std::string &value) {
  for (const auto &part : util::split(value, ',')) {
    std::string_view field = util::trim(part);
    if (field.rfind("id:", 0) == 0) {
      try {
        return static_cast<int>(util::parse_int(field.substr(3), "CTEST_RESOURCE_GROUP_0_GPUS"));
      } catch (...) {
        return -1;
      }
    }
  }
  return -1;
}

std::map<std::string, std::string> binding_environment() {
  std::map<std::string, std::string> env;
  for (const char *name : {"CTEST_RESOURCE_GROUP_COUNT", "CTEST_RESOURCE_GROUP_0_GPUS"}) {
    if (const char *value = std::getenv(name)) {
      env[name] = value;
    }
  }
  return env;
}

DeviceState parse_nvidia_state(const std::string &text) {
  DeviceState state;
  std::vector<std::string> fields = util::split(util::trim(text), ',');
  if (fields.size() < 3) {
    return state;
  }
  state.driver = std::string(util::trim(fields[0]));
  state.clocks =
      "sm " + std::string(util::trim(fields[1])) + ", mem " + std::string(util::trim(fields[2]));
  return state;
}

DeviceState nvidia_state(util::ProcessRunner &runner,
                         const std::map<std::string, std::string> &env) {
  if (util::find_program("nvidia-smi").empty()) {
    return {};
  }
  auto visible = env.find("CUDA_VISIBLE_DEVICES");
  util::Command command;
  command.argv = {"nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.mem",
                  "--format=csv,noheader", "-i",
                  visible == env.end() ? "0" : util::split(visible->second, ',').front()};
  command.timeout_s = 20;
  util::ProcessResult result = runner.run(command);
  return result.ok() ? parse_nvidia_state(result.out) : DeviceState{};
}

std::optional<GpuModel> parse_one_model(const std::string &text) {
  std::optional<GpuModel> model;
  for (const std::string &line : util::split(util::trim(text), '\n')) {
    std::vector<std::string> fields = util::split(line, ',');
    if (fields.size() != 2) {
      return std::nullopt;
    }
    GpuModel gpu{std::string(util::trim(fields[0])), std::string(util::trim(fields[1]))};
    if (gpu.name.empty() || gpu.driver.empty() ||
        (model && (model->name != gpu.name || model->driver != gpu.driver))) {
      return std::nullopt;
    }
    model = gpu;
  }
  return model;
}

std::optional<GpuModel> nvidia_one_model(util::ProcessRunner &runner) {
  if (util::find_program("nvidia-smi").empty()) {
    return std::nullopt;
  }
  util::ProcessResult result = runner.run(
      {{"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"}, {}, {}, 20});
  return result.ok() ? parse_one_model(result.out) : std::nullopt;
}

Binding bind(spec::Backend backend, Gate &gate,
             const std::map<std::string, std::string> &environment) {
  Binding binding;
  GpuTool tool = backend == spec::Backend::hip ? GpuTool::rocm_smi : GpuTool::nvidia_smi;
  auto allocated = environment.find("CTEST_RESOURCE_GROUP_0_GPUS");
  if (allocated != environment.end()) {
    int id = ctest_gpu_id(allocated->second);
    if (id < 0) {
      binding.message = "cannot read CTEST_RESOURCE_GROUP_0_GPUS='" + allocated->second + "'";
      return binding;
    }
    // ctest chose the GPU from the idle ones `kopt resources` listed; look up its name only.
    GateReport report = gate.check();
    for (const auto &verdict : report.gpus) {
      if (verdict.status.index == id) {
        binding.device = verdict.status.name;
      }
    }
    binding.ok = true;
    binding.env = binding_env(report.ok() ? report.tool : tool, id);
    binding.message = "GPU " + std::to_string(id) + " allocated by ctest";
    return binding;
  }
  WaitOutcome outcome = gate.wait_for_idle();
  if (!outcome.found) {
    binding.message = outcome.message;
    binding.gave_up = outcome.tool != GpuTool::none;
    return binding;
  }
  binding.ok = true;
  binding.device = outcome.name;
  binding.env = binding_env(outcome.tool, outcome.gpu);
  binding.message =
      "idle GPU " + std::to_string(outcome.gpu) + " (" + std::string(to_string(outcome.tool)) + ")";
  return binding;
}

} // namespace kopt::gpu
