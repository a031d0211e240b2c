#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::harness {

/// One row of a configs file: the exact shape one run uses, with its column names and the
/// file line it came from so every error about it can name file:line:field.
class Config {
public:
  /// Makes a config from its columns, its values (same length) and where it came from.
  Config(std::shared_ptr<const std::vector<std::string>> columns, std::vector<std::string> values,
         std::string source, int line, std::size_t index);

  /// Returns the column names, in file order.
  const std::vector<std::string> &columns() const { return *columns_; }

  /// Returns the values, in column order, as written (unquoted, surrounding blanks removed).
  const std::vector<std::string> &values() const { return values_; }

  /// Returns the 0-based position of this config among the file's configs.
  std::size_t index() const { return index_; }

  /// Returns the 1-based line the config's row starts on.
  int line() const { return line_; }

  /// Returns "file:line", the prefix of every error about this config.
  std::string where() const;

  /// Returns whether the config has a column called `name`.
  bool has(std::string_view name) const;

  /// Returns column `name`'s text; throws `file:line: no column 'name' (columns: ...)`.
  const std::string &str(std::string_view name) const;

  /// Returns column `name` as an integer; throws `file:line:field: column 'name': expected an
  /// integer, got 'text'` when it is not one.
  std::int64_t get_int(std::string_view name) const;

  /// Returns column `name` as a number; throws like get_int when it is not one.
  double get_double(std::string_view name) const;

  /// Returns `column=value` pairs joined with ',' in column order: the name of the config's
  /// golden entry and of its inputs' seed.
  std::string key() const;

private:
  std::size_t field(std::string_view name) const;

  std::shared_ptr<const std::vector<std::string>> columns_;
  std::vector<std::string> values_;
  std::string source_;
  int line_;
  std::size_t index_;
};

/// Returns the label of a config, `column=value` pairs joined with ',' in column order
/// ("M=64,N=128,K=128"): the one spelling of a config in golden files, messages and reports. A
/// value beyond the columns is written alone.
std::string config_label(const std::vector<std::string> &columns,
                         const std::vector<std::string> &values);

/// Parses configs CSV text: a header row, then one config per row. Fields may be quoted
/// ("a,b", with "" for a quote); blanks around unquoted fields are dropped; blank lines are
/// skipped. Errors (bad quoting, a wrong field count, a duplicate column or config, no configs)
/// throw Error as `source:line:field: what` (field is 1-based, left out when not one field's).
std::vector<Config> parse_configs(std::string_view text, const std::string &source);

/// Reads and parses a configs file; errors name the file as given.
std::vector<Config> read_configs(const std::string &path);

} // namespace kopt::harness
