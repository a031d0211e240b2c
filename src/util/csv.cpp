#include "util/csv.hpp"

#include "util/error.hpp"
#include "util/read_file.hpp"

#include <kopt/harness/csv.hpp>

namespace kopt::util {

int CsvTable::find_column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int CsvTable::column(std::string_view name) const {
  int index = find_column(name);
  if (index < 0) {
    std::string have;
    for (const auto &h : header) {
      have += (have.empty() ? "" : ", ") + h;
    }
    throw Error(source + ": missing column '" + std::string(name) + "' (columns: " + have + ")");
  }
  return index;
}

std::string CsvTable::where(size_t row) const {
  return source + ":" + std::to_string(row < lines.size() ? lines[row] : 0);
}

CsvTable parse_csv(std::string_view text, std::string source) {
  CsvTable table;
  table.source = std::move(source);
  // A UTF-8 byte order mark (spreadsheet exports write one) is not part of the first column name.
  harness::CsvReader reader(text.substr(text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0), table.source,
                            harness::CsvDialect::table);
  std::vector<std::string> fields;
  int line = 0;
  if (!reader.next(fields, line)) {
    throw Error(table.source + ": empty file, expected a CSV header line");
  }
  table.header = std::move(fields);
  while (reader.next(fields, line)) {
    if (fields.size() != table.header.size()) {
      throw Error(table.source + ":" + std::to_string(line) + ": expected " +
                  std::to_string(table.header.size()) + " fields as in the header, got " +
                  std::to_string(fields.size()));
    }
    table.rows.push_back(std::move(fields));
    table.lines.push_back(line);
  }
  return table;
}

CsvTable read_csv(const std::filesystem::path &path) {
  return parse_csv(read_file(path, Input::table), path.string());
}

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) {
    return std::string(field);
  }
  std::string out = "\"";
  for (char c : field) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string> &fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    line += (i ? "," : "") + csv_field(fields[i]);
  }
  return line;
}

} // namespace kopt::util
