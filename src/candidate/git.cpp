#include "candidate/git.hpp"

#include "util/error.hpp"
#include "util/temp_root.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace kopt::candidate {

namespace fs = std::filesystem;

util::ProcessResult git(util::ProcessRunner &runner, const fs::path &dir,
                        const std::vector<std::string> &args, const GitEnv &env) {
  util::Command command;
  command.env = env;
  command.argv = {"git",
                  "-C",
                  dir.string(),
                  "-c",
                  "core.quotepath=off",
                  "-c",
                  "diff.noprefix=false",
                  "-c",
                  "diff.mnemonicprefix=false",
                  "-c",
                  "color.ui=false"};
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  command.timeout_s = 120;
  return runner.run(command);
}

std::string git_or_throw(util::ProcessRunner &runner, const fs::path &dir,
                         const std::vector<std::string> &args, const std::string &what,
                         const GitEnv &env) {
  util::ProcessResult result = git(runner, dir, args, env);
  if (!result.ok()) {
    throw Error(what + ": `git " + util::join(args, " ") + "` in " + dir.string() + " " +
                result.describe(120) + ": " + std::string(util::trim(result.err)));
  }
  return result.out;
}

RepoPlace repo_place(const fs::path &dir, util::ProcessRunner &runner) {
  util::ProcessResult result = git(runner, dir, {"rev-parse", "--show-toplevel", "--show-prefix"});
  if (!result.ok()) {
    return {};
  }
  std::vector<std::string> lines = util::split(util::trim(result.out), '\n');
  return {lines.empty() ? fs::path() : fs::path(lines[0]),
          lines.size() > 1 ? std::string(util::trim(lines[1])) : ""};
}

TempFolder::TempFolder(const std::string &stem) {
  fs::path root = util::temp_root();
  std::string pattern = (root / (stem + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const char *tmpdir = std::getenv("TMPDIR");
    throw Error("cannot make a temporary folder in " + root.string() + " (" + std::strerror(errno) +
                ")" + (tmpdir != nullptr && *tmpdir != '\0' ? ", which TMPDIR names" : "") +
                ": set TMPDIR to a folder kopt can write");
  }
  path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

} // namespace kopt::candidate
