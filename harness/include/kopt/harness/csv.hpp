#pragma once
// The one CSV record reader: the harness reads configs files with it, and kopt (C++20) every
// table it reads (util/csv.hpp), so that both split a line the same way. C++17, like kernel code.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::harness {

/// How a CSV text is read.
enum class CsvDialect {
  /// kopt's tables and profilers' exports: fields as written; a quote inside a quoted field that
  /// is not followed by a comma or the line's end is taken literally (rocprofv3 writes kernel
  /// names like "void f<"a">()" unescaped); a carriage return outside quotes is dropped; a line
  /// of one blank field is blank.
  table,
  /// A configs file: blanks around unquoted fields are dropped, and may surround a quoted one; a
  /// closing quote ends its field (anything but blanks after it is an error, and so is a quote
  /// never closed); CR, LF and CRLF end lines; only an empty line is blank.
  configs
};

/// Reads CSV records one at a time ("" in a quoted field is a quote; quoted fields may hold
/// commas and line ends), counting lines so errors can name them.
class CsvReader {
public:
  /// Reads `text` (which must outlive the reader); `source` names it in errors.
  CsvReader(std::string_view text, std::string source, CsvDialect dialect);

  /// Reads the next record that is not blank into `fields` and the line it starts on into
  /// `line`; returns false at the end of the text. The configs dialect throws Error as
  /// `source:line:field: what` on bad quoting.
  bool next(std::vector<std::string> &fields, int &line);

private:
  bool read_record(std::vector<std::string> &fields);
  void read_quoted(std::string &field, std::size_t column);
  bool blank(const std::vector<std::string> &fields, bool any) const;

  std::string_view text_;
  std::string source_;
  CsvDialect dialect_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

} // namespace kopt::harness
