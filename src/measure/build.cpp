#include "measure/build.hpp"

#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <ostream>

namespace kopt::measure {

namespace fs = std::filesystem;

namespace {

// The file the build folder's generator builds from ("build.ninja", "Makefile"), from its
// CMakeCache.txt; "" for other generators.
std::string generator_file(const fs::path &build_dir) {
  for (const std::string &line : util::split(util::read_file(build_dir / "CMakeCache.txt"), '\n')) {
    if (line.starts_with("CMAKE_GENERATOR:INTERNAL=")) {
      std::string generator(util::trim(line.substr(25)));
      return generator.starts_with("Ninja")     ? "build.ninja"
             : generator.ends_with("Makefiles") ? "Makefile"
                                                : "";
    }
  }
  return "";
}

// A configure stopped half-way (SIGINT) leaves CMakeCache.txt without the generator's file, and
// every build then fails whatever the candidate holds: the folder is configured again first, or
// the round stops as a tool error. A broken build folder is never the candidate's failure.
void reconfigure_if_broken(const fs::path &build_dir, std::ostream *progress) {
  std::string file = generator_file(build_dir);
  std::error_code ec;
  if (file.empty() || fs::exists(build_dir / file, ec)) {
    return;
  }
  if (progress != nullptr) {
    *progress << "kopt: " << build_dir.string() << " has no " << file
              << " (an interrupted configure?): configuring it again\n"
              << std::flush;
  }
  util::RealProcessRunner runner;
  util::Command command;
  command.argv = {"cmake", build_dir.string()};
  util::ProcessResult result = runner.run(command);
  if (!result.ok() || !fs::exists(build_dir / file, ec)) {
    throw Error("--build-dir " + build_dir.string() + ": no " + file +
                " there (an interrupted configure?), and `cmake " + build_dir.string() + "` " +
                result.describe(0) + ": " + first_error(result.out + result.err) +
                "; configure the folder again, then run the round again");
  }
}

} // namespace

std::string first_error(const std::string &output) {
  std::vector<std::string> lines = util::split(util::trim(output), '\n');
  for (const std::string &line : lines) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("error") != std::string::npos && !lower.starts_with("ninja: build stopped")) {
      return std::string(util::trim(line));
    }
  }
  return lines.empty() ? "no output" : std::string(util::trim(lines.back()));
}

util::ProcessResult build_targets(const std::string &build_dir,
                                  const std::vector<std::string> &targets, std::ostream *waiting) {
  // Checked before anything is written there: a source folder given by mistake gets no lock file.
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(build_dir) / "CMakeCache.txt", ec)) {
    std::string what = !fs::exists(build_dir, ec)         ? "no such folder"
                       : !fs::is_directory(build_dir, ec) ? "not a folder"
                       : fs::exists(fs::path(build_dir) / "CMakeLists.txt", ec)
                           ? "no CMakeCache.txt there, but a CMakeLists.txt: a source folder?"
                           : "no CMakeCache.txt there";
    throw Error("--build-dir " + build_dir + ": not a configured CMake build folder (" + what +
                "); give the folder `cmake -B` made");
  }
  // Two ninja runs in one build folder at once would race on its logs and outputs.
  util::FileLock lock(fs::path(build_dir) / "kopt-build.lock", waiting);
  reconfigure_if_broken(build_dir, waiting);
  util::RealProcessRunner runner;
  util::Command command;
  command.argv = {"cmake", "--build", build_dir, "--target"};
  command.argv.insert(command.argv.end(), targets.begin(), targets.end());
  return runner.run(command);
}

} // namespace kopt::measure
