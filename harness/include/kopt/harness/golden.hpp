#pragma once

#include "kopt/harness/config.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kopt::harness {

/// The stored outputs of a baseline run, one per config, found by Config::key(). A candidate
/// is compared with the golden, never with itself.
///
/// On disk (fixed little-endian, so goldens move between machines): the line `kopt-golden 1`,
/// a line with the entry count, then per entry a line with the key, a line with the element
/// count and that many IEEE-754 binary32 values.
class Golden {
public:
  /// Adds the output of the config called `key`; throws Error when the key is already there.
  void add(const std::string &key, std::vector<float> output);

  /// Returns the output stored for `key`, or nullptr when there is none.
  const std::vector<float> *find(const std::string &key) const;

  /// Returns the keys in the order they were added.
  const std::vector<std::string> &keys() const { return keys_; }

  /// Returns the file the golden was read from (empty for one built in memory).
  const std::string &source() const { return source_; }

  /// Records the file the golden was read from, for error messages.
  void set_source(std::string source) { source_ = std::move(source); }

private:
  std::vector<std::string> keys_;
  std::map<std::string, std::vector<float>> outputs_;
  std::string source_;
};

/// Writes `golden` to `path` through a temporary file and a rename, so a reader never sees a
/// half-written golden; throws Error naming the path when it cannot.
void write_golden(const std::string &path, const Golden &golden);

/// Reads a golden file; throws Error `path: ...` when it is missing, not a golden or truncated.
Golden read_golden(const std::string &path);

/// Reads the entries of `keys` from a golden file and seeks past the others' values, so a run
/// of a few configs neither reads nor holds a whole family's golden; keys() lists the entries
/// read. Throws as read_golden(path), for skipped entries too.
Golden read_golden(const std::string &path, const std::set<std::string> &keys);

/// A golden read on a thread of its own while the harness runs, entry by entry in the order of
/// the configs it was made for: a comparison waits for its own entry only, not for the whole
/// file, and each entry is let go once taken. The constructor reads the file's index (seeking
/// past the values), so a bad file, or a config it holds no entry for, throws at once, as
/// read_golden and golden_output do.
class GoldenPrefetch {
public:
  GoldenPrefetch(const std::string &path, const std::vector<Config> &configs);
  ~GoldenPrefetch();
  GoldenPrefetch(const GoldenPrefetch &) = delete;
  GoldenPrefetch &operator=(const GoldenPrefetch &) = delete;

  /// Waits until every entry is read and the reader's thread has ended; throws what stopped it.
  void wait_all();

  /// Waits for `config`'s entry and returns a Golden holding it alone (once per config); throws
  /// what stopped the reader, such as a file cut short since it was indexed.
  Golden take(const Config &config);

private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread reader_;
};

/// Returns `config`'s golden output; throws Error naming the golden file, the config's file:line
/// and key when the golden has no entry for it (it was written for other configs), or when the
/// entry's element count is not `elements`.
const std::vector<float> &golden_output(const Golden &golden, const Config &config,
                                        std::size_t elements);

} // namespace kopt::harness
