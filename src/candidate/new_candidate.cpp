#include "candidate/new_candidate.hpp"

#include "candidate/git.hpp"
#include "candidate/patch.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

namespace kopt::candidate {

namespace fs = std::filesystem;

namespace {

std::string diff_args_text(util::ProcessRunner &runner, const fs::path &top,
                           std::vector<std::string> args, const std::string &prefix,
                           const std::string &what) {
  std::vector<std::string> full = {"diff", "--no-color", "--no-ext-diff", "--no-renames",
                                   "--binary"};
  full.insert(full.end(), args.begin(), args.end());
  full.push_back("--");
  full.push_back(prefix.empty() ? "." : prefix);
  return git_or_throw(runner, top, full, what);
}

// A section that creates `path` with `bytes`, as git would write it (text), or a binary marker.
std::string new_file_section(const std::string &path, const std::string &bytes) {
  std::string head = "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\n";
  if (bytes.find('\0') != std::string::npos) {
    return head + "Binary files /dev/null and b/" + path + " differ\n";
  }
  if (bytes.empty()) {
    return head;
  }
  std::vector<std::string> lines = util::split(bytes, '\n');
  bool newline_at_end = bytes.back() == '\n';
  if (newline_at_end) {
    lines.pop_back();
  }
  std::string out = head + "--- /dev/null\n+++ b/" + path + "\n@@ -0,0 +1," +
                    std::to_string(lines.size()) + " @@\n";
  for (const auto &line : lines) {
    out += "+" + line + "\n";
  }
  return newline_at_end ? out : out + "\\ No newline at end of file\n";
}

bool is_instance_template(const spec::Family &family, const std::string &rel) {
  if (!rel.starts_with("instances/") || !rel.ends_with(".in")) {
    return false;
  }
  std::string name = rel.substr(10, rel.size() - 13);
  return name.find('/') == std::string::npos && family.find_instance(name) != nullptr;
}

bool is_editable(const spec::Family &family, const std::string &rel) {
  return rel == family.kernel_template ||
         std::find(family.editable.begin(), family.editable.end(), rel) != family.editable.end() ||
         is_instance_template(family, rel);
}

// Where a patch path lands in the family folder: "" when it leaves the folder (`why` says how).
std::string family_relative(const spec::Family &family, const RepoPlace &place, bool repo_paths,
                            const std::string &path, std::string &why) {
  if (path.starts_with("/")) {
    why = "an absolute path";
    return "";
  }
  std::string rel = path;
  if (repo_paths) {
    if (!rel.starts_with(place.prefix)) {
      why = "outside the family folder " + place.prefix + " of the repository";
      return "";
    }
    rel = rel.substr(place.prefix.size());
  }
  fs::path normal = fs::path(rel).lexically_normal();
  if (normal.empty() || normal.begin()->string() == ".." || normal.is_absolute()) {
    why = "leaves the family folder";
    return "";
  }
  // A symlink inside the folder may point out of it.
  std::error_code ec;
  fs::path root = fs::weakly_canonical(family.dir, ec);
  fs::path real = fs::weakly_canonical(family.dir / normal, ec);
  fs::path inside = real.lexically_relative(root);
  if (ec || inside.empty() || inside.begin()->string() == "..") {
    why = "leaves the family folder through a symlink (to " + real.string() + ")";
    return "";
  }
  return normal.generic_string();
}

// Applies `patch` with the real `git apply` to a temporary copy of `files`; returns the files
// after it.
std::map<std::string, std::string> apply(const std::map<std::string, std::string> &files,
                                         const std::string &patch, const std::string &what,
                                         util::ProcessRunner &runner) {
  TempFolder temp("kopt-new");
  const fs::path &tmp = temp.path();
  fs::path work = tmp / "w";
  write_files(work, files);
  fs::create_directories(work);
  util::write_file_atomic(tmp / "change.patch", patch);
  // A repository of its own, so that git applies relative to this folder and nowhere else.
  git_or_throw(runner, work, {"init", "-q"}, what);
  util::ProcessResult result =
      git(runner, work, {"apply", "--whitespace=nowarn", (tmp / "change.patch").string()});
  if (!result.ok()) {
    throw Error(what + ": " + std::string(util::trim(result.err)));
  }
  std::map<std::string, std::string> after;
  for (const auto &entry : fs::recursive_directory_iterator(work)) {
    std::string rel = entry.path().lexically_relative(work).generic_string();
    if (rel.starts_with(".git")) {
      continue;
    }
    if (entry.is_regular_file()) {
      after[rel] = util::read_file(entry.path());
    }
  }
  return after;
}

std::string line_of(const Change &change, const PatchFile &f) {
  return change.source + ":" + std::to_string(f.line);
}

// Each file's path relative to the family folder (the new path's, else the old's). Every path is
// checked before anything else: one that reaches outside the family folder refuses the whole
// patch, naming each such path.
std::vector<std::string> family_paths(const spec::Family &family,
                                      const std::vector<PatchFile> &files, const Change &change,
                                      util::ProcessRunner &runner) {
  RepoPlace place = repo_place(family.dir, runner);
  bool repo_paths =
      !place.prefix.empty() && std::any_of(files.begin(), files.end(), [&](const PatchFile &f) {
        return f.path().starts_with(place.prefix);
      });
  std::vector<std::string> hidden;
  std::vector<std::string> escapes;
  std::vector<std::string> rel(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    for (const std::string *p : {&files[i].old_path, &files[i].new_path}) {
      std::string why;
      if (p->empty()) {
        continue;
      }
      if (util::has_hidden_characters(*p)) {
        hidden.push_back(util::quote_hidden(*p) + " (" + line_of(change, files[i]) + ")");
        continue;
      }
      std::string r = family_relative(family, place, repo_paths, *p, why);
      if (r.empty()) {
        escapes.push_back(*p + " (" + line_of(change, files[i]) + ": " + why + ")");
      } else if (p == &files[i].new_path || rel[i].empty()) {
        rel[i] = r;
      }
    }
  }
  if (!hidden.empty()) {
    throw Error(change.source +
                ": refused: a path holds a control, bidirectional or invisible "
                "character (shown escaped), which a message or a terminal would not show as it "
                "is: " +
                util::join_capped(hidden, "; ") + "; nothing written");
  }
  if (!escapes.empty()) {
    throw Error(change.source + ": refused: the change reaches outside the family folder " +
                family.dir.string() + ": " + util::join_capped(escapes, "; ") +
                "; nothing written");
  }
  return rel;
}

// Why section `f`, a change of `rel`, cannot make a candidate: a rename, a copy, a deletion, or
// a symbolic link (git writes a file turned into one as its deletion and a new link); "" when
// it can.
std::string whole_file_refusal(const PatchFile &f, const std::vector<PatchFile> &files,
                               const std::string &rel) {
  std::string name = util::quote_hidden(rel);
  if (f.copied) {
    return name + ": copies are not supported: the change copies " +
           util::quote_hidden(f.old_path) +
           " to it (git diff -C); give the new file whole instead (git diff --no-renames)";
  }
  if (f.renamed) {
    return name + ": a candidate cannot rename a file";
  }
  bool link = f.new_mode == "120000" ||
              (f.new_path.empty() && std::any_of(files.begin(), files.end(), [&](const auto &g) {
                 return g.new_mode == "120000" && g.new_path == f.old_path;
               }));
  if (link) {
    return name + " is a symbolic link: a candidate holds regular files only";
  }
  return f.new_path.empty() ? name + ": a candidate cannot delete a file" : "";
}

// The refusal of a change that touches `refused`, files that are not editable: the first ten
// named, and the family's editable files.
std::string not_editable(const spec::Family &family, const Change &change,
                         const std::vector<std::string> &refused) {
  std::vector<std::string> editable = family.editable;
  if (std::find(editable.begin(), editable.end(), family.kernel_template) == editable.end()) {
    editable.push_back(family.kernel_template);
  }
  return change.source + ": refused: the change touches files that are not editable: " +
         util::join_capped(refused, ", ") + " (family " + family.name +
         "'s editable files: " + util::join(editable, ", ") +
         ", and instances/<instance>.in); nothing written";
}

// The pid a staging folder's name ends with (`.new-<id>-<pid>`, `.old-<id>-<pid>`), 0 if none.
pid_t staging_pid(const std::string &name) {
  if (!name.starts_with(".new-") && !name.starts_with(".old-")) {
    return 0;
  }
  size_t dash = name.rfind('-');
  std::string digits = name.substr(dash + 1);
  if (dash <= 5 || digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return static_cast<pid_t>(std::stol(digits));
}

} // namespace

int sweep_staging(const fs::path &parent) {
  std::error_code ec;
  std::vector<fs::path> left;
  for (const auto &entry : fs::directory_iterator(parent, ec)) {
    pid_t pid = staging_pid(entry.path().filename().string());
    if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      left.push_back(entry.path());
    }
  }
  for (const fs::path &path : left) {
    std::string name = path.filename().string();
    fs::path dir = parent / name.substr(5, name.rfind('-') - 5);
    if (name.starts_with(".old-") && !fs::exists(dir, ec)) {
      fs::rename(path, dir);
    } else {
      fs::remove_all(path);
    }
  }
  return static_cast<int>(left.size());
}

bool is_generated_path(const std::string &path) {
  for (const auto &part : fs::path(path)) {
    std::string name = part.string();
    if (name == "build" || name.starts_with("build-") || name.starts_with("build_") ||
        name.starts_with("cmake-build-") || name == "CMakeFiles" || name == "__pycache__" ||
        name == ".git" || name == ".cache" || name == "_deps") {
      return true;
    }
  }
  return false;
}

std::string candidate_json(const NewRequest &request) {
  nlohmann::ordered_json j = {{"id", request.id}};
  if (!request.base.empty()) {
    j["base"] = request.base;
  }
  j["hypothesis"] = request.hypothesis;
  j["target"] = request.target;
  if (!request.proposal.empty()) {
    j["proposal"] = request.proposal;
  }
  return util::dump_json(j) + "\n";
}

void write_folder_whole(const fs::path &dir, const std::map<std::string, std::string> &files) {
  fs::path parent = dir.parent_path();
  sweep_staging(parent);
  std::string pid = std::to_string(::getpid());
  fs::path staging = parent / (".new-" + dir.filename().string() + "-" + pid);
  fs::remove_all(staging);
  fs::create_directories(staging);
  write_files(staging, files);
  // The folder appears whole (hidden folders are not candidates until the rename).
  fs::path old = parent / (".old-" + dir.filename().string() + "-" + pid);
  if (fs::exists(dir)) {
    fs::rename(dir, old);
  }
  fs::rename(staging, dir);
  fs::remove_all(old);
}

void write_candidate_folder(const fs::path &dir, const NewRequest &request,
                            const std::map<std::string, std::string> &changed) {
  std::map<std::string, std::string> files = changed;
  files["candidate.json"] = candidate_json(request);
  write_folder_whole(dir, files);
}

Change read_change(const spec::Family &family, ChangeKind kind, const std::string &value,
                   util::ProcessRunner &runner) {
  if (kind == ChangeKind::patch) {
    return {util::read_file(value), value, {}};
  }
  RepoPlace place = repo_place(family.dir, runner);
  if (place.top.empty()) {
    throw Error(family.dir.string() + ": the family folder is not in a git repository (--from-" +
                std::string(kind == ChangeKind::git ? "git" : "worktree") +
                " reads its changes with git)");
  }
  if (kind == ChangeKind::git) {
    std::vector<std::string> range = value.find("..") != std::string::npos
                                         ? std::vector<std::string>{value}
                                         : std::vector<std::string>{value + "^", value};
    return {diff_args_text(runner, place.top, range, place.prefix, "--from-git " + value),
            "git " + value,
            {}};
  }
  std::string what = "--from-worktree " + value;
  fs::path top = util::trim(git_or_throw(runner, value, {"rev-parse", "--show-toplevel"}, what));
  Change change{diff_args_text(runner, top, {"HEAD"}, place.prefix, what), "worktree " + value, {}};
  // Untracked files git does not ignore are part of the change; ignored ones are not.
  std::string untracked = git_or_throw(runner, top,
                                       {"ls-files", "--others", "--exclude-standard", "-z", "--",
                                        place.prefix.empty() ? "." : place.prefix},
                                       what);
  std::vector<std::string> refused;
  for (const auto &path : util::split(untracked, '\0')) {
    if (path.empty()) {
      continue;
    }
    if (util::has_hidden_characters(path)) {
      refused.push_back(util::quote_hidden(path) + " " + kHiddenName);
      continue;
    }
    if (is_generated_path(path.substr(place.prefix.size()))) {
      change.text += new_file_section(path, std::string(1, '\0'));
      continue;
    }
    // git lists an untracked symlink as a file: its target is no part of the worktree.
    std::string why = why_not_plain_inside(top, path, Missing::refused);
    if (!why.empty()) {
      refused.push_back(util::quote_hidden(path) + " " + why);
      continue;
    }
    change.text += new_file_section(path, util::read_file(top / path));
  }
  if (!refused.empty()) {
    throw Error(what + ": refused: a candidate takes regular files inside the worktree only: " +
                util::join_capped(refused, "; ") + "; nothing written");
  }
  return change;
}

NewCandidate make_candidate(const spec::Family &family, const CandidateSet &candidates,
                            const std::string &best_id, const std::string &best_hash,
                            const Change &change, const NewRequest &request,
                            util::ProcessRunner &runner) {
  if (!spec::is_canonical_candidate_id(request.id)) {
    throw Error("--id: expected " + spec::candidate_id_rule() +
                " without a leading zero beyond two (07, 123), got '" + util::excerpt(request.id) +
                "'");
  }
  const Candidate &base = candidates.get(request.base);
  fs::path dir = family.candidates_dir / request.id;
  if (fs::exists(dir) && !request.replace) {
    throw Error("candidate " + request.id + " exists (" + dir.string() +
                "): choose another --id, or give --replace");
  }
  if (request.id == best_id) {
    throw Error("candidate " + request.id + " is BEST: it cannot be replaced");
  }

  std::vector<PatchFile> files = parse_patch(change.text, change.source);
  std::vector<std::string> rel = family_paths(family, files, change, runner);

  NewCandidate result;
  std::vector<std::string> refused;
  std::string kept;
  for (size_t i = 0; i < files.size(); ++i) {
    const PatchFile &f = files[i];
    if (is_generated_path(rel[i])) {
      result.dropped.push_back({rel[i], "generated"});
    } else if (f.binary) {
      result.dropped.push_back({rel[i], "binary"});
    } else if (!is_editable(family, rel[i])) {
      refused.push_back(util::quote_hidden(rel[i]));
    } else if (std::string why = whole_file_refusal(f, files, rel[i]); !why.empty()) {
      throw Error(line_of(change, f) + ": " + why + "; refused, nothing written");
    } else if (!f.hunks.empty()) {
      kept += rewrite_patch(f, rel[i]);
    }
  }
  if (!refused.empty()) {
    throw Error(not_editable(family, change, refused));
  }

  std::map<std::string, std::string> before = candidates.files(family, base.id());
  std::map<std::string, std::string> after =
      kept.empty() ? before
                   : apply(before, kept,
                           change.source + ": the change does not apply to candidate " + base.id() +
                               "'s files",
                           runner);
  std::map<std::string, std::string> changed;
  for (const auto &[name, bytes] : after) {
    auto was = before.find(name);
    if (was == before.end() || was->second != bytes) {
      changed[name] = bytes;
    }
  }
  if (changed.empty()) {
    throw Error(change.source + ": no change: candidate " + base.id() +
                "'s files stay as they are; nothing written");
  }
  result.hash = content_hash_of_files(family, after);
  if (result.hash == best_hash) {
    throw Error(change.source + ": no change: the result equals BEST " + best_id +
                "'s content (hash " + best_hash.substr(0, 8) + "); nothing written");
  }
  // An unrecorded candidate of the same content would be measured and decided twice.
  for (const Candidate &other : candidates.all()) {
    if (other.id() != request.id && candidates.content_hash(family, other.id()) == result.hash) {
      throw Error(change.source + ": no change: the result equals candidate " + other.id() +
                  "'s content (hash " + result.hash.substr(0, 8) + "); nothing written");
    }
  }
  write_candidate_folder(dir, request, changed);
  result.dir = dir;
  for (const auto &[name, bytes] : changed) {
    result.files.push_back(name);
  }
  return result;
}

} // namespace kopt::candidate
