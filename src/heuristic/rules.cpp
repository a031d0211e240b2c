#include "heuristic/rules.hpp"

#include "util/error.hpp"
#include "util/json_file.hpp"
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
  return util::dump_json(value, -1);
}

size_t column_index(const std::string &name, const std::vector<std::string> &columns,
                    const std::string &where) {
  auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) {
    std::string hint = util::nearest(name, columns, util::Case::ignore);
    throw Error(where + ": unknown feature '" + name +
                "' (dispatch columns: " + util::join(columns, ", ") + ")" +
                (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
  }
  return static_cast<size_t>(it - columns.begin());
}

// A positive integer written in `text`, or 0.
int64_t positive(const std::string &text) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return std::stoll(text);
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
  c.feature = parse_feature(j[0].get<std::string>(), columns, where + "[0]").name;
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

// "fill(<BM>x<BN>,<C>)" or "waves(<BM>x<BN>,<C>)" without its kind, "<BM>x<BN>,<C>" of `t`.
void parse_tiles(Feature &f, const std::string &t, const std::string &kind,
                 const std::vector<std::string> &columns, const std::string &where) {
  const std::string expected = ": expected " + kind +
                               "(<BM>x<BN>,<C>) with positive integers, e.g. " + kind +
                               "(64x128,264), got '" + t + "'";
  if (t.back() != ')') {
    throw Error(where + expected);
  }
  std::string inside = t.substr(kind.size() + 1, t.size() - kind.size() - 2);
  auto comma = inside.find(',');
  auto x = inside.find('x');
  if (comma == std::string::npos || x == std::string::npos || x > comma) {
    throw Error(where + expected);
  }
  f.tile_m = positive(std::string(util::trim(inside.substr(0, x))));
  f.tile_n = positive(std::string(util::trim(inside.substr(x + 1, comma - x - 1))));
  f.slots = positive(std::string(util::trim(inside.substr(comma + 1))));
  if (f.tile_m == 0 || f.tile_n == 0 || f.slots == 0) {
    throw Error(where + expected);
  }
  f.m = column_index("M", columns, where + ": " + t + " needs dispatch column M");
  f.n = column_index("N", columns, where + ": " + t + " needs dispatch column N");
  f.name = kind + "(" + std::to_string(f.tile_m) + "x" + std::to_string(f.tile_n) + "," +
           std::to_string(f.slots) + ")";
}

} // namespace

Feature parse_feature(const std::string &text, const std::vector<std::string> &columns,
                      const std::string &where) {
  Feature f;
  std::string t(util::trim(text));
  if (std::vector<std::string> sides = util::split_outside_parens(t, '/'); sides.size() > 1) {
    if (sides.size() > 2) {
      throw Error(where + ": '" + t +
                  "': a ratio's sides are products, fills or waves, not ratios");
    }
    f.kind = Feature::Kind::ratio;
    for (const std::string &side : sides) {
      f.parts.push_back(parse_feature(side, columns, where));
    }
    f.name = f.parts[0].name + "/" + f.parts[1].name;
    return f;
  }
  for (const auto &[kind, prefix] : {std::pair{Feature::Kind::fill, std::string("fill")},
                                     std::pair{Feature::Kind::waves, std::string("waves")}}) {
    if (t.rfind(prefix + "(", 0) == 0) {
      f.kind = kind;
      parse_tiles(f, t, prefix, columns, where);
      return f;
    }
  }
  std::vector<std::string> parts;
  for (const auto &part : util::split(t, '*')) {
    parts.emplace_back(util::trim(part));
    f.factors.push_back(column_index(parts.back(), columns, where));
  }
  f.name = util::join(parts, "*");
  return f;
}

int64_t Feature::value(const std::vector<int64_t> &dims) const {
  switch (kind) {
  case Kind::fill:
  case Kind::waves: {
    const int64_t tiles = ((dims[m] + tile_m - 1) / tile_m) * ((dims[n] + tile_n - 1) / tile_n);
    const int64_t waves = (tiles + slots - 1) / slots;
    if (kind == Kind::waves) {
      return waves;
    }
    return tiles <= 0 ? 100 : 100 * tiles / (waves * slots);
  }
  case Kind::ratio: {
    const int64_t below = parts[1].value(dims);
    return below == 0 ? 0 : 1000 * parts[0].value(dims) / below;
  }
  case Kind::product:
    break;
  }
  int64_t v = 1;
  for (size_t index : factors) {
    v *= dims[index];
  }
  return v;
}

std::string Feature::cpp() const {
  auto dim = [](size_t i) { return "dims[" + std::to_string(i) + "]"; };
  switch (kind) {
  case Kind::fill:
  case Kind::waves: {
    auto tiles_of = [&](size_t i, int64_t tile) {
      return "(" + dim(i) + " + " + std::to_string(tile - 1) + ") / " + std::to_string(tile);
    };
    const std::string c = std::to_string(slots);
    const std::string tiles =
        "const std::int64_t t = (" + tiles_of(m, tile_m) + ") * (" + tiles_of(n, tile_n) + "); ";
    if (kind == Kind::waves) {
      return "[&] { " + tiles + "return (t + " + c + " - 1) / " + c + "; }()";
    }
    return "[&] { " + tiles + "return t <= 0 ? std::int64_t{100} : 100 * t / ((t + " + c +
           " - 1) / " + c + " * " + c + "); }()";
  }
  case Kind::ratio:
    return "[&] { const std::int64_t below = " + parts[1].cpp() +
           "; return below == 0 ? std::int64_t{0} : 1000 * " + parts[0].cpp() + " / below; }()";
  case Kind::product:
    break;
  }
  std::vector<std::string> terms;
  for (size_t index : factors) {
    terms.push_back(dim(index));
  }
  std::string product = util::join(terms, " * ");
  return terms.size() > 1 ? "(" + product + ")" : product;
}

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
      if (!holds(c.op, parse_feature(c.feature, columns, "heuristic").value(dims), c.value)) {
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
      tests.push_back(parse_feature(c.feature, columns, "heuristic").cpp() + " " + c.op + " " +
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
