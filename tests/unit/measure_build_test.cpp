#include "temp_dir.hpp"

#include "measure/build.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("measure::build");

TEST_CASE("--build-dir must be a configured build folder, checked before anything is written") {
  TempDir tmp;
  std::ostringstream waiting;
  SUBCASE("a source folder") {
    tmp.write("src/CMakeLists.txt", "project(p)\n");
    const std::string dir = (tmp.path() / "src").string();
    CHECK_THROWS_WITH_AS(kopt::measure::build_targets(dir, {"candidate_01"}, &waiting),
                         ("--build-dir " + dir +
                          ": not a configured CMake build folder (no CMakeCache.txt there, but a "
                          "CMakeLists.txt: a source folder?); give the folder `cmake -B` made")
                             .c_str(),
                         kopt::Error);
    CHECK_FALSE(fs::exists(tmp.path() / "src" / "kopt-build.lock"));
  }
  SUBCASE("a folder that does not exist is not made") {
    const std::string dir = (tmp.path() / "nowhere").string();
    CHECK_THROWS_WITH_AS(kopt::measure::build_targets(dir, {"candidate_01"}, &waiting),
                         ("--build-dir " + dir +
                          ": not a configured CMake build folder (no such folder); give the "
                          "folder `cmake -B` made")
                             .c_str(),
                         kopt::Error);
    CHECK_FALSE(fs::exists(tmp.path() / "nowhere"));
  }
}

TEST_SUITE_END();
