#include "kopt/harness/csv.hpp"

#include "kopt/harness/error.hpp"

#include <utility>

namespace kopt::harness {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool all_blank(const std::string &text) {
  return text.find_first_not_of(" \t") == std::string::npos;
}

std::string trim(const std::string &text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && is_blank(text[begin])) {
    ++begin;
  }
  while (end > begin && is_blank(text[end - 1])) {
    --end;
  }
  return text.substr(begin, end - begin);
}

} // namespace

CsvReader::CsvReader(std::string_view text, std::string source, CsvDialect dialect)
    : text_(text), source_(std::move(source)), dialect_(dialect) {}

bool CsvReader::next(std::vector<std::string> &fields, int &line) {
  while (pos_ < text_.size()) {
    line = line_;
    fields.clear();
    if (!read_record(fields)) {
      return true;
    }
  }
  fields.clear();
  return false;
}

bool CsvReader::blank(const std::vector<std::string> &fields, bool any) const {
  if (dialect_ == CsvDialect::configs) {
    return !any;
  }
  return fields.size() == 1 && all_blank(fields[0]);
}

// Reads one record and returns whether it was blank.
bool CsvReader::read_record(std::vector<std::string> &fields) {
  bool configs = dialect_ == CsvDialect::configs;
  std::string field;
  bool quoted_field = false;
  bool any = false;
  auto end_field = [&] {
    fields.push_back(quoted_field || !configs ? field : trim(field));
    field.clear();
    quoted_field = false;
  };
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n' || (c == '\r' && configs)) {
      pos_ += (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ? 2 : 1;
      ++line_;
      break;
    }
    any = true;
    if (c == ',') {
      end_field();
      ++pos_;
    } else if (c == '"' && !quoted_field && (configs ? all_blank(field) : field.empty())) {
      read_quoted(field, fields.size() + 1);
      quoted_field = true;
    } else if (quoted_field && configs && !is_blank(c)) {
      throw Error(source_ + ":" + std::to_string(line_) + ":" + std::to_string(fields.size() + 1) +
                  ": unexpected '" + std::string(1, c) + "' after a quoted field");
    } else {
      // A configs file's blanks after a closing quote are dropped; a table drops its CRs.
      if (!(quoted_field && configs) && !(c == '\r' && !configs)) {
        field += c;
      }
      ++pos_;
    }
  }
  end_field();
  return blank(fields, any);
}

// Reads a quoted field starting at the opening quote.
void CsvReader::read_quoted(std::string &field, std::size_t column) {
  bool configs = dialect_ == CsvDialect::configs;
  int start_line = line_;
  field.clear();
  ++pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      char after = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\n';
      if (after == '"') {
        field += '"';
        pos_ += 2;
        continue;
      }
      if (configs || after == ',' || after == '\n' || after == '\r') {
        ++pos_;
        return;
      }
    }
    if (c == '\n') {
      ++line_;
    }
    field += c;
    ++pos_;
  }
  if (configs) {
    throw Error(source_ + ":" + std::to_string(start_line) + ":" + std::to_string(column) +
                ": unterminated quoted field");
  }
}

} // namespace kopt::harness
