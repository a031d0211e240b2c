#include "report/loop.hpp"

#include "decide/decide.hpp"
#include "ledger/ledger.hpp"
#include "profile/freshness.hpp"
#include "profile/measurement.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <sstream>

namespace kopt::report {

namespace fs = std::filesystem;

namespace {

// How candidate `id`'s measurement stands: "ok", "failed", "stale" (of other sources, or of
// inputs that changed since: `row.stale` says which), "unreadable" or "" (never measured).
void set_measured(CandidateRow &row, const spec::Family &family, const spec::Layout &layout) {
  if (!fs::exists(layout.measurement(row.id))) {
    return;
  }
  try {
    profile::Measurement m = profile::read_measurement(layout.measurement(row.id));
    if (!row.hash.empty() && !m.hash.empty() && m.hash != row.hash) {
      row.stale = "the candidate's content changed since the measurement";
    } else {
      row.stale = profile::changed_since(m, family, layout);
    }
    row.measured = !row.stale.empty() ? "stale" : m.ok() ? "ok" : "failed";
  } catch (const Error &) {
    row.measured = "unreadable";
  }
}

std::string verdict_of(const spec::Layout &layout, const std::string &id) {
  if (!fs::exists(layout.decision(id))) {
    return "";
  }
  try {
    return decide::to_string(decide::read_decision(layout.decision(id)).verdict);
  } catch (const Error &) {
    return "unreadable";
  }
}

// What the ledger holds of candidate `id` with content `hash`: BEST, a kept row, or the verdict
// of its last attempt of the same content.
std::string recorded_state(const std::optional<ledger::State> &state,
                           const std::vector<Attempt> &attempts, const std::string &id,
                           const std::string &hash) {
  if (!state) {
    return "";
  }
  if (state->best == id) {
    return "BEST";
  }
  for (const ledger::KeptRow &kept : state->kept) {
    if (kept.candidate == id) {
      return kept.status == "baseline" ? "baseline" : "kept";
    }
  }
  std::string verdict;
  for (const Attempt &a : attempts) {
    if (a.kind == "attempt" && a.candidate == id && (hash.empty() || a.hash == hash)) {
      verdict = a.verdict;
    }
  }
  return verdict;
}

// Whether `id` is BEST or a kept row whose content hash is no longer `hash` (a changed
// family.json, tuned table or heuristic, or an edited folder: `bench` refuses such a BEST).
bool changed_since_kept(const std::optional<ledger::State> &state, const std::string &id,
                        const std::string &hash) {
  if (!state || hash.empty()) {
    return false;
  }
  if (state->best == id) {
    return state->best_hash != hash;
  }
  for (const ledger::KeptRow &kept : state->kept) {
    if (kept.candidate == id) {
      return kept.hash != hash;
    }
  }
  return false;
}

std::optional<std::pair<double, double>> interval_of(const nlohmann::json &j) {
  if (j.is_array() && j.size() == 2 && j[0].is_number() && j[1].is_number()) {
    return std::make_pair(j[0].get<double>(), j[1].get<double>());
  }
  return std::nullopt;
}

std::string text_of(const nlohmann::json &j, const char *key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::optional<double> number_of(const nlohmann::json &j, const char *key) {
  if (j.contains(key) && j[key].is_number()) {
    return j[key].get<double>();
  }
  return std::nullopt;
}

Attempt attempt_from_json(const nlohmann::json &j, int line) {
  Attempt a;
  a.line = line;
  a.kind = text_of(j, "kind");
  a.date = text_of(j, "date");
  a.candidate = text_of(j, "candidate");
  a.hash = text_of(j, "hash");
  a.best = text_of(j, "best");
  a.target = text_of(j, "target");
  a.hypothesis = text_of(j, "hypothesis");
  a.verdict = a.kind == "attempt" ? text_of(j, "verdict")
              : a.kind == "stop"  ? text_of(j, "reason")
              : a.kind == "rebase"
                  ? "rebased BEST " + a.best + " (hash " + text_of(j, "from_hash").substr(0, 8) +
                        " -> " + a.hash.substr(0, 8) + "): " + text_of(j, "reason")
              : a.kind == "land" ? "landed " + a.candidate + ": " + text_of(j, "reason")
                                 : a.kind;
  a.reason = text_of(j, "reason");
  a.overall_change = number_of(j, "overall_change");
  a.overall_interval = interval_of(j.value("overall_interval", nlohmann::json()));
  a.overall_state = text_of(j, "overall_state");
  if (j.contains("traffic") && j["traffic"].is_object()) {
    const nlohmann::json &t = j["traffic"];
    a.traffic =
        ClassChange{"traffic", number_of(t, "change").value_or(0),
                    interval_of(t.value("interval", nlohmann::json())), text_of(t, "state")};
  }
  a.weighting = text_of(j, "weighting");
  a.geomean_us = number_of(j, "geomean_us");
  a.event = text_of(j, "event");
  if (j.contains("classes") && j["classes"].is_array()) {
    for (const auto &c : j["classes"]) {
      ClassChange change;
      change.config_class = text_of(c, "class");
      change.change = number_of(c, "change").value_or(0);
      change.interval = interval_of(c.value("interval", nlohmann::json()));
      change.state = text_of(c, "state");
      a.classes.push_back(change);
    }
  }
  return a;
}

std::string percent(double change) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << (change >= 0 ? "+" : "") << 100 * change << "%";
  return out.str();
}

std::string interval_text(const std::optional<std::pair<double, double>> &interval) {
  return interval ? " [" + percent(interval->first) + ", " + percent(interval->second) + "]" : "";
}

nlohmann::json interval_json(const std::optional<std::pair<double, double>> &interval) {
  return interval ? nlohmann::json{interval->first, interval->second} : nlohmann::json(nullptr);
}

std::string pad(const std::string &text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

} // namespace

std::vector<Attempt> read_attempts(const fs::path &file) {
  std::vector<Attempt> attempts;
  int line = 0;
  for (const nlohmann::json &j : ledger::read_attempts(file)) {
    attempts.push_back(attempt_from_json(j, ++line));
  }
  return attempts;
}

std::vector<CandidateRow> list_candidates(const spec::Family &family,
                                          const candidate::CandidateSet &candidates,
                                          const spec::Layout &layout) {
  std::optional<ledger::State> state = ledger::read_state(ledger::Files{layout.ledger});
  std::vector<Attempt> attempts = read_attempts(ledger::Files{layout.ledger}.attempts());
  std::vector<CandidateRow> rows;
  for (const candidate::Candidate &c : candidates.all()) {
    CandidateRow row;
    row.id = c.id();
    row.base = c.spec.base;
    row.hypothesis = c.spec.hypothesis;
    try {
      row.hash = candidates.content_hash(family, row.id);
    } catch (const Error &e) {
      row.problem = e.what();
    }
    row.built = fs::exists(layout.harness(row.id));
    set_measured(row, family, layout);
    row.verdict = verdict_of(layout, row.id);
    row.recorded = recorded_state(state, attempts, row.id, row.hash);
    row.changed = changed_since_kept(state, row.id, row.hash);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json to_json(const std::vector<CandidateRow> &rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const CandidateRow &r : rows) {
    out.push_back({{"id", r.id},
                   {"base", r.base},
                   {"hash", r.hash},
                   {"hypothesis", r.hypothesis},
                   {"built", r.built},
                   {"measured", r.measured},
                   {"stale", r.stale},
                   {"verdict", r.verdict},
                   {"recorded", r.recorded},
                   {"changed", r.changed},
                   {"problem", r.problem}});
  }
  return out;
}

std::string format_candidates(const std::vector<CandidateRow> &rows) {
  std::vector<std::vector<std::string>> table = {
      {"id", "base", "hash", "built", "measured", "verdict", "recorded", "hypothesis"}};
  for (const CandidateRow &r : rows) {
    table.push_back({r.id, r.base.empty() ? "-" : r.base,
                     r.hash.empty() ? "?" : r.hash.substr(0, 8), r.built ? "yes" : "no",
                     r.measured.empty() ? "-" : r.measured,
                     r.verdict.empty() ? "-"
                     : r.stale.empty() ? r.verdict
                                       : r.verdict + " (stale)",
                     r.recorded.empty() ? "-" : r.recorded + (r.changed ? " (changed)" : ""),
                     r.problem.empty() ? r.hypothesis : "error: " + r.problem});
  }
  std::vector<size_t> widths(table[0].size(), 0);
  for (const auto &line : table) {
    for (size_t i = 0; i < line.size(); ++i) {
      widths[i] = std::max(widths[i], line[i].size());
    }
  }
  std::string text;
  for (const auto &line : table) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      out += i + 1 == line.size() ? line[i] : pad(line[i], widths[i] + 2);
    }
    text += out + "\n";
  }
  return text;
}

nlohmann::json to_json(const std::vector<Attempt> &attempts) {
  nlohmann::json out = nlohmann::json::array();
  for (const Attempt &a : attempts) {
    nlohmann::json classes = nlohmann::json::array();
    for (const ClassChange &c : a.classes) {
      classes.push_back({{"class", c.config_class},
                         {"change", c.change},
                         {"interval", interval_json(c.interval)},
                         {"state", c.state}});
    }
    out.push_back(
        {{"line", a.line},
         {"kind", a.kind},
         {"date", a.date},
         {"candidate", a.candidate},
         {"hash", a.hash},
         {"best", a.best},
         {"target", a.target},
         {"hypothesis", a.hypothesis},
         {"verdict", a.verdict},
         {"overall_change",
          a.overall_change ? nlohmann::json(*a.overall_change) : nlohmann::json(nullptr)},
         {"overall_interval", interval_json(a.overall_interval)},
         {"geomean_us", a.geomean_us ? nlohmann::json(*a.geomean_us) : nlohmann::json(nullptr)},
         {"event", a.event},
         {"classes", classes}});
  }
  return out;
}

std::string format_attempts(const std::vector<Attempt> &attempts) {
  std::string text;
  for (const Attempt &a : attempts) {
    if (a.is_event()) {
      text += a.date + "  " + (a.kind == "stop" ? "stopped: " : "") + a.verdict + "\n";
      continue;
    }
    std::string line = a.date + "  " + pad(a.candidate, 4) + pad(a.verdict, 12);
    if (a.kind == "baseline") {
      line += a.geomean_us ? "geomean " + util::format_number(*a.geomean_us, 5) + " us" : "";
    } else {
      line += "vs BEST " + a.best;
      if (a.overall_change) {
        line += ": overall " + percent(*a.overall_change) + interval_text(a.overall_interval);
      }
      line += a.event.empty() ? "" : " (" + a.event + ")";
    }
    text += line + (a.hypothesis.empty() ? "" : "  -- " + a.hypothesis) + "\n";
    for (const ClassChange &c : a.classes) {
      text += "      " + c.config_class + " " + percent(c.change) + interval_text(c.interval) +
              (c.state.empty() ? "" : " " + c.state) + "\n";
    }
  }
  return text;
}

} // namespace kopt::report
