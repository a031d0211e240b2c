#include "report/loop.hpp"

#include "decide/decide.hpp"
#include "decide/format.hpp"
#include "ledger/ledger.hpp"
#include "profile/freshness.hpp"
#include "profile/measurement.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>

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

std::string decision_verdict(const spec::Layout &layout, const std::string &id) {
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
    if (a.kind == ledger::Kind::attempt && a.candidate == id && (hash.empty() || a.hash == hash)) {
      verdict = verdict_of(a);
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

std::string pad(const std::string &text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

} // namespace

ClassChange change_of(const ledger::AttemptClass &row) {
  return {row.config_class, row.change, row.interval,
          row.state ? decide::to_string(*row.state) : ""};
}

std::string verdict_of(const ledger::Attempt &a) {
  switch (a.kind) {
  case ledger::Kind::baseline:
    return "baseline";
  case ledger::Kind::attempt:
    return a.verdict ? decide::to_string(*a.verdict) : "";
  case ledger::Kind::rebase:
    return "rebased BEST " + a.best + " (hash " + a.from_hash.substr(0, 8) + " -> " +
           a.hash.substr(0, 8) + "): " + a.reason;
  case ledger::Kind::land:
    return "landed " + a.candidate + ": " + a.reason;
  case ledger::Kind::stop:
    return a.reason;
  }
  return "";
}

std::vector<Attempt> read_attempts(const fs::path &file) {
  std::vector<Attempt> attempts;
  for (ledger::Attempt &a : ledger::read_attempt_records(file)) {
    attempts.push_back(Attempt{std::move(a), std::nullopt, std::nullopt});
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
    row.verdict = decision_verdict(layout, row.id);
    row.recorded = recorded_state(state, attempts, row.id, row.hash);
    row.changed = changed_since_kept(state, row.id, row.hash);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json to_json(const std::vector<CandidateRow> &rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const CandidateRow &r : rows) {
    nlohmann::json row{{"built", r.built}, {"changed", r.changed}};
    util::put_texts(row, {{"id", &r.id},
                          {"base", &r.base},
                          {"hash", &r.hash},
                          {"hypothesis", &r.hypothesis},
                          {"measured", &r.measured},
                          {"stale", &r.stale},
                          {"verdict", &r.verdict},
                          {"recorded", &r.recorded},
                          {"problem", &r.problem}});
    out.push_back(std::move(row));
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
  auto number = [](const std::optional<double> &value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json out = nlohmann::json::array();
  for (const Attempt &a : attempts) {
    nlohmann::json classes = nlohmann::json::array();
    for (const ledger::AttemptClass &c : a.classes) {
      classes.push_back(ledger::to_json(c, ledger::RowShape::log));
    }
    nlohmann::json line{{"line", a.line},
                        {"kind", ledger::to_string(a.kind)},
                        {"verdict", verdict_of(a)},
                        {"overall_change", number(a.overall_change)},
                        {"overall_interval", ledger::interval_json(a.overall_interval)},
                        {"geomean_us", number(a.geomean_us)},
                        {"event", ledger::to_string(a.event)},
                        {"classes", classes}};
    util::put_texts(line, {{"date", &a.date},
                           {"candidate", &a.candidate},
                           {"hash", &a.hash},
                           {"best", &a.best},
                           {"target", &a.target},
                           {"hypothesis", &a.hypothesis}});
    out.push_back(std::move(line));
  }
  return out;
}

std::string format_attempts(const std::vector<Attempt> &attempts) {
  std::string text;
  for (const Attempt &a : attempts) {
    std::string verdict = verdict_of(a);
    if (a.is_event()) {
      text += a.date + "  " + (a.kind == ledger::Kind::stop ? "stopped: " : "") + verdict + "\n";
      continue;
    }
    std::string line = a.date + "  " + pad(a.candidate, 4) + pad(verdict, 12);
    if (a.kind == ledger::Kind::baseline) {
      line += a.geomean_us ? "geomean " + util::format_number(*a.geomean_us, 5) + " us" : "";
    } else {
      line += "vs BEST " + a.best;
      if (a.overall_change) {
        line += ": overall " + decide::format_change(*a.overall_change) +
                decide::interval_after(a.overall_interval);
      }
      line += a.event == ledger::Event::none ? "" : " (" + std::string(to_string(a.event)) + ")";
    }
    text += line + (a.hypothesis.empty() ? "" : "  -- " + a.hypothesis) + "\n";
    for (const ledger::AttemptClass &c : a.classes) {
      text += "      " + c.config_class + " " + decide::format_change(c.change) +
              decide::interval_after(c.interval) +
              (c.state ? " " + std::string(decide::to_string(*c.state)) : "") + "\n";
    }
  }
  return text;
}

} // namespace kopt::report
