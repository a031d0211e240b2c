#include "kopt/harness/error.hpp"
#include "kopt/harness/run.hpp"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace kopt::harness {

namespace {

// Parses a non-negative integer option value; throws naming the option.
std::uint64_t parse_count(const std::string &option, const std::string &text) {
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-') {
    throw Error(option + ": expected a non-negative integer, got '" + text + "'");
  }
  return value;
}

int parse_small(const std::string &option, const std::string &text) {
  std::uint64_t value = parse_count(option, text);
  if (value > 1000000) {
    throw Error(option + ": " + text + " is too large");
  }
  return static_cast<int>(value);
}

// The modes and their flags without the dashes, for parsing, naming and writing them.
constexpr std::pair<Mode, const char *> kModes[] = {{Mode::correctness, "correctness"},
                                                    {Mode::benchmark, "benchmark"},
                                                    {Mode::full_benchmark, "full-benchmark"},
                                                    {Mode::write_golden, "write-golden"}};

} // namespace

const char *mode_name(Mode mode) {
  for (const auto &[value, name] : kModes) {
    if (value == mode) {
      return name;
    }
  }
  return "?";
}

std::string usage() {
  return "usage: harness --configs FILE (--correctness | --benchmark | --full-benchmark |\n"
         "                               --write-golden FILE)\n"
         "               [--golden FILE] [--out FILE] [--warmup N] [--repeat N] [--seed N]\n"
         "               [--kernel NAME] [--one-cpu] [--serve]\n"
         "  --serve: with --benchmark or --full-benchmark, runs the configs once for each line\n"
         "           'run TOKEN RESULTS_FILE' read from stdin, answering 'kopt-run-done TOKEN'\n"
         "           on stdout when the file is written, until stdin ends; --golden is\n"
         "           compared in the first run\n";
}

namespace {

// What the arguments said, before the family's defaults fill in the counts.
struct Parsed {
  Options options;
  int modes = 0;
  int warmup = -1;
  int repeat = -1;
};

// The mode a flag ("--benchmark") selects; nullptr when it names none.
const Mode *mode_of_flag(const std::string &arg) {
  for (const auto &[value, name] : kModes) {
    if (arg == std::string("--") + name) {
      return &value;
    }
  }
  return nullptr;
}

void set_mode(Parsed &parsed, Mode mode) {
  parsed.options.mode = mode;
  ++parsed.modes;
}

// Applies args[i] (and its value, args[i + 1], which it then skips) to what is parsed so far.
void apply_argument(const std::vector<std::string> &args, std::size_t &i, Parsed &parsed) {
  const std::string &arg = args[i];
  Options &options = parsed.options;
  // Every option but the mode flags and --help takes one value.
  auto value = [&]() -> const std::string & {
    if (i + 1 >= args.size()) {
      throw Error(arg + ": expected a value");
    }
    return args[++i];
  };
  if (arg == "--help" || arg == "-h") {
    options.help = true;
  } else if (arg == "--configs") {
    options.configs = value();
  } else if (const Mode *mode = mode_of_flag(arg)) {
    set_mode(parsed, *mode);
    if (*mode == Mode::write_golden) {
      options.write_golden = value();
    }
  } else if (arg == "--golden") {
    options.golden = value();
  } else if (arg == "--out") {
    options.out = value();
  } else if (arg == "--warmup") {
    parsed.warmup = parse_small(arg, value());
  } else if (arg == "--repeat") {
    parsed.repeat = parse_small(arg, value());
    if (parsed.repeat == 0) {
      throw Error("--repeat: must be at least 1");
    }
  } else if (arg == "--seed") {
    options.seed = parse_count(arg, value());
  } else if (arg == "--kernel") {
    options.kernel = value();
  } else if (arg == "--one-cpu") {
    options.one_cpu = true;
  } else if (arg == "--serve") {
    options.serve = true;
  } else {
    throw Error("unknown argument '" + arg + "'\n" + usage());
  }
}

void check_modes(const Parsed &parsed) {
  const Options &options = parsed.options;
  if (options.configs.empty()) {
    throw Error("--configs FILE is required\n" + usage());
  }
  if (parsed.modes != 1) {
    throw Error("give exactly one of --correctness, --benchmark, --full-benchmark, "
                "--write-golden\n" +
                usage());
  }
  if (options.serve && options.mode != Mode::benchmark && options.mode != Mode::full_benchmark) {
    throw Error("--serve: runs --benchmark or --full-benchmark only\n" + usage());
  }
  if (options.serve && !options.out.empty()) {
    throw Error("--serve: each run's results file comes from stdin; give no --out\n" + usage());
  }
}

// The warm-up and repeat counts: the arguments', else the family's for the mode.
void set_counts(Parsed &parsed, const FamilySpec &spec) {
  Options &options = parsed.options;
  // Correctness and golden runs run each config once: their time is only a hint.
  switch (options.mode) {
  case Mode::correctness:
  case Mode::write_golden:
    options.warmup = 0;
    options.repeat = 1;
    break;
  case Mode::benchmark:
    options.warmup = parsed.warmup >= 0 ? parsed.warmup : spec.warmup;
    options.repeat = parsed.repeat >= 0 ? parsed.repeat : spec.repeat;
    break;
  case Mode::full_benchmark:
    options.warmup = parsed.warmup >= 0 ? parsed.warmup : spec.warmup;
    options.repeat = parsed.repeat >= 0 ? parsed.repeat : spec.full_repeat;
    break;
  }
}

void check_kernel(const Options &options, const FamilySpec &spec) {
  if (options.kernel.empty()) {
    return;
  }
  bool compiled = false;
  std::string names;
  for (const auto &name : spec.kernels) {
    compiled = compiled || name == options.kernel;
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!compiled) {
    throw Error("--kernel " + options.kernel +
                ": not compiled in this candidate (compiled: " + names + ")");
  }
}

} // namespace

Options parse_options(const std::vector<std::string> &args, const FamilySpec &spec) {
  Parsed parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    apply_argument(args, i, parsed);
  }
  if (parsed.options.help) {
    return parsed.options;
  }
  check_modes(parsed);
  set_counts(parsed, spec);
  check_kernel(parsed.options, spec);
  return parsed.options;
}

std::vector<std::string> to_args(const Options &options) {
  std::vector<std::string> args = {"--configs", options.configs,
                                   std::string("--") + mode_name(options.mode)};
  if (options.mode == Mode::write_golden) {
    args.push_back(options.write_golden);
  }
  if (!options.out.empty()) {
    args.insert(args.end(), {"--out", options.out});
  }
  if (!options.golden.empty()) {
    args.insert(args.end(), {"--golden", options.golden});
  }
  if (options.mode == Mode::benchmark || options.mode == Mode::full_benchmark) {
    args.insert(args.end(), {"--warmup", std::to_string(options.warmup), "--repeat",
                             std::to_string(options.repeat)});
  }
  if (options.seed != default_seed) {
    args.insert(args.end(), {"--seed", std::to_string(options.seed)});
  }
  if (!options.kernel.empty()) {
    args.insert(args.end(), {"--kernel", options.kernel});
  }
  if (options.one_cpu) {
    args.emplace_back("--one-cpu");
  }
  if (options.serve) {
    args.emplace_back("--serve");
  }
  return args;
}

} // namespace kopt::harness
