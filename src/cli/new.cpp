#include "candidate/checkout.hpp"
#include "candidate/new_candidate.hpp"
#include "cli/family_options.hpp"
#include "cli/subcommands.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct NewOptions {
  FamilyOptions family;
  candidate::NewRequest request;
  std::string from_patch;
  std::string from_worktree;
  std::string from_git;
  std::string from_dir;
};

// The base of the change: --base, or the candidate a checkout (`kopt checkout`) holds. A base
// other than the checkout's is refused: the change was made to the checkout's files.
std::string base_of(const LoadedFamily &loaded, candidate::ChangeKind kind,
                    const std::string &value, const std::string &given,
                    util::ProcessRunner &runner) {
  std::string held = candidate::checked_out(loaded.family, kind, value, runner);
  if (!held.empty() && !given.empty() && held != given) {
    throw Error(value + " holds candidate " + held + "'s files (kopt checkout): its change is " +
                "against " + held + ", not --base " + given +
                "; leave --base out, or give --base " + held);
  }
  if (!held.empty()) {
    return held;
  }
  if (given.empty()) {
    throw Error("new: give --base ID: " +
                (kind == candidate::ChangeKind::patch || kind == candidate::ChangeKind::git
                     ? std::string("a patch or commit does not say which candidate it changes")
                     : value + " is not a kopt checkout of family " + loaded.family.name) +
                " (kopt checkout --worktree DIR writes BEST's files where --from-worktree DIR "
                "finds its base)");
  }
  return given;
}

} // namespace

Handler setup_new(CLI::App &app) {
  auto options = std::make_shared<NewOptions>();
  options->family.add_to(app);
  app.add_option("--id", options->request.id, "the new candidate's id (two to 64 digits)")
      ->required();
  app.add_option("--base", options->request.base,
                 "the candidate the change applies to (its files fill in the rest); default for "
                 "--from-worktree and --from-dir: the candidate kopt checkout wrote there");
  auto *patch = app.add_option("--from-patch", options->from_patch,
                               "a patch (git diff [--binary], format-patch or diff -u)");
  auto *worktree = app.add_option("--from-worktree", options->from_worktree,
                                  "a git worktree of the family's repository: its changes "
                                  "against its HEAD, untracked files included");
  auto *git = app.add_option("--from-git", options->from_git,
                             "a commit (its change against its first parent) or a range A..B");
  auto *dir = app.add_option("--from-dir", options->from_dir,
                             "a folder of kopt checkout --dir: its files against its candidate's");
  patch->excludes(worktree)->excludes(git)->excludes(dir);
  worktree->excludes(git)->excludes(dir);
  git->excludes(dir);
  app.add_option("--hypothesis", options->request.hypothesis, "the idea, in one sentence");
  app.add_option("--target", options->request.target, "global, or the config class it targets")
      ->capture_default_str();
  app.add_option("--proposal", options->request.proposal,
                 "a repair of an incorrect candidate: the proposal it repairs (default: the id)");
  app.add_flag("--replace", options->request.replace, "replace an existing candidate folder");
  return [options](Context &context) {
    candidate::ChangeKind kind = candidate::ChangeKind::patch;
    std::string value = options->from_patch;
    if (!options->from_worktree.empty()) {
      kind = candidate::ChangeKind::worktree;
      value = options->from_worktree;
    } else if (!options->from_git.empty()) {
      kind = candidate::ChangeKind::git;
      value = options->from_git;
    } else if (!options->from_dir.empty()) {
      kind = candidate::ChangeKind::folder;
      value = options->from_dir;
    } else if (value.empty()) {
      throw Error(
          "new: give --from-patch FILE, --from-worktree DIR, --from-git REV or --from-dir DIR");
    }
    LoadedFamily loaded = load_family(options->family);
    ledger::Best best = loaded.best();
    util::RealProcessRunner runner;
    options->request.base = base_of(loaded, kind, value, options->request.base, runner);
    candidate::Change change = kind == candidate::ChangeKind::folder
                                   ? candidate::folder_change(loaded.family, loaded.candidates,
                                                              options->request.base, value, runner)
                                   : candidate::read_change(loaded.family, kind, value, runner);
    candidate::NewCandidate made = candidate::make_candidate(
        loaded.family, loaded.candidates, best.id, best.hash, change, options->request, runner);
    for (const candidate::Dropped &d : made.dropped) {
      context.err << "kopt: warning: dropped " << d.path << " ("
                  << (d.reason == "binary" ? "a binary change" : "a generated folder's file")
                  << "): a candidate holds text sources only\n";
    }
    if (context.json) {
      nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
      for (const candidate::Dropped &d : made.dropped) {
        dropped.push_back({{"path", d.path}, {"reason", d.reason}});
      }
      context.out << nlohmann::ordered_json{{"candidate", options->request.id},
                                            {"dir", made.dir.string()},
                                            {"base", options->request.base},
                                            {"files", made.files},
                                            {"dropped", dropped},
                                            {"hash", made.hash}}
                         .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << "\n";
    } else {
      context.out << "wrote candidate " << options->request.id << " (" << made.dir.string()
                  << ", base " << options->request.base << "): " << util::join(made.files, ", ")
                  << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
