#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::util {

/// A CSV file read whole: the header, the data rows and the line each row started on, so that
/// errors can say `file:line: column: what was expected`.
struct CsvTable {
  std::string source; ///< the file name (or a label) used in error messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines; ///< 1-based line number of each row

  /// Returns the index of column `name`, or -1 when the header lacks it.
  int find_column(std::string_view name) const;

  /// Returns the index of column `name`; throws `source: missing column 'name' (columns: ...)`.
  int column(std::string_view name) const;

  /// Returns "source:line" for row `row`, the prefix of every error about that row.
  std::string where(size_t row) const;
};

/// Parses CSV text. Quoted fields may hold commas and doubled quotes; a quote inside a quoted
/// field that is not followed by a comma or the line's end is taken literally (rocprofv3
/// writes kernel names like "void f<"a">()" unescaped). Rows shorter or longer than the
/// header are an error naming the line. Blank lines are skipped; CRLF line ends and a UTF-8
/// byte order mark are accepted.
CsvTable parse_csv(std::string_view text, std::string source);

/// Reads and parses a CSV file; errors name the file.
CsvTable read_csv(const std::filesystem::path &path);

/// Quotes a field when it holds a comma, quote or newline.
std::string csv_field(std::string_view field);

/// Joins fields into one CSV line (no newline).
std::string csv_line(const std::vector<std::string> &fields);

} // namespace kopt::util
