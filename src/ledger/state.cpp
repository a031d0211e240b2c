#include "ledger/detail.hpp"

#include "ledger/journal.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"

#include <cstdio>
#include <iostream>

namespace kopt::ledger {

namespace {

nlohmann::json change_json(const ClassChange &c) {
  return {{"class", c.config_class},
          {"best_us", c.best_us},
          {"candidate_us", c.candidate_us},
          {"change", c.change}};
}

ClassChange change_from_json(const nlohmann::json &j, const std::string &where) {
  return {util::json_field<std::string>(j, "class", where),
          util::json_field<double>(j, "best_us", where),
          util::json_field<double>(j, "candidate_us", where),
          util::json_field<double>(j, "change", where)};
}

// The string fields of state.json's records, by name: one list for its writer and its reader.
template <typename R> util::TextFields<util::TextOf<R>> summary_texts(R &r) {
  return {{"date", &r.date},
          {"best", &r.best},
          {"candidate", &r.candidate},
          {"hash", &r.hash},
          {"hypothesis", &r.hypothesis},
          {"target", &r.target}};
}

template <typename R> util::TextFields<util::TextOf<R>> kept_texts(R &k) {
  return {{"date", &k.date},
          {"candidate", &k.candidate},
          {"hash", &k.hash},
          {"status", &k.status},
          {"target", &k.target},
          {"measured_by", &k.measured_by},
          {"hypothesis", &k.hypothesis}};
}

// Written since kept rows name what they measured; older rows lack them.
template <typename R> util::TextFields<util::TextOf<R>> kept_build_texts(R &k) {
  return {{"build", &k.build}, {"build_flags", &k.build_flags}, {"configs_hash", &k.configs_hash}};
}

template <typename R> util::TextFields<util::TextOf<R>> state_texts(R &s) {
  return {{"family", &s.family},
          {"best", &s.best},
          {"best_hash", &s.best_hash},
          {"stop_reason", &s.stop_reason},
          {"stop_date", &s.stop_date}};
}

// The ways out of a state.json lost beside a history: it is never started over silently.
std::string ways_out(const Files &files, size_t lines) {
  return files.attempts().string() + " holds " + std::to_string(lines) +
         (lines == 1 ? " line" : " lines") +
         " of history: restore state.json (e.g. from a backup or git), or rebuild it from "
         "attempts.jsonl with kopt ledger rebuild";
}

} // namespace

namespace detail {

std::string short_hash(const std::string &hash) { return hash.substr(0, 8); }

std::string fixed(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

void commit_change(const Files &files, const State &state, std::vector<nlohmann::json> history,
                   const nlohmann::json &line) {
  history.push_back(line);
  commit(files, {line, to_json(state), render_performance(state, history)});
}

void repair(const Files &files) {
  auto render = [&files](const State &state) {
    return render_performance(state, read_attempts(files.attempts()));
  };
  for (const std::string &note : recover(files, render)) {
    std::cerr << "kopt: ledger: " << note << "\n";
  }
}

Contents read_contents(const Files &files, Recover recovering) {
  if (recovering == Recover::yes) {
    repair(files);
  }
  Contents contents;
  contents.attempts = read_attempts(files.attempts());
  if (std::string what = unreadable_state(files); !what.empty()) {
    if (!contents.attempts.empty()) {
      throw Error(files.state().string() + ": " + what + ", but " +
                  ways_out(files, contents.attempts.size()));
    }
    return contents;
  }
  try {
    contents.state = state_from_json(util::read_json(files.state()), files.state().string());
  } catch (const Error &e) {
    if (contents.attempts.empty()) {
      throw;
    }
    throw Error(std::string(e.what()) + "; " + ways_out(files, contents.attempts.size()));
  }
  return contents;
}

} // namespace detail

nlohmann::json to_json(const State &s) {
  nlohmann::json recent = nlohmann::json::array();
  for (const RegressionSummary &r : s.recent_regressions) {
    nlohmann::json classes = nlohmann::json::array();
    for (const ClassChange &c : r.classes) {
      classes.push_back(change_json(c));
    }
    nlohmann::json summary{{"classes", classes}, {"overall", change_json(r.overall)}};
    util::put_texts(summary, summary_texts(r));
    recent.push_back(std::move(summary));
  }
  nlohmann::json kept = nlohmann::json::array();
  for (const KeptRow &k : s.kept) {
    nlohmann::json row{{"kernels", k.kernels},
                       {"geomean_us", k.geomean_us},
                       {"change", k.change ? nlohmann::json(*k.change) : nlohmann::json(nullptr)},
                       {"interval", interval_json(k.interval)},
                       {"configs", k.configs}};
    util::put_texts(row, kept_texts(k));
    util::put_texts(row, kept_build_texts(k));
    kept.push_back(std::move(row));
  }
  nlohmann::json recorded = nlohmann::json::array();
  for (const RecordedAttempt &a : s.recorded) {
    recorded.push_back({{"candidate", a.candidate}, {"hash", a.hash}, {"verdict", a.verdict}});
  }
  nlohmann::json j{{"consecutive_regressions", s.consecutive_regressions},
                   {"recent_regressions", recent},
                   {"repair_attempts", s.repair_attempts},
                   {"abandoned", s.abandoned},
                   {"stopped", s.stopped},
                   {"kept", kept},
                   {"recorded", recorded}};
  util::put_texts(j, state_texts(s));
  return j;
}

namespace {

RegressionSummary summary_from_json(const nlohmann::json &r, const std::string &where) {
  RegressionSummary summary;
  util::get_texts(r, summary_texts(summary), where);
  summary.classes = util::json_items(r, "classes", where, change_from_json);
  summary.overall =
      change_from_json(util::json_field<nlohmann::json>(r, "overall", where), where + ": overall");
  return summary;
}

KeptRow kept_from_json(const nlohmann::json &k, const std::string &where) {
  KeptRow row;
  util::get_texts(k, kept_texts(row), where);
  util::get_texts(k, kept_build_texts(row), where, "");
  row.kernels = util::json_field<std::vector<std::string>>(k, "kernels", where);
  row.geomean_us = util::json_field<double>(k, "geomean_us", where);
  auto change = util::json_field<nlohmann::json>(k, "change", where);
  if (!change.is_null()) {
    row.change = util::json_field<double>(k, "change", where);
  }
  auto interval = util::json_field_or<nlohmann::json>(k, "interval", nullptr, where);
  if (!interval.is_null()) {
    auto bounds = util::json_field<std::vector<double>>(k, "interval", where);
    if (bounds.size() != 2) {
      throw Error(where + ": interval: expected [low, high], got " + util::dump_json(interval, -1));
    }
    row.interval = std::pair{bounds[0], bounds[1]};
  }
  row.configs = static_cast<int>(util::json_int_in_or(k, "configs", 0, INT32_MAX, 0, where));
  return row;
}

} // namespace

State state_from_json(const nlohmann::json &j, const std::string &source) {
  State s;
  util::get_texts(j, state_texts(s), source);
  s.consecutive_regressions =
      static_cast<int>(util::json_int_in(j, "consecutive_regressions", 0, 1000000, source));
  s.recent_regressions = util::json_items(j, "recent_regressions", source, summary_from_json);
  s.repair_attempts = util::json_field<std::map<std::string, int>>(j, "repair_attempts", source);
  s.abandoned = util::json_field<std::vector<std::string>>(j, "abandoned", source);
  s.stopped = util::json_field<bool>(j, "stopped", source);
  s.kept = util::json_items(j, "kept", source, kept_from_json);
  s.recorded = util::json_items(j, "recorded", source,
                                [](const nlohmann::json &a, const std::string &where) {
                                  RecordedAttempt recorded;
                                  util::get_texts(a,
                                                  {{"candidate", &recorded.candidate},
                                                   {"hash", &recorded.hash},
                                                   {"verdict", &recorded.verdict}},
                                                  where);
                                  return recorded;
                                });
  return s;
}

std::optional<State> read_state(const Files &files) {
  std::error_code ec;
  if (!std::filesystem::is_directory(files.dir, ec)) {
    return std::nullopt;
  }
  // The attempts log is the ledger's history: a damaged line is reported here, before any
  // write, so that no record lands after it. Only a repair needs the lock.
  if (needs_recovery(files)) {
    util::FileLock lock(files.lock());
    util::InterruptShield shield;
    return detail::read_contents(files).state;
  }
  return detail::read_contents(files, detail::Recover::no).state;
}

} // namespace kopt::ledger
