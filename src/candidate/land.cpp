#include "candidate/land.hpp"

#include "candidate/checkout.hpp"
#include "candidate/git.hpp"
#include "candidate/land_journal.hpp"
#include "candidate/new_candidate.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace kopt::candidate {

namespace fs = std::filesystem;

namespace {

// The files of `mine` that the landed files do not hold as they are.
std::map<std::string, std::string> differing(const std::map<std::string, std::string> &mine,
                                             const std::map<std::string, std::string> &landed) {
  std::map<std::string, std::string> out;
  for (const auto &[rel, bytes] : mine) {
    auto it = landed.find(rel);
    if (it == landed.end() || it->second != bytes) {
      out[rel] = bytes;
    }
  }
  return out;
}

} // namespace

std::vector<std::string> LandPlan::rebased_ids() const {
  std::vector<std::string> ids;
  for (const auto &[id, files] : rebased) {
    ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> LandPlan::touched_ids() const {
  std::vector<std::string> ids = rebased_ids();
  ids.insert(ids.end(), removed.begin(), removed.end());
  ids.push_back(id);
  return ids;
}

LandPlan plan_land(const spec::Family &family, const CandidateSet &candidates,
                   const std::string &id, const std::set<std::string> &settled,
                   bool drop_unrecorded) {
  LandPlan plan;
  plan.id = id;
  plan.hash = candidates.content_hash(family, id);
  plan.files = candidates.files(family, id);
  for (const auto &[rel, bytes] : plan.files) {
    std::error_code ec;
    fs::path now = family.dir / rel;
    if (!fs::exists(now, ec) || util::read_file(now) != bytes) {
      plan.written.push_back(rel);
    }
  }
  std::set<std::string> chain;
  for (const Candidate *c : candidates.chain(id)) {
    chain.insert(c->id());
  }
  std::vector<std::string> stuck;
  for (const Candidate &c : candidates.all()) {
    if (c.id() == id) {
      continue;
    }
    if (chain.count(c.id()) || settled.count(c.id()) || drop_unrecorded) {
      plan.removed.push_back(c.id());
      continue;
    }
    if (c.spec.base == id && chain.size() == 1) {
      continue; // on the landed candidate already, which is the baseline: nothing to rebase
    }
    std::map<std::string, std::string> mine = candidates.files(family, c.id());
    std::map<std::string, std::string> kept = differing(mine, plan.files);
    std::map<std::string, std::string> after = plan.files;
    for (const auto &[rel, bytes] : kept) {
      after[rel] = bytes;
    }
    if (content_hash_of_files(family, after) != candidates.content_hash(family, c.id())) {
      stuck.push_back(c.id());
      continue;
    }
    plan.rebased[c.id()] = std::move(kept);
  }
  if (!stuck.empty()) {
    throw Error("land: candidates " + util::join(stuck, ", ") + " cannot keep their content on " +
                id + "'s files (" + id +
                " overrides an instance template they do not): record them first, or give "
                "--drop-unrecorded; nothing written");
  }
  return plan;
}

void apply_land(const spec::Family &family, const CandidateSet &candidates, const LandPlan &plan) {
  apply_tree(family, journal_of(candidates, plan));
}

std::map<std::string, std::string> removed_patches(const spec::Family &family,
                                                   const CandidateSet &candidates,
                                                   const LandPlan &plan,
                                                   util::ProcessRunner &runner) {
  std::map<std::string, std::string> patches;
  for (const std::string &gone : plan.removed) {
    const std::string &base = candidates.get(gone).spec.base;
    if (base.empty()) {
      continue; // the old baseline: its files are the family's before the landing
    }
    patches[gone] =
        "# candidate " + gone + " of " + family.name + " against its base " + base + ": " +
        candidates.get(gone).spec.hypothesis + "\n" +
        diff_files(candidates.files(family, base), candidates.files(family, gone), runner);
  }
  return patches;
}

std::vector<std::string> uncommitted(const spec::Family &family,
                                     const std::vector<std::string> &rels,
                                     util::ProcessRunner &runner) {
  RepoPlace place = repo_place(family.dir, runner);
  if (place.top.empty() || rels.empty()) {
    return {};
  }
  std::vector<std::string> args = {"status",       "--porcelain=v1",        "-z",
                                   "--no-renames", "--untracked-files=all", "--"};
  for (const std::string &rel : rels) {
    args.push_back(fs::absolute(family.dir / rel).lexically_normal().string());
  }
  std::string out = git_or_throw(runner, place.top, args, "land");
  std::vector<std::string> changed;
  for (const std::string &entry : util::split(out, '\0')) {
    if (entry.size() < 4) {
      continue;
    }
    std::string rel = entry.substr(3);
    rel = rel.starts_with(place.prefix) ? rel.substr(place.prefix.size()) : rel;
    std::string how = entry.starts_with("??") ? "untracked"
                      : entry[0] != ' '       ? "staged"
                                              : "modified";
    changed.push_back(rel + " (" + how + ")");
  }
  return changed;
}

std::vector<fs::path> landed_paths(const spec::Family &family, const LandPlan &plan,
                                   bool folders_only) {
  std::vector<fs::path> paths;
  if (!folders_only) {
    for (const std::string &rel : plan.written) {
      paths.push_back(family.dir / rel);
    }
  }
  for (const std::string &id : plan.touched_ids()) {
    paths.push_back(family.candidates_dir / id);
  }
  return paths;
}

std::string commit_paths(const spec::Family &family, const std::vector<fs::path> &paths,
                         const std::string &message, util::ProcessRunner &runner) {
  RepoPlace place = repo_place(family.dir, runner);
  if (place.top.empty()) {
    throw Error(family.dir.string() + ": the family folder is not in a git repository, so " +
                "--commit cannot commit: leave it out and keep the change as your tree does");
  }
  const std::string what = "land --commit";
  TempFolder temp("kopt-index");
  GitEnv own = {{"GIT_INDEX_FILE", (temp.path() / "index").string()}};
  bool born = git(runner, place.top, {"rev-parse", "-q", "--verify", "HEAD"}).ok();
  git_or_throw(runner, place.top, {"read-tree", born ? "HEAD" : "--empty"}, what, own);
  // A path neither on disk nor in HEAD (a folder never committed, now removed) holds no change.
  std::vector<std::string> specs;
  for (const fs::path &p : paths) {
    std::string path = fs::absolute(p).lexically_normal().string();
    std::error_code ec;
    if (fs::exists(fs::symlink_status(p, ec)) ||
        !git_or_throw(runner, place.top, {"ls-files", "--", path}, what, own).empty()) {
      specs.push_back(path);
    }
  }
  if (specs.empty()) {
    return "";
  }
  std::vector<std::string> add = {"add", "-A", "--"};
  add.insert(add.end(), specs.begin(), specs.end());
  git_or_throw(runner, place.top, add, what, own);
  bool changed = !git(runner, place.top, {"diff", "--cached", "--quiet"}, own).ok();
  if (changed) {
    // The user's identity when git has one: the landing is their change to their tree.
    std::vector<std::string> commit = {"commit", "-q", "-m", message};
    if (!git(runner, place.top, {"config", "user.email"}).ok()) {
      commit.insert(commit.begin(), {"-c", "user.name=kopt", "-c", "user.email=kopt@localhost"});
    }
    git_or_throw(runner, place.top, commit, what, own);
  }
  // The user's index follows HEAD for these paths, also when a killed landing committed them
  // and stopped before this; their other staged changes stay as they were.
  std::vector<std::string> reset = {"reset", "-q", "HEAD", "--"};
  reset.insert(reset.end(), specs.begin(), specs.end());
  if (born || changed) {
    git_or_throw(runner, place.top, reset, what);
  }
  if (!changed) {
    return "";
  }
  return std::string(util::trim(git_or_throw(runner, place.top, {"rev-parse", "HEAD"}, what)));
}

} // namespace kopt::candidate
