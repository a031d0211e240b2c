#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace kopt::util {

/// An exclusive lock on a lock file (flock), held from construction until destruction: kopt
/// processes that read, change and write the same files (the ledger, a candidate's results, a
/// tune folder) take one first, so none of them works from a copy another is replacing. The
/// kernel drops the lock when its holder dies, so a killed process never leaves one behind.
class FileLock {
public:
  /// Creates `path` (and its folder) when missing and blocks until the lock is held. When
  /// another process holds it, first writes one line to `waiting` (when given) naming the file
  /// and the holder's pid. Throws kopt::Error naming `path` when it cannot be opened or locked.
  explicit FileLock(const std::filesystem::path &path, std::ostream *waiting = nullptr);
  ~FileLock();

  /// Takes the lock when no one holds it; returns null at once when another process does.
  static std::unique_ptr<FileLock> try_lock(const std::filesystem::path &path);

  /// Whether someone holds the lock of `path` now (this process too, through another
  /// FileLock), without taking it: the holder's pid as it wrote it ("" when not yet written),
  /// or nullopt when the lock is free or the file is not there.
  static std::optional<std::string> holder(const std::filesystem::path &path);
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;

private:
  FileLock() = default;
  /// Opens `path`'s lock file (creating it and its folder); throws naming it.
  void open(const std::filesystem::path &path);
  /// Writes this process's pid into the held lock file, for the waiting message.
  void write_holder();

  int fd_ = -1;
};

} // namespace kopt::util
