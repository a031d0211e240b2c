#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::heuristic {

/// One test of a rule: `feature op value`, where feature is a dispatch column or a product of
/// columns written "M*N".
struct Condition {
  std::string feature;
  std::string op; ///< <, <=, ==, !=, >=, >
  int64_t value = 0;
};

/// A rule picks `kernel` when every condition holds (an empty list always holds).
struct Rule {
  std::vector<Condition> conditions;
  std::string kernel;
};

/// An ordered rule list: the first rule that holds picks the kernel.
struct RuleList {
  std::vector<Rule> rules;

  /// The kernels the rules can pick, sorted and without repeats (the heuristic set).
  std::vector<std::string> kernels() const;

  /// True when no rules are given.
  bool empty() const { return rules.empty(); }
};

/// Parses {"rules": [...]} (see docs/FORMATS.md); `where` prefixes errors, which name the rule
/// index and field. Features must be products of `columns`.
RuleList parse_rules(const nlohmann::json &j, const std::vector<std::string> &columns,
                     const std::string &where);

/// Serialises a rule list back to the same JSON shape.
nlohmann::json to_json(const RuleList &rules);

/// Returns the kernel the rules pick for `dims` (values of `columns`), or "" when none holds.
std::string evaluate(const RuleList &rules, const std::vector<std::string> &columns,
                     const std::vector<int64_t> &dims);

/// Emits the body of a C++17 function `const char* f(const std::int64_t* dims)` that returns
/// the picked kernel's name or nullptr; `dims` are in `columns` order. Deterministic.
std::string emit_cpp(const RuleList &rules, const std::vector<std::string> &columns);

} // namespace kopt::heuristic
