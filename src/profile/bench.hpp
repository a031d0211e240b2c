#pragma once

#include "profile/measurement.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <iosfwd>
#include <map>
#include <optional>
#include <string>

namespace kopt::profile {

/// How a harness run is asked for: the mode flag and whether to compare against the golden.
enum class HarnessMode { correctness, benchmark, full_benchmark };

/// Where a harness run happens: the environment that binds it to a GPU and that GPU's name
/// (both empty for host families), or for a host family the one CPU its runs are pinned to.
struct RunSetup {
  std::map<std::string, std::string> env;
  std::string device;
  std::string driver; ///< the GPU driver's version, when known
  std::string clocks; ///< the GPU's clocks when the run was set up, when known
  int cpu = -1;       ///< >= 0: every harness run on this CPU alone (host families)
  /// What times a CUDA family's benchmark: "" (the CUPTI tracer when kopt has it, else ncu),
  /// "cupti" or "ncu" (that one only; the harness's events when it is not here).
  std::string profiler;
};

/// Runs candidate `id`'s harness on the family's configs in `mode` (comparing against the
/// golden when it exists), keeps its output in results/<id>/harness.log, and returns the
/// measurement: status `failed` with the reason when the harness crashes, hangs past the
/// family's timeout or writes an unreadable results file. The keep metric is the harness's
/// chrono time for host families; a benchmark of a cuda family is traced by kopt's CUPTI tracer
/// (trace in results/<id>/cupti_trace.csv) or runs under ncu (RunSetup::profiler), of a hip
/// family under rocprofv3 (trace in results/<id>/rocprofv3/), when the tool is here (the
/// harness's events otherwise, marked unprofiled).
/// `results_dir` (default results/<id>) holds the run's CSV and log.
/// `golden` skip leaves a benchmark's output unchecked (err unknown): reading a large golden
/// back costs as much as the timed runs, and one checked round per measurement is enough.
enum class GoldenCheck { compare, skip };
Measurement run_harness(const spec::Family &family, const spec::Layout &layout,
                        const std::string &id, HarnessMode mode, util::ProcessRunner &runner,
                        const RunSetup &setup = {}, const std::filesystem::path &results_dir = {},
                        GoldenCheck golden = GoldenCheck::compare);

/// BEST's and a candidate's measurements from one side-by-side run.
struct SideBySide {
  Measurement best;
  Measurement candidate; ///< names BEST (id and hash) as its partner
};

/// Which side goes first in round 1 of a side-by-side measurement, and so starts its harness
/// and takes its memory first. The sides then alternate round by round.
enum class Arrangement { best_first, candidate_first };

/// Returns "best-first" or "candidate-first".
const char *to_string(Arrangement arrangement);

/// Returns the arrangement of the next measurement of candidate `id`: the other one than its
/// last measurement's (results/<id>/measurement.json, read before it is replaced); for the first,
/// best-first or candidate-first by the id, so first looks alternate across candidates too. So two
/// measurements in a row of a candidate are made in both arrangements, and whatever favours the
/// side that starts first favours each side once.
Arrangement next_arrangement(const spec::Layout &layout, const std::string &id);

/// Measures BEST `best_id` and candidate `id` side by side on one device: `rounds` rounds, each
/// one benchmark run of both, alternating which goes first (so a steady drift of the machine
/// cancels); `arrangement` says which goes first in round 1. Every run's samples are kept, one
/// list per round. Both sides do the same work besides their code: each side's first run
/// compares its output with the golden. Runs go to results/<id>/rounds/<round>-<which>/. A run
/// that fails fails its side, naming the round; `progress` counts the runs (2 per round) and
/// notes a failed one. Under the CUPTI tracer each side's rounds are served by one harness
/// process (`--serve`, started before its first round, its log and trace in
/// rounds/<best|candidate>-<id>.*), else each round is a harness process of its own.
/// For kopt's own tests, KOPT_TEST_FIRST_SIDE_SLOWER=<fraction> makes every time of the side
/// that goes first in round 1 that fraction longer: a side effect of known size.
SideBySide run_side_by_side(const spec::Family &family, const spec::Layout &layout,
                            const std::string &best_id, const std::string &id, int rounds,
                            util::ProcessRunner &runner, const RunSetup &setup,
                            util::Progress &progress,
                            Arrangement arrangement = Arrangement::best_first);

/// Returns the first config of `m` whose checked run failed (its `check` names the run), or
/// nullptr when every check passed.
const ConfigResult *failed_check(const Measurement &m);

/// Joins the runs of one candidate (one per round) into one measurement: samples per round, the
/// keep metric the median of the rounds' medians, the worst error of the runs that compared
/// (unknown when none did); the first failed run (or a hash that changed between runs) fails it,
/// named as "round k of n", n the rounds `planned` (runs.size() when more: a failed round ends
/// the runs early).
Measurement merge_rounds(const std::vector<Measurement> &runs, size_t planned = 0);

/// Pools a new side-by-side measurement (`best` and `candidate`, just measured) with the
/// previous one of the same candidate (`best_before`, `before`): when both are of the same code
/// on both sides, beside the same BEST, under the same conditions, the new ones take the earlier
/// rounds before their own (the keep metric recomputed over all), `looks` one more than the
/// previous one's, and `others_cpu` the larger. Returns "" when pooled, else why not (nothing
/// changed then).
std::string pool_rounds(const Measurement &best_before, const Measurement &before,
                        Measurement &best, Measurement &candidate);

/// What one `kopt bench` measured: the candidate and, side by side, BEST beside it.
struct BenchRun {
  Measurement candidate;
  std::optional<Measurement> best; ///< absent when the candidate is BEST (measured alone)
};

/// Benchmarks candidate `id` into results/<id>/: alone when it is BEST `best_id`, else side by
/// side with it for `rounds` rounds in next_arrangement()'s arrangement
/// (best_measurement.json holds BEST's samples). The previous
/// measurement files are removed first, so an interrupted or failed run leaves none to decide on,
/// and so are temp files a killed writer left there (the caller holds results-<id>'s lock); an
/// interruption is rethrown saying that no measurement was written.
BenchRun bench_candidate(const spec::Family &family, const spec::Layout &layout,
                         const std::string &id, const std::string &best_id, int rounds,
                         util::ProcessRunner &runner, const RunSetup &setup,
                         util::Progress &progress);

/// Why an existing measurement of `id` (content hash `hash`) cannot be reused, or "" when it
/// can: it must be of the same sources measured under the same conditions (and, side by side,
/// beside BEST `best_id` with `best_hash`), and newer than both harness binaries.
std::string why_measure_again(const spec::Family &family, const spec::Layout &layout,
                              const std::string &id, const std::string &hash,
                              const std::string &best_id, const std::string &best_hash,
                              const RunSetup &setup);

/// Per config class of `m`: the number of configs and the geomean of their config_time_us over
/// m's sampled rounds: the keep test's "cand us" of the class (decide's ClassRow), one number.
std::map<std::string, std::pair<int, double>> class_geomeans(const Measurement &m);

/// Returns why the golden must be made again ("no golden yet", "configs.csv changed", "the
/// baseline's content hash changed"), or "" when it exists and came from the baseline with
/// content hash `baseline_hash` over configs of the content the family's configs file has now.
std::string golden_stale_reason(const spec::Family &family, const spec::Layout &layout,
                                const std::string &baseline_hash);

/// Returns whether golden_stale_reason is "".
bool golden_is_current(const spec::Family &family, const spec::Layout &layout,
                       const std::string &baseline_hash);

/// Makes sure the golden exists and came from baseline `baseline_id` with content hash
/// `baseline_hash` over the configs' current content: otherwise runs the baseline's harness with
/// --write-golden. Returns a one-line description of what it did ("golden written from candidate
/// 00", "golden remade: configs.csv changed (from candidate 00)"); throws when the baseline's
/// harness fails.
std::string ensure_golden(const spec::Family &family, const spec::Layout &layout,
                          const std::string &baseline_id, const std::string &baseline_hash,
                          util::ProcessRunner &runner, const RunSetup &setup = {});

/// The conditions a benchmark of `family` measures under with `setup`, for a candidate of content
/// hash `hash`: the device and driver, the profiler run_harness would use (the CUPTI tracer, ncu
/// or rocprofv3 when here, else the harness's events; chrono on host), the family's warmup and
/// repeat.
Conditions benchmark_conditions(const spec::Family &family, const RunSetup &setup,
                                const std::string &hash);

/// Returns the machine's CPU model (from /proc/cpuinfo), or "unknown CPU".
std::string host_cpu_model();

} // namespace kopt::profile
