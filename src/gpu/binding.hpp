#pragma once

#include "gpu/gate.hpp"
#include "spec/family.hpp"

#include "util/process.hpp"

#include <map>
#include <optional>
#include <string>

namespace kopt::gpu {

/// Which GPU a harness run gets: the environment that binds it, the device's name for the
/// results, or why there is none.
struct Binding {
  bool ok = false;
  std::map<std::string, std::string> env; ///< e.g. CUDA_VISIBLE_DEVICES=1
  std::string device;                     ///< the GPU's model, e.g. "NVIDIA H200"
  std::string message;                    ///< how it was chosen, or why none was
  bool gave_up = false;                   ///< true: no idle GPU within the gate's time limit
};

/// Parses ctest's `CTEST_RESOURCE_GROUP_0_GPUS` value ("id:1,slots:1"); returns the GPU id or
/// -1 when the text holds none.
int ctest_gpu_id(const std::string &value);

/// Binds a run of a `backend` (cuda or hip) family: to the GPU ctest allocated when
/// `environment` holds CTEST_RESOURCE_GROUP_0_GPUS (the test ran with a resource spec file),
/// else to the most idle GPU the gate finds, waiting as the gate's options say.
Binding bind(spec::Backend backend, Gate &gate,
             const std::map<std::string, std::string> &environment);

/// The variables of this process's environment that binding reads.
std::map<std::string, std::string> binding_environment();

/// A GPU's driver version and clocks at one moment, for a measurement's metadata.
struct DeviceState {
  std::string driver; ///< e.g. "580.159.04"
  std::string clocks; ///< e.g. "sm 1980 MHz, mem 2619 MHz"
};

/// Parses `nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem --format=csv,noheader`
/// output (one line); empty fields when the text holds none.
DeviceState parse_nvidia_state(const std::string &text);

/// Asks nvidia-smi for the state of the GPU the binding `env` names (CUDA_VISIBLE_DEVICES, else
/// GPU 0); empty fields when nvidia-smi is missing or fails.
DeviceState nvidia_state(util::ProcessRunner &runner,
                         const std::map<std::string, std::string> &env);

/// The one GPU model and driver of a machine whose GPUs are all alike.
struct GpuModel {
  std::string name;   ///< as the gate names a bound GPU, e.g. "NVIDIA H100 80GB HBM3"
  std::string driver; ///< e.g. "580.159.04"
};

/// Parses `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader` (a line per GPU)
/// and returns the model when every GPU has the same name and driver; nullopt when the lines
/// differ, none is there, or one is not two fields.
std::optional<GpuModel> parse_one_model(const std::string &text);

/// Asks nvidia-smi (one query, no idle sampling) for the model of every GPU here; nullopt when
/// nvidia-smi is missing or fails, or the GPUs are not all alike. A measurement made on any of
/// them is then a measurement on the one the gate would bind.
std::optional<GpuModel> nvidia_one_model(util::ProcessRunner &runner);

} // namespace kopt::gpu
