#include "spec/formula.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

namespace kopt::spec {

namespace {

// A recursive-descent parser of the grammar
//   sum := product (('+' | '-') product)*     product := unary (('*' | '/') unary)*
//   unary := '-' unary | atom                  atom := number | name | name '(' args ')' | '(' sum
//   ')'
class Parser {
public:
  Parser(const std::string &text, const std::string &where) : text_(text), where_(where) {}

  Formula::Node formula() {
    Formula::Node node = sum();
    skip_blanks();
    if (pos_ < text_.size()) {
      fail("an operator (+ - * /)");
    }
    return node;
  }

private:
  Formula::Node sum() { return chain('+', '-', &Parser::product); }

  Formula::Node product() { return chain('*', '/', &Parser::unary); }

  // One level of the grammar: `operand`s joined left to right by either of two operators.
  Formula::Node chain(char op1, char op2, Formula::Node (Parser::*operand)()) {
    Formula::Node left = (this->*operand)();
    while (next_is(op1) || next_is(op2)) {
      char op = text_[pos_++];
      left = Formula::Node{op, 0, "", {std::move(left), (this->*operand)()}};
    }
    return left;
  }

  Formula::Node unary() {
    if (next_is('-')) {
      ++pos_;
      return Formula::Node{'~', 0, "", {unary()}};
    }
    return atom();
  }

  Formula::Node atom() {
    if (++depth_ > 100) { // the parser recurses: a bounded nesting only
      fail("at most 100 nested parentheses");
    }
    Formula::Node node;
    if (next_is('(')) {
      ++pos_;
      node = sum();
      expect(')');
    } else if (pos_ < text_.size() &&
               (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      node = number();
    } else if (pos_ < text_.size() &&
               (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      node = name();
    } else {
      fail("a number, a config column or '('");
    }
    --depth_;
    return node;
  }

  Formula::Node number() {
    const char *start = text_.c_str() + pos_;
    char *end = nullptr;
    double value = std::strtod(start, &end);
    if (end == start || !std::isfinite(value)) {
      fail("a number");
    }
    pos_ += static_cast<size_t>(end - start);
    return Formula::Node{'n', value, "", {}};
  }

  Formula::Node name() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string word = text_.substr(start, pos_ - start);
    if (!next_is('(')) {
      return Formula::Node{'c', 0, word, {}};
    }
    size_t arity = word == "ceil" || word == "floor" ? 1 : word == "min" || word == "max" ? 2 : 0;
    if (arity == 0) {
      pos_ = start;
      fail("a function ceil, floor, min or max");
    }
    ++pos_;
    Formula::Node node{'f', 0, word, {sum()}};
    if (arity == 2) {
      expect(',');
      node.args.push_back(sum());
    }
    expect(')');
    return node;
  }

  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool next_is(char c) {
    skip_blanks();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  void expect(char c) {
    if (!next_is(c)) {
      fail(std::string("'") + c + "'");
    }
    ++pos_;
  }

  [[noreturn]] void fail(const std::string &what) {
    skip_blanks();
    std::string got = pos_ < text_.size() ? "'" + text_.substr(pos_, 1) + "'" : "the end";
    throw Error(where_ + ": expected " + what + " at character " + std::to_string(pos_ + 1) +
                " of '" + util::excerpt(text_, 200) + "', got " + got);
  }

  const std::string &text_;
  const std::string &where_;
  size_t pos_ = 0;
  int depth_ = 0;
};

void collect_columns(const Formula::Node &node, std::set<std::string> &out) {
  if (node.op == 'c') {
    out.insert(node.name);
  }
  for (const Formula::Node &arg : node.args) {
    collect_columns(arg, out);
  }
}

double value_of(const Formula::Node &node, const std::map<std::string, double> &values) {
  auto arg = [&](size_t i) { return value_of(node.args[i], values); };
  switch (node.op) {
  case 'n':
    return node.number;
  case 'c': {
    auto it = values.find(node.name);
    if (it == values.end()) {
      throw Error("no value for config column '" + node.name + "'");
    }
    return it->second;
  }
  case '~':
    return -arg(0);
  case '+':
    return arg(0) + arg(1);
  case '-':
    return arg(0) - arg(1);
  case '*':
    return arg(0) * arg(1);
  case '/':
    return arg(0) / arg(1);
  default:
    break;
  }
  if (node.name == "ceil") {
    return std::ceil(arg(0));
  }
  if (node.name == "floor") {
    return std::floor(arg(0));
  }
  return node.name == "min" ? std::min(arg(0), arg(1)) : std::max(arg(0), arg(1));
}

} // namespace

Formula Formula::parse(const std::string &text, const std::string &where) {
  if (text.size() > 1000) {
    throw Error(where + ": expected a formula of at most 1000 characters, got " +
                std::to_string(text.size()));
  }
  Formula formula;
  formula.text_ = text;
  formula.root_ = Parser(text, where).formula();
  return formula;
}

std::vector<std::string> Formula::columns() const {
  std::set<std::string> names;
  collect_columns(root_, names);
  return {names.begin(), names.end()};
}

double Formula::evaluate(const std::map<std::string, double> &values) const {
  return value_of(root_, values);
}

} // namespace kopt::spec
