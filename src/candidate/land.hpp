#pragma once

#include "candidate/candidate.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kopt::candidate {

/// What landing a candidate does to the family's folder (`kopt land`).
struct LandPlan {
  std::string id;                           ///< the landed candidate (BEST)
  std::string hash;                         ///< its content hash, the same after landing
  std::map<std::string, std::string> files; ///< its files (CandidateSet::files)
  std::vector<std::string> written;         ///< the family's files whose bytes change
  std::vector<std::string> removed;         ///< candidate folders that go
  /// Candidates that stay, each with the files its folder holds after (whole copies of the files
  /// that differ from the landed ones) and the base it gets (the landed id).
  std::map<std::string, std::map<std::string, std::string>> rebased;

  /// The ids of `rebased`, in order.
  std::vector<std::string> rebased_ids() const;

  /// The candidates whose folders landing rewrites or removes: the landed one, the rebased and
  /// the removed ones.
  std::vector<std::string> touched_ids() const;
};

/// Plans landing candidate `id`: its files become the family folder's, its folder keeps only
/// candidate.json (no base: it is the baseline now, same id, same content hash). The folders of
/// `settled` candidates (recorded in the ledger) and of id's base chain go; every other
/// candidate is rebased onto the landed files with its content unchanged, or goes too when
/// `drop_unrecorded`. A candidate that cannot keep its content on the landed files (it lacks an
/// instance template override the landed files have) is a kopt::Error naming it.
LandPlan plan_land(const spec::Family &family, const CandidateSet &candidates,
                   const std::string &id, const std::set<std::string> &settled,
                   bool drop_unrecorded);

/// Writes `plan`'s tree (land_journal.hpp's steps 2-4, without a journal): the rebased folders
/// and the landed candidate's (each whole, renamed into place), the family's files (each
/// atomically), then removes the settled folders. `kopt land` runs the same steps from its
/// journal (run_land).
void apply_land(const spec::Family &family, const CandidateSet &candidates, const LandPlan &plan);

/// The patch of each removed candidate, by id: its change against its base (diff_files), so that
/// settled work stays readable where no git history holds it (`kopt land` writes each to the
/// ledger's landed/<id>.patch).
std::map<std::string, std::string> removed_patches(const spec::Family &family,
                                                   const CandidateSet &candidates,
                                                   const LandPlan &plan,
                                                   util::ProcessRunner &runner);

/// The files of the family among `rels` (family-relative) that git holds changes to beyond its
/// HEAD, each as "rel (modified)", "rel (staged)" or "rel (untracked)": what writing them would
/// lose. Empty when the family is in no git repository.
std::vector<std::string> uncommitted(const spec::Family &family,
                                     const std::vector<std::string> &rels,
                                     util::ProcessRunner &runner);

/// The paths landing `plan` writes or removes: the family's files it writes (unless
/// `folders_only`) and the folders of plan.touched_ids().
std::vector<std::filesystem::path> landed_paths(const spec::Family &family, const LandPlan &plan,
                                                bool folders_only);

/// Commits `paths` as the working tree holds them and nothing else, in the repository holding
/// the family, with `message`, as the user's git identity (kopt's when git has none). It uses an
/// index of its own, read from HEAD, so that what the user staged stays staged and out of the
/// commit; the user's index then holds `paths` as committed. Returns the commit, or "" when
/// `paths` hold no change. Throws kopt::Error when the family is in no git repository or git
/// fails.
std::string commit_paths(const spec::Family &family,
                         const std::vector<std::filesystem::path> &paths,
                         const std::string &message, util::ProcessRunner &runner);

} // namespace kopt::candidate
