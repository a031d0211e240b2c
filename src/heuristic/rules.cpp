#include "heuristic/rules.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <limits>

namespace kopt::heuristic {

namespace {

const std::vector<std::string> kOps = {"<", "<=", "==", "!=", ">=", ">"};

std::string got(const nlohmann::json &value) {
  if (value.is_string()) {
    return "'" + value.get<std::string>() + "'";
  }
  if (value.is_array()) {
    return "an array";
  }
  if (value.is_object()) {
    return "an object";
  }
  return value.dump();
}

// Splits "M*N" into its column names; trims blanks around each factor.
std::vector<std::string> factors(const std::string &feature) {
  std::vector<std::string> parts;
  for (const auto &part : util::split(feature, '*')) {
    parts.emplace_back(util::trim(part));
  }
  return parts;
}

// Returns the index of every factor of `feature` in `columns`; throws naming `where`.
std::vector<size_t> factor_indices(const std::string &feature,
                                   const std::vector<std::string> &columns,
                                   const std::string &where) {
  std::vector<size_t> indices;
  for (const auto &part : factors(feature)) {
    auto it = std::find(columns.begin(), columns.end(), part);
    if (it == columns.end()) {
      std::string hint = util::nearest(part, columns);
      throw Error(where + ": unknown feature '" + part +
                  "' (dispatch columns: " + util::join(columns, ", ") + ")" +
                  (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
    }
    indices.push_back(static_cast<size_t>(it - columns.begin()));
  }
  return indices;
}

Condition parse_condition(const nlohmann::json &j, const std::vector<std::string> &columns,
                          const std::string &where) {
  if (!j.is_array() || j.size() != 3) {
    throw Error(where + ": expected [feature, op, value], got " + got(j));
  }
  Condition c;
  if (!j[0].is_string()) {
    throw Error(where + "[0]: expected a feature name, got " + got(j[0]));
  }
  factor_indices(j[0].get<std::string>(), columns, where + "[0]");
  c.feature = util::join(factors(j[0].get<std::string>()), "*");
  if (!j[1].is_string() ||
      std::find(kOps.begin(), kOps.end(), j[1].get<std::string>()) == kOps.end()) {
    throw Error(where + "[1]: expected one of " + util::join(kOps, ", ") + ", got " + got(j[1]));
  }
  c.op = j[1].get<std::string>();
  if (!j[2].is_number_integer()) {
    throw Error(where + "[2]: expected an integer, got " + got(j[2]));
  }
  c.value = j[2].get<int64_t>();
  return c;
}

bool holds(const std::string &op, int64_t lhs, int64_t rhs) {
  if (op == "<") {
    return lhs < rhs;
  }
  if (op == "<=") {
    return lhs <= rhs;
  }
  if (op == "==") {
    return lhs == rhs;
  }
  if (op == "!=") {
    return lhs != rhs;
  }
  if (op == ">=") {
    return lhs >= rhs;
  }
  return lhs > rhs;
}

std::string int64_literal(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) {
    return "(std::int64_t{-9223372036854775807} - 1)";
  }
  return "std::int64_t{" + std::to_string(value) + "}";
}

} // namespace

std::vector<std::string> RuleList::kernels() const {
  std::vector<std::string> names;
  for (const auto &rule : rules) {
    names.push_back(rule.kernel);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

RuleList parse_rules(const nlohmann::json &j, const std::vector<std::string> &columns,
                     const std::string &where) {
  if (!j.is_object()) {
    throw Error(where + ": expected an object {\"rules\": [...]}, got " + got(j));
  }
  for (const auto &[key, unused] : j.items()) {
    if (key != "rules") {
      std::string hint = util::nearest(key, {"rules"});
      throw Error(where + ": " + key + ": unknown field" +
                  (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
    }
  }
  if (!j.contains("rules")) {
    throw Error(where + ": rules: missing required field");
  }
  const auto &rules = j.at("rules");
  if (!rules.is_array()) {
    throw Error(where + ": rules: expected an array, got " + got(rules));
  }
  RuleList list;
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string at = where + ": rules[" + std::to_string(i) + "]";
    const auto &r = rules[i];
    if (!r.is_object()) {
      throw Error(at + ": expected an object, got " + got(r));
    }
    for (const auto &[key, unused] : r.items()) {
      if (key != "if" && key != "kernel") {
        std::string hint = util::nearest(key, {"if", "kernel"});
        throw Error(at + "." + key + ": unknown field" +
                    (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
      }
    }
    Rule rule;
    if (!r.contains("kernel")) {
      throw Error(at + ".kernel: missing required field");
    }
    if (!r.at("kernel").is_string() || r.at("kernel").get<std::string>().empty()) {
      throw Error(at + ".kernel: expected a kernel name, got " + got(r.at("kernel")));
    }
    rule.kernel = r.at("kernel").get<std::string>();
    if (r.contains("if")) {
      const auto &conditions = r.at("if");
      if (!conditions.is_array()) {
        throw Error(at + ".if: expected an array of [feature, op, value], got " + got(conditions));
      }
      for (size_t c = 0; c < conditions.size(); ++c) {
        rule.conditions.push_back(
            parse_condition(conditions[c], columns, at + ".if[" + std::to_string(c) + "]"));
      }
    }
    list.rules.push_back(std::move(rule));
  }
  return list;
}

nlohmann::json to_json(const RuleList &rules) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &rule : rules.rules) {
    nlohmann::json r = nlohmann::json::object();
    if (!rule.conditions.empty()) {
      nlohmann::json conditions = nlohmann::json::array();
      for (const auto &c : rule.conditions) {
        conditions.push_back({c.feature, c.op, c.value});
      }
      r["if"] = std::move(conditions);
    }
    r["kernel"] = rule.kernel;
    out.push_back(std::move(r));
  }
  return {{"rules", out}};
}

std::string evaluate(const RuleList &rules, const std::vector<std::string> &columns,
                     const std::vector<int64_t> &dims) {
  if (dims.size() != columns.size()) {
    throw Error("heuristic: expected " + std::to_string(columns.size()) + " dimensions (" +
                util::join(columns, ", ") + "), got " + std::to_string(dims.size()));
  }
  for (const auto &rule : rules.rules) {
    bool all = true;
    for (const auto &c : rule.conditions) {
      int64_t value = 1;
      for (size_t index : factor_indices(c.feature, columns, "heuristic")) {
        value *= dims[index];
      }
      if (!holds(c.op, value, c.value)) {
        all = false;
        break;
      }
    }
    if (all) {
      return rule.kernel;
    }
  }
  return "";
}

std::string emit_cpp(const RuleList &rules, const std::vector<std::string> &columns) {
  std::string body;
  bool uses_dims = false;
  bool unconditional = false;
  for (size_t i = 0; i < rules.rules.size() && !unconditional; ++i) {
    const Rule &rule = rules.rules[i];
    std::string result = "return \"" + rule.kernel + "\";";
    if (rule.conditions.empty()) {
      body += "  " + result + " // rule " + std::to_string(i) + "\n";
      unconditional = true;
      break;
    }
    std::vector<std::string> tests;
    for (const auto &c : rule.conditions) {
      std::vector<std::string> terms;
      for (size_t index : factor_indices(c.feature, columns, "heuristic")) {
        terms.push_back("dims[" + std::to_string(index) + "]");
      }
      std::string lhs = util::join(terms, " * ");
      tests.push_back((terms.size() > 1 ? "(" + lhs + ")" : lhs) + " " + c.op + " " +
                      int64_literal(c.value));
    }
    uses_dims = true;
    std::vector<std::string> readable;
    for (const auto &c : rule.conditions) {
      readable.push_back(c.feature + " " + c.op + " " + std::to_string(c.value));
    }
    body += "  // rule " + std::to_string(i) + ": " + util::join(readable, " && ") + "\n";
    body += "  if (" + util::join(tests, " && ") + ") {\n    " + result + "\n  }\n";
  }
  if (!uses_dims) {
    body = "  (void)dims;\n" + body;
  }
  if (!unconditional) {
    body += "  return nullptr;\n";
  }
  return body;
}

} // namespace kopt::heuristic
