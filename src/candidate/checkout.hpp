#pragma once

#include "candidate/candidate.hpp"
#include "candidate/new_candidate.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::candidate {

/// Where `kopt checkout` wrote a candidate's complete editable files.
struct Checkout {
  std::filesystem::path dir;        ///< the folder or the git worktree
  std::filesystem::path family_dir; ///< the family's files inside it
  std::string commit;               ///< the worktree's commit that holds them; "" for a folder
  std::vector<std::string> files;   ///< family-relative paths
  std::string hash;                 ///< the candidate's content hash
};

/// How checkout treats a folder or worktree that exists.
enum class Existing { refuse, replace };

/// The file a plain-folder checkout leaves beside the files: {family, candidate, hash}.
inline constexpr const char *kCheckoutMarker = ".kopt-checkout.json";

/// Writes candidate `id`'s files (CandidateSet::files) into folder `dir`, family-relative, with
/// the marker. `dir` must be missing or empty and outside the family's folder; with
/// Existing::replace, a folder of an earlier checkout of this family is emptied of its files
/// first. Throws kopt::Error naming `dir`.
Checkout checkout_folder(const spec::Family &family, const CandidateSet &candidates,
                         const std::string &id, const std::filesystem::path &dir,
                         Existing existing = Existing::refuse);

/// Makes `dir` a git worktree of the repository holding the family (`git worktree add --detach`
/// at the repository's HEAD), writes candidate `id`'s files into the family's folder there and
/// commits them ("kopt: candidate ID of FAMILY", trailers Kopt-Family, Kopt-Candidate, Kopt-Hash),
/// so that the worktree's changes against its HEAD are changes to that candidate. With
/// Existing::replace, an earlier checkout worktree of this family is reset to the repository's
/// HEAD first (its changes are discarded). Throws kopt::Error when the family is in no git
/// repository, `dir` is taken or inside the family's folder.
Checkout checkout_worktree(const spec::Family &family, const CandidateSet &candidates,
                           const std::string &id, const std::filesystem::path &dir,
                           util::ProcessRunner &runner, Existing existing = Existing::refuse);

/// The candidate a checkout folder (its marker) or worktree (its HEAD's Kopt-Candidate trailer)
/// holds; "" when it is not a checkout of this family.
std::string checked_out(const spec::Family &family, ChangeKind kind,
                        const std::filesystem::path &dir, util::ProcessRunner &runner);

/// A git diff (a/ b/ prefixes, family-relative paths) that turns the files `from` into `to`
/// (both CandidateSet::files maps): what `kopt diff` prints, and what `kopt new --base <from>
/// --from-patch` turns into `to` again.
std::string diff_files(const std::map<std::string, std::string> &from,
                       const std::map<std::string, std::string> &to, util::ProcessRunner &runner);

/// The change a checkout folder holds against candidate `base`: its files that differ from
/// base's (files the folder lacks are base's), as diff_files gives it.
Change folder_change(const spec::Family &family, const CandidateSet &candidates,
                     const std::string &base, const std::filesystem::path &dir,
                     util::ProcessRunner &runner);

} // namespace kopt::candidate
