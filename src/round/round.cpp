#include "round/round.hpp"

#include "decide/decide.hpp"
#include "ledger/record_candidate.hpp"
#include "measure/build.hpp"
#include "measure/measure.hpp"
#include "round/steps.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/progress.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <ostream>

namespace kopt::round {

using nlohmann::ordered_json;

namespace {

// The last lines of a failed build's output, enough to see the error in a JSON answer.
std::string tail(const std::string &text, size_t lines = 20) {
  std::vector<std::string> all = util::split(util::trim(text), '\n');
  if (all.size() > lines) {
    all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(lines));
  }
  return util::join(all, "\n");
}

// What the measurement step did: the device it held (JSON) or why it could not measure.
struct Measured {
  ordered_json device = nullptr;
  std::string failed_step; ///< "build", "identity", "gpu"; empty when it measured
  std::string reason;      ///< one line
  std::string log;         ///< a failed build's last lines
};

// Builds, checks the identity, claims a device and measures `id` beside `best` into its
// results folder (the caller holds its results lock), saying each step in `progress`.
Measured measure(const LoadedFamily &loaded, const std::string &id, const ledger::Best &best,
                 const RoundOptions &options, std::ostream &progress) {
  measure::Request request;
  request.id = id;
  request.best = best;
  request.build_dir = options.build_dir;
  request.identity_dir = options.build_dir; // what it built, it proves
  request.prefix = options.prefix;
  request.rounds = options.rounds;
  request.gpu_wait_min = options.gpu_wait_min;
  measure::Notes notes;
  notes.building = [&](const std::vector<std::string> &targets) {
    progress << "kopt round: building " << util::join(targets, ", ") << "\n" << std::flush;
  };
  notes.held = [&](const gpu::Binding &binding) {
    progress << "kopt round: measuring candidate " << id << " beside BEST " << best.id << " on "
             << binding.message << "\n"
             << std::flush;
  };
  measure::Prepared prepared = measure::prepare(loaded, request, progress, notes);
  Measured out;
  if (prepared.failure) {
    out.failed_step = prepared.failure->step;
    out.reason = prepared.failure->recorded();
    out.log = tail(prepared.failure->output);
    return out;
  }
  if (prepared.golden.starts_with("golden remade")) {
    progress << "kopt round: " << prepared.golden << "\n" << std::flush;
  }
  // Plain lines: a round's progress is a log beside its JSON answer, never a status line.
  util::StatusLine status(progress, util::StatusStyle::lines);
  measure::run(loaded, request, prepared, status);
  bool host = loaded.family.backend == spec::Backend::host;
  out.device = {{"slot", prepared.held.slot},
                {"device", host ? profile::host_cpu_model() : prepared.held.binding.device},
                {"binding", prepared.held.binding.message},
                {"waited_s", prepared.held.waited_s},
                {"from", prepared.from},
                {"to", prepared.to}};
  return out;
}

std::string verdict_name(const decide::Decision &d) {
  return d.identical_to.empty() ? decide::to_string(d.verdict) : "identical";
}

// What the agent may do next, from the verdict and the ledger after the record.
ordered_json next_action(const decide::Decision &d, const ledger::State &state,
                         const std::string &proposal, const ledger::Options &limits) {
  if (state.stopped) {
    return {{"action", "stop"}, {"text", "the ledger stopped (" + state.stop_reason + ")"}};
  }
  bool abandoned =
      std::find(state.abandoned.begin(), state.abandoned.end(), proposal) != state.abandoned.end();
  if (d.verdict == decide::Verdict::incorrect && !abandoned) {
    int next = state.repair_attempts.count(proposal) ? state.repair_attempts.at(proposal) + 1 : 1;
    return {{"action", "repair"},
            {"base", d.candidate},
            {"proposal", proposal},
            {"attempt", next},
            {"of", limits.max_repairs},
            {"text", "repair the same idea: kopt new --base " + d.candidate + " --proposal " +
                         proposal + " (attempt " + std::to_string(next) + " of " +
                         std::to_string(limits.max_repairs) + ")"}};
  }
  if (d.verdict == decide::Verdict::split) {
    return {{"action", "split"},
            {"base", state.best},
            {"winning", d.winning},
            {"text", "write a candidate from BEST " + state.best + " whose dispatch sends " +
                         util::join(d.winning, ", ") +
                         " to this candidate's kernels: " + d.split_advice}};
  }
  return {{"action", "propose"},
          {"base", state.best},
          {"text", "a new idea from BEST " + state.best + ": kopt new --base " + state.best}};
}

Ending ending_of(const decide::Decision &d, const ledger::State &state) {
  if (state.stopped) {
    return Ending::stopped;
  }
  switch (d.verdict) {
  case decide::Verdict::keep:
    return Ending::keep;
  case decide::Verdict::incorrect:
    return Ending::incorrect;
  case decide::Verdict::failed:
    return Ending::failed;
  default:
    return Ending::not_kept;
  }
}

ordered_json answer(const LoadedFamily &loaded, const std::string &id, const ledger::Best &best,
                    const decide::Decision &d, const ledger::RecordRun &recorded,
                    const Measured &measured, int remeasured, const RoundOptions &options) {
  const candidate::Candidate &c = loaded.candidates.get(id);
  const ledger::State &s = recorded.recorded.state;
  std::string proposal = c.spec.proposal.empty() ? id : c.spec.proposal;
  nlohmann::json decision = decide::to_json(d);
  ordered_json repair = nullptr;
  if (d.verdict == decide::Verdict::incorrect) {
    repair = {{"proposal", proposal},
              {"attempt", s.repair_attempts.count(proposal) ? s.repair_attempts.at(proposal) : 0},
              {"of", options.limits.max_repairs},
              {"abandoned",
               std::find(s.abandoned.begin(), s.abandoned.end(), proposal) != s.abandoned.end()}};
  }
  Ending ending = ending_of(d, s);
  return {
      {"candidate", id},
      {"hash", d.hash.empty() ? loaded.candidates.content_hash(loaded.family, id) : d.hash},
      {"proposal", proposal},
      {"target", d.target},
      {"hypothesis", c.spec.hypothesis},
      {"best_before", best.id},
      {"best", s.best},
      {"verdict", verdict_name(d)},
      {"reason", d.reason},
      {"failed_step", measured.failed_step.empty() ? nullptr : ordered_json(measured.failed_step)},
      {"log", measured.log.empty() ? nullptr : ordered_json(measured.log)},
      {"method", decision["method"]},
      {"rounds", d.rounds},
      {"classes", decision["classes"]},
      {"overall", decision["overall"]},
      {"weighting", decision["weighting"]},
      {"traffic", decision["traffic"]},
      {"incorrect", decision["incorrect"]},
      {"winning", d.winning},
      {"split_advice", d.split_advice},
      {"notes", d.notes},
      {"repair", repair},
      {"regressions",
       {{"consecutive", s.consecutive_regressions},
        {"max", options.limits.max_consecutive},
        {"counted",
         d.counts_as_regression() && recorded.recorded.outcome == ledger::Outcome::recorded}}},
      {"stopped", s.stopped},
      {"stop_reason", s.stop_reason},
      {"record",
       {{"outcome", recorded.recorded.outcome == ledger::Outcome::recorded    ? "recorded"
                    : recorded.recorded.outcome == ledger::Outcome::duplicate ? "duplicate"
                    : recorded.recorded.outcome == ledger::Outcome::identical
                        ? "identical"
                        : "candidate_is_best"},
        {"message", recorded.recorded.message}}},
      {"device", measured.device},
      {"measured_again", remeasured},
      {"decision", loaded.layout.decision(id).string()},
      {"next", next_action(d, s, proposal, options.limits)},
      {"exit_code", static_cast<int>(ending)},
      {"ending", to_string(ending)}};
}

RoundResult stopped_before(const LoadedFamily &loaded, const std::string &id,
                           const ledger::State &state) {
  RoundResult result;
  result.ending = Ending::stopped;
  result.json = {{"candidate", id},
                 {"best", state.best},
                 {"verdict", "stopped"},
                 {"reason", "the ledger stopped on " + state.stop_date + " (" + state.stop_reason +
                                "); nothing was run"},
                 {"stopped", true},
                 {"stop_reason", state.stop_reason},
                 {"regressions", {{"consecutive", state.consecutive_regressions}}},
                 {"decision", loaded.layout.decision(id).string()},
                 {"next", {{"action", "stop"}, {"text", "the loop is over"}}},
                 {"exit_code", static_cast<int>(Ending::stopped)},
                 {"ending", to_string(Ending::stopped)}};
  return result;
}

// The ledger's last event when it is a land: "the land of candidate 11 (DATE)", what a build
// folder from before it may not have caught up with; "" otherwise.
std::string last_land(const ledger::Files &files) {
  std::vector<nlohmann::json> lines = ledger::read_attempts(files.attempts());
  if (lines.empty() || lines.back().value("kind", "") != "land") {
    return "";
  }
  return "the land of candidate " + lines.back().value("candidate", "") + " (" +
         lines.back().value("date", "") + ")";
}

// A step that fails right after a land for want of a fresh build (a binary older than the
// landed files) is kopt's problem to name, not the candidate's failure: a kopt::Error naming
// the land.
[[noreturn]] void after_land(const std::string &land, const std::string &build_dir,
                             const std::string &what) {
  std::string folder = build_dir.empty() ? std::string("<build folder>") : build_dir;
  throw Error(what + "; the family's files changed in " + land + ", and the build folder " +
              folder + " may predate it: build it again (cmake --build " + folder +
              "), then run the round again; nothing recorded");
}

} // namespace

const char *to_string(Ending ending) {
  switch (ending) {
  case Ending::keep:
    return "keep";
  case Ending::not_kept:
    return "not_kept";
  case Ending::incorrect:
    return "incorrect";
  case Ending::failed:
    return "failed";
  case Ending::stopped:
    return "stopped";
  }
  return "?";
}

// The family's lock, shared with the family's other rounds, once no landing is left half done:
// one that a kill or a full disk stopped is completed first, alone (also one that a land killed
// while this round waited for the lock left).
std::unique_ptr<util::FileLock> lock_family(const RoundOptions &options, std::ostream &progress) {
  spec::Layout layout(options.state_dir, options.ledger);
  for (;;) {
    measure::complete_land(spec::load_family(options.spec), layout, progress);
    auto held = std::make_unique<util::FileLock>(layout.lock("family"), &progress,
                                                 util::FileLock::Mode::shared,
                                                 "kopt round of candidate " + options.id);
    if (!candidate::land_pending(layout)) {
      return held;
    }
  }
}

// A build that failed is the candidate's failure only while BEST's own target still builds;
// when it fails too, the build folder is broken (a land it predates, a configure gone wrong): a
// tool error naming the land when one came last, never the candidate's failure.
void check_build_folder(const std::string &id, const ledger::Best &best,
                        const RoundOptions &options, const Measured &measured,
                        const std::string &land, std::ostream &progress) {
  if (measured.failed_step != "build" || best.id == id) {
    return;
  }
  std::string target = options.prefix + "candidate_" + best.id;
  if (measure::build_targets(options.build_dir, {target}, &progress).ok()) {
    return;
  }
  std::string what = measured.reason + "; BEST " + best.id + "'s own target " + target +
                     " fails to build too: the build folder is broken, not candidate " + id +
                     "'s code";
  if (!land.empty()) {
    after_land(land, options.build_dir, what);
  }
  throw Error(what + ": configure and build " + options.build_dir +
              " again, then run the round again; nothing recorded");
}

// Measures `id` beside `best` (unless its content was recorded already) and decides it, holding
// its results lock. Right after a land, an error of either step (a harness that prints another
// content's hash: a binary older than the landed files) or an identity failure is named as the
// land's (after_land), and a build that fails for BEST's target too is a broken build folder:
// none is recorded as the candidate's failure.
decide::Decision measure_and_decide(const LoadedFamily &loaded, const std::string &id,
                                    const ledger::Best &best, const RoundOptions &options,
                                    std::ostream &progress, Measured &measured) {
  ledger::Files files{loaded.layout.ledger};
  util::FileLock results(loaded.layout.lock("results-" + id), &progress);
  bool fresh = ledger::identical_to(files, loaded.family, loaded.candidates, id, best).empty();
  std::string land = fresh ? last_land(files) : "";
  auto or_land = [&](const std::function<void()> &step) {
    try {
      step();
    } catch (const Error &e) {
      if (land.empty()) {
        throw;
      }
      after_land(land, options.build_dir, e.what());
    }
  };
  if (fresh) {
    or_land([&] { measured = measure(loaded, id, best, options, progress); });
    if (measured.failed_step == "identity" && !land.empty()) {
      after_land(land, options.build_dir, measured.reason);
    }
    check_build_folder(id, best, options, measured, land, progress);
    if (!measured.failed_step.empty()) {
      measure::write_failed(loaded, id, measured.reason);
    }
  }
  decide::Decision decision;
  or_land([&] { decision = decide_candidate(loaded, id, best, keep_options(loaded.family)); });
  if (!measured.failed_step.empty()) {
    decision.verdict = decide::Verdict::failed;
    decision.reason = measured.reason;
    decide::write_decision(loaded.layout.decision(id), decision);
  }
  return decision;
}

RoundResult run_round(const RoundOptions &options, std::ostream &progress) {
  // Rounds share the family's lock; `kopt land`, which rewrites the family's files and
  // candidate folders, holds it alone: a round builds and measures files that stay as they are.
  std::unique_ptr<util::FileLock> family = lock_family(options, progress);
  for (int remeasured = 0;; ++remeasured) {
    LoadedFamily loaded = measure::load(options.spec, options.state_dir, options.ledger);
    const std::string &id = loaded.candidates.get(options.id).id();
    ledger::Files files{loaded.layout.ledger};
    std::optional<ledger::State> state = ledger::read_state(files);
    if (state && state->stopped) {
      return stopped_before(loaded, id, *state);
    }
    ledger::Best best = loaded.best();
    if (id == best.id && best.recorded) {
      throw Error("candidate " + id + " is BEST: nothing to measure against");
    }
    // The baseline before the ledger has a state: measured alone and recorded as BEST.
    Measured measured;
    decide::Decision decision = measure_and_decide(loaded, id, best, options, progress, measured);
    try {
      ledger::RecordRun recorded = ledger::record_candidate(loaded.layout, loaded.family,
                                                            loaded.candidates, id, options.limits);
      RoundResult result;
      result.json = answer(loaded, id, best, decision, recorded, measured, remeasured, options);
      result.ending = static_cast<Ending>(result.json["exit_code"].get<int>());
      result.decision = decision;
      return result;
    } catch (const Error &) {
      std::optional<ledger::State> now = ledger::read_state(files);
      if (now && now->stopped) {
        return stopped_before(loaded, id, *now);
      }
      if (!now || now->best == best.id || remeasured + 1 >= options.max_remeasure) {
        throw;
      }
      progress << "kopt round: BEST became " << now->best << " while candidate " << id
               << " was measured beside " << best.id << ": measuring again\n"
               << std::flush;
    }
  }
}

} // namespace kopt::round
