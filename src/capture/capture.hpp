#pragma once

// Capture files are what the generated dispatch writes under KOPT_CAPTURE (src/gen/
// shape_capture.h): a `# kopt capture: ...` line, then CSV with the dispatch columns and count.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::capture {

/// One distinct shape and how many dispatch calls had it.
struct ShapeCount {
  std::vector<std::int64_t> values; ///< in the owner's column order
  std::uint64_t count = 0;
};

/// One capture file read back.
struct CaptureFile {
  std::string source;               ///< the file name used in errors
  std::string family;               ///< from the `#` line; "" when it has none
  std::uint64_t overflow = 0;       ///< calls of shapes beyond KOPT_CAPTURE_MAX
  std::vector<std::string> columns; ///< the dispatch columns, without `count`
  std::vector<ShapeCount> shapes;
};

/// Parses a capture file's text; errors name `source`:line and the column.
CaptureFile parse_capture(std::string_view text, const std::string &source);

/// Reads and parses a capture file.
CaptureFile read_capture(const std::filesystem::path &path);

/// Several capture files summed into one list of shapes, in the family's dispatch columns.
struct MergedCapture {
  std::vector<std::string> columns; ///< the family's dispatch columns
  std::vector<ShapeCount> shapes;   ///< sorted by values
  std::uint64_t calls = 0;          ///< the sum of all counts
  std::uint64_t overflow = 0;       ///< summed over files: calls whose shape was not kept
};

/// Sums the files' counts per shape. Each file must carry every dispatch column (any order) and
/// no other; a file of another family (its `#` line) is an error naming it.
MergedCapture merge_captures(const std::vector<CaptureFile> &files,
                             const std::vector<std::string> &dispatch_columns,
                             const std::string &family);

/// Returns the family's configs file for a merge: the dispatch columns and `count`, one row a
/// shape (count is the weight benchmarks and `kopt decide --weight-by-count` use).
std::string configs_csv(const MergedCapture &merged);

} // namespace kopt::capture
