#pragma once

#include "util/process.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace kopt::measure {

/// Builds `targets` in `build_dir` (`cmake --build`) holding the build folder's lock (two ninja
/// runs in one folder would race); `waiting` gets a line when it waits for the lock. A folder
/// without CMakeCache.txt (missing, or a source folder given by mistake) is a kopt::Error naming
/// it, and nothing is written there. A folder whose generator file (build.ninja, Makefile) is
/// missing, as an interrupted configure leaves it, is configured again first (`cmake DIR`); when
/// that fails, a kopt::Error: a broken build folder is never a candidate's failed build.
util::ProcessResult build_targets(const std::string &build_dir,
                                  const std::vector<std::string> &targets, std::ostream *waiting);

/// A failed build in one line: the first line of its output that says error (the compiler's
/// message, with its file and line), else the last line ("no output" when there is none).
std::string first_error(const std::string &output);

} // namespace kopt::measure
