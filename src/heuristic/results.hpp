#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  int line = 0; ///< the row it came from, for messages

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

/// The largest value a shape column may hold (2^31 - 1): a product of three stays in int64.
constexpr int64_t kMaxDimension = 2147483647;

/// A tuning results table: `kopt tune`'s full.csv (config columns, then kernel, us, err: every
/// kernel's time on every shape), or a winners-only aiter tuned table (one (gfx, cu_num) group of
/// it: per shape the winning kernel and its time, no other kernel's).
struct Results {
  std::string source;                   ///< the file, for messages
  std::vector<std::string> columns;     ///< the config columns, in file order (M, N, K for aiter's)
  std::vector<Shape> shapes;            ///< sorted by dims
  double ties = 0;                      ///< the relative slack the tuned choices were resolved with
  bool winners_only = false;            ///< an aiter table: only the tuned kernel's time is known
  std::string table_group;              ///< the aiter table's (gfx, cu_num) group: "gfx942,304"
  std::string kernel_column = "kernel"; ///< the column that names kernels, for messages

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

/// How a winners-only table labels a shape's kernel: its kernelName, or kernelName and splitK
/// ("<kernelName>+splitK=<k>", kSplitKLabel) when the split-K factor is part of the choice.
enum class KernelLabel { name, name_and_split_k };

/// What joins kernelName and splitK in a KernelLabel::name_and_split_k label.
inline constexpr std::string_view kSplitKLabel = "+splitK=";

/// How to read a results table.
struct ReadOptions {
  double ties = 0;                       ///< see resolve_ties
  KernelLabel label = KernelLabel::name; ///< aiter tables only
  std::string group;                     ///< aiter tables: the (gfx, cu_num) group "gfx942,304"
                                         ///< ("304" without gfx); "" when the table holds one
};

/// Builds a results table from parsed CSV, in either format (docs/FORMATS.md):
/// - full.csv: the columns before `kernel` are the config columns (integers); a column where no
///   row holds a number (a model's name) is a label and left out of the shape; a kernel
///   measured twice on a shape keeps the lower time;
/// - an aiter tuned table (a `kernelName` column and no `kernel`): gfx (or arch; optional),
///   cu_num, M, N, K, us, kernelName (splitK with KernelLabel::name_and_split_k); the other
///   columns are ignored. One (gfx, cu_num) group is read, options.group or the only one; a
///   shape listed twice keeps the lower time when both rows name the same kernel, and is an
///   error when they name different winners.
/// A missing column or a bad value is an error naming file:line and the column. Tuned choices
/// under options.ties.
Results parse_results(const util::CsvTable &table, const ReadOptions &options = {});

/// Reads full.csv or an aiter tuned table; errors as parse_results.
Results read_results(const std::filesystem::path &file, const ReadOptions &options = {});

/// The instance a kernel label names: the label without its kSplitKLabel part.
std::string instance_of(const std::string &label);

/// Throws Error `file:line: kernel: 'x' is not an instance of family 'f'` (the table's kernel
/// column) for the first row, in line order, whose kernel `instances` does not hold.
void check_instances(const Results &r, const std::vector<std::string> &instances,
                     const std::string &family);

/// The config columns of a results table in either format, read from its header alone (what a
/// group of it is before the rows are read); throws as parse_results on a header of neither.
std::vector<std::string> config_columns(const util::CsvTable &table);

/// The most frequent tuned choice of `r`'s shapes (the first by name among equal counts), or ""
/// when no shape has one: the one kernel a table without a heuristic would be served by best.
std::string most_frequent(const Results &r);

/// The config columns of `r` other than M, the columns of the per-(N,K) groups.
std::vector<std::string> group_columns(const Results &r);

/// The group of shape `s`: "N=4096,K=7168" (every group column, in order).
std::string group_of(const Results &r, const Shape &s);

/// Returns the label of a shape, "M=16,N=256,K=512" (harness::config_label) over `columns`.
std::string shape_label(const std::vector<std::string> &columns, const std::vector<int64_t> &dims);

/// The shapes of `r` whose group is (keep == true) or is not (keep == false) in `groups`, with
/// the tuned choices of `r` (resolved over all of its shapes).
Results select_groups(const Results &r, const std::vector<std::string> &groups, bool keep);

} // namespace kopt::heuristic
