#include "kopt/harness/run.hpp"

#include "kopt/harness/atomic_file.hpp"
#include "kopt/harness/error.hpp"
#include "kopt/harness/golden.hpp"
#include "kopt/harness/identity.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

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

const char *mode_name(Mode mode) {
  switch (mode) {
  case Mode::correctness:
    return "correctness";
  case Mode::benchmark:
    return "benchmark";
  case Mode::full_benchmark:
    return "full-benchmark";
  case Mode::write_golden:
    return "write-golden";
  }
  return "?";
}

} // namespace

std::vector<Result> run_configs(const std::vector<Config> &configs, const Options &options,
                                const FamilySpec &spec, std::ostream &log) {
  // The golden is read before any run, so a golden for other configs fails at once; only these
  // configs' entries are read (a tuning chunk is a few configs of a large golden).
  std::optional<Golden> golden;
  if (!options.golden.empty()) {
    std::set<std::string> keys;
    for (const auto &config : configs) {
      keys.insert(config.key());
    }
    golden = read_golden(options.golden, keys);
    for (const auto &config : configs) {
      if (!golden->find(config.key())) {
        golden_output(*golden, config, 0); // throws the "no output for config" error
      }
    }
  }
  std::unique_ptr<Timer> timer = spec.make_timer ? spec.make_timer() : nullptr;
  if (!timer) {
    timer = std::make_unique<ChronoTimer>();
  }
  log << "harness: timed by " << timer->name() << "\n";
  const DeviceIdentity device = timer->device();
  if (!device.arch.empty()) {
    // A protocol line like kopt-candidate's: kopt reads it from stdout.
    std::cout << "kopt-device: " << device.arch << " " << device.compute_units << std::endl;
  }
  // The output is read back only for the golden, to compare or to write: for a large GEMM the
  // copy to the host is hundreds of MB per config, and a tuning run without a golden has no use
  // for it. Poisoning serves only a read output, so it goes with it.
  const bool read_output = golden.has_value() || options.mode == Mode::write_golden;
  Golden written;
  std::vector<Result> results;
  for (const auto &config : configs) {
    Result result;
    result.kernel = options.kernel.empty() ? spec.dispatch(config) : options.kernel;
    std::unique_ptr<Problem> problem = spec.make_problem(config, result.kernel);
    if (!problem) {
      throw Error(config.where() + ": the family made no problem for kernel " + result.kernel);
    }
    Rng rng(config_seed(options.seed, config.key()));
    problem->fill_inputs(rng);
    for (int i = 0; i < options.warmup; ++i) {
      if (read_output) {
        problem->poison_output();
      }
      problem->run();
      problem->sync();
    }
    // Poisoned before every timed run too, so the checked output is the last run's own work.
    for (int i = 0; i < options.repeat; ++i) {
      if (read_output) {
        problem->poison_output();
      }
      result.samples.push_back(timer->time_run(*problem));
    }
    result.us = median(result.samples);
    std::vector<float> output;
    if (read_output) {
      output = problem->output();
    }
    if (golden) {
      result.comparison =
          compare(output, golden_output(*golden, config, output.size()), problem->tolerance());
    }
    log << "harness: [" << results.size() + 1 << "/" << configs.size() << "] " << config.key()
        << " kernel=" << result.kernel << " us=" << format("%.3f", result.us);
    if (result.comparison) {
      const Comparison &c = *result.comparison;
      log << " err=" << format("%.6g", c.error()) << " (" << c.mismatches << "/" << c.elements
          << " outside, " << c.nans << " NaN, max abs " << format("%.3g", c.max_abs) << ", max rel "
          << format("%.3g", c.max_rel) << ")";
    }
    log << "\n";
    if (options.mode == Mode::write_golden) {
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

ResultColumns result_columns(const std::string &impl) {
  return {"kernel", "us_" + impl, "err_" + impl, "samples_" + impl};
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
  text += names.kernel + "," + names.us + "," + names.err + "," + names.samples + "\n";
  for (std::size_t i = 0; i < results.size() && i < configs.size(); ++i) {
    for (const auto &value : configs[i].values()) {
      text += csv_field(value) + ",";
    }
    text += csv_field(results[i].kernel) + "," + format("%.3f", results[i].us) + ",";
    if (results[i].comparison) {
      text += format("%.9g", results[i].comparison->error());
    }
    text += ",";
    for (std::size_t k = 0; k < results[i].samples.size(); ++k) {
      text += (k ? ";" : "") + format("%.3f", results[i].samples[k]);
    }
    text += "\n";
  }
  return text;
}

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
    std::vector<Result> results = run_configs(configs, options, spec, std::cerr);
    std::string csv = results_csv(configs, results, spec.impl);
    if (options.out.empty()) {
      std::cout << csv << std::flush;
    } else {
      write_file_atomic(options.out, csv);
    }
    return 0;
  } catch (const std::exception &error) {
    std::cout.flush();
    std::cerr << "harness: error: " << error.what() << std::endl;
    return 1;
  }
}

} // namespace kopt::harness
