#include "profile/bench.hpp"

#include "profile/freshness.hpp"
#include "util/interrupt.hpp"

namespace kopt::profile {

namespace {

// Temp files of a killed writer of candidate `id`'s results (`measurement.json.tmp.XXXXXX` and
// the like): the caller holds the folder's lock, so no live writer owns them.
void remove_temp_files(const spec::Layout &layout, const std::string &id) {
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(layout.results_dir(id), ec)) {
    std::string name = entry.path().filename().string();
    for (const auto &file : {layout.measurement(id), layout.paired_best(id), layout.decision(id),
                             layout.results_csv(id)}) {
      std::string prefix = file.filename().string() + ".tmp.";
      if (name.size() > prefix.size() && name.rfind(prefix, 0) == 0) {
        std::filesystem::remove(entry.path(), ec);
      }
    }
  }
}

// Candidate `id`'s last side-by-side measurement and BEST's beside it (best_measurement.json),
// when both are there and readable: what a new measurement of the same code may pool.
std::optional<std::pair<Measurement, Measurement>> previous_pair(const spec::Layout &layout,
                                                                 const std::string &id) {
  std::error_code ec;
  if (!std::filesystem::exists(layout.measurement(id), ec) ||
      !std::filesystem::exists(layout.paired_best(id), ec)) {
    return std::nullopt;
  }
  try {
    return std::make_pair(read_measurement(layout.paired_best(id)),
                          read_measurement(layout.measurement(id)));
  } catch (const Error &) {
    return std::nullopt; // an unreadable one is replaced, not pooled
  }
}

} // namespace

BenchRun bench_candidate(const spec::Family &family, const spec::Layout &layout,
                         const std::string &id, const std::string &best_id, int rounds,
                         util::ProcessRunner &runner, const RunSetup &setup,
                         util::Progress &progress) {
  BenchRun run;
  const Arrangement arrangement = next_arrangement(layout, id);
  // The previous measurement of this candidate beside BEST, pooled below when it is of the same
  // code on both sides; it is removed first all the same: an interrupted or failed run must not
  // leave it to be decided on.
  std::optional<std::pair<Measurement, Measurement>> before = previous_pair(layout, id);
  std::filesystem::remove(layout.paired_best(id));
  std::filesystem::remove(layout.measurement(id));
  remove_temp_files(layout, id);
  try {
    // Shielded from the first run to the last: a signal between two harness runs becomes an
    // Interrupted named for this step, like one during a run, instead of an exit with no step
    // named (kopt's handler exits at once while nothing is shielded).
    util::InterruptShield shield;
    if (id == best_id) {
      progress.begin("candidate " + id + " (BEST) alone: one run", 1);
      progress.starting("candidate " + id);
      run.candidate = run_harness(family, layout, id, HarnessMode::benchmark, runner, setup);
      progress.advance(1, "candidate " + id);
    } else {
      progress.begin("candidate " + id + " side by side with BEST " + best_id + ": " +
                         std::to_string(rounds) + " rounds, " + to_string(arrangement),
                     2 * static_cast<size_t>(rounds));
      SideBySide side = run_side_by_side(family, layout, best_id, id, rounds, runner, setup,
                                         progress, arrangement);
      run.candidate = std::move(side.candidate);
      run.best = std::move(side.best);
    }
    progress.end();
    util::throw_if_interrupted("the last run"); // one that came after it: nothing is written
    if (run.best && before) {
      pool_rounds(before->first, before->second, *run.best, run.candidate);
    }
    if (run.best) {
      write_measurement(layout.paired_best(id), *run.best);
    }
  } catch (const util::Interrupted &e) {
    throw util::Interrupted(e.signal(), "bench of candidate " + id + ": no measurement written (" +
                                            e.what() + ")");
  }
  write_measurement(layout.measurement(id), run.candidate);
  return run;
}

std::string why_measure_again(const spec::Family &family, const spec::Layout &layout,
                              const std::string &id, const std::string &hash,
                              const std::string &best_id, const std::string &best_hash,
                              const RunSetup &setup) {
  namespace fs = std::filesystem;
  fs::path file = layout.measurement(id);
  if (!fs::exists(file)) {
    return "no measurement yet";
  }
  for (const std::string &who : {id, best_id}) {
    fs::path harness = layout.harness(who);
    if (!fs::exists(harness) || fs::last_write_time(file) < fs::last_write_time(harness)) {
      return "candidate_" + who + " was built after the measurement";
    }
  }
  Measurement m = read_measurement(file);
  if (!m.ok()) {
    return "the measurement failed";
  }
  if (id != best_id && (m.paired_best != best_id || m.paired_best_hash != best_hash)) {
    return "measured beside BEST " + m.paired_best + ", BEST is now " + best_id;
  }
  if (m.configs_hash.empty()) {
    return "no record of the configs it measured (written by an older kopt)";
  }
  std::string changed = changed_since(m, family, layout);
  if (!changed.empty()) {
    return changed;
  }
  return stale_reason(conditions_of(m), benchmark_conditions(family, setup, hash));
}

} // namespace kopt::profile
