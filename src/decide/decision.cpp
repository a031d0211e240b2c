#include "decide/decision.hpp"

#include "util/enum_names.hpp"

namespace kopt::decide {

namespace {

constexpr std::array<util::EnumName<Verdict>, 6> kVerdicts = {{{Verdict::keep, "keep"},
                                                               {Verdict::tie, "tie"},
                                                               {Verdict::regression, "regression"},
                                                               {Verdict::split, "split"},
                                                               {Verdict::incorrect, "incorrect"},
                                                               {Verdict::failed, "failed"}}};
constexpr std::array<util::EnumName<State>, 3> kStates = {
    {{State::better, "better"}, {State::worse, "worse"}, {State::tie, "tie"}}};
constexpr std::array<util::EnumName<Method>, 2> kMethods = {
    {{Method::paired, "paired"}, {Method::means, "means"}}};
constexpr std::array<util::EnumName<Weighting>, 3> kWeightings = {
    {{Weighting::equal, "equal"}, {Weighting::count, "count"}, {Weighting::traffic, "traffic"}}};

} // namespace

const char *to_string(Verdict verdict) { return util::name_of(kVerdicts, verdict); }

Verdict parse_verdict(const std::string &text, const std::string &where) {
  return util::parse_name(kVerdicts, text, where);
}

const char *to_string(Method method) { return util::name_of(kMethods, method); }

Method parse_method(const std::string &text, const std::string &where) {
  return util::parse_name(kMethods, text, where);
}

const char *to_string(Weighting weighting) { return util::name_of(kWeightings, weighting); }

Weighting parse_weighting(const std::string &text, const std::string &where) {
  return util::parse_name(kWeightings, text, where);
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

const char *to_string(State state) { return util::name_of(kStates, state); }

State parse_state(const std::string &text, const std::string &where) {
  return text.empty() ? State::tie : util::parse_name(kStates, text, where);
}

} // namespace kopt::decide
