#include "kopt/harness/config.hpp"

#include "kopt/harness/csv.hpp"
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

std::vector<Config> parse_configs(std::string_view text, const std::string &source) {
  CsvReader reader(text, source, CsvDialect::configs);
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
