#pragma once

#include "spec/candidate_spec.hpp"
#include "spec/family.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::candidate {

/// Returns the id of `ids` that names the same number as `id` ("6", "006" -> "06"), or "" when
/// `id` is not a number or no id of `ids` has its value.
std::string same_number(const std::string &id, const std::vector<std::string> &ids);

/// The error for an id that names no candidate of `ids`: "candidate '03' was landed: kopt land
/// removed its folder; its patch is <landed_dir>/03.patch" when that patch is there (by value
/// too), else "unknown candidate '6', did you mean '06'?" for an id of the same number; then
/// the candidates there are.
std::string unknown_candidate(const std::string &id, const std::vector<std::string> &ids,
                              const std::filesystem::path &landed_dir);

/// A candidate folder and its parsed candidate.json.
struct Candidate {
  spec::CandidateSpec spec;
  std::filesystem::path dir;

  /// The candidate's id ("00", "07", ...).
  const std::string &id() const { return spec.id; }
};

/// All candidates of a family, sorted by id, with their bases checked (a base must exist and
/// the chain must end at a candidate without base, with no cycle).
class CandidateSet {
public:
  /// Scans family.candidates_dir: every sub-folder with a candidate.json is a candidate; one
  /// without (a scratch folder) is skipped and listed in skipped(). A bad candidate.json or a
  /// missing base is a kopt::Error naming it.
  static CandidateSet discover(const spec::Family &family);

  const std::vector<Candidate> &all() const { return candidates_; }

  /// The sub-folders of candidates_dir that discover() skipped (no candidate.json), sorted.
  const std::vector<std::filesystem::path> &skipped() const { return skipped_; }

  /// One line per candidate whose target is neither "global" nor a config class of the
  /// family's configs ("candidates/06/candidate.json: target: 'N<257' is not a config class of
  /// configs.csv (classes: ...)"), found when the candidates are read: the configure step
  /// fails on it and `kopt ls` names it, before anything is built or measured.
  const std::vector<std::string> &target_problems() const { return target_problems_; }

  /// Returns the candidate `id`; throws unknown_candidate()'s message for an id it lacks.
  const Candidate &get(const std::string &id) const;

  /// Where `kopt land` keeps the patches of the candidate folders it removed (<ledger>/landed):
  /// get() then says of such an id that it was landed.
  void set_landed_dir(const std::filesystem::path &dir) { landed_dir_ = dir; }

  /// The chain from `id` to the baseline: {id, base, base's base, ...}.
  std::vector<const Candidate *> chain(const std::string &id) const;

  /// For each editable file and the instance template: the path of its nearest copy along the
  /// chain, then the family folder. A file found nowhere is an error naming it.
  std::map<std::string, std::filesystem::path> resolve_sources(const spec::Family &family,
                                                               const std::string &id) const;

  /// The instances whose template this candidate overrides: instance name -> the nearest
  /// `instances/<name>.in` along the chain, then the family folder. That file is expanded
  /// instead of the family's kernel.template for that instance only, so a candidate can change
  /// one instance TU and no other. A file there that names no instance is an error naming it.
  std::map<std::string, std::filesystem::path>
  resolve_instance_templates(const spec::Family &family, const std::string &id) const;

  /// The candidate's complete editable files as it compiles them: each editable file and the
  /// kernel template (family-relative path -> bytes) and each instance template override
  /// (`instances/<name>.in`), resolved along its chain.
  std::map<std::string, std::string> files(const spec::Family &family, const std::string &id) const;

  /// The candidate's content hash (docs/FORMATS.md): what its harness must print.
  std::string content_hash(const spec::Family &family, const std::string &id) const;

private:
  /// Where a candidate's files are looked for, nearest first: its folder, its base chain's
  /// folders, then the family folder.
  std::vector<std::filesystem::path> search_folders(const spec::Family &family,
                                                    const std::string &id) const;

  std::vector<Candidate> candidates_;
  std::filesystem::path landed_dir_;
  std::vector<std::filesystem::path> skipped_;
  std::vector<std::string> target_problems_;
};

/// The content hash (docs/FORMATS.md) of a candidate whose resolved sources are `sources` (name ->
/// bytes) and whose instance template overrides are `instance_templates` (instance name ->
/// bytes): CandidateSet::content_hash of a folder, or of one not yet written.
std::string content_hash_of(const spec::Family &family,
                            const std::map<std::string, std::string> &sources,
                            const std::map<std::string, std::string> &instance_templates);

/// Whether a path that plain_file_inside checks may be absent (a file about to be written).
enum class Missing { refused, allowed };

/// Why a file whose name holds a control, bidirectional or invisible character is refused (its
/// name shown with util::quote_hidden in front).
inline constexpr const char *kHiddenName =
    "has a name with a control, bidirectional or invisible character (shown escaped)";

/// "" when `rel` under `root` is reached through folders alone (no part of it a symlink, no
/// `..`) and is a regular file (or, with Missing::allowed, is not there yet); else what it is
/// instead, to follow `rel` in a message: "is a symlink to /etc/passwd", "is under instances, which
/// is a symlink to /tmp", "is a character device", "is a folder", "does not exist".
std::string why_not_plain_inside(const std::filesystem::path &root, const std::string &rel,
                                 Missing missing);

/// Writes `files` (relative path -> bytes, as CandidateSet::files gives them) under `root`, each
/// atomically, making the folders they need. A path whose folder or file under `root` is a
/// symlink (or not a regular file) is a kopt::Error naming it, before anything is written.
void write_files(const std::filesystem::path &root,
                 const std::map<std::string, std::string> &files);

/// content_hash_of for files() as a candidate folder's chain would resolve them:
/// `instances/<name>.in` are instance templates, the rest sources.
std::string content_hash_of_files(const spec::Family &family,
                                  const std::map<std::string, std::string> &files);

} // namespace kopt::candidate
