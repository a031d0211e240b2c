#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kopt::util {
struct CsvTable;
}

namespace kopt::heuristic {

/// One kernel's measurement on one shape: its median time and its error against the golden
/// (nullopt when nothing was compared).
struct Timing {
  double us = 0;
  std::optional<double> err;

  /// True when the kernel may be picked for the shape: a positive time and err 0 or unknown.
  bool usable() const { return us > 0 && (!err || *err == 0); }
};

/// One shape of a full results table: its config values and every kernel measured on it.
struct Shape {
  std::vector<int64_t> dims;
  std::map<std::string, Timing> kernels;
  int line = 0;      ///< the first line that named this shape, for messages
  std::string tuned; ///< the tuned choice (resolve_ties), "" when no kernel is usable

  /// The fastest usable kernel's name (the first by name among equal times), or "" when none is
  /// usable: the raw argmin.
  std::string best() const;
};

/// A full tuning results table (`kopt tune`'s full.csv): config columns, then kernel, us, err.
struct Results {
  std::string source;               ///< the file, for messages
  std::vector<std::string> columns; ///< the config columns, in file order
  std::vector<Shape> shapes;        ///< sorted by dims
  double ties = 0;                  ///< the relative slack the tuned choices were resolved with

  /// Every kernel named anywhere in the table, sorted.
  std::vector<std::string> kernels() const;

  /// Returns the index of column `name`, or -1.
  int column(const std::string &name) const;
};

/// The fixed columns after the config columns of full.csv.
inline const std::vector<std::string> kResultColumns = {"kernel", "us", "err"};

/// Sets every shape's tuned choice, the one `kopt tune`'s tuned table and the heuristic's
/// "tuned" both use. With ties == 0 it is the raw argmin (best()), as aiter's tuner picks. With
/// ties > 0, the kernels within (1 + ties) x a shape's fastest usable time are tied there, and
/// the choice among them is the kernel that is within the ties on the most shapes of `r`, then
/// the first by name: noise-level differences resolve to one consistent kernel instead of
/// flipping between near-equal ones. Throws Error when ties is negative or not finite.
void resolve_ties(Results &r, double ties);

/// Builds a results table from parsed CSV: the columns before `kernel` are the config columns
/// (integers). A missing column or a bad number is an error naming file:line and the column;
/// a kernel measured twice on a shape keeps the lower time. Tuned choices under `ties`.
Results parse_results(const util::CsvTable &table, double ties = 0);

/// Reads full.csv; errors as parse_results.
Results read_results(const std::filesystem::path &file, double ties = 0);

/// The config columns of `r` other than M, the columns of the per-(N,K) groups.
std::vector<std::string> group_columns(const Results &r);

/// The group of shape `s`: "N=4096,K=7168" (every group column, in order).
std::string group_of(const Results &r, const Shape &s);

/// The shapes of `r` whose group is (keep == true) or is not (keep == false) in `groups`, with
/// the tuned choices of `r` (resolved over all of its shapes).
Results select_groups(const Results &r, const std::vector<std::string> &groups, bool keep);

} // namespace kopt::heuristic
