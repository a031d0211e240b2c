#include "ledger/attempt.hpp"

#include "ledger/ledger.hpp"
#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <limits>

namespace kopt::ledger {

namespace {

using nlohmann::json;

constexpr std::array<util::EnumName<Kind>, 5> kKinds = {{{Kind::baseline, "baseline"},
                                                         {Kind::attempt, "attempt"},
                                                         {Kind::rebase, "rebase"},
                                                         {Kind::land, "land"},
                                                         {Kind::stop, "stop"}}};
constexpr std::array<util::EnumName<Event>, 3> kEvents = {
    {{Event::none, ""}, {Event::abandoned, "abandoned"}, {Event::stopped, "stopped"}}};

json number_json(const std::optional<double> &value) { return value ? json(*value) : json(); }

// A field that older lines lack or hold as null: absent then, `read` of it else.
template <typename T, typename Read>
std::optional<T> optional_field(const json &j, const char *key, Read read) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::nullopt : std::optional<T>(read(*it));
}

std::optional<double> number_field(const json &j, const char *key, const std::string &where) {
  return optional_field<double>(
      j, key, [&](const json &) { return util::json_field<double>(j, key, where); });
}

Interval interval_field(const json &j, const char *key, const std::string &where) {
  return optional_field<std::pair<double, double>>(j, key, [&](const json &value) {
    if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
      throw Error(where + ": " + key + ": expected [low, high] or null, got " +
                  util::dump_json(value, -1));
    }
    return std::make_pair(value[0].get<double>(), value[1].get<double>());
  });
}

// A closed set's value: `parse` of the field's text, the error naming the field.
template <typename E, typename Parse>
std::optional<E> named_field(const json &j, const char *key, const std::string &where,
                             Parse parse) {
  return optional_field<E>(j, key, [&](const json &) {
    return parse(util::json_field<std::string>(j, key, where), where + ": " + key);
  });
}

// A row's state as decide concluded it; absent, null or "" in lines that did not keep it.
std::optional<decide::State> state_field(const json &j, const char *key, const std::string &where) {
  auto text = optional_field<std::string>(
      j, key, [&](const json &) { return util::json_field<std::string>(j, key, where); });
  if (!text || text->empty()) {
    return std::nullopt;
  }
  return decide::parse_state(*text, where + ": " + key);
}

AttemptClass class_from_json(const json &j, const std::string &where) {
  if (!j.is_object()) {
    throw Error(where + ": expected an object, got " + util::dump_json(j, -1));
  }
  AttemptClass row;
  row.config_class = util::json_field<std::string>(j, "class", where);
  row.best_us = number_field(j, "best_us", where);
  row.candidate_us = number_field(j, "candidate_us", where);
  row.change = util::json_field<double>(j, "change", where);
  row.interval = interval_field(j, "interval", where);
  row.state = state_field(j, "state", where);
  return row;
}

// The fields of an attempt line beyond those every kind may carry.
void attempt_fields_from_json(const json &j, const std::string &where, Attempt &a) {
  a.overall_change = number_field(j, "overall_change", where);
  a.overall_interval = interval_field(j, "overall_interval", where);
  a.overall_state = state_field(j, "overall_state", where);
  a.method = named_field<decide::Method>(j, "method", where, decide::parse_method);
  a.classes = util::json_items(j, "classes", where, class_from_json, true);
  a.traffic = optional_field<AttemptClass>(
      j, "traffic", [&](const json &t) { return class_from_json(t, where + ": traffic"); });
  a.weighting = named_field<decide::Weighting>(j, "weighting", where, decide::parse_weighting);
  a.consecutive_regressions = static_cast<int>(util::json_int_in_or(
      j, "consecutive_regressions", 0, std::numeric_limits<int>::max(), 0, where));
  a.event = util::parse_name(kEvents, util::json_field_or<std::string>(j, "event", "", where),
                             where + ": event");
  a.best_us = number_field(j, "best_us", where);
}

json measured_fields(const Attempt &a) {
  return {{"build", a.build},
          {"build_flags", a.build_flags},
          {"configs", a.configs},
          {"configs_hash", a.configs_hash}};
}

json baseline_json(const Attempt &a) {
  json line{{"kind", "baseline"},
            {"date", a.date},
            {"candidate", a.candidate},
            {"hash", a.hash},
            {"geomean_us", a.geomean_us.value_or(0)},
            {"measured_by", a.measured_by},
            {"target", a.target},
            {"kernels", a.kernels},
            {"hypothesis", a.hypothesis}};
  line.update(measured_fields(a));
  return line;
}

json attempt_json(const Attempt &a) {
  json classes = json::array();
  for (const AttemptClass &row : a.classes) {
    classes.push_back(to_json(row));
  }
  json line{{"kind", "attempt"},
            {"date", a.date},
            {"candidate", a.candidate},
            {"hash", a.hash},
            {"best", a.best},
            {"best_hash", a.best_hash},
            {"proposal", a.proposal},
            {"target", a.target},
            {"hypothesis", a.hypothesis},
            {"verdict", a.verdict ? json(decide::to_string(*a.verdict)) : json()},
            {"reason", a.reason},
            {"overall_change", number_json(a.overall_change)},
            {"overall_interval", interval_json(a.overall_interval)},
            {"overall_state", a.overall_state ? json(decide::to_string(*a.overall_state)) : json()},
            {"method", a.method ? json(decide::to_string(*a.method)) : json()},
            {"classes", classes},
            {"traffic", a.traffic ? to_json(*a.traffic) : json()},
            {"weighting", a.weighting ? json(decide::to_string(*a.weighting)) : json()},
            {"consecutive_regressions", a.consecutive_regressions},
            {"event", to_string(a.event)},
            {"geomean_us", number_json(a.geomean_us)},
            {"best_us", number_json(a.best_us)},
            {"measured_by", a.measured_by},
            {"kernels", a.kernels}};
  line.update(measured_fields(a));
  if (!a.other_build.empty()) {
    line["other_build"] = a.other_build;
  }
  return line;
}

} // namespace

nlohmann::json interval_json(const Interval &interval) {
  return interval ? json{interval->first, interval->second} : json();
}

const char *to_string(Kind kind) { return util::name_of(kKinds, kind); }

const char *to_string(Event event) { return util::name_of(kEvents, event); }

nlohmann::json to_json(const AttemptClass &row, RowShape shape) {
  json j{{"class", row.config_class},
         {"change", row.change},
         {"interval", interval_json(row.interval)}};
  if (shape == RowShape::log) {
    j["state"] = row.state ? decide::to_string(*row.state) : "";
    return j;
  }
  if (row.best_us) {
    j["best_us"] = *row.best_us;
  }
  if (row.candidate_us) {
    j["candidate_us"] = *row.candidate_us;
  }
  if (row.state) {
    j["state"] = decide::to_string(*row.state);
  }
  return j;
}

AttemptClass attempt_class(const decide::ClassRow &row) {
  return {row.config_class,
          row.best_us,
          row.candidate_us,
          row.change,
          row.has_interval ? Interval(std::pair{row.low, row.high}) : std::nullopt,
          row.state};
}

void Attempt::set_measured(const profile::Measurement &m) {
  build = m.build;
  build_flags = m.build_flags;
  configs = static_cast<int>(m.configs.size());
  configs_hash = m.configs_hash;
}

Attempt attempt_from_json(const nlohmann::json &j, const std::string &where, int line) {
  Attempt a;
  a.line = line;
  a.kind =
      util::parse_name(kKinds, util::json_field<std::string>(j, "kind", where), where + ": kind");
  // The fields a kind lacks, or a line written before they were kept, stay "".
  util::get_texts(j,
                  {{"date", &a.date},
                   {"candidate", &a.candidate},
                   {"hash", &a.hash},
                   {"best", &a.best},
                   {"best_hash", &a.best_hash},
                   {"from_hash", &a.from_hash},
                   {"proposal", &a.proposal},
                   {"target", &a.target},
                   {"hypothesis", &a.hypothesis},
                   {"reason", &a.reason},
                   {"measured_by", &a.measured_by},
                   {"build", &a.build},
                   {"build_flags", &a.build_flags},
                   {"configs_hash", &a.configs_hash},
                   {"other_build", &a.other_build}},
                  where, "");
  a.geomean_us = number_field(j, "geomean_us", where);
  a.kernels = util::json_field_or<std::vector<std::string>>(j, "kernels", {}, where);
  a.configs = static_cast<int>(
      util::json_int_in_or(j, "configs", 0, std::numeric_limits<int>::max(), 0, where));
  a.removed = util::json_field_or<std::vector<std::string>>(j, "removed", {}, where);
  a.rebased = util::json_field_or<std::vector<std::string>>(j, "rebased", {}, where);
  if (a.kind == Kind::attempt) {
    a.verdict = decide::parse_verdict(util::json_field<std::string>(j, "verdict", where),
                                      where + ": verdict");
    attempt_fields_from_json(j, where, a);
  }
  return a;
}

nlohmann::json to_json(const Attempt &a) {
  switch (a.kind) {
  case Kind::baseline:
    return baseline_json(a);
  case Kind::attempt:
    return attempt_json(a);
  case Kind::rebase:
    return {{"kind", "rebase"},  {"date", a.date},           {"candidate", a.candidate},
            {"best", a.best},    {"from_hash", a.from_hash}, {"hash", a.hash},
            {"reason", a.reason}};
  case Kind::land:
    return {{"kind", "land"},       {"date", a.date},    {"candidate", a.candidate},
            {"best", a.best},       {"hash", a.hash},    {"removed", a.removed},
            {"rebased", a.rebased}, {"reason", a.reason}};
  case Kind::stop:
    return {{"kind", "stop"}, {"date", a.date}, {"reason", a.reason}};
  }
  return {};
}

std::vector<Attempt> read_attempt_records(const std::filesystem::path &file) {
  std::vector<Attempt> attempts;
  int line = 0;
  for (const nlohmann::json &j : read_attempts(file)) {
    ++line;
    attempts.push_back(attempt_from_json(j, file.string() + ":" + std::to_string(line), line));
  }
  return attempts;
}

} // namespace kopt::ledger
