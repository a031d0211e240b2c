#pragma once

#include "candidate/candidate.hpp"
#include "decide/decide.hpp"
#include "ledger/attempt.hpp"
#include "profile/measurement.hpp"
#include "spec/candidate_spec.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::ledger {

/// One config class's numbers in a regression summary: BEST's and the candidate's geomean us.
struct ClassChange {
  std::string config_class;
  double best_us = 0;
  double candidate_us = 0;
  double change = 0; ///< candidate / best - 1
};

/// A measured regression, kept in the rolling window that the Stop Summary shows.
struct RegressionSummary {
  std::string date;
  std::string best; ///< BEST's id at the time
  std::string candidate;
  std::string hash; ///< the candidate's content hash
  std::string hypothesis;
  std::string target;
  std::vector<ClassChange> classes;
  ClassChange overall; ///< config_class is "overall"
};

/// One row of performance.md's results table: the baseline or a kept candidate.
struct KeptRow {
  std::string date;
  std::string candidate;
  std::string hash;
  std::string status; ///< "baseline" or "keep"
  std::string target;
  std::vector<std::string> kernels; ///< the target class's kernels (all of them for global)
  std::string measured_by;
  double geomean_us = 0;
  std::optional<double> change; ///< vs the previous BEST; absent for the baseline
  std::optional<std::pair<double, double>> interval; ///< the change's interval, when paired
  std::string hypothesis;
  /// What its measurement measured (recorded_build() reads rows written before these were):
  /// the build (Measurement::build, build_flags) and the configs (how many, the file's hash).
  std::string build;
  std::string build_flags;
  int configs = 0;
  std::string configs_hash;
};

/// An attempt already recorded against the current BEST, so a second record is detected.
struct RecordedAttempt {
  std::string candidate;
  std::string hash;
  std::string verdict;
};

/// The ledger's state: state.json.
struct State {
  std::string family;
  std::string best;
  std::string best_hash;
  int consecutive_regressions = 0;
  std::vector<RegressionSummary> recent_regressions; ///< oldest first, at most 5
  std::map<std::string, int> repair_attempts;        ///< per proposal
  std::vector<std::string> abandoned;                ///< proposals out of repair attempts
  bool stopped = false;
  std::string stop_reason;
  std::string stop_date;
  std::vector<KeptRow> kept;             ///< the baseline first, then each keep
  std::vector<RecordedAttempt> recorded; ///< attempts against the current BEST
};

/// Limits of the loop: when to stop and when a proposal is abandoned.
struct Options {
  int max_consecutive = 5; ///< stop after this many consecutive measured regressions
  int max_repairs = 3;     ///< an incorrect proposal is abandoned after this many attempts
  /// Record a measurement of another build than BEST was recorded with (other_build()).
  bool allow_other_build = false;
};

/// Whether record() changed the ledger, and if not, why not.
enum class Outcome { recorded, duplicate, candidate_is_best, identical };

/// What record() did: the outcome, a one-line message for the user, and the state after.
struct Recorded {
  Outcome outcome = Outcome::recorded;
  std::string message;
  State state;
};

/// The ledger's files inside its folder.
struct Files {
  std::filesystem::path dir;

  std::filesystem::path state() const { return dir / "state.json"; }
  std::filesystem::path performance() const { return dir / "performance.md"; }
  std::filesystem::path attempts() const { return dir / "attempts.jsonl"; }
  /// The patches of the candidate folders `kopt land` removed, one <id>.patch each.
  std::filesystem::path landed() const { return dir / "landed"; }
  /// A change of the three files above on its way (journal.hpp): present only while a record
  /// runs, or after one was killed or failed, until the next command completes it.
  std::filesystem::path journal() const { return dir / "ledger.journal"; }
  /// Held (util::FileLock) by every change of the three files above.
  std::filesystem::path lock() const { return dir / "ledger.lock"; }
};

/// Reads attempts.jsonl (no lines when it is absent) and checks every line against
/// docs/FORMATS.md: a JSON object of kind baseline, attempt, rebase, land or stop with its fields.
/// A line cut by a killed process or edited by hand throws `<file>:<line>: <what is wrong>`.
std::vector<nlohmann::json> read_attempts(const std::filesystem::path &file);

/// Serialises the state (stable key order).
nlohmann::json to_json(const State &state);

/// Reads a state back; errors name `source` and the missing or mistyped field.
State state_from_json(const nlohmann::json &j, const std::string &source);

/// Reads state.json, or returns nothing when the ledger has none yet; attempts.jsonl is
/// checked too (read_attempts), so a damaged ledger is reported before anything is written.
/// A record that a killed or failed kopt left half done is completed first, and the temp files
/// of its writes removed, under the ledger's lock, each repair said in a line on stderr. A
/// state.json that is missing, a dangling link, a link loop or unreadable while attempts.jsonl
/// holds history throws kopt::Error naming both files and the ways out (restore it, or
/// `kopt ledger rebuild`): the ledger is never silently started over.
std::optional<State> read_state(const Files &files);

/// Who BEST is: its id and the content hash it was kept with.
struct Best {
  std::string id;
  std::string hash;
  bool recorded = true; ///< false: the baseline before the ledger has a state
};

/// Whether resolve_best() checks that BEST's content is still what was kept.
enum class ContentCheck { verify, skip };

/// Returns the baseline: the candidate without a base (00 by convention); throws kopt::Error
/// naming family.json when there is none.
std::string baseline(const spec::Family &family, const candidate::CandidateSet &candidates);

/// Who BEST is: state.json's BEST and the hash it was kept with, or the baseline (recorded false)
/// before the first record. With ContentCheck::verify the baseline's hash is its content hash,
/// and a BEST whose content changed since it was kept throws kopt::Error naming its folder and
/// the two ways out; with skip only the id is resolved.
Best resolve_best(const Files &files, const spec::Family &family,
                  const candidate::CandidateSet &candidates,
                  ContentCheck check = ContentCheck::verify);

/// Returns "BEST 01" or the id of a recorded candidate whose content hash equals `id`'s, or ""
/// when `id` is new code (BEST itself is never identical to itself); `best` is resolve_best().
std::string identical_to(const Files &files, const spec::Family &family,
                         const candidate::CandidateSet &candidates, const std::string &id,
                         const Best &best);

/// Returns performance.md's text for `state` and `attempts` (attempts.jsonl's lines as
/// read_attempts returns them): the results table of the baseline and kept candidates, the
/// Attempts table with a row per line in record order, and, when stopped, the Stop Summary with
/// the recent regressions.
std::string render_performance(const State &state, const std::vector<nlohmann::json> &attempts);

/// Records one decided attempt: updates state.json and performance.md (with this attempt's row)
/// atomically and appends to attempts.jsonl, holding the ledger's lock from reading the state to
/// the last write, so that records running at once each see the others' updates. With no state yet,
/// only the baseline (a decision of BEST against itself) may be recorded, and it creates the state.
/// Throws when the decision is stale or the ledger stopped.
Recorded record(const Files &files, const decide::Decision &decision,
                const spec::CandidateSpec &candidate, const profile::Measurement &measurement,
                const Options &options = {});

/// Carries BEST over a deliberate change of what every candidate compiles (family.json, its
/// tuned table or heuristic file; they are in every content hash): state.json's best_hash
/// becomes `hash_of(BEST's id)` (its content hash now), the attempts recorded against BEST's old
/// content are forgotten, and attempts.jsonl gets a `rebase` line {date, candidate, best,
/// from_hash, hash, reason}. BEST is read and its hash taken under the ledger's lock, so a keep
/// recorded at the same time cannot hand one BEST's hash to another. Returns Outcome::identical
/// when the hash is already BEST's; throws when there is no ledger yet, it stopped, or `reason`
/// is blank.
Recorded rebase(const Files &files, const std::function<std::string(const std::string &)> &hash_of,
                const std::string &reason, const std::string &date = "");

/// What `kopt land` does to the family's folder, for its line in attempts.jsonl.
struct Landing {
  std::string candidate;            ///< BEST, whose files become the family's own
  std::string hash;                 ///< BEST's content hash (the landed files give the same)
  std::vector<std::string> removed; ///< the candidate folders that go (settled work)
  std::vector<std::string> rebased; ///< unrecorded candidates rewritten onto the landed files
};

/// The `land` line of attempts.jsonl for `landing`: {date, candidate, best, hash, removed,
/// rebased, reason}. Checks, without writing, that `landing.candidate` is BEST with
/// `landing.hash`; throws when there is no ledger yet or BEST is another candidate. BEST, its
/// hash and the counters stay: the next round decides against it. A stopped ledger lands too
/// (landing is how a finished loop reaches the tree).
nlohmann::json land_line(const Files &files, const Landing &landing, const std::string &date = "");

/// Records land line `line` (land_line's) under the ledger's lock: appends it to attempts.jsonl
/// and its row to performance.md, unless attempts.jsonl holds it already (a landing completed
/// twice is recorded once). Returns whether it appended. Throws when there is no ledger.
bool record_land(const Files &files, const nlohmann::json &line);

/// Returns the state that attempts.jsonl's lines (as read_attempts returns them) lead to, replaying
/// what record(), rebase() and stop_no_idle_gpu() did: BEST, the kept rows, the counters, the
/// repairs, the stop. Lines written before kopt recorded every number (geomean and per-class us,
/// kernels) give 0 or none for what they lack; a kept geomean is then derived from the change.
State rebuild_state(const std::vector<nlohmann::json> &attempts, const std::string &family);

/// `kopt ledger rebuild`: writes state.json (and performance.md) rebuilt from attempts.jsonl,
/// under the ledger's lock. Only a state.json that is missing, a dangling link, a link loop or
/// unreadable is replaced (an unreadable one is kept as state.json.unreadable); throws when
/// state.json reads or attempts.jsonl holds no history.
Recorded rebuild(const Files &files, const std::string &family);

/// "recorded", "duplicate", "candidate_is_best" or "identical" (the `outcome` of --json answers).
const char *to_string(Outcome outcome);

/// Stops the loop because no idle GPU appeared for `waited_min` minutes (creating the state when
/// there is none yet; under the ledger's lock); an already stopped ledger keeps its first reason.
/// Returns the state.
State stop_no_idle_gpu(const Files &files, const std::string &family, const std::string &date,
                       int waited_min = 60);

/// The build a kept row's measurement measured: its hash and optimisation level ("-O3"), read
/// from the row's build fields or, in rows written before them, from its measured_by text; both
/// "" when the row names none.
struct RecordedBuild {
  std::string hash;
  std::string optimisation;
};

/// Returns the build BEST's kept row of `state` was measured with.
RecordedBuild recorded_build(const State &state);

/// Why measurement `m` cannot stand beside BEST's row of `state`: "candidate 06 measured build
/// <hash> (-O0); BEST 00 was recorded with build <hash> (-O3)", or "" when the builds are the
/// same or either is unknown. Times of another optimisation level or other flags are no measure
/// against BEST's.
std::string other_build(const State &state, const profile::Measurement &m);

/// Sets kept row `row`'s build and configs fields from measurement `m`.
void set_measured(KeptRow &row, const profile::Measurement &m);

/// Sets kept row `row`'s build and configs fields from ledger line `line` (absent ones stay "").
void set_measured(KeptRow &row, const nlohmann::json &line);

/// Returns one line that sums the state up: BEST, the regression counter and whether stopped.
std::string summary_line(const State &state);

/// Returns the state as text for `kopt status`: BEST, counters, repairs, recent regressions.
std::string format_status(const State &state);

} // namespace kopt::ledger
