#pragma once

// The GPU availability gate. A GPU is idle when, over a pair of samples taken
// GateOptions::sample_gap_s apart, it has no compute process, its utilisation stays at or
// below max_utilization_pct and its used memory does not grow. The gate never pre-empts: it
// waits and re-checks. Host families do not use it.

#include "gpu/smi.hpp"
#include "util/process.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kopt::gpu {

/// Which monitoring tool the gate read; tools are looked for in this order.
enum class GpuTool { none, nvidia_smi, amd_smi, rocm_smi };

/// Returns "none", "nvidia-smi", "amd-smi" or "rocm-smi".
const char *to_string(GpuTool tool);

/// Time for the gate: tests substitute a fake whose sleep only advances its clock.
class Clock {
public:
  virtual ~Clock() = default;

  /// Returns seconds since an arbitrary start.
  virtual double now_s() = 0;

  /// Waits `seconds`.
  virtual void sleep_s(double seconds) = 0;
};

/// The Clock that reads std::chrono::steady_clock and really sleeps.
class RealClock : public Clock {
public:
  double now_s() override;
  void sleep_s(double seconds) override;
};

/// The gate's thresholds and timings.
struct GateOptions {
  double recheck_s = 600;         ///< wait between checks while no GPU is idle
  double give_up_s = 3600;        ///< stop waiting after this long
  double sample_gap_s = 0.25;     ///< time between the two samples of one check
  double max_utilization_pct = 5; ///< "near 0"
  double tool_timeout_s = 60;     ///< a monitoring tool that runs longer has failed
};

/// The gate's options for a wait of at most `minutes`: give up after that long, and re-check at
/// the default interval or sooner when the wait is shorter (but at least every second).
GateOptions gate_options_for_wait(double minutes);

/// One GPU's verdict from a sample pair.
struct GpuVerdict {
  GpuStatus status; ///< the second sample
  bool idle = false;
  std::string reason; ///< why it is not idle; "" when idle
};

/// What one check saw: the tool, every GPU's verdict and the idle GPUs, most idle first.
struct GateReport {
  GpuTool tool = GpuTool::none;
  std::string error; ///< "no GPU tool found ..." or a tool failure; then gpus is empty
  std::vector<GpuVerdict> gpus;
  std::vector<int> idle; ///< GPU indices, least utilised (then least memory) first

  /// True when the tool ran and its output was read.
  bool ok() const { return error.empty(); }
};

/// How waiting for an idle GPU ended: a GPU, or the message saying why none.
struct WaitOutcome {
  bool found = false;
  int gpu = -1;
  std::string name; ///< the chosen GPU's model
  GpuTool tool = GpuTool::none;
  double waited_s = 0;
  std::string message; ///< "no idle GPU for 60 min", or the gate's error
};

/// Finds a program on PATH (util::find_program); tests substitute a table.
using ProgramFinder = std::function<std::string(const std::string &)>;

/// Applies the idle rule to a pair of samples and returns one verdict per GPU of `second`.
std::vector<GpuVerdict> judge(const SmiSample &first, const SmiSample &second,
                              const GateOptions &options);

/// Returns the idle GPUs' indices of `verdicts`, most idle first.
std::vector<int> most_idle_first(const std::vector<GpuVerdict> &verdicts);

/// Returns the environment that binds a child to `gpu`: CUDA_VISIBLE_DEVICES for nvidia-smi,
/// HIP_VISIBLE_DEVICES for the AMD tools.
std::map<std::string, std::string> binding_env(GpuTool tool, int gpu);

/// Checks GPUs through whichever monitoring tool is on PATH and waits for an idle one.
class Gate {
public:
  /// Uses `runner` for the tools, `clock` for waiting and `find` to locate the tools.
  Gate(util::ProcessRunner &runner, Clock &clock, GateOptions options = {},
       ProgramFinder find = util::find_program);

  /// Takes a sample pair and returns every GPU's verdict and the idle ones, most idle first.
  GateReport check();

  /// Checks every options.recheck_s until a GPU is idle or options.give_up_s has passed.
  WaitOutcome wait_for_idle();

private:
  SmiSample sample(GpuTool tool, const std::string &program, std::string &error);

  util::ProcessRunner &runner_;
  Clock &clock_;
  GateOptions options_;
  ProgramFinder find_;
};

} // namespace kopt::gpu
