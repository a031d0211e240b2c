#include "candidate/checkout.hpp"

#include "candidate/git.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kopt::candidate {

namespace fs = std::filesystem;

namespace {

bool empty_or_missing(const fs::path &dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) || (fs::is_directory(dir, ec) && fs::is_empty(dir, ec));
}

std::vector<std::string> names_of(const std::map<std::string, std::string> &files) {
  std::vector<std::string> names;
  for (const auto &[rel, bytes] : files) {
    names.push_back(rel);
  }
  return names;
}

// The family, candidate and hash a folder's marker names; empty fields when it has none.
nlohmann::json marker_of(const fs::path &dir) {
  // A marker that is a symlink marks nothing: it may name another folder's checkout.
  if (!why_not_plain_inside(dir, kCheckoutMarker, Missing::refused).empty()) {
    return nlohmann::json::object();
  }
  nlohmann::json j = util::read_json(dir / kCheckoutMarker);
  return j.is_object() ? j : nlohmann::json::object();
}

// A git tree object of `files` in the scratch repository `repo` (its files and index are
// rewritten).
std::string tree_of(util::ProcessRunner &runner, const fs::path &repo,
                    const std::map<std::string, std::string> &files) {
  fs::path work = repo;
  for (const auto &entry : fs::directory_iterator(work)) {
    if (entry.path().filename() != ".git") {
      fs::remove_all(entry.path());
    }
  }
  write_files(work, files);
  // -A stages the other side's files that this one lacks as removed.
  git_or_throw(runner, work, {"add", "-A", "."}, "diff");
  return std::string(util::trim(git_or_throw(runner, work, {"write-tree"}, "diff")));
}

// A checkout inside the family's folder would become part of the family: a candidate folder
// kopt reads, or a repository that `land --commit` commits as an embedded one.
void refuse_inside_family(const spec::Family &family, const fs::path &dir) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(family.dir, ec);
  fs::path target = fs::weakly_canonical(fs::absolute(dir), ec);
  fs::path inside = target.lexically_relative(root);
  if (!ec && !inside.empty() && inside.begin()->string() != "..") {
    throw Error(dir.string() + ": inside the family's folder " + family.dir.string() +
                ", where a checkout would become part of the family: choose a folder outside it");
  }
}

} // namespace

Checkout checkout_folder(const spec::Family &family, const CandidateSet &candidates,
                         const std::string &id, const fs::path &dir, Existing existing) {
  refuse_inside_family(family, dir);
  std::map<std::string, std::string> files = candidates.files(family, id);
  if (!empty_or_missing(dir)) {
    nlohmann::json marker = marker_of(dir);
    if (existing != Existing::replace || marker.value("family", "") != family.name) {
      throw Error(dir.string() + ": the folder exists and is not empty: choose another, or give " +
                  "--replace to overwrite an earlier checkout of family " + family.name);
    }
    // The earlier checkout's files go (the agent's edits with them: --replace says so).
    for (const auto &entry : fs::directory_iterator(dir)) {
      fs::remove_all(entry.path());
    }
  }
  fs::create_directories(dir);
  write_files(dir, files);
  std::string hash = candidates.content_hash(family, id);
  util::write_file_atomic(dir / kCheckoutMarker,
                          util::dump_json(nlohmann::ordered_json{
                              {"family", family.name}, {"candidate", id}, {"hash", hash}}) +
                              "\n");
  return {dir, dir, "", names_of(files), hash};
}

Checkout checkout_worktree(const spec::Family &family, const CandidateSet &candidates,
                           const std::string &id, const fs::path &dir, util::ProcessRunner &runner,
                           Existing existing) {
  refuse_inside_family(family, dir);
  RepoPlace place = repo_place(family.dir, runner);
  if (place.top.empty()) {
    throw Error(family.dir.string() +
                ": the family folder is not in a git repository (--worktree " +
                "makes a git worktree of it; --dir writes a plain folder)");
  }
  std::string what = "checkout --worktree " + dir.string();
  std::string head =
      std::string(util::trim(git_or_throw(runner, place.top, {"rev-parse", "HEAD"}, what)));
  if (empty_or_missing(dir)) {
    git_or_throw(runner, place.top,
                 {"worktree", "add", "--detach", fs::absolute(dir).string(), head}, what);
  } else if (existing == Existing::replace &&
             !checked_out(family, ChangeKind::worktree, dir, runner).empty()) {
    git_or_throw(runner, dir, {"reset", "-q", "--hard", head}, what);
  } else {
    throw Error(dir.string() + ": the folder exists and is not empty: choose another, or give " +
                "--replace to reset an earlier checkout worktree of family " + family.name +
                " (its changes are discarded)");
  }
  std::map<std::string, std::string> files = candidates.files(family, id);
  fs::path family_dir = dir / place.prefix;
  write_files(family_dir, files);
  std::vector<std::string> add = {"add", "-f", "--"};
  for (const auto &[rel, bytes] : files) {
    add.push_back(place.prefix + rel);
  }
  git_or_throw(runner, dir, add, what);
  std::string hash = candidates.content_hash(family, id);
  git_or_throw(runner, dir,
               {"-c", "user.name=kopt", "-c", "user.email=kopt@localhost", "-c",
                "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m",
                "kopt: candidate " + id + " of " + family.name, "-m",
                "Kopt-Family: " + family.name + "\nKopt-Candidate: " + id + "\nKopt-Hash: " + hash},
               what);
  std::string commit =
      std::string(util::trim(git_or_throw(runner, dir, {"rev-parse", "HEAD"}, what)));
  return {dir, family_dir, commit, names_of(files), hash};
}

std::string checked_out(const spec::Family &family, ChangeKind kind, const fs::path &dir,
                        util::ProcessRunner &runner) {
  if (kind == ChangeKind::folder) {
    nlohmann::json marker = marker_of(dir);
    return marker.value("family", "") == family.name ? marker.value("candidate", "") : "";
  }
  if (kind != ChangeKind::worktree) {
    return "";
  }
  util::ProcessResult result =
      git(runner, dir,
          {"log", "-1",
           "--format=%(trailers:key=Kopt-Family,valueonly)%x00%(trailers:key=Kopt-"
           "Candidate,valueonly)"});
  if (!result.ok()) {
    return "";
  }
  std::vector<std::string> parts = util::split(result.out, '\0');
  if (parts.size() != 2 || util::trim(parts[0]) != family.name) {
    return "";
  }
  return std::string(util::trim(parts[1]));
}

std::string diff_files(const std::map<std::string, std::string> &from,
                       const std::map<std::string, std::string> &to, util::ProcessRunner &runner) {
  TempFolder temp("kopt-diff");
  git_or_throw(runner, temp.path(), {"init", "-q"}, "diff");
  std::string a = tree_of(runner, temp.path(), from);
  std::string b = tree_of(runner, temp.path(), to);
  return git_or_throw(runner, temp.path(),
                      {"diff", "--no-color", "--no-ext-diff", "--no-renames", "--binary", a, b},
                      "diff");
}

Change folder_change(const spec::Family &family, const CandidateSet &candidates,
                     const std::string &base, const fs::path &dir, util::ProcessRunner &runner) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error("--from-dir " + dir.string() + ": no such folder");
  }
  std::map<std::string, std::string> before = candidates.files(family, base);
  std::map<std::string, std::string> after = before;
  // Folders are walked, never followed: a symlink or a device is refused, not read through.
  std::vector<std::string> refused;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    std::string rel = entry.path().lexically_relative(dir).generic_string();
    fs::file_status status = entry.symlink_status();
    if (fs::is_directory(status) || rel == kCheckoutMarker) {
      continue;
    }
    std::string why = util::has_hidden_characters(rel)
                          ? std::string(kHiddenName)
                          : why_not_plain_inside(dir, rel, Missing::refused);
    if (!why.empty()) {
      // A generated folder's links (a build folder's) are dropped unread, as its files are.
      if (!is_generated_path(rel)) {
        refused.push_back(util::quote_hidden(rel) + " " + why);
      }
      continue;
    }
    after[rel] = util::read_file(entry.path());
  }
  std::string what = "--from-dir " + dir.string();
  if (!refused.empty()) {
    std::sort(refused.begin(), refused.end());
    throw Error(what + ": refused: a candidate takes regular files inside the folder only: " +
                util::join_capped(refused, "; ") + "; nothing written");
  }
  return {diff_files(before, after, runner), what, {}};
}

} // namespace kopt::candidate
