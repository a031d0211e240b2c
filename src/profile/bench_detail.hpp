#pragma once

#include "profile/bench.hpp"
#include "profile/harness_csv.hpp"
#include "profile/ncu.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

// What the files of a benchmark (harness runs, served rounds, side by side, the golden) share;
// nothing outside src/profile/ calls them.
namespace kopt::profile::detail {

/// Writes a harness run's log: its command, how it ended, its stdout and stderr.
void write_log(const std::filesystem::path &file, const util::Command &command,
               const util::ProcessResult &result, double timeout_s);

/// Why a harness run failed: how it ended, the config it died on, the last lines of its stderr.
std::string harness_failure(const util::ProcessResult &result, double timeout_s);

/// A traced harness's failure: the tracer's refusal first when it ended the harness (a kernel
/// launched outside the timed ranges still running when one ended).
std::string traced_failure(const util::ProcessResult &result, const spec::Family &family,
                           const std::filesystem::path &trace);

/// What times a benchmark of `family` here: on NVIDIA the CUPTI tracer when kopt has it (unless
/// the setup asks for ncu), else ncu when it is on PATH; on AMD rocprofv3 when it is on PATH; else
/// the harness's own events (chrono on host).
Source benchmark_profiler(const spec::Family &family, const RunSetup &setup);

/// A run's measurement before it runs: who, where, when, and the configs file's columns.
Measurement describe_run(const spec::Family &family, const spec::Layout &layout,
                         const std::string &id, HarnessMode mode, const RunSetup &setup);

/// Adds the harness's rows as the measurement's configs, each with its class and harness time.
void add_configs(Measurement &m, std::vector<HarnessRow> rows, const spec::Family &family);

/// The command of one harness run of `mode`: its arguments (results into `csv`, the golden
/// compared when there is one and `golden` asks; with `serve`, rounds on request and no `csv`),
/// time limit, environment and CPU.
util::Command harness_command(const spec::Family &family, const spec::Layout &layout,
                              HarnessMode mode, const RunSetup &setup,
                              const std::filesystem::path &csv, GoldenCheck golden,
                              const std::filesystem::path &harness, bool serve = false);

/// Replaces the harness's times by the profiler's per-config time (every counted launch of a
/// timed run summed into its sample); when the profiler attributed nothing to some config the
/// measurement stays unprofiled, with the harness's times and the reason.
void use_profiler_times(Measurement &m, const ProfileReport &report, Source tool,
                        const std::string &kernel_regex);

/// ncu profiles the timed runs only (the harness marks them with profiler start and stop), or
/// with NcuLaunches::all warm-ups too, told apart by the harness's flush.
void use_ncu_times(Measurement &m, const std::string &ncu_stdout, const std::string &source,
                   const spec::Family &family, NcuLaunches launches);

/// rocprofv3's kernel trace under `trace_dir`: by the harness's roctx ranges when it recorded
/// them, else in launch order (one matching dispatch per run); the harness's flush marks each
/// timed run, so warm-ups are left out.
void use_rocprofv3_times(Measurement &m, const std::filesystem::path &trace_dir,
                         const spec::Family &family);

/// The CUPTI tracer's trace at `trace`: range r is timed run r % repeat of config r / repeat.
void use_cupti_times(Measurement &m, const std::filesystem::path &trace,
                     const spec::Family &family);

/// The rounds of one side of a side-by-side measurement, served by one harness process
/// (`--serve`): it starts before its first round, runs each round when asked (so the sides still
/// take turns round by round), and exits after the last, when the CUPTI tracer writes the trace
/// that times every round. Its start-up (context, tracer, module loads) is paid once instead of
/// once per round. Its log goes to rounds/<best|candidate>-<id>.log; its trace, and the copy of
/// its harness it runs, to the folder rounds/<best|candidate>-<id>/. It runs confined: it writes
/// only that folder and `round_dirs`, its rounds' folders.
class ServedSide {
public:
  ServedSide(const spec::Family &family, const spec::Layout &layout, std::string id,
             std::string side, util::ProcessRunner &runner, const RunSetup &setup,
             const std::filesystem::path &dir, std::vector<std::filesystem::path> round_dirs);

  /// Runs the next round into `run_dir`; returns its measurement, timed by the harness until
  /// finish() reads the trace, or failed (and then the process has ended).
  Measurement round(const std::filesystem::path &run_dir);

  /// Stops the process (SIGSTOP) while the other side runs, or lets it go on.
  void hold(bool stopped);

  /// Closes the process's stdin, so that it begins to exit (and write its trace).
  void close();

  /// Ends the process (if it runs) and times each of `rounds` (round()'s measurements, in order)
  /// by its share of the trace: round j holds the trace's ranges of configs j x C to
  /// (j + 1) x C - 1, C configs of repeat timed runs each.
  void finish(std::vector<Measurement> &rounds);

private:
  static Measurement failed(Measurement &m, const std::string &reason);
  void end();

  const spec::Family &family_;
  const spec::Layout &layout_;
  std::string id_;
  util::ProcessRunner &runner_;
  const RunSetup &setup_;
  std::filesystem::path log_;
  std::filesystem::path own_; // the folder it writes besides its rounds'
  std::filesystem::path trace_;
  std::vector<std::filesystem::path> round_dirs_;
  util::Command command_;
  std::unique_ptr<util::Conversation> talk_;
  bool ended_ = false;
  std::string hash_;
  std::string reason_; // why the process failed, once it ended
};

} // namespace kopt::profile::detail
