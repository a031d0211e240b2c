#include "candidate/checkout.hpp"
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

struct CheckoutOptions {
  FamilyOptions family;
  std::string id;
  std::string worktree;
  std::string dir;
  bool replace = false;
};

} // namespace

Handler setup_checkout(CLI::App &app) {
  auto options = std::make_shared<CheckoutOptions>();
  options->family.add_to(app);
  app.add_option("--id", options->id, "the candidate whose files to write (default: BEST)");
  auto *worktree = app.add_option(
      "--worktree", options->worktree,
      "a new git worktree of the family's repository, with the candidate's files committed");
  auto *dir = app.add_option("--dir", options->dir,
                             "a plain folder for the candidate's files (no git needed)");
  worktree->excludes(dir);
  app.add_flag("--replace", options->replace,
               "reuse an earlier checkout of this family there (its changes are discarded)");
  return [options](Context &context) {
    if (options->worktree.empty() && options->dir.empty()) {
      throw Error("checkout: give --worktree DIR (a git worktree) or --dir DIR (a plain folder)");
    }
    LoadedFamily loaded = load_family(options->family);
    std::string id = options->id.empty() ? loaded.best().id : options->id;
    loaded.candidates.get(id); // an unknown id is named before anything is written
    util::RealProcessRunner runner;
    candidate::Existing existing =
        options->replace ? candidate::Existing::replace : candidate::Existing::refuse;
    candidate::Checkout made =
        options->worktree.empty()
            ? candidate::checkout_folder(loaded.family, loaded.candidates, id, options->dir,
                                         existing)
            : candidate::checkout_worktree(loaded.family, loaded.candidates, id, options->worktree,
                                           runner, existing);
    const std::string &hash = made.hash;
    std::string from = options->worktree.empty() ? "--from-dir " + options->dir
                                                 : "--from-worktree " + options->worktree;
    if (context.json) {
      context.out << nlohmann::ordered_json{{"candidate", id},
                                            {"hash", hash},
                                            {"dir", made.dir.string()},
                                            {"family_dir", made.family_dir.string()},
                                            {"commit", made.commit.empty()
                                                           ? nlohmann::ordered_json(nullptr)
                                                           : nlohmann::ordered_json(made.commit)},
                                            {"files", made.files}}
                         .dump(2)
                  << "\n";
    } else {
      context.out << "candidate " << id << " (hash " << hash.substr(0, 8) << ") in "
                  << made.family_dir.string() << ": " << util::join(made.files, ", ") << "\n"
                  << "edit there, then: kopt new --id <new id> " << from << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
