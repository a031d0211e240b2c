#include "profile/bench.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/progress.hpp"
#include "cli/subcommands.hpp"
#include "decide/check.hpp"
#include "gpu/binding.hpp"
#include "ledger/ledger.hpp"
#include "round/steps.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

namespace kopt::cli {

namespace {

struct BenchOptions {
  FamilyOptions family;
  std::string candidate;
  std::string build_dir;
  std::string identity_dir;
  std::string prefix;
  int rounds = 0;
  bool best = false;
  bool reuse = false;
  bool golden_only = false;
  bool build_only = false;
  bool allow_failed = false;
  bool decide_failed = false;
  bool quiet = false;
};

void add_bench_options(CLI::App &app, BenchOptions &options) {
  options.family.add_to(app, &options.build_dir);
  auto *candidate = app.add_option(
      "--candidate", options.candidate,
      "the candidate id to benchmark, side by side with BEST (alone when it is BEST)");
  auto *best = app.add_flag("--best", options.best, "benchmark BEST (from the ledger) alone");
  auto *golden = app.add_flag("--golden-only", options.golden_only,
                              "only make sure the golden exists (from the baseline)");
  candidate->excludes(best)->excludes(golden);
  best->excludes(golden);
  app.add_option("--rounds", options.rounds,
                 "side-by-side rounds of BEST and the candidate (default: family.json's "
                 "bench.rounds, else " +
                     std::to_string(spec::defaults::rounds) + ")")
      ->check(whole_number(2, 1000));
  app.add_option(
      "--build-dir", options.build_dir,
      "build the candidate's harness (and the baseline's and BEST's) in this tree first");
  app.add_option("--identity-dir", options.identity_dir,
                 "before measuring, prove from this ninja build tree that the candidate's build "
                 "is its own code and defines only its instances (kopt check's identity check); "
                 "a refusal is recorded as the candidate's failed measurement");
  app.add_option("--prefix", options.prefix, "the PREFIX given to kopt_add_family");
  app.add_flag("--build-only", options.build_only,
               "with --build-dir: build the harnesses and stop (measure nothing)");
  app.add_flag("--reuse", options.reuse,
               "keep an existing measurement of the same sources (and BEST) newer than the binary");
  auto *allow =
      app.add_flag("--allow-failed", options.allow_failed,
                   "exit 0 when the candidate's run failed (the measurement records why)");
  app.add_flag("--decide-failed", options.decide_failed,
               "when the candidate's run failed, also write its failed decision (decision.json, "
               "for kopt record) before exiting 1: the candidate's .bench test")
      ->excludes(allow);
  add_quiet_option(app, options.quiet);
}

// A result without a measurement (identical, built, golden, reused): `j` under --json, else
// `text` and a newline.
void print_result(Context &context, const nlohmann::json &j, const std::string &text) {
  context.out << (context.json ? util::dump_json(j) : text) << "\n";
}

// --reuse: returns true (saying so) when the existing measurement of `id` stands; otherwise
// says why it is measured again.
bool measurement_stands(const LoadedFamily &loaded, const std::string &id, const ledger::Best &best,
                        const profile::RunSetup &setup, Context &context) {
  std::string why = profile::why_measure_again(loaded.family, loaded.layout, id,
                                               loaded.candidates.content_hash(loaded.family, id),
                                               best.id, best.hash, setup);
  if (why.empty()) {
    std::string file = loaded.layout.measurement(id).string();
    print_result(context, {{"candidate", id}, {"status", "up to date"}, {"measurement", file}},
                 "candidate " + id + ": measurement up to date (" + file + ")");
    return true;
  }
  (context.json ? context.err : context.out)
      << "candidate " << id << ": measuring again: " << why << "\n";
  return false;
}

// With --reuse, whether the measurement stands on every GPU here before the gate samples one
// (seconds): a CUDA machine whose GPUs are all of one model and driver (one nvidia-smi query)
// gives the device and driver any binding would. Says so when it stands; quiet otherwise, and
// the gate and the full check follow.
bool stands_before_gate(const LoadedFamily &loaded, const std::string &id, const ledger::Best &best,
                        Context &context) {
  if (loaded.family.backend != spec::Backend::cuda ||
      !std::filesystem::exists(loaded.layout.measurement(id))) {
    return false;
  }
  util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
  util::RealProcessRunner runner;
  std::optional<gpu::GpuModel> model = gpu::nvidia_one_model(runner);
  if (!model) {
    return false;
  }
  profile::RunSetup setup;
  setup.device = model->name;
  setup.driver = model->driver;
  setup.profiler = round::profiler_choice(loaded.family);
  std::string why = profile::why_measure_again(loaded.family, loaded.layout, id,
                                               loaded.candidates.content_hash(loaded.family, id),
                                               best.id, best.hash, setup);
  if (!why.empty()) {
    return false;
  }
  std::string file = loaded.layout.measurement(id).string();
  print_result(context, {{"candidate", id}, {"status", "up to date"}, {"measurement", file}},
               "candidate " + id + ": measurement up to date (" + file + ")");
  return true;
}

// Whether an ok measurement of `id`'s current content exists that is newer than its harness
// binary: a bench with --identity-dir made it, so the binary passed the identity check.
bool measured_since_built(const LoadedFamily &loaded, const std::string &id) {
  namespace fs = std::filesystem;
  fs::path file = loaded.layout.measurement(id);
  fs::path harness = loaded.layout.harness(id);
  std::error_code ec;
  if (!fs::exists(file, ec) || !fs::exists(harness, ec) ||
      fs::last_write_time(file, ec) < fs::last_write_time(harness, ec)) {
    return false;
  }
  try {
    profile::Measurement m = profile::read_measurement(file);
    return m.ok() && m.hash == loaded.candidates.content_hash(loaded.family, id);
  } catch (const Error &) {
    return false; // the bench that follows reads it again and says what is wrong
  }
}

// The exit code of a bench whose candidate (or BEST beside it) failed: 0 under --allow-failed;
// else 1, after writing the failed run's decision under --decide-failed, so that the .bench test
// fails and `kopt record` still records the attempt. `locked`: the caller holds the candidate's
// results lock.
int failed_exit(const LoadedFamily &loaded, const BenchOptions &options, const std::string &id,
                const ledger::Best &best, bool locked, Context &context) {
  if (options.allow_failed) {
    return 0;
  }
  if (options.decide_failed && id != best.id) {
    std::optional<util::FileLock> lock;
    if (!locked) {
      lock.emplace(loaded.layout.lock("results-" + id), &context.err);
    }
    decide::Decision d =
        round::decide_candidate(loaded, id, best, round::keep_options(loaded.family));
    context.err << "kopt bench: candidate " << id << ": " << decide::to_string(d.verdict)
                << " (wrote " << loaded.layout.decision(id).string() << ")\n";
  }
  return 1;
}

// --identity-dir: returns true after recording a failed measurement of `id` when its build is
// not provably its own code (so the keep test, which reads the measurement, fails with the
// reason); the baseline is the family's own code and is not checked.
bool identity_refused(const LoadedFamily &loaded, const BenchOptions &options,
                      const std::string &id, const std::string &baseline, Context &context) {
  if (options.identity_dir.empty() || id == baseline) {
    return false;
  }
  if (options.reuse && measured_since_built(loaded, id)) {
    return false; // that measurement was made after this binary passed the same check
  }
  util::RealProcessRunner runner;
  std::vector<std::string> problems =
      decide::identity_problems(loaded.family, loaded.candidates, loaded.layout, id, baseline,
                                options.identity_dir, options.prefix, runner);
  if (problems.empty()) {
    return false;
  }
  util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
  profile::Measurement m;
  m.family = loaded.family.name;
  m.candidate = id;
  m.hash = loaded.candidates.content_hash(loaded.family, id);
  m.status = "failed";
  m.reason = "identity: " + util::join(problems, "; ");
  profile::write_measurement(loaded.layout.measurement(id), m);
  if (context.json) {
    context.out << util::dump_json(profile::to_json(m)) << "\n";
  } else {
    context.out << "candidate " << id << ": failed: " << m.reason << "\n"
                << "wrote " << loaded.layout.measurement(id).string() << "\n";
  }
  return true;
}

// The summary a user reads after a bench: the golden, a failed BEST, per-class geomeans.
void print_bench(const LoadedFamily &loaded, const std::string &id, const ledger::Best &best,
                 const std::string &golden, const profile::BenchRun &run, std::ostream &out) {
  const profile::Measurement &m = run.candidate;
  out << "candidate " << id << ": " << golden << "\n";
  if (run.best && !run.best->ok()) {
    out << "BEST " << best.id << ": failed: " << run.best->reason << "\n";
  }
  if (m.ok()) {
    out << "candidate " << id << ": " << m.configs.size() << " configs measured by "
        << profile::to_string(m.measured_by) << " on " << m.device << "\n";
    for (const auto &[name, entry] : profile::class_geomeans(m)) {
      out << "  " << name << ": " << entry.first << " configs, geomean "
          << util::format_number(entry.second, 5) << " us\n";
    }
  } else {
    out << "candidate " << id << ": failed: " << m.reason << "\n";
  }
  out << "wrote " << loaded.layout.measurement(id).string() << "\n";
}

// The answers that need no hash of the baseline: an identical candidate, a build only.
std::optional<int> answer_without_run(const LoadedFamily &loaded, const BenchOptions &options,
                                      const std::string &id, const std::string &baseline,
                                      const ledger::Best &best,
                                      const std::vector<std::string> &targets, Context &context) {
  std::string identical = ledger::identical_to(ledger::Files{loaded.layout.ledger}, loaded.family,
                                               loaded.candidates, id, best);
  if (!identical.empty() && !options.build_only) {
    std::string hash = loaded.candidates.content_hash(loaded.family, id);
    print_result(
        context,
        {{"candidate", id}, {"status", "identical"}, {"identical_to", identical}, {"hash", hash}},
        "candidate " + id + " is identical to " + identical + " (hash " + hash +
            "): nothing to measure");
    return 0;
  }
  if (options.build_only) {
    if (!options.build_dir.empty() && build_targets(options.build_dir, targets, context.err) != 0) {
      return 1;
    }
    print_result(
        context,
        {{"candidate", id}, {"status", "built"}, {"baseline", baseline}, {"best", best.id}},
        "built candidate " + id + ", the baseline " + baseline + " and BEST " + best.id);
    return 0;
  }
  return std::nullopt;
}

int run_bench(BenchOptions &options, Context &context) {
  LoadedFamily loaded = load_family(options.family);
  std::string baseline = loaded.baseline();
  ledger::Best best = loaded.best();
  std::string requested = options.best          ? best.id
                          : options.golden_only ? baseline
                                                : options.candidate;
  if (requested.empty()) {
    throw Error("bench: give --candidate <id>, --best or --golden-only");
  }
  const std::string &id = loaded.candidates.get(requested).id();
  const std::string &p = options.prefix;
  std::vector<std::string> targets = {p + "candidate_" + baseline, p + "candidate_" + id,
                                      p + "candidate_" + best.id};
  if (std::optional<int> answer =
          answer_without_run(loaded, options, id, baseline, best, targets, context)) {
    return *answer;
  }
  // What needs no run answers before the GPU gate (the keep test's fixtures ask often).
  std::string baseline_hash = loaded.candidates.content_hash(loaded.family, baseline);
  if (options.golden_only &&
      profile::golden_is_current(loaded.family, loaded.layout, baseline_hash)) {
    print_result(context,
                 {{"candidate", baseline},
                  {"status", "up to date"},
                  {"golden", loaded.layout.golden().string()}},
                 "golden up to date (from candidate " + baseline + ")");
    return 0;
  }
  // The identity check needs no GPU: a refused candidate never waits for one.
  if (!options.golden_only && !options.best &&
      identity_refused(loaded, options, id, baseline, context)) {
    return failed_exit(loaded, options, id, best, false, context);
  }
  if (options.reuse && options.build_dir.empty() && !options.golden_only &&
      stands_before_gate(loaded, id, best, context)) {
    return 0;
  }
  std::optional<profile::RunSetup> setup =
      prepare_run(loaded, options.build_dir, targets, options.family.gpu_wait_min, context.err);
  if (!setup) {
    return 1;
  }
  // One bench of a candidate at a time, and no decide or check reading its results between
  // the two measurement files it writes.
  util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
  util::RealProcessRunner runner;
  std::string golden =
      profile::ensure_golden(loaded.family, loaded.layout, baseline, baseline_hash, runner, *setup);
  if (options.golden_only) {
    print_result(context,
                 {{"candidate", baseline},
                  {"status", "written"},
                  {"golden", loaded.layout.golden().string()},
                  {"message", golden}},
                 golden);
    return 0;
  }
  if (options.reuse && measurement_stands(loaded, id, best, *setup, context)) {
    return 0;
  }
  std::unique_ptr<util::StatusLine> progress = status_line(context, options.quiet);
  profile::BenchRun run = profile::bench_candidate(
      loaded.family, loaded.layout, id, best.id,
      options.rounds > 0 ? options.rounds : loaded.family.rounds, runner, *setup, *progress);
  if (context.json) {
    context.out << util::dump_json(profile::to_json(run.candidate)) << "\n";
  } else {
    print_bench(loaded, id, best, golden, run, context.out);
  }
  bool ok = run.candidate.ok() && (!run.best || run.best->ok());
  return ok ? 0 : failed_exit(loaded, options, id, best, true, context);
}

} // namespace

Handler setup_bench(CLI::App &app) {
  auto options = std::make_shared<BenchOptions>();
  add_bench_options(app, *options);
  return [options](Context &context) { return run_bench(*options, context); };
}

} // namespace kopt::cli
