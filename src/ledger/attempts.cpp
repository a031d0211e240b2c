#include "ledger/detail.hpp"

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <limits>

namespace kopt::ledger {

namespace {

using nlohmann::json;

// The fields each kind of line carries, and the JSON type each must have.
enum class Type { string, number, number_or_null, count };

struct Field {
  const char *name;
  Type type;
};

const std::vector<Field> &fields_of(const std::string &kind) {
  static const std::vector<Field> baseline = {{"date", Type::string},
                                              {"candidate", Type::string},
                                              {"hash", Type::string},
                                              {"geomean_us", Type::number},
                                              {"measured_by", Type::string}};
  static const std::vector<Field> attempt = {{"date", Type::string},
                                             {"candidate", Type::string},
                                             {"hash", Type::string},
                                             {"best", Type::string},
                                             {"best_hash", Type::string},
                                             {"proposal", Type::string},
                                             {"target", Type::string},
                                             {"hypothesis", Type::string},
                                             {"verdict", Type::string},
                                             {"reason", Type::string},
                                             {"overall_change", Type::number_or_null},
                                             {"consecutive_regressions", Type::count},
                                             {"event", Type::string}};
  static const std::vector<Field> rebase = {{"date", Type::string}, {"candidate", Type::string},
                                            {"best", Type::string}, {"from_hash", Type::string},
                                            {"hash", Type::string}, {"reason", Type::string}};
  static const std::vector<Field> land = {{"date", Type::string},
                                          {"candidate", Type::string},
                                          {"best", Type::string},
                                          {"hash", Type::string},
                                          {"reason", Type::string}};
  static const std::vector<Field> stop = {{"date", Type::string}, {"reason", Type::string}};
  return kind == "baseline"  ? baseline
         : kind == "attempt" ? attempt
         : kind == "rebase"  ? rebase
         : kind == "land"    ? land
                             : stop;
}

void check_field(const json &line, const Field &field, const std::string &where) {
  if (!line.contains(field.name)) {
    throw Error(where + ": missing field '" + field.name + "'");
  }
  const json &value = line.at(field.name);
  switch (field.type) {
  case Type::string:
    if (!value.is_string()) {
      throw Error(where + ": field '" + field.name + "': expected a string, got " +
                  util::dump_json(value, -1));
    }
    break;
  case Type::number:
  case Type::number_or_null:
    if (!value.is_number() && !(field.type == Type::number_or_null && value.is_null())) {
      throw Error(where + ": field '" + field.name + "': expected a number" +
                  (field.type == Type::number_or_null ? " or null" : "") + ", got " +
                  util::dump_json(value, -1));
    }
    break;
  case Type::count:
    util::json_int_in(line, field.name, 0, std::numeric_limits<int>::max(), where);
    break;
  }
}

// parse_json says `<file>:1:<column>: ...` of the line alone: the line's number goes in.
json parse_line(const std::string &text, const std::string &file, const std::string &where) {
  try {
    return util::parse_json(text, file);
  } catch (const Error &e) {
    std::string message = e.what();
    for (const std::string &prefix : {file + ":1:", file + ": "}) {
      if (message.rfind(prefix, 0) == 0) {
        throw Error(where + (prefix.back() == ':' ? ":" : ": ") + message.substr(prefix.size()));
      }
    }
    throw;
  }
}

json check_line(const std::string &text, const std::string &file, int number) {
  std::string where = file + ":" + std::to_string(number);
  if (text.empty()) {
    throw Error(where + ": empty line (expected one JSON object per line)");
  }
  json line = parse_line(text, file, where);
  if (!line.is_object()) {
    throw Error(where + ": expected a JSON object, got " + util::dump_json(line, -1));
  }
  if (!line.contains("kind") || !line.at("kind").is_string()) {
    throw Error(where + ": missing field 'kind' (baseline, attempt, rebase, land or stop)");
  }
  std::string kind = line.at("kind").get<std::string>();
  if (kind != "baseline" && kind != "attempt" && kind != "rebase" && kind != "land" &&
      kind != "stop") {
    throw Error(where + ": kind: expected baseline, attempt, rebase, land or stop, got " +
                util::dump_json(line.at("kind"), -1));
  }
  for (const Field &field : fields_of(kind)) {
    check_field(line, field, where);
  }
  return line;
}

} // namespace

namespace detail {

std::string text_or(const json &line, const char *key, const std::string &fallback) {
  auto it = line.find(key);
  return it != line.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::optional<double> number_or_none(const json &line, const char *key) {
  auto it = line.find(key);
  return it != line.end() && it->is_number() ? std::optional(it->get<double>()) : std::nullopt;
}

std::vector<std::string> strings_of(const json &line, const char *key) {
  std::vector<std::string> out;
  auto it = line.find(key);
  if (it != line.end() && it->is_array()) {
    for (const json &s : *it) {
      if (s.is_string()) {
        out.push_back(s.get<std::string>());
      }
    }
  }
  return out;
}

std::optional<std::pair<double, double>> interval_of(const json &line, const char *key) {
  auto it = line.find(key);
  if (it == line.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() ||
      !(*it)[1].is_number()) {
    return std::nullopt;
  }
  return std::pair{(*it)[0].get<double>(), (*it)[1].get<double>()};
}

} // namespace detail

std::vector<json> read_attempts(const std::filesystem::path &file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    return {};
  }
  std::string text = util::read_file(file);
  std::vector<json> lines;
  size_t at = 0;
  for (int number = 1; at < text.size(); ++number) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    lines.push_back(check_line(line, file.string(), number));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

} // namespace kopt::ledger
