#pragma once

#include "candidate/land.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// How `kopt land` reaches the family's folder, the ledger and git so that a kill or a failed
// write at any step leaves the old tree and ledger, the landed ones, or a journal the next kopt
// command on the family completes (docs/FORMATS.md, "The land's write order"):
//
//   1. land.journal  (atomic: every byte landing writes, what it removes, the ledger's line,
//                     the commit's message)                                 <- the commit point
//   2. the candidate folders it rewrites, each whole (staged, then renamed into place)
//   3. the family's files (atomic each)
//   4. the folders of the settled candidates removed
//   5. the removed candidates' patches in the ledger (atomic each)
//   6. the ledger's land line (the ledger's own write order), unless it holds it already
//   7. the commit of what landing wrote (--commit), unless git holds it already
//   8. land.journal removed
//
// Before step 1 ends nothing changed (a temp file of the journal at most: the next command
// removes it, which rolls the landing back). From then on each step can run again from the
// journal alone, so the next command runs steps 2-8 again, as SQLite's journal does.

namespace kopt::candidate {

/// A landing written down before any of it happens: all that steps 2-7 above need.
struct LandJournal {
  std::string id;   ///< the landed candidate
  std::string hash; ///< its content hash
  /// The candidate folders written whole (the landed one, the rebased ones): id -> the files
  /// the folder holds after, candidate.json included.
  std::map<std::string, std::map<std::string, std::string>> folders;
  std::map<std::string, std::string> files;   ///< the family's files: family-relative -> bytes
  std::vector<std::string> removed;           ///< the candidate folders that go
  std::filesystem::path patch_dir;            ///< where the removed candidates' patches go
  std::map<std::string, std::string> patches; ///< id -> its patch (`<patch_dir>/<id>.patch`)
  nlohmann::json ledger_line;                 ///< the ledger's land line; null without a ledger
  std::string commit_message;                 ///< the landing commit's message; "": no commit
};

/// The journal of landing `plan` (its folders, files and removals); patches, the ledger's line
/// and the commit are the caller's to add.
LandJournal journal_of(const CandidateSet &candidates, const LandPlan &plan);

/// The journal as land.journal holds it (the files' bytes in base64), and back; errors name
/// `source` and the field.
nlohmann::json to_json(const LandJournal &journal);
LandJournal land_journal_from_json(const nlohmann::json &j, const std::string &source);

/// Where a family's landing on its way is kept: `<state folder>/land.journal`.
std::filesystem::path land_journal_path(const spec::Layout &layout);

/// Steps 2-4: the candidate folders, the family's files and the removals of `journal`. Each
/// step gives the same tree when run again.
void apply_tree(const spec::Family &family, const LandJournal &journal);

/// The paths a landing's commit holds: its family files and candidate folders.
std::vector<std::filesystem::path> journal_paths(const spec::Family &family,
                                                 const LandJournal &journal);

/// Records the ledger's land line (step 6); the caller's, since the ledger sits above candidates.
using RecordLine = std::function<void(const nlohmann::json &line)>;

/// Lands `journal` in the order above. Returns the landing commit ("" without one or when git
/// held it already). A failure after step 1 throws its error, saying that the journal keeps the
/// landing for the next command.
std::string run_land(const spec::Family &family, const spec::Layout &layout,
                     const LandJournal &journal, const RecordLine &record_line,
                     util::ProcessRunner &runner);

/// Whether complete_land() has work: a journal or a temp file of one.
bool land_pending(const spec::Layout &layout);

/// Whether the caller holds the family's lock already (`kopt land`), or complete_land takes it.
enum class FamilyLock { take, held };

/// Finishes what a killed or failed landing left, holding the family's lock: a journal is
/// completed (steps 2-8 again, after the staging folders and temp files of the killed writes are
/// removed); a temp file of a journal that never completed is removed, which rolls the landing
/// back (nothing of it was applied). Returns one line for the user per repair (empty when there
/// was nothing to do). Throws kopt::Error naming the journal when a step fails again.
std::vector<std::string> complete_land(const spec::Family &family, const spec::Layout &layout,
                                       const RecordLine &record_line, util::ProcessRunner &runner,
                                       FamilyLock lock = FamilyLock::take);

} // namespace kopt::candidate
