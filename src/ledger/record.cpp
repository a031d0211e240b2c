#include "ledger/detail.hpp"

#include "buildinfo/build_flags.hpp"
#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <set>

namespace kopt::ledger {

namespace {

using decide::Decision;
using decide::Verdict;
using detail::commit_change;
using detail::Contents;
using detail::read_contents;
using detail::short_hash;

constexpr size_t kRegressionWindow = 5;

ClassChange change_of(const decide::ClassRow &row) {
  return {row.config_class, row.best_us, row.candidate_us, row.change};
}

// What measured a row, on which machine and which build ("ncu on NVIDIA H100 80GB HBM3, build
// 1f2e3d4c5b6a (-O3)"): kept rows of one ledger may come from different machines and builds, and
// their geomean column compares those too.
std::string source_of(const profile::Measurement &m) {
  std::string source = profile::to_string(m.measured_by);
  if (!m.profiled) {
    source += " (unprofiled)";
  }
  if (!m.device.empty()) {
    source += " on " + m.device;
  }
  if (!m.build.empty()) {
    source += ", build " + m.build + " (" +
              buildinfo::BuildFlags{m.build_flags, m.build}.optimisation() + ")";
  }
  return source;
}

// The kernels that served the target class (every class for global), sorted and distinct.
std::vector<std::string> kernels_of(const profile::Measurement &m, const std::string &target) {
  std::set<std::string> kernels;
  for (const auto &c : m.configs) {
    if ((target == "global" || c.config_class == target) && !c.kernel.empty()) {
      kernels.insert(c.kernel);
    }
  }
  return {kernels.begin(), kernels.end()};
}

std::string proposal_of(const spec::CandidateSpec &spec) {
  return spec.proposal.empty() ? spec.id : spec.proposal;
}

void clear_regressions(State &s) {
  s.consecutive_regressions = 0;
  s.recent_regressions.clear();
}

// Where a decision came from, for errors: its decision.json, or "the decision" in memory.
std::string decision_file(const Decision &d) { return d.file.empty() ? "decision" : d.file; }

// The decision, candidate.json and measurement must all be of the same candidate.
void check_same_candidate(const Decision &d, const spec::CandidateSpec &candidate,
                          const profile::Measurement &measurement) {
  if (candidate.id != d.candidate) {
    throw Error(decision_file(d) + ": the decision is for candidate '" + d.candidate +
                "', but the candidate recorded is '" + candidate.id + "'");
  }
  if (!measurement.candidate.empty() && measurement.candidate != d.candidate) {
    throw Error(decision_file(d) + ": the decision is for candidate '" + d.candidate +
                "', but the measurement is for '" + measurement.candidate + "'");
  }
}

// The first record: the baseline decided against itself starts the state as BEST.
Recorded record_first_baseline(const Files &files, std::vector<nlohmann::json> history,
                               const Decision &d, const spec::CandidateSpec &candidate,
                               const profile::Measurement &measurement, const std::string &date) {
  if (d.candidate != d.best) {
    throw Error(files.state().string() + ": no ledger yet: record the baseline " + d.best +
                " first");
  }
  if (d.verdict != Verdict::keep || !d.overall) {
    throw Error("baseline " + d.candidate + " cannot be recorded: " + decide::to_string(d.verdict) +
                " (" + d.reason + ")");
  }
  State s;
  s.family = d.family;
  s.best = d.candidate;
  s.best_hash = d.hash;
  s.kept.push_back({date, d.candidate, d.hash, "baseline", d.target,
                    kernels_of(measurement, d.target), source_of(measurement),
                    d.overall->candidate_us, std::nullopt, std::nullopt,
                    candidate.hypothesis.empty() ? "baseline" : candidate.hypothesis});
  set_measured(s.kept.back(), measurement);
  Attempt line;
  line.kind = Kind::baseline;
  line.date = date;
  line.candidate = d.candidate;
  line.hash = d.hash;
  line.geomean_us = d.overall->candidate_us;
  line.measured_by = source_of(measurement);
  line.target = d.target;
  line.kernels = kernels_of(measurement, d.target);
  line.hypothesis = s.kept.back().hypothesis;
  line.set_measured(measurement);
  commit_change(files, s, std::move(history), to_json(line));
  return {Outcome::recorded, "recorded baseline " + d.candidate + ": BEST is " + d.candidate, s};
}

// A decision that changes nothing (identical code, BEST itself, already recorded) returns why;
// one the ledger cannot take (another family, stopped, made against another BEST) throws.
std::optional<Recorded> nothing_to_record(const Files &files, const State &s, const Decision &d) {
  if (!s.family.empty() && !d.family.empty() && s.family != d.family) {
    throw Error(files.state().string() + ": the ledger is for family " + s.family +
                ", the decision for " + d.family);
  }
  if (s.stopped) {
    throw Error(files.state().string() + ": the ledger stopped on " + s.stop_date + " (" +
                s.stop_reason + "); no more attempts are recorded");
  }
  if (!d.identical_to.empty()) {
    return Recorded{Outcome::identical,
                    "candidate " + d.candidate + " is identical to " + d.identical_to +
                        ": nothing recorded, regression counter unchanged",
                    s};
  }
  if (d.candidate == s.best) {
    return Recorded{Outcome::candidate_is_best,
                    "candidate " + d.candidate + " is BEST; nothing recorded", s};
  }
  // A failed decision may carry whatever hash BEST's broken measurement had; its id still
  // has to be the ledger's BEST.
  bool check_hash = d.verdict != Verdict::failed;
  if (d.best != s.best || (check_hash && d.best_hash != s.best_hash)) {
    throw Error(decision_file(d) + ": the decision for " + d.candidate + " was made against BEST " +
                d.best + " (hash " + short_hash(d.best_hash) + "), but the ledger's BEST is " +
                s.best + " (hash " + short_hash(s.best_hash) + ", " + files.state().string() +
                "): run kopt decide --candidate " + d.candidate + " again");
  }
  std::string verdict = decide::to_string(d.verdict);
  for (const RecordedAttempt &a : s.recorded) {
    if (a.candidate == d.candidate && a.hash == d.hash && a.verdict == verdict) {
      return Recorded{Outcome::duplicate,
                      "candidate " + d.candidate + " (hash " + short_hash(d.hash) +
                          ") was already recorded as " + verdict + " against BEST " + s.best +
                          "; nothing changed",
                      s};
    }
  }
  return std::nullopt;
}

// What one verdict did to the state: the user's message and the attempt's event.
struct Applied {
  std::string message;
  Event event = Event::none;
};

// A keep: the candidate becomes BEST, its row joins performance.md, the counters reset.
Applied apply_keep(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                   const profile::Measurement &measurement, const std::string &date) {
  if (!d.overall) {
    throw Error("the keep decision for " + d.candidate + " has no overall numbers");
  }
  KeptRow row{date,
              d.candidate,
              d.hash,
              "keep",
              d.target,
              kernels_of(measurement, d.target),
              source_of(measurement),
              d.overall->candidate_us,
              d.overall->change,
              std::nullopt,
              candidate.hypothesis};
  set_measured(row, measurement);
  if (d.overall->has_interval) {
    row.interval = std::pair{d.overall->low, d.overall->high};
  }
  std::string message = d.candidate + " kept: BEST is now " + d.candidate;
  if (!s.kept.empty() && s.kept.back().measured_by != row.measured_by) {
    // The change is side by side; the geomean column against the row above is not.
    message += " (measured by " + row.measured_by + "; " + s.kept.back().candidate + "'s row by " +
               s.kept.back().measured_by +
               ": performance.md's geomean us of the two rows compare "
               "machines or builds, the change compares the candidates)";
  }
  s.kept.push_back(std::move(row));
  s.best = d.candidate;
  s.best_hash = d.hash;
  clear_regressions(s);
  s.recorded.clear();
  return {message};
}

// A regression: counted (into the Stop Summary's window) unless confirmed within the threshold;
// enough in a row stop the loop.
Applied apply_regression(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                         const std::string &date, const Options &options) {
  if (!d.counts_as_regression()) {
    // Confirmed but within the threshold: a real regression too small to count.
    return {d.candidate + " regressed within the threshold (confirmed by two side-by-side "
                          "measurements): regression counter unchanged"};
  }
  RegressionSummary summary{date,     d.best, d.candidate, d.hash, candidate.hypothesis,
                            d.target, {},     {}};
  for (const decide::ClassRow &row : d.classes) {
    summary.classes.push_back(change_of(row));
  }
  if (d.overall) {
    summary.overall = change_of(*d.overall);
  }
  s.recent_regressions.push_back(std::move(summary));
  if (s.recent_regressions.size() > kRegressionWindow) {
    s.recent_regressions.erase(s.recent_regressions.begin());
  }
  s.consecutive_regressions += 1;
  Applied applied{d.candidate + " regressed: " + std::to_string(s.consecutive_regressions) +
                  " of " + std::to_string(options.max_consecutive) + " consecutive regressions"};
  if (s.consecutive_regressions >= options.max_consecutive) {
    s.stopped = true;
    s.stop_reason = std::to_string(s.consecutive_regressions) + " consecutive measured regressions";
    s.stop_date = date;
    applied.message += "; stopped";
    applied.event = Event::stopped;
  }
  return applied;
}

// An incorrect attempt: one more repair attempt for its proposal, abandoned at the limit.
Applied apply_incorrect(State &s, const Decision &d, const std::string &proposal,
                        const Options &options) {
  int &attempts = s.repair_attempts[proposal];
  attempts += 1;
  Applied applied{d.candidate + " incorrect: repair attempt " + std::to_string(attempts) + " of " +
                  std::to_string(options.max_repairs) + " for proposal " + proposal};
  if (attempts >= options.max_repairs) {
    if (std::find(s.abandoned.begin(), s.abandoned.end(), proposal) == s.abandoned.end()) {
      s.abandoned.push_back(proposal);
    }
    applied.message += "; proposal abandoned";
    applied.event = Event::abandoned;
  }
  return applied;
}

// What the verdict does to BEST and the counters.
Applied apply_verdict(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                      const profile::Measurement &measurement, const std::string &date,
                      const std::string &proposal, const Options &options) {
  switch (d.verdict) {
  case Verdict::keep:
    return apply_keep(s, d, candidate, measurement, date);
  case Verdict::regression:
    return apply_regression(s, d, candidate, date, options);
  // Only a keep resets the counter: a tie, a failure or an incorrect output costs an agent
  // nothing to make, so none of them may clear the regressions before it.
  case Verdict::tie:
    return {d.candidate + " tied with BEST: regression counter unchanged"};
  case Verdict::failed:
    return {d.candidate + " failed (no comparable measurement): regression counter unchanged"};
  case Verdict::incorrect:
    return apply_incorrect(s, d, proposal, options);
  case Verdict::split:
    return {d.candidate + " split: regression counter unchanged (" + d.split_advice + ")"};
  }
  return {};
}

// The attempt's line in attempts.jsonl: with the numbers and kernels that rebuild_state needs
// to give back the state this record writes.
nlohmann::json attempt_json(const Decision &d, const State &s, const spec::CandidateSpec &candidate,
                            const profile::Measurement &measurement, const std::string &date,
                            const std::string &proposal, Event event, const std::string &other) {
  Attempt line;
  line.kind = Kind::attempt;
  line.date = date;
  line.candidate = d.candidate;
  line.hash = d.hash;
  line.best = d.best;
  line.best_hash = d.best_hash;
  line.proposal = proposal;
  line.target = d.target;
  line.hypothesis = candidate.hypothesis;
  line.verdict = d.verdict;
  line.reason = d.reason;
  if (d.overall) {
    AttemptClass overall = attempt_class(*d.overall);
    line.overall_change = overall.change;
    line.overall_interval = overall.interval;
    // What decide concluded of the overall row, so that no view decides it again.
    line.overall_state = overall.state;
    line.geomean_us = overall.candidate_us;
    line.best_us = overall.best_us;
  }
  line.method = d.method;
  for (const decide::ClassRow &row : d.classes) {
    line.classes.push_back(attempt_class(row));
  }
  // The application's kernel time under the captured traffic (decide's traffic rows).
  if (d.traffic) {
    line.traffic = attempt_class(d.traffic->overall);
  }
  line.weighting = d.options.weighting;
  line.consecutive_regressions = s.consecutive_regressions;
  line.event = event;
  line.measured_by = source_of(measurement);
  line.kernels = kernels_of(measurement, d.target);
  line.set_measured(measurement);
  line.other_build = other; // recorded as asked (--allow-other-build)
  return to_json(line);
}

} // namespace

Recorded record(const Files &files, const Decision &d, const spec::CandidateSpec &candidate,
                const profile::Measurement &measurement, const Options &options) {
  check_same_candidate(d, candidate, measurement);
  std::string date = d.date.empty() ? util::utc_now() : d.date;
  util::FileLock lock(files.lock());
  util::InterruptShield shield; // state.json, performance.md and attempts.jsonl agree
  Contents contents = read_contents(files);
  if (!contents.state) {
    return record_first_baseline(files, std::move(contents.attempts), d, candidate, measurement,
                                 date);
  }
  State s = *contents.state;
  if (std::optional<Recorded> unchanged = nothing_to_record(files, s, d)) {
    return *unchanged;
  }
  // Times of another build (-O0 against the -O3 BEST was kept with, say) are no measure
  // against BEST's row: recorded only when asked, and the attempt's line says so.
  std::string other = other_build(s, measurement);
  if (!other.empty() && !options.allow_other_build) {
    throw Error("not recorded: " + other + ": its times are no measure against BEST's row; " +
                "build with the flags BEST was recorded with and measure again, or record it " +
                "anyway with --allow-other-build");
  }
  std::string proposal = proposal_of(candidate);
  Applied applied = apply_verdict(s, d, candidate, measurement, date, proposal, options);
  if (d.verdict != Verdict::keep) {
    s.recorded.push_back({d.candidate, d.hash, decide::to_string(d.verdict)});
  }
  commit_change(files, s, std::move(contents.attempts),
                attempt_json(d, s, candidate, measurement, date, proposal, applied.event, other));
  return {Outcome::recorded, applied.message, s};
}

const char *to_string(Outcome outcome) {
  static constexpr std::array<util::EnumName<Outcome>, 4> kOutcomes = {
      {{Outcome::recorded, "recorded"},
       {Outcome::duplicate, "duplicate"},
       {Outcome::candidate_is_best, "candidate_is_best"},
       {Outcome::identical, "identical"}}};
  return util::name_of(kOutcomes, outcome);
}

State stop_no_idle_gpu(const Files &files, const std::string &family, const std::string &date,
                       int waited_min) {
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  State s = contents.state.value_or(State{});
  if (s.stopped) {
    return s;
  }
  if (s.family.empty()) {
    s.family = family;
  }
  s.stopped = true;
  s.stop_reason = "no idle GPU for " + std::to_string(waited_min) + " min";
  s.stop_date = date.empty() ? util::utc_now() : date;
  Attempt stop;
  stop.kind = Kind::stop;
  stop.date = s.stop_date;
  stop.reason = s.stop_reason;
  commit_change(files, s, std::move(contents.attempts), to_json(stop));
  return s;
}

} // namespace kopt::ledger
