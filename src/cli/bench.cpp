#include "profile/bench.hpp"
#include "cli/family_options.hpp"
#include "cli/number_options.hpp"
#include "cli/progress.hpp"
#include "cli/subcommands.hpp"
#include "gpu/binding.hpp"
#include "ledger/ledger.hpp"
#include "measure/measure.hpp"
#include "round/steps.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"
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

// --reuse's answer when the measurement of `id` stands.
void print_up_to_date(const LoadedFamily &loaded, const std::string &id, Context &context) {
  std::string file = loaded.layout.measurement(id).string();
  print_result(context, {{"candidate", id}, {"status", "up to date"}, {"measurement", file}},
               "candidate " + id + ": measurement up to date (" + file + ")");
}

// --reuse: returns true (saying so) when the existing measurement stands on the prepared device;
// otherwise says why it is measured again.
bool measurement_stands(const LoadedFamily &loaded, const measure::Request &request,
                        const profile::RunSetup &setup, Context &context) {
  std::string why = measure::why_measure_again(loaded, request, setup);
  if (why.empty()) {
    print_up_to_date(loaded, request.id, context);
    return true;
  }
  (context.json ? context.err : context.out)
      << "candidate " << request.id << ": measuring again: " << why << "\n";
  return false;
}

// With --reuse, whether the measurement stands on every GPU here before the gate samples one
// (measure::one_model_setup). Says so when it stands; quiet otherwise, and the gate and the full
// check follow. A measurement that stands was made after its binary passed the identity check:
// neither the check nor the gate is needed.
bool stands_before_gate(const LoadedFamily &loaded, const measure::Request &request,
                        Context &context) {
  if (!std::filesystem::exists(loaded.layout.measurement(request.id))) {
    return false;
  }
  std::optional<profile::RunSetup> setup = measure::one_model_setup(loaded);
  if (!setup) {
    return false;
  }
  util::FileLock lock(loaded.layout.lock("results-" + request.id), &context.err);
  if (!measure::why_measure_again(loaded, request, *setup).empty()) {
    return false;
  }
  print_up_to_date(loaded, request.id, context);
  return true;
}

// The exit code of a bench whose candidate (or BEST beside it) failed: 0 under --allow-failed;
// else 1, after writing the failed run's decision under --decide-failed, so that the .bench test
// fails and `kopt record` still records the attempt. The caller holds the candidate's results
// lock.
int failed_exit(const LoadedFamily &loaded, const BenchOptions &options, const std::string &id,
                const ledger::Best &best, Context &context) {
  if (options.allow_failed) {
    return 0;
  }
  if (options.decide_failed && id != best.id) {
    decide::Decision d =
        round::decide_candidate(loaded, id, best, round::keep_options(loaded.family));
    context.err << "kopt bench: candidate " << id << ": " << decide::to_string(d.verdict)
                << " (wrote " << loaded.layout.decision(id).string() << ")\n";
  }
  return 1;
}

// A step before the run failed: a refused identity is recorded as the candidate's failed
// measurement (so the keep test, which reads it, fails with the reason) and answered as one; a
// failed build or no GPU is said on stderr.
int answer_failure(const LoadedFamily &loaded, const BenchOptions &options,
                   const measure::Request &request, const measure::Failure &failure,
                   Context &context) {
  if (failure.step != "identity") {
    context.err << failure.output << "kopt: " << failure.reason << "\n";
    return 1;
  }
  const std::string &id = request.id;
  profile::Measurement m = measure::write_failed(loaded, id, failure.recorded());
  if (context.json) {
    context.out << util::dump_json(profile::to_json(m)) << "\n";
  } else {
    context.out << "candidate " << id << ": failed: " << m.reason << "\n"
                << "wrote " << loaded.layout.measurement(id).string() << "\n";
  }
  return failed_exit(loaded, options, id, request.best, context);
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

// The measurement `options` ask for, the device bound by the gate alone; the identity is
// checked for a candidate, never for the baseline (the family's own code), BEST (--best) or the
// golden alone.
measure::Request bench_request(const BenchOptions &options, const std::string &id,
                               const std::string &baseline, const ledger::Best &best) {
  measure::Request request;
  request.id = id;
  request.best = best;
  request.build_dir = options.build_dir;
  request.identity_dir = options.identity_dir;
  request.prefix = options.prefix;
  request.rounds = options.rounds;
  request.gpu_wait_min = options.family.gpu_wait_min;
  request.hold = measure::Hold::bind;
  request.reuse = options.reuse;
  if (options.golden_only || options.best || id == baseline) {
    request.identity_dir.clear();
  }
  return request;
}

// After the golden: --golden-only's answer, or --reuse's when the measurement stands, else the
// side-by-side run and its summary.
int measure_and_answer(const LoadedFamily &loaded, const BenchOptions &options,
                       const measure::Request &request, measure::Prepared &prepared,
                       Context &context) {
  const std::string &id = request.id;
  if (options.golden_only) {
    print_result(context,
                 {{"candidate", id},
                  {"status", "written"},
                  {"golden", loaded.layout.golden().string()},
                  {"message", prepared.golden}},
                 prepared.golden);
    return 0;
  }
  if (options.reuse && measurement_stands(loaded, request, prepared.setup, context)) {
    return 0;
  }
  std::unique_ptr<util::StatusLine> progress = status_line(context, options.quiet);
  profile::BenchRun run = measure::run(loaded, request, prepared, *progress);
  if (context.json) {
    context.out << util::dump_json(profile::to_json(run.candidate)) << "\n";
  } else {
    print_bench(loaded, id, request.best, prepared.golden, run, context.out);
  }
  bool ok = run.candidate.ok() && (!run.best || run.best->ok());
  return ok ? 0 : failed_exit(loaded, options, id, request.best, context);
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
  measure::Request request = bench_request(options, id, baseline, best);
  if (std::optional<int> answer = answer_without_run(loaded, options, id, baseline, best,
                                                     measure::targets(loaded, request), context)) {
    return *answer;
  }
  // What needs no run answers before the GPU gate (the keep test's fixtures ask often).
  request.baseline_hash = loaded.candidates.content_hash(loaded.family, baseline);
  if (options.golden_only &&
      profile::golden_is_current(loaded.family, loaded.layout, request.baseline_hash)) {
    print_result(context,
                 {{"candidate", baseline},
                  {"status", "up to date"},
                  {"golden", loaded.layout.golden().string()}},
                 "golden up to date (from candidate " + baseline + ")");
    return 0;
  }
  if (options.reuse && options.build_dir.empty() && !options.golden_only &&
      stands_before_gate(loaded, request, context)) {
    return 0;
  }
  // One bench of a candidate at a time, and no decide or check reading its results between
  // the two measurement files it writes.
  util::FileLock lock(loaded.layout.lock("results-" + id), &context.err);
  measure::Notes notes;
  notes.held = [&](const gpu::Binding &binding) {
    if (loaded.family.backend != spec::Backend::host) {
      context.err << "kopt: GPU gate: " << binding.message << "\n";
    }
  };
  measure::Prepared prepared = measure::prepare(loaded, request, context.err, notes);
  if (prepared.failure) {
    return answer_failure(loaded, options, request, *prepared.failure, context);
  }
  return measure_and_answer(loaded, options, request, prepared, context);
}

} // namespace

Handler setup_bench(CLI::App &app) {
  auto options = std::make_shared<BenchOptions>();
  add_bench_options(app, *options);
  return [options](Context &context) { return run_bench(*options, context); };
}

} // namespace kopt::cli
