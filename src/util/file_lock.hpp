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
  /// Whether others may hold the lock at the same time: shared holders exclude an exclusive
  /// one (rounds of a family beside each other, a landing alone), not each other.
  enum class Mode { exclusive, shared };

  /// Creates `path` (and its folder) when missing and blocks until the lock is held. When
  /// another process holds it, first writes one line to `waiting` (when given) naming the file,
  /// the holder's pid and what the holder said it does (its `doing`: "kopt land of candidate
  /// 11"; of shared holders, the one that took it last). Throws kopt::Error naming `path` when
  /// it cannot be opened or locked.
  explicit FileLock(const std::filesystem::path &path, std::ostream *waiting = nullptr,
                    Mode mode = Mode::exclusive, const std::string &doing = "");
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
  /// Writes this process's pid and `doing` into the held lock file, for the waiting message.
  void write_holder(const std::string &doing = "");

  int fd_ = -1;
};

} // namespace kopt::util
