#pragma once

#include "util/process.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kopt::candidate {

/// Extra environment of a git command (GIT_INDEX_FILE for an index of kopt's own).
using GitEnv = std::map<std::string, std::string>;

/// Runs `git -C dir args...` with the settings of the user's git that change a diff's text
/// pinned (quoted paths, prefixes, colour), and `env` added to the environment.
util::ProcessResult git(util::ProcessRunner &runner, const std::filesystem::path &dir,
                        const std::vector<std::string> &args, const GitEnv &env = {});

/// git() that throws kopt::Error `what: `git args` in dir failed ...: <git's message>`; returns
/// its stdout.
std::string git_or_throw(util::ProcessRunner &runner, const std::filesystem::path &dir,
                         const std::vector<std::string> &args, const std::string &what,
                         const GitEnv &env = {});

/// A folder's place in its git repository: the repository's top folder and the folder's path
/// inside it ("examples/host_gemm/"; "" at the top). Not in a repository: both empty.
struct RepoPlace {
  std::filesystem::path top;
  std::string prefix;
};

RepoPlace repo_place(const std::filesystem::path &dir, util::ProcessRunner &runner);

/// A temporary folder removed with everything in it when this goes out of scope.
class TempFolder {
public:
  /// Makes `<tmp>/<stem>-XXXXXX`; throws kopt::Error naming the temp folder when it cannot.
  explicit TempFolder(const std::string &stem);
  ~TempFolder();
  TempFolder(const TempFolder &) = delete;
  TempFolder &operator=(const TempFolder &) = delete;
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace kopt::candidate
