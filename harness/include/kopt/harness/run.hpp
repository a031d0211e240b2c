#pragma once

#include "kopt/harness/compare.hpp"
#include "kopt/harness/config.hpp"
#include "kopt/harness/problem.hpp"
#include "kopt/harness/timer.hpp"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kopt::harness {

/// What a family's harness.cpp gives the harness library: everything but the harness logic.
struct FamilySpec {
  std::string impl;                 ///< suffix of us_<impl> / err_<impl>: family.json "impl"
  std::string candidate_id;         ///< kopt_generated::candidate_id(); "" = the executable's
  std::string candidate_hash;       ///< kopt_generated::candidate_hash(); "" = the stamped one
  std::vector<std::string> kernels; ///< the compiled kernels' names, which --kernel may force
  /// Returns the kernel the candidate's dispatch picks for a config.
  std::function<std::string(const Config &)> dispatch;
  /// Makes the problem of a config, run with the named kernel.
  std::function<std::unique_ptr<Problem>(const Config &, const std::string &kernel)> make_problem;
  /// Makes the timer; when empty the host ChronoTimer is used.
  std::function<std::unique_ptr<Timer>()> make_timer;
  int warmup = default_warmup;           ///< warm-up runs per config for the benchmark modes
  int repeat = default_repeat;           ///< timed runs per config for --benchmark
  int full_repeat = default_full_repeat; ///< timed runs per config for --full-benchmark
};

/// What the harness was asked to do; exactly one per run.
enum class Mode { correctness, benchmark, full_benchmark, write_golden };

/// The mode's flag without its dashes: "correctness", "benchmark", "full-benchmark" or
/// "write-golden".
const char *mode_name(Mode mode);

/// The parsed command line (docs/FORMATS.md, "The harness command line and results CSV").
struct Options {
  Mode mode = Mode::correctness;
  std::string configs;
  std::string write_golden; ///< with Mode::write_golden: where the golden goes
  std::string golden;       ///< empty: outputs are not compared, err is left empty
  std::string out;          ///< empty: the results CSV goes to stdout
  int warmup = 0;
  int repeat = 1;
  std::uint64_t seed = default_seed;
  std::string kernel; ///< empty: each config's kernel comes from the dispatch
  /// The run is pinned to one CPU (a host family's): a timed run whose process used more CPU
  /// time than the run took ran on other CPUs too, and fails its check.
  bool one_cpu = false;
  /// Runs the configs once per line `run TOKEN RESULTS_FILE` read from stdin, answering each
  /// with `kopt-run-done TOKEN` on stdout once the file is written, until stdin ends (the benchmark
  /// modes only; the golden, when given, is compared in the first run): one process, its start-up
  /// paid once, for every round of a measurement.
  bool serve = false;
  bool help = false;
};

/// Parses the harness command line, taking warm-up and repeat defaults from `spec` and the mode;
/// throws Error naming the bad argument.
Options parse_options(const std::vector<std::string> &args, const FamilySpec &spec);

/// Returns the arguments (without the program) that parse_options reads back as `options`: with
/// parse_options, the one place that spells the flags (kopt builds every harness run with it).
/// Warm-up and repeat are written for the benchmark modes only (the others run each config
/// once), the seed only when it is not the default.
std::vector<std::string> to_args(const Options &options);

/// Returns the usage text.
std::string usage();

/// One config's outcome: the kernel it ran, its median time, with a golden its comparison, and
/// what the checks of its timed runs found.
struct Result {
  std::string kernel;
  double us = 0;               ///< the median of `samples`
  std::vector<double> samples; ///< every timed run's time, microseconds, in run order
  std::optional<Comparison> comparison;
  int checked = 0;        ///< runs whose output was checked against the family's reference
  std::string check;      ///< the first failed check ("timed run 3: 512 of 4096 outputs wrong")
  double check_error = 0; ///< that run's mismatch ratio (1 for a run that left a thread)

  /// Returns the err_<impl> value: the worst of the golden comparison and the failed check;
  /// nullopt when neither compared anything.
  std::optional<double> error() const;
};

/// Runs every config as `options` says, writing one human line per config to `log`, and writes
/// the golden when asked; throws Error on the first problem.
std::vector<Result> run_configs(const std::vector<Config> &configs, const Options &options,
                                const FamilySpec &spec, std::ostream &log);

/// The results CSV's columns after the config columns, as the harness writes them and kopt
/// reads them back (docs/FORMATS.md): the one place that names them.
struct ResultColumns {
  std::string kernel;  ///< "kernel": the kernel the config ran
  std::string us;      ///< "us_<impl>": the median time, microseconds
  std::string err;     ///< "err_<impl>": the error against the golden, empty when not compared
  std::string samples; ///< "samples_<impl>": every timed run's us, ';'-separated
  std::string checked; ///< "checked_<impl>": runs checked against the family's reference
  std::string check;   ///< "check_<impl>": the first failed check, empty when all passed
};

/// Returns the result columns of a family whose impl is `impl`.
ResultColumns result_columns(const std::string &impl);

/// Returns the results CSV: the config columns, kernel, us_<impl>, err_<impl> (empty when
/// nothing was compared), samples_<impl> (every timed run's us, ';'-separated), checked_<impl>
/// and check_<impl>, one row per config.
std::string results_csv(const std::vector<Config> &configs, const std::vector<Result> &results,
                        const std::string &impl);

/// The harness program: prints `kopt-candidate: <id> <hash>` first on stdout, runs the configs
/// and writes the results CSV to --out (atomically) or stdout. Returns 0 when every config ran
/// (a host family's process, one without make_timer, ends there with _Exit(0), so no exit
/// handler of the candidate's runs after the results are written) and 1 after printing
/// `harness: error: <what>` for any exception.
int run_main(int argc, char **argv, const FamilySpec &spec);

} // namespace kopt::harness
