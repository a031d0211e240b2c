#include "profile/bench_detail.hpp"

#include "util/cpu_time.hpp"
#include "util/error.hpp"

#include <cstdlib>
#include <optional>

namespace kopt::profile {

namespace fs = std::filesystem;

using detail::benchmark_profiler;
using detail::ServedSide;

const char *to_string(Arrangement arrangement) {
  return arrangement == Arrangement::best_first ? "best-first" : "candidate-first";
}

Arrangement next_arrangement(const spec::Layout &layout, const std::string &id) {
  try {
    if (std::filesystem::exists(layout.measurement(id))) {
      const std::string last = read_measurement(layout.measurement(id)).arrangement;
      if (!last.empty()) {
        return last == "best-first" ? Arrangement::candidate_first : Arrangement::best_first;
      }
    }
  } catch (const Error &) {
    // An unreadable last measurement is replaced like any other; it names no arrangement.
  }
  // A candidate's first measurement: the arrangement alternates across candidates too (by the
  // id's characters), so a side effect of the order does not fall on every first look alike.
  unsigned sum = 0;
  for (char c : id) {
    sum += static_cast<unsigned char>(c);
  }
  return sum % 2 == 0 ? Arrangement::best_first : Arrangement::candidate_first;
}

namespace {

// KOPT_TEST_FIRST_SIDE_SLOWER: a side effect of known size for kopt's tests, every time of
// `runs` (the side that went first in round 1) made the fraction longer.
void slow_for_tests(std::vector<Measurement> &runs) {
  const char *text = std::getenv("KOPT_TEST_FIRST_SIDE_SLOWER");
  double factor = 1 + (text ? std::atof(text) : 0);
  if (factor == 1) {
    return;
  }
  for (Measurement &run : runs) {
    for (ConfigResult &c : run.configs) {
      c.us *= factor;
      c.harness_us *= factor;
      for (std::vector<double> &samples : c.rounds) {
        for (double &us : samples) {
          us *= factor;
        }
      }
    }
  }
}

// How busy the machine was while a host family's rounds ran (Measurement::others_cpu): a host
// kernel's times move with what else the machine runs. Taken from construction to others().
class MachineLoad {
public:
  explicit MachineLoad(bool host)
      : before_(host ? util::machine_cpu() : std::nullopt),
        own_(before_ ? util::own_cpu_seconds() : 0) {}

  /// The share of the machine's CPU time other processes used since construction; -1 untaken.
  double others() const {
    std::optional<util::MachineCpu> after = before_ ? util::machine_cpu() : std::nullopt;
    return after ? util::others_share(*before_, *after, util::own_cpu_seconds() - own_,
                                      util::cpu_ticks_per_second())
                 : -1;
  }

private:
  std::optional<util::MachineCpu> before_;
  double own_ = 0;
};

// Round k's folder of one side ("best-01", "candidate-03") under `dir`: "1-best-01".
fs::path round_dir(const fs::path &dir, int k, const std::string &side) {
  return dir / (std::to_string(k + 1) + "-" + side);
}

// Every round's folder of one side.
std::vector<fs::path> round_dirs(const fs::path &dir, int rounds, const std::string &side) {
  std::vector<fs::path> dirs;
  for (int k = 0; k < rounds; ++k) {
    dirs.push_back(round_dir(dir, k, side));
  }
  return dirs;
}

// One side's rounds merged into its measurement, or failed when it measured none.
Measurement merged_side(const spec::Family &family, const std::vector<Measurement> &runs,
                        const std::string &who, int rounds) {
  if (!runs.empty()) {
    return merge_rounds(runs, static_cast<size_t>(rounds));
  }
  Measurement m;
  m.family = family.name;
  m.candidate = who;
  m.status = "failed";
  m.reason = "not measured: the side-by-side run stopped when the other side failed";
  return m;
}

} // namespace

SideBySide run_side_by_side(const spec::Family &family, const spec::Layout &layout,
                            const std::string &best_id, const std::string &id, int rounds,
                            util::ProcessRunner &runner, const RunSetup &setup,
                            util::Progress &progress, Arrangement arrangement) {
  fs::path dir = layout.results_dir(id) / "rounds";
  fs::remove_all(dir); // an earlier run's rounds must never pass for this run's
  std::vector<Measurement> best_runs;
  std::vector<Measurement> candidate_runs;
  // Under the CUPTI tracer each side's rounds are served by one harness process. Both sides
  // compare their first round's output with the golden: the same work outside the timed runs.
  auto run_dir = [&](int k, bool best_turn) {
    return round_dir(dir, k, best_turn ? "best-" + best_id : "candidate-" + id);
  };
  std::optional<ServedSide> best_side, candidate_side;
  if (benchmark_profiler(family, setup) == Source::cupti) {
    best_side.emplace(family, layout, best_id, "best", runner, setup, dir,
                      round_dirs(dir, rounds, "best-" + best_id));
    candidate_side.emplace(family, layout, id, "candidate", runner, setup, dir,
                           round_dirs(dir, rounds, "candidate-" + id));
  }
  const bool best_starts = arrangement == Arrangement::best_first;
  const MachineLoad load(family.backend == spec::Backend::host);
  bool stop = false;
  for (int k = 0; k < rounds && !stop; ++k) {
    bool last = false; // the candidate's checked run was wrong: this round is the last
    // The side that starts first in even rounds, the other first in odd ones.
    for (int turn = 0; turn < 2 && !stop; ++turn) {
      bool best_turn = ((turn == 0) == (k % 2 == 0)) == best_starts;
      const std::string &who = best_turn ? best_id : id;
      const fs::path this_dir = run_dir(k, best_turn);
      bool check = (best_turn ? best_runs : candidate_runs).empty();
      std::string what = "round " + std::to_string(k + 1) + "/" + std::to_string(rounds) + ": " +
                         (best_turn ? "BEST " : "candidate ") + who;
      progress.starting(what);
      std::optional<ServedSide> &served = best_turn ? best_side : candidate_side;
      std::optional<ServedSide> &other = best_turn ? candidate_side : best_side;
      if (served) {
        other->hold(true); // nothing of the other side runs during this side's round
        served->hold(false);
      }
      Measurement run =
          served ? served->round(this_dir)
                 : run_harness(family, layout, who, HarnessMode::benchmark, runner, setup, this_dir,
                               check ? GoldenCheck::compare : GoldenCheck::skip);
      if (!run.ok()) {
        progress.note(what + " failed: " + run.reason);
      }
      progress.advance(1, what);
      // A failed side ends the measurement: its rounds would not pair. So does, after this
      // round, a candidate whose checked run was wrong: it is incorrect whatever the other rounds
      // say (BEST still runs its turn of the round, so that the two sides pair in either
      // arrangement).
      stop = !run.ok();
      if (!stop && !best_turn && failed_check(run)) {
        last = true;
        progress.note(what + ": " + failed_check(run)->check + ": no more rounds");
      }
      (best_turn ? best_runs : candidate_runs).push_back(std::move(run));
    }
    stop = stop || last;
  }
  if (best_side) {
    best_side->close(); // both exit at once
    candidate_side->close();
    best_side->finish(best_runs);
    candidate_side->finish(candidate_runs);
  }
  const double others_cpu = load.others();
  slow_for_tests(best_starts ? best_runs : candidate_runs);
  SideBySide result{merged_side(family, best_runs, best_id, rounds),
                    merged_side(family, candidate_runs, id, rounds)};
  result.candidate.paired_best = result.best.candidate;
  result.candidate.paired_best_hash = result.best.hash;
  result.candidate.arrangement = to_string(arrangement);
  result.best.arrangement = result.candidate.arrangement;
  result.candidate.others_cpu = result.best.others_cpu = others_cpu;
  return result;
}

} // namespace kopt::profile
