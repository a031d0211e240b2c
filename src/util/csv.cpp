#include "util/csv.hpp"

#include "util/error.hpp"
#include "util/read_file.hpp"

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

namespace {

// Splits one logical record starting at `pos`; advances `pos` past it and counts newlines.
std::vector<std::string> parse_record(std::string_view text, size_t &pos, int &line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  bool at_field_start = true;
  while (pos < text.size()) {
    char c = text[pos];
    if (quoted) {
      if (c == '"') {
        char next = pos + 1 < text.size() ? text[pos + 1] : '\n';
        if (next == '"') {
          field += '"';
          pos += 2;
          continue;
        }
        if (next == ',' || next == '\n' || next == '\r') {
          quoted = false;
          ++pos;
          continue;
        }
        field += c; // an unescaped quote inside a quoted field
        ++pos;
        continue;
      }
      if (c == '\n') {
        ++line;
      }
      field += c;
      ++pos;
      continue;
    }
    if (c == '"' && at_field_start) {
      quoted = true;
      at_field_start = false;
      ++pos;
      continue;
    }
    if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      at_field_start = true;
      ++pos;
      continue;
    }
    if (c == '\r') {
      ++pos;
      continue;
    }
    if (c == '\n') {
      ++pos;
      ++line;
      break;
    }
    field += c;
    at_field_start = false;
    ++pos;
  }
  fields.push_back(std::move(field));
  return fields;
}

bool blank(const std::vector<std::string> &fields) {
  return fields.size() == 1 && fields[0].find_first_not_of(" \t") == std::string::npos;
}

} // namespace

CsvTable parse_csv(std::string_view text, std::string source) {
  CsvTable table;
  table.source = std::move(source);
  // A UTF-8 byte order mark (spreadsheet exports write one) is not part of the first column name.
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  int line = 1;
  bool have_header = false;
  while (pos < text.size()) {
    int start_line = line;
    auto fields = parse_record(text, pos, line);
    if (blank(fields)) {
      continue;
    }
    if (!have_header) {
      table.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != table.header.size()) {
      throw Error(table.source + ":" + std::to_string(start_line) + ": expected " +
                  std::to_string(table.header.size()) + " fields as in the header, got " +
                  std::to_string(fields.size()));
    }
    table.rows.push_back(std::move(fields));
    table.lines.push_back(start_line);
  }
  if (!have_header) {
    throw Error(table.source + ": empty file, expected a CSV header line");
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
