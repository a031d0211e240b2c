#include "decide/decision.hpp"

#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace kopt::decide {

namespace {

// decision.json's string fields by name: one list for its writer and its reader.
template <typename D> util::TextFields<util::TextOf<D>> required_texts(D &d) {
  return {{"family", &d.family},       {"candidate", &d.candidate},
          {"hash", &d.hash},           {"best", &d.best},
          {"best_hash", &d.best_hash}, {"target", &d.target},
          {"date", &d.date},           {"measured_by", &d.measured_by},
          {"reason", &d.reason},       {"split_advice", &d.split_advice}};
}

// Absent in decisions written before these were kept.
template <typename D> util::TextFields<util::TextOf<D>> later_texts(D &d) {
  return {{"identical_to", &d.identical_to},
          {"build", &d.build},
          {"build_flags", &d.build_flags},
          {"configs_hash", &d.configs_hash},
          {"arrangement", &d.arrangement}};
}

} // namespace

nlohmann::json to_json(const Decision &d) {
  auto row_json = [](const ClassRow &row) {
    return nlohmann::json{
        {"class", row.config_class},
        {"configs", row.configs},
        {"best_us", row.best_us},
        {"candidate_us", row.candidate_us},
        {"ratio", row.ratio},
        {"change", row.change},
        {"state", to_string(row.state)},
        {"repeated", row.repeated},
        {"pending", row.pending},
        {"low", row.has_interval ? nlohmann::json(row.low) : nlohmann::json(nullptr)},
        {"high", row.has_interval ? nlohmann::json(row.high) : nlohmann::json(nullptr)}};
  };
  nlohmann::json traffic = nullptr;
  if (d.traffic) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ClassRow &row : d.traffic->classes) {
      rows.push_back(row_json(row));
      rows.back()["share"] = row.share;
    }
    traffic = {
        {"calls", d.traffic->calls}, {"classes", rows}, {"overall", row_json(d.traffic->overall)}};
  }
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassRow &row : d.classes) {
    classes.push_back(row_json(row));
  }
  nlohmann::json incorrect = nlohmann::json::array();
  for (const ConfigError &e : d.incorrect) {
    incorrect.push_back({{"config", e.config},
                         {"err", e.err_known ? nlohmann::json(e.err) : nlohmann::json(nullptr)}});
  }
  nlohmann::json outside = nlohmann::json::array();
  for (const OutsideKernel &k : d.outside_regex) {
    outside.push_back({{"kernel", k.kernel}, {"share", k.share}, {"configs", k.configs}});
  }
  nlohmann::json light = d.speed_of_light ? to_json(*d.speed_of_light) : nlohmann::json(nullptr);
  nlohmann::json j{{"configs", d.configs},
                   {"method", to_string(d.method)},
                   {"rounds", d.rounds},
                   {"noise", d.options.threshold},
                   {"confidence", d.options.confidence},
                   {"max_regression", d.options.max_regression},
                   {"allow_harness_time", d.options.harness_time == HarnessTime::allow},
                   {"allow_mixed_timers", d.options.mixed_timers == MixedTimers::allow},
                   {"allow_mixed_builds", d.options.mixed_builds == MixedBuilds::allow},
                   {"weighting", to_string(d.options.weighting)},
                   {"verdict", to_string(d.verdict)},
                   {"classes", classes},
                   {"winning", d.winning},
                   {"incorrect", incorrect},
                   {"overall", d.overall ? row_json(*d.overall) : nlohmann::json(nullptr)},
                   {"traffic", traffic},
                   {"counts_as_regression", d.counts_as_regression()},
                   {"notes", d.notes},
                   {"outside_kernel_regex", outside},
                   {"speed_of_light", light}};
  util::put_texts(j, required_texts(d));
  util::put_texts(j, later_texts(d));
  return j;
}

namespace {

constexpr double kMaxNumber = std::numeric_limits<double>::max();

// Returns j[key] as a finite number in [low, high] (read back by record: a NaN or negative
// threshold or time would decide nothing the way it claims to).
double number_in(const nlohmann::json &j, const char *key, double low, double high,
                 const std::string &where) {
  double value = util::json_field<double>(j, key, where);
  if (!std::isfinite(value) || value < low || value > high) {
    std::string range = high == kMaxNumber ? ">= " + util::format_number(low)
                                           : "in [" + util::format_number(low) + ", " +
                                                 util::format_number(high) + "]";
    throw Error(where + ": " + key + ": expected a finite number " + range + ", got " +
                util::format_number(value));
  }
  return value;
}

ClassRow row_from_json(const nlohmann::json &j, const std::string &where) {
  ClassRow row;
  row.config_class = util::json_field<std::string>(j, "class", where);
  row.configs = static_cast<int>(util::json_int_in(j, "configs", 0, INT32_MAX, where));
  row.best_us = number_in(j, "best_us", 0, kMaxNumber, where);
  row.candidate_us = number_in(j, "candidate_us", 0, kMaxNumber, where);
  row.ratio = number_in(j, "ratio", 0, kMaxNumber, where);
  row.change = number_in(j, "change", -1, kMaxNumber, where);
  row.state = parse_state(util::json_field<std::string>(j, "state", where), where + ": state");
  row.repeated = util::json_field<bool>(j, "repeated", where);
  // Written since decisions are paired; older decisions lack them and still load.
  row.pending = util::json_field_or<bool>(j, "pending", false, where);
  auto low = util::json_field_or<nlohmann::json>(j, "low", nullptr, where);
  auto high = util::json_field_or<nlohmann::json>(j, "high", nullptr, where);
  row.has_interval = !low.is_null() && !high.is_null();
  if (row.has_interval) {
    row.low = number_in(j, "low", -1, kMaxNumber, where);
    row.high = number_in(j, "high", row.low, kMaxNumber, where);
  }
  return row;
}

Traffic traffic_from_json(const nlohmann::json &j, const std::string &where) {
  Traffic t;
  t.calls = number_in(j, "calls", 0, kMaxNumber, where);
  t.classes = util::json_items(j, "classes", where, [](const nlohmann::json &row, const auto &at) {
    ClassRow read = row_from_json(row, at);
    read.share = number_in(row, "share", 0, 1, at);
    return read;
  });
  t.overall =
      row_from_json(util::json_field<nlohmann::json>(j, "overall", where), where + ": overall");
  return t;
}

// The candidate's kernels outside kernel_regex; absent in older decisions.
std::vector<OutsideKernel> outside_from_json(const nlohmann::json &j, const std::string &source) {
  return util::json_items(
      j, "outside_kernel_regex", source,
      [](const nlohmann::json &k, const std::string &where) {
        return OutsideKernel{
            util::json_field<std::string>(k, "kernel", where),
            util::json_field<double>(k, "share", where),
            static_cast<int>(util::json_int_in(k, "configs", 0, INT32_MAX, where))};
      },
      true);
}

// The allow_* options: what the decision compared although it is refused by default.
void read_allowances(const nlohmann::json &j, const std::string &source, Options &options) {
  options.harness_time = util::json_field<bool>(j, "allow_harness_time", source)
                             ? HarnessTime::allow
                             : HarnessTime::refuse;
  // Absent in decisions written before the option existed: they refused mixed timers.
  options.mixed_timers =
      j.contains("allow_mixed_timers") && util::json_field<bool>(j, "allow_mixed_timers", source)
          ? MixedTimers::allow
          : MixedTimers::refuse;
  options.mixed_builds =
      j.contains("allow_mixed_builds") && util::json_field<bool>(j, "allow_mixed_builds", source)
          ? MixedBuilds::allow
          : MixedBuilds::refuse;
}

std::vector<ConfigError> incorrect_from_json(const nlohmann::json &j, const std::string &source) {
  return util::json_items(j, "incorrect", source,
                          [](const nlohmann::json &c, const std::string &where) {
                            ConfigError e;
                            e.config = util::json_field<std::string>(c, "config", where);
                            auto err = util::json_field<nlohmann::json>(c, "err", where);
                            e.err_known = !err.is_null();
                            e.err = e.err_known ? util::json_field<double>(c, "err", where) : 0;
                            return e;
                          });
}

} // namespace

Decision decision_from_json(const nlohmann::json &j, const std::string &source) {
  Decision d;
  util::get_texts(j, required_texts(d), source);
  util::get_texts(j, later_texts(d), source, "");
  d.options.threshold = number_in(j, "noise", 0, 1, source);
  d.options.max_regression = number_in(j, "max_regression", 0, 1, source);
  d.options.confidence = j.contains("confidence") ? number_in(j, "confidence", 0.5, 1, source)
                                                  : spec::defaults::keep_confidence;
  d.method = parse_method(util::json_field_or<std::string>(j, "method", "means", source),
                          source + ": method");
  d.rounds = static_cast<int>(util::json_int_in_or(j, "rounds", 0, INT32_MAX, 0, source));
  d.notes = util::json_field_or<std::vector<std::string>>(j, "notes", {}, source);
  d.outside_regex = outside_from_json(j, source);
  read_allowances(j, source, d.options);
  d.configs = static_cast<int>(util::json_int_in_or(j, "configs", 0, INT32_MAX, 0, source));
  d.verdict =
      parse_verdict(util::json_field<std::string>(j, "verdict", source), source + ": verdict");
  d.classes = util::json_items(j, "classes", source, row_from_json);
  d.winning = util::json_field<std::vector<std::string>>(j, "winning", source);
  d.incorrect = incorrect_from_json(j, source);
  auto overall = util::json_field<nlohmann::json>(j, "overall", source);
  if (!overall.is_null()) {
    d.overall = row_from_json(overall, source + ": overall");
  }
  d.options.weighting = parse_weighting(
      util::json_field_or<std::string>(j, "weighting", "equal", source), source + ": weighting");
  // Absent in decisions written before traffic rows existed, null without a count column.
  auto traffic = util::json_field_or<nlohmann::json>(j, "traffic", nullptr, source);
  if (!traffic.is_null()) {
    d.traffic = traffic_from_json(traffic, source + ": traffic");
  }
  auto light = util::json_field_or<nlohmann::json>(j, "speed_of_light", nullptr, source);
  if (!light.is_null()) {
    d.speed_of_light = speed_of_light_from_json(light, source + ": speed_of_light");
  }
  return d;
}

Decision read_decision(const std::filesystem::path &path) {
  Decision decision = decision_from_json(util::read_json(path), path.string());
  decision.file = path.string();
  return decision;
}

void write_decision(const std::filesystem::path &path, const Decision &decision) {
  util::write_json_atomic(path, to_json(decision));
}

} // namespace kopt::decide
