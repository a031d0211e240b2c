#include "kopt/harness/run.hpp"

#include "kopt/harness/atomic_file.hpp"
#include "kopt/harness/error.hpp"
#include "kopt/harness/golden.hpp"
#include "kopt/harness/guard.hpp"
#include "kopt/harness/identity.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <unistd.h>

namespace kopt::harness {

namespace {

std::string format(const char *pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string csv_field(const std::string &field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) {
    return field;
  }
  std::string quoted = "\"";
  for (char c : field) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

// Returns the threads this process has now (Linux's /proc/self/status), or -1 when unknown.
int live_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) {
      return std::atoi(line.c_str() + 8);
    }
  }
  return -1;
}

std::string describe(const Comparison &c) {
  std::string text = std::to_string(c.mismatches) + " of " + std::to_string(c.elements) +
                     " outputs wrong (" + std::to_string(c.nans) + " NaN";
  return text + ", max abs " + format("%.3g", c.max_abs) + ")";
}

// One timed run. The host timer is called by name, not through the object's vtable pointer,
// which lives in memory a candidate's code can write.
double time_once(Timer &timer, ChronoTimer *host, Problem &problem) {
  return host ? host->ChronoTimer::time_run(problem) : timer.time_run(problem);
}

// Tells kopt a timed run's time the moment it is measured (`kopt-sample CONFIG RUN US` on stdout,
// written at once, where kopt runs the harness guarded): kopt compares them with the results
// file, so that times rewritten in this process's memory afterwards are caught.
void report_sample(std::size_t config, int run, double us) {
  if (!guard_on()) {
    return;
  }
  char line[96];
  int n = std::snprintf(line, sizeof line, "kopt-sample %zu %d %.3f\n", config, run, us);
  if (n > 0) {
    (void)!::write(1, line, static_cast<std::size_t>(n));
  }
}

// Checks the run that just returned with the family's reference; the first failure is kept.
void check_run(Problem &problem, const std::string &run, Result &result) {
  std::optional<Comparison> checked = problem.check_output();
  if (!checked) {
    return;
  }
  ++result.checked;
  if (checked->mismatches > 0 && result.check.empty()) {
    result.check = run + ": " + describe(*checked);
    result.check_error = checked->error();
  }
}

// The run on the config's seeded inputs, whose output the golden holds: made (and checked)
// in correctness mode, and wherever a golden is compared or written. Returns its output when
// writing a golden. Reading a large output back is hundreds of MB per config, so a comparison
// with the golden is made where the output lives when the family can (compare_with_golden).
// Outside the benchmark modes it is the config's one timed run.
std::vector<float> golden_run(Problem &problem, Timer &timer, ChronoTimer *host,
                              const Config &config, const Options &options, bool compare_golden,
                              Result &result) {
  const bool read_output = options.mode == Mode::write_golden;
  const bool benchmark = options.mode == Mode::benchmark || options.mode == Mode::full_benchmark;
  if (!read_output && !compare_golden && benchmark) {
    return {};
  }
  Rng rng(config_seed(options.seed, config.key()));
  problem.fill_inputs(rng);
  problem.poison_output();
  if (benchmark) {
    // Untimed: a profiler attributes the timed runs' launches only, in order.
    problem.run();
    problem.sync();
  } else {
    result.us = time_once(timer, host, problem);
    result.samples.push_back(result.us);
  }
  check_run(problem, "the run on the golden's inputs", result);
  return read_output ? problem.output() : std::vector<float>{};
}

// The golden run's output against the golden: on the device when the family compares there,
// else read back and compared on the host.
Comparison compare_with_golden(Problem &problem, const Golden &golden, const Config &config) {
  if (const std::vector<float> *values = golden.find(config.key())) {
    if (std::optional<Comparison> on_device = problem.compare_output(*values)) {
      return *on_device;
    }
  }
  std::vector<float> output = problem.output();
  return compare(output, golden_output(golden, config, output.size()), problem.tolerance());
}

// Warm-ups, then timed runs, each on fresh inputs and a poisoned output; every timed run is
// checked. Nothing the kernel can see tells a checked run from another: every run gets the
// same fills, poison and synchronisation, and the check comes after the kernel returned.
void timed_runs(Problem &problem, Timer &timer, ChronoTimer *host, const Options &options,
                std::size_t config, Result &result) {
  for (int i = 0; i < options.warmup; ++i) {
    Rng rng(fresh_seed());
    problem.fill_inputs(rng);
    problem.poison_output();
    problem.run();
    problem.sync();
  }
  for (int i = 0; i < options.repeat; ++i) {
    Rng rng(fresh_seed());
    problem.fill_inputs(rng);
    problem.poison_output();
    const int threads = timer.runs_on_host() ? live_threads() : -1;
    const double wall = time_once(timer, host, problem);
    report_sample(config, i + 1, wall);
    result.samples.push_back(wall);
    const int after = timer.runs_on_host() ? live_threads() : -1;
    const std::string run = "timed run " + std::to_string(i + 1);
    const double cpu = host ? host->ChronoTimer::cpu_us() : timer.cpu_us();
    if (options.one_cpu && cpu > 1.02 * wall + 100 && result.check.empty()) {
      // Pinned to one CPU, a run cannot use more CPU time than it took (its CPU time is taken
      // just outside its wall time): threads of the kernel ran on another CPU. Where kopt
      // confines the run they cannot leave it (bench.pin_cpu: false is the way for a kernel
      // that starts threads).
      result.check = run + ": the kernel used " + format("%.0f", cpu) + " us of CPU time in " +
                     format("%.0f", wall) + " us: it ran on more than the one CPU it is pinned to";
      result.check_error = 1;
    }
    if (after > threads && result.check.empty()) {
      // Work left on a thread after the timed call returned is work the timer did not see.
      result.check = run + ": the kernel left " + std::to_string(after - threads) +
                     " thread(s) running after it returned";
      result.check_error = 1;
    }
    check_run(problem, run, result);
  }
  result.us = median(result.samples);
}

void log_result(std::ostream &log, const Config &config, const Result &result, std::size_t n,
                std::size_t total) {
  log << "harness: [" << n << "/" << total << "] " << config.key() << " kernel=" << result.kernel;
  if (!result.samples.empty()) {
    log << " us=" << format("%.3f", result.us);
  }
  if (result.comparison) {
    const Comparison &c = *result.comparison;
    log << " err=" << format("%.6g", c.error()) << " (" << c.mismatches << "/" << c.elements
        << " outside, " << c.nans << " NaN, max abs " << format("%.3g", c.max_abs) << ", max rel "
        << format("%.3g", c.max_rel) << ")";
  }
  log << " checked=" << result.checked;
  if (!result.check.empty()) {
    log << " FAILED " << result.check;
  }
  log << "\n";
}

} // namespace

std::vector<Result> run_configs(const std::vector<Config> &configs, const Options &options,
                                const FamilySpec &spec, std::ostream &log) {
  // The golden is indexed before any run, so a golden for other configs fails at once; its
  // values are read while the configs run (a tuning chunk reads a few configs of a large golden).
  std::optional<GoldenPrefetch> golden;
  if (!options.golden.empty()) {
    golden.emplace(options.golden, configs);
  }
  std::unique_ptr<Timer> made = spec.make_timer ? spec.make_timer() : nullptr;
  ChronoTimer chrono;
  ChronoTimer *host = made ? nullptr : &chrono;
  Timer *timer = made ? made.get() : &chrono;
  if (guard_on()) {
    // Once the device is up: what its runtime (and the tracer) loaded is guarded too.
    static const std::string guarded = guard_memory();
    log << "harness: " << guarded << "\n";
  }
  if (golden && timer->runs_on_host()) {
    // A host run is timed, and its CPU time and threads checked, in this process: the reader
    // must be done before the first run, or its work would count as the kernel's.
    golden->wait_all();
  }
  log << "harness: timed by " << timer->name() << "\n";
  const DeviceIdentity device = timer->device();
  if (!device.arch.empty()) {
    // A protocol line like kopt-candidate's: kopt reads it from stdout.
    std::cout << "kopt-device: " << device.arch << " " << device.compute_units << std::endl;
  }
  Golden written;
  std::vector<Result> results;
  for (const auto &config : configs) {
    // Before the run, so a crash inside it leaves the config it died on in the log (kopt names
    // the config that started and did not finish).
    log << "harness: [" << results.size() + 1 << "/" << configs.size() << "] " << config.key()
        << " started" << std::endl;
    Result result;
    result.kernel = options.kernel.empty() ? spec.dispatch(config) : options.kernel;
    std::unique_ptr<Problem> problem = spec.make_problem(config, result.kernel);
    if (!problem) {
      throw Error(config.where() + ": the family made no problem for kernel " + result.kernel);
    }
    std::vector<float> output =
        golden_run(*problem, *timer, host, config, options, golden.has_value(), result);
    if (golden) {
      result.comparison = compare_with_golden(*problem, golden->take(config), config);
    }
    if (options.mode == Mode::benchmark || options.mode == Mode::full_benchmark) {
      timed_runs(*problem, *timer, host, options, results.size() + 1, result);
    }
    log_result(log, config, result, results.size() + 1, configs.size());
    if (options.mode == Mode::write_golden) {
      if (!result.check.empty()) {
        throw Error(config.where() + ": the baseline's output disagrees with the family's " +
                    "reference (check_output): " + result.check);
      }
      written.add(config.key(), std::move(output));
    }
    results.push_back(std::move(result));
  }
  if (options.mode == Mode::write_golden) {
    write_golden(options.write_golden, written);
    log << "harness: wrote the golden of " << configs.size() << " configs to "
        << options.write_golden << "\n";
  }
  return results;
}

std::optional<double> Result::error() const {
  if (!check.empty()) {
    return std::max(check_error, comparison ? comparison->error() : 0.0);
  }
  if (comparison) {
    return comparison->error();
  }
  return std::nullopt;
}

ResultColumns result_columns(const std::string &impl) {
  return {"kernel",          "us_" + impl,      "err_" + impl,
          "samples_" + impl, "checked_" + impl, "check_" + impl};
}

std::string results_csv(const std::vector<Config> &configs, const std::vector<Result> &results,
                        const std::string &impl) {
  if (configs.empty()) {
    return "";
  }
  std::string text;
  for (const auto &column : configs.front().columns()) {
    text += csv_field(column) + ",";
  }
  ResultColumns names = result_columns(impl);
  text += names.kernel + "," + names.us + "," + names.err + "," + names.samples + "," +
          names.checked + "," + names.check + "\n";
  for (std::size_t i = 0; i < results.size() && i < configs.size(); ++i) {
    for (const auto &value : configs[i].values()) {
      text += csv_field(value) + ",";
    }
    text += csv_field(results[i].kernel) + "," + format("%.3f", results[i].us) + ",";
    if (std::optional<double> error = results[i].error()) {
      text += format("%.9g", *error);
    }
    text += ",";
    for (std::size_t k = 0; k < results[i].samples.size(); ++k) {
      text += (k ? ";" : "") + format("%.3f", results[i].samples[k]);
    }
    text += "," + std::to_string(results[i].checked) + "," + csv_field(results[i].check) + "\n";
  }
  return text;
}

namespace {

// --serve: a run of the configs for each `run TOKEN RESULTS_FILE` line on stdin, answered by
// `kopt-run-done TOKEN` once the file is written, until stdin ends.
void serve(const std::vector<Config> &configs, const Options &options, const FamilySpec &spec) {
  const std::string prefix = "run ";
  std::string line;
  for (int n = 1; std::getline(std::cin, line); ++n) {
    size_t space = line.find(' ', prefix.size());
    if (line.rfind(prefix, 0) != 0 || space == std::string::npos || space == prefix.size() ||
        space + 1 == line.size()) {
      throw Error("--serve: expected 'run TOKEN RESULTS_FILE' on stdin, got '" + line + "'");
    }
    const std::string token = line.substr(prefix.size(), space - prefix.size());
    Options run = options;
    run.out = line.substr(space + 1);
    if (n > 1) {
      run.golden.clear(); // compared once, in the first run
    }
    std::vector<Result> results = run_configs(configs, run, spec, std::cerr);
    write_file_atomic(run.out, results_csv(configs, results, spec.impl));
    std::cout << "kopt-run-done " << token << std::endl;
  }
}

} // namespace

int run_main(int argc, char **argv, const FamilySpec &spec) {
  // The identity line comes first, whatever follows, so kopt can reject a stale binary early. A
  // family harness that leaves them empty gets the executable's own (and the hash slot is then
  // linked in whatever the family calls, so kopt stamp-hash always finds it).
  std::cout << "kopt-candidate: "
            << (spec.candidate_id.empty() ? executable_candidate_id() : spec.candidate_id) << " "
            << (spec.candidate_hash.empty() ? executable_candidate_hash() : spec.candidate_hash)
            << std::endl;
  try {
    Options options = parse_options(std::vector<std::string>(argv + 1, argv + argc), spec);
    if (options.help) {
      std::cout << usage();
      return 0;
    }
    if (!spec.dispatch || !spec.make_problem) {
      throw Error("the family's harness gave no dispatch or make_problem");
    }
    std::vector<Config> configs = read_configs(options.configs);
    std::cerr << "harness: " << mode_name(options.mode) << " of " << configs.size()
              << " configs, warmup " << options.warmup << ", repeat " << options.repeat << ", seed "
              << options.seed << "\n";
    if (options.serve) {
      serve(configs, options, spec);
    } else {
      std::vector<Result> results = run_configs(configs, options, spec, std::cerr);
      std::string csv = results_csv(configs, results, spec.impl);
      if (options.out.empty()) {
        std::cout << csv << std::flush;
      } else {
        write_file_atomic(options.out, csv);
      }
    }
    // KOPT_CAPTURE (kopt capture, never set by kopt bench) writes its shapes at exit.
    if (!spec.make_timer && std::getenv("KOPT_CAPTURE") == nullptr) {
      // A host family's process ends here: no exit handler or static destructor of the
      // candidate's runs after the results are written (one could rewrite them). A GPU
      // family's runtime and profiler need their exit handlers, and its times are the
      // profiler's, written by another process.
      std::cerr.flush();
      std::_Exit(0);
    }
    return 0;
  } catch (const std::exception &error) {
    std::cout.flush();
    std::cerr << "harness: error: " << error.what() << std::endl;
    return 1;
  }
}

} // namespace kopt::harness
