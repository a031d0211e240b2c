#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::spec {

/// One JSON object of a spec file being read, with where it sits (file and JSON path) so that
/// every error says `file: path.field: expected X, got Y`.
class Fields {
public:
  /// Wraps `value`, which must be an object; `path` is its JSON path ("" for the root).
  Fields(const nlohmann::json &value, std::string file, std::string path);

  /// Throws for the first key not in `known`, with a "did you mean" hint.
  void reject_unknown(const std::vector<std::string> &known) const;

  /// True when the object holds `key`.
  bool has(const std::string &key) const;

  /// The value of a key that must be present; throws `missing required field` otherwise.
  const nlohmann::json &required(const std::string &key) const;

  /// A required string field.
  std::string string(const std::string &key) const;

  /// An optional string field, `fallback` when absent.
  std::string string_or(const std::string &key, const std::string &fallback) const;

  /// A required array of strings.
  std::vector<std::string> strings(const std::string &key) const;

  /// An optional number field, `fallback` when absent.
  double number_or(const std::string &key, double fallback) const;

  /// An optional integer field, `fallback` when absent.
  int64_t integer_or(const std::string &key, int64_t fallback) const;

  /// An optional true / false field, `fallback` when absent.
  bool boolean_or(const std::string &key, bool fallback) const;

  /// The JSON path of `key` inside this object (`instances[3].TM`).
  std::string path(const std::string &key) const;

  /// The error prefix for `key`: `file: path.key`.
  std::string where(const std::string &key) const;

  /// The error prefix for this object itself.
  std::string where() const;

  const nlohmann::json &json() const { return value_; }
  const std::string &file() const { return file_; }

private:
  const nlohmann::json &value_;
  std::string file_;
  std::string path_;
};

/// Describes a JSON value for `got ...` in errors: strings quoted, containers by kind.
std::string describe(const nlohmann::json &value);

/// Throws `where: expected <what>, got <describe(value)>`.
[[noreturn]] void fail_expected(const std::string &where, const std::string &what,
                                const nlohmann::json &value);

} // namespace kopt::spec
