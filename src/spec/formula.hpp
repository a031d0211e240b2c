#pragma once

#include <map>
#include <string>
#include <vector>

namespace kopt::spec {

/// An arithmetic formula over a config's columns, as family.json writes it: numbers (`128`,
/// `1e6`), column names, `+ - * /`, parentheses, unary minus and the functions `ceil(x)`,
/// `floor(x)`, `min(a, b)` and `max(a, b)`. `M*K + N*K + 2*M*N` is one; so is a lone column.
class Formula {
public:
  /// Parses `text`; errors are kopt::Error `<where>: expected <what> at character <n> of
  /// '<text>', got '<c>'`.
  static Formula parse(const std::string &text, const std::string &where);

  /// The column names the formula reads, sorted, each once.
  std::vector<std::string> columns() const;

  /// The formula's value with each column name standing for its value in `values`; throws
  /// kopt::Error for a column `values` lacks.
  double evaluate(const std::map<std::string, double> &values) const;

  /// The text it was parsed from.
  const std::string &text() const { return text_; }

  /// One operation of the formula's tree.
  struct Node {
    char op = 'n'; ///< 'n' number, 'c' column, 'f' function, '+', '-', '*', '/', '~' (negate)
    double number = 0;
    std::string name; ///< a column's or a function's
    std::vector<Node> args;
  };

private:
  std::string text_;
  Node root_;
};

} // namespace kopt::spec
