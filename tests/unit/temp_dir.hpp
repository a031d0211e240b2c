#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace kopt::test {

/// A fresh folder for one test under $TMPDIR/kopt-unit-*; removed at the end of the test
/// unless KOPT_KEEP_TEMP is set, so a failing test's files can be read.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  /// The folder's path.
  const std::filesystem::path &path() const { return path_; }

  /// Writes `content` to `relative` inside the folder (creating folders) and returns its path.
  std::filesystem::path write(const std::string &relative, const std::string &content) const;

private:
  std::filesystem::path path_;
};

/// Returns the number of non-empty lines of the file at `path` (a JSON-lines log's entries).
size_t nonempty_lines(const std::filesystem::path &path);

/// Returns the path of a file under tests/fixtures.
std::filesystem::path fixture(const std::string &relative);

} // namespace kopt::test
