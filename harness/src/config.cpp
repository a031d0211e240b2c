#include "kopt/harness/config.hpp"

#include "kopt/harness/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace kopt::harness {

Config::Config(std::shared_ptr<const std::vector<std::string>> columns,
               std::vector<std::string> values, std::string source, int line, std::size_t index)
    : columns_(std::move(columns)), values_(std::move(values)), source_(std::move(source)),
      line_(line), index_(index) {}

std::string Config::where() const { return source_ + ":" + std::to_string(line_); }

bool Config::has(std::string_view name) const {
  for (const auto &column : *columns_) {
    if (column == name) {
      return true;
    }
  }
  return false;
}

std::size_t Config::field(std::string_view name) const {
  for (std::size_t i = 0; i < columns_->size(); ++i) {
    if ((*columns_)[i] == name) {
      return i;
    }
  }
  std::string have;
  for (const auto &column : *columns_) {
    have += (have.empty() ? "" : ",") + column;
  }
  throw Error(where() + ": no column '" + std::string(name) + "' (columns: " + have + ")");
}

const std::string &Config::str(std::string_view name) const { return values_[field(name)]; }

std::int64_t Config::get_int(std::string_view name) const {
  std::size_t i = field(name);
  const std::string &text = values_[i];
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  // Stopped before the text's end: also at a NUL byte inside it ("3\0" "2" is no 3).
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw Error(where() + ":" + std::to_string(i + 1) + ": column '" + std::string(name) +
                "': expected an integer, got '" + text + "'");
  }
  return value;
}

double Config::get_double(std::string_view name) const {
  std::size_t i = field(name);
  const std::string &text = values_[i];
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw Error(where() + ":" + std::to_string(i + 1) + ": column '" + std::string(name) +
                "': expected a number, got '" + text + "'");
  }
  return value;
}

std::string config_label(const std::vector<std::string> &columns,
                         const std::vector<std::string> &values) {
  std::string label;
  for (std::size_t i = 0; i < values.size(); ++i) {
    label += i ? "," : "";
    label += i < columns.size() ? columns[i] + "=" + values[i] : values[i];
  }
  return label;
}

std::string Config::key() const { return config_label(*columns_, values_); }

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

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

// Reads CSV records one at a time, tracking lines so errors can name them.
class RecordReader {
public:
  RecordReader(std::string_view text, const std::string &source) : text_(text), source_(source) {}

  // Reads the next non-blank record into `fields`; returns false at the end of the text.
  bool next(std::vector<std::string> &fields, int &line) {
    while (pos_ < text_.size()) {
      line = line_;
      fields.clear();
      bool blank = read_record(fields);
      if (!blank) {
        return true;
      }
    }
    return false;
  }

private:
  // Returns whether the record was a blank line.
  bool read_record(std::vector<std::string> &fields) {
    std::string field;
    bool quoted_field = false;
    bool any = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n' || c == '\r') {
        pos_ += (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ? 2 : 1;
        ++line_;
        break;
      }
      any = true;
      if (c == ',') {
        fields.push_back(quoted_field ? field : trim(field));
        field.clear();
        quoted_field = false;
        ++pos_;
        continue;
      }
      if (c == '"' && trim(field).empty() && !quoted_field) {
        read_quoted(field, fields.size() + 1);
        quoted_field = true;
        continue;
      }
      if (quoted_field && !is_blank(c)) {
        throw Error(source_ + ":" + std::to_string(line_) + ":" +
                    std::to_string(fields.size() + 1) + ": unexpected '" + std::string(1, c) +
                    "' after a quoted field");
      }
      if (!quoted_field) {
        field += c;
      }
      ++pos_;
    }
    if (!any) {
      return true;
    }
    fields.push_back(quoted_field ? field : trim(field));
    return false;
  }

  // Reads a quoted field starting at the opening quote; "" stands for one quote.
  void read_quoted(std::string &field, std::size_t column) {
    int start_line = line_;
    field.clear();
    ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          field += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;
        return;
      }
      if (c == '\n') {
        ++line_;
      }
      field += c;
      ++pos_;
    }
    throw Error(source_ + ":" + std::to_string(start_line) + ":" + std::to_string(column) +
                ": unterminated quoted field");
  }

  std::string_view text_;
  const std::string &source_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

} // namespace

std::vector<Config> parse_configs(std::string_view text, const std::string &source) {
  RecordReader reader(text, source);
  std::vector<std::string> fields;
  int line = 0;
  if (!reader.next(fields, line)) {
    throw Error(source + ": empty file, expected a header row");
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].empty()) {
      throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(i + 1) +
                  ": empty column name");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (fields[j] == fields[i]) {
        throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(i + 1) +
                    ": duplicate column '" + fields[i] + "'");
      }
    }
  }
  auto columns = std::make_shared<const std::vector<std::string>>(fields);

  std::vector<Config> configs;
  std::map<std::string, int> seen; // key -> line, because a config must appear once
  while (reader.next(fields, line)) {
    if (fields.size() != columns->size()) {
      throw Error(source + ":" + std::to_string(line) + ": expected " +
                  std::to_string(columns->size()) + " fields, got " +
                  std::to_string(fields.size()));
    }
    Config config(columns, fields, source, line, configs.size());
    auto [it, inserted] = seen.emplace(config.key(), line);
    if (!inserted) {
      throw Error(source + ":" + std::to_string(line) + ": duplicate config " + config.key() +
                  " (first on line " + std::to_string(it->second) + ")");
    }
    configs.push_back(std::move(config));
  }
  if (configs.empty()) {
    throw Error(source + ": no configs after the header");
  }
  return configs;
}

std::vector<Config> read_configs(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(path + ": cannot open the configs file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_configs(text.str(), path);
}

} // namespace kopt::harness
