#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::heuristic {

/// A shape feature rules test (docs/FORMATS.md):
/// - a product of dispatch columns: "M", "M*N";
/// - the wave fill of a GPU launch that covers M x N with BM x BN tiles, C at a time,
///   "fill(64x128,264)" (C = SMs x tiles resident per SM): the percentage of tile slots its
///   waves use, 100 * T / (ceil(T / C) * C) rounded down, T = ceil(M / BM) * ceil(N / BN) (100
///   when T is 0);
/// - the number of such waves, "waves(64x128,264)": ceil(T / C);
/// - a ratio of two of the above, "waves(32x64,264)/waves(64x64,264)": 1000 * A / B rounded
///   down (0 when B is 0). A threshold on the ratio of two kernels' waves compares their wave
///   costs, with the threshold standing for the ratio of their per-wave times.
/// Thresholds over fills and waves follow wave quantization, which products of M, N and K cannot.
struct Feature {
  enum class Kind { product, fill, waves, ratio };
  std::string name; ///< canonical text: "M*N", "fill(64x128,264)", "waves(16x64,264)/waves(..)"
  Kind kind = Kind::product;
  std::vector<size_t> factors; ///< a product's column indices
  size_t m = 0, n = 0;         ///< a fill's or waves' M and N column indices
  int64_t tile_m = 0, tile_n = 0, slots = 0;
  std::vector<Feature> parts; ///< a ratio's numerator and denominator

  /// The feature's value for `dims`, the values of the dispatch columns in order.
  int64_t value(const std::vector<int64_t> &dims) const;

  /// A C++17 expression of the value over `const std::int64_t* dims`.
  std::string cpp() const;
};

/// Parses a feature over `columns`; an unknown column, a malformed fill or waves, or a ratio of
/// ratios is an Error that starts with `where`.
Feature parse_feature(const std::string &text, const std::vector<std::string> &columns,
                      const std::string &where);

/// One test of a rule: `feature op value` (see Feature).
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
