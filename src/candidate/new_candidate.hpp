#pragma once

#include "candidate/candidate.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::candidate {

/// Where a new candidate's change comes from: a patch file, a git worktree's uncommitted
/// changes (tracked and untracked, against its HEAD), a commit (against its first parent) or a
/// checkout folder (`kopt checkout --dir`: its files against its candidate's).
enum class ChangeKind { patch, worktree, git, folder };

/// A path of the change that was left out of the candidate, and why ("binary", "generated").
struct Dropped {
  std::string path;
  std::string reason;
};

/// The change as a patch, with the paths git left out before the patch was made.
struct Change {
  std::string text;
  std::string source; ///< names it in messages: the patch file, "worktree DIR", "git REV"
  std::vector<std::string> notes;
};

/// What `kopt new` was asked besides the change.
struct NewRequest {
  std::string id;
  std::string base;
  std::string hypothesis;
  std::string target = "global";
  std::string proposal; ///< repair attempts of one proposal share it; empty: the id
  bool replace = false; ///< an existing candidate folder of that id is replaced
};

/// What `kopt new` wrote.
struct NewCandidate {
  std::filesystem::path dir;
  std::vector<std::string> files; ///< the changed files, relative to the candidate folder
  std::vector<Dropped> dropped;   ///< binary and generated paths left out
  std::string hash;               ///< the new candidate's content hash
};

/// Reads the change: the patch file, or the diff git makes of a worktree or a commit of the
/// repository holding the family folder. Throws kopt::Error naming what git said.
Change read_change(const spec::Family &family, ChangeKind kind, const std::string &value,
                   util::ProcessRunner &runner);

/// Turns `change` into candidate folder `request.id`: its patch is applied (with `git apply`, in
/// a temporary copy) to base's resolved files, and the changed editable files (or
/// `instances/<name>.in`) are written whole with candidate.json. Patch paths are relative to the
/// family folder or to the git repository holding it. Binary hunks and generated folders
/// (build/, CMakeFiles/, ...) are dropped and returned; a path leaving the family folder, a
/// change to a file that is not editable, a deletion or rename, a result equal to BEST's content
/// (`best_hash`) or to base's, and an existing id without `replace` throw kopt::Error before
/// anything is written.
NewCandidate make_candidate(const spec::Family &family, const CandidateSet &candidates,
                            const std::string &best_id, const std::string &best_hash,
                            const Change &change, const NewRequest &request,
                            util::ProcessRunner &runner);

/// candidate.json's text for `request` (no base for an empty one; proposal only when given).
std::string candidate_json(const NewRequest &request);

/// Writes folder `dir` whole with `files` (folder-relative -> bytes) and nothing else, staged in
/// a hidden sibling folder (`.new-<name>-<pid>`) and renamed into place, so that a reader sees
/// the old folder or the new one; writing it again gives the same folder. What a killed writer
/// left beside it first goes (sweep_staging).
void write_folder_whole(const std::filesystem::path &dir,
                        const std::map<std::string, std::string> &files);

/// What killed writers of candidate folders left in `parent`: their staging folders
/// (`.new-<id>-<pid>` of a pid no longer running) are removed, and an old folder one had moved
/// aside (`.old-<id>-<pid>`) goes back where no new one took its place. Returns how many it
/// found.
int sweep_staging(const std::filesystem::path &parent);

/// Writes candidate folder `dir` whole (write_folder_whole): candidate.json from `request`
/// (candidate_json) and `files` (folder-relative -> bytes).
void write_candidate_folder(const std::filesystem::path &dir, const NewRequest &request,
                            const std::map<std::string, std::string> &files);

/// True for a path under a folder that builds or tools generate (build/, build-*, CMakeFiles/,
/// __pycache__/, .git/, .cache/): never a candidate's source.
bool is_generated_path(const std::string &path);

} // namespace kopt::candidate
