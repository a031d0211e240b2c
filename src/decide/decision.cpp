#include "decide/decision.hpp"

#include "util/error.hpp"

namespace kopt::decide {

const char *to_string(Verdict verdict) {
  switch (verdict) {
  case Verdict::keep:
    return "keep";
  case Verdict::tie:
    return "tie";
  case Verdict::regression:
    return "regression";
  case Verdict::split:
    return "split";
  case Verdict::incorrect:
    return "incorrect";
  case Verdict::failed:
    return "failed";
  }
  return "?";
}

Verdict parse_verdict(const std::string &text, const std::string &where) {
  for (Verdict v : {Verdict::keep, Verdict::tie, Verdict::regression, Verdict::split,
                    Verdict::incorrect, Verdict::failed}) {
    if (text == to_string(v)) {
      return v;
    }
  }
  throw Error(where + ": expected one of keep, tie, regression, split, incorrect, failed, got '" +
              text + "'");
}

const char *to_string(Method method) { return method == Method::paired ? "paired" : "means"; }

const char *to_string(Weighting weighting) {
  switch (weighting) {
  case Weighting::equal:
    return "equal";
  case Weighting::count:
    return "count";
  case Weighting::traffic:
    return "traffic";
  }
  return "?";
}

const std::vector<ClassRow> &Decision::judged_classes() const {
  return options.weighting == Weighting::traffic && traffic ? traffic->classes : classes;
}

bool Decision::counts_as_regression() const {
  if (verdict != Verdict::regression) {
    return false;
  }
  for (const ClassRow &row : judged_classes()) {
    if (row.state == State::worse && !row.repeated) {
      return true;
    }
  }
  return false;
}

const char *to_string(State state) {
  switch (state) {
  case State::better:
    return "better";
  case State::worse:
    return "worse";
  case State::tie:
    return "tie";
  }
  return "?";
}

State parse_state(const std::string &text, const std::string &where) {
  if (text == "better") {
    return State::better;
  }
  if (text == "worse") {
    return State::worse;
  }
  if (text == "tie" || text.empty()) {
    return State::tie;
  }
  throw Error(where + ": expected one of better, worse, tie, got '" + text + "'");
}

} // namespace kopt::decide
