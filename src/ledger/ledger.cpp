#include "ledger/ledger.hpp"

#include "buildinfo/build_flags.hpp"
#include "gen/text_template.hpp"
#include "ledger/journal.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>

namespace kopt::ledger {

namespace {

using decide::Decision;
using decide::Verdict;

constexpr size_t kRegressionWindow = 5;

nlohmann::json array_field(const nlohmann::json &j, const char *key, const std::string &where) {
  auto value = util::json_field<nlohmann::json>(j, key, where);
  if (!value.is_array()) {
    throw Error(where + ": field '" + key + "' has the wrong type");
  }
  return value;
}

std::string short_hash(const std::string &hash) { return hash.substr(0, 8); }

std::string fixed(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

// A table cell: pipes and line breaks would end the cell or the row.
std::string cell(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

// " [-12.00%, -8.00%]" after a change, or "" when it has no interval.
std::string interval_text(const std::optional<std::pair<double, double>> &interval) {
  return interval ? " [" + decide::format_change(interval->first) + ", " +
                        decide::format_change(interval->second) + "]"
                  : "";
}

// A string field of an attempts.jsonl line, or "" where its kind has none (a stop has no
// candidate, a baseline no target).
std::string text_field(const nlohmann::json &line, const char *key) {
  auto it = line.find(key);
  return it != line.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<double> number_field(const nlohmann::json &line, const char *key) {
  auto it = line.find(key);
  return it != line.end() && it->is_number() ? std::optional(it->get<double>()) : std::nullopt;
}

std::optional<std::pair<double, double>> interval_field(const nlohmann::json &line,
                                                        const char *key) {
  auto it = line.find(key);
  if (it == line.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() ||
      !(*it)[1].is_number()) {
    return std::nullopt;
  }
  return std::pair{(*it)[0].get<double>(), (*it)[1].get<double>()};
}

// One line of attempts.jsonl as a row of performance.md's Attempts table. read_attempts checked
// the fields of its kind; classes and overall_interval, added later, show where well formed.
std::string attempt_row(const nlohmann::json &line) {
  std::string kind = text_field(line, "kind");
  std::string verdict = kind == "attempt" ? text_field(line, "verdict")
                        : kind == "stop"  ? "stopped: " + text_field(line, "reason")
                        : kind == "rebase"
                            ? "rebase from " + short_hash(text_field(line, "from_hash")) + ": " +
                                  text_field(line, "reason")
                        : kind == "land" ? "landed: " + text_field(line, "reason")
                                         : kind;
  if (std::string event = text_field(line, "event"); !event.empty()) {
    verdict += " (" + event + ")";
  }
  if (!text_field(line, "other_build").empty()) {
    // Recorded with --allow-other-build: the row names the build its times are of.
    buildinfo::BuildFlags build{text_field(line, "build_flags"), text_field(line, "build")};
    verdict += " (build " + build.hash + " (" + build.optimisation() + "), not BEST's)";
  }
  std::vector<std::string> classes;
  auto listed = line.find("classes");
  if (listed != line.end() && listed->is_array()) {
    for (const nlohmann::json &c : *listed) {
      if (std::optional<double> change = c.is_object() ? number_field(c, "change") : std::nullopt) {
        classes.push_back(text_field(c, "class") + ": " + decide::format_change(*change));
      }
    }
  }
  std::optional<double> overall = number_field(line, "overall_change");
  // A baseline's line carries its target and hypothesis for rebuild_state; its row shows
  // neither, as the results table above has them.
  bool baseline = kind == "baseline";
  return "| " + cell(text_field(line, "date")) + " | " + cell(text_field(line, "candidate")) +
         " | " + cell(short_hash(text_field(line, "hash"))) + " | " + cell(verdict) + " | " +
         cell(text_field(line, "best")) + " | " + cell(baseline ? "" : text_field(line, "target")) +
         " | " + cell(util::join(classes, "; ")) + " | " +
         (overall ? decide::format_change(*overall) +
                        interval_text(interval_field(line, "overall_interval"))
                  : "-") +
         " | " + cell(baseline ? "" : text_field(line, "hypothesis")) + " |";
}

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

ClassChange change_of(const decide::ClassRow &row) {
  return {row.config_class, row.best_us, row.candidate_us, row.change};
}

// What measured a row, on which machine and which build ("ncu on NVIDIA H100 80GB HBM3, build
// 1f2e3d4c5b6a (-O3)"): kept rows of one ledger may come from different machines and builds, and
// their geomean column compares those too.
std::string source_of(const profile::Measurement &m) {
  std::string source = profile::to_string(m.measured_by);
  if (!m.profiled) {
    source += " (unprofiled)";
  }
  if (!m.device.empty()) {
    source += " on " + m.device;
  }
  if (!m.build.empty()) {
    source += ", build " + m.build + " (" +
              buildinfo::BuildFlags{m.build_flags, m.build}.optimisation() + ")";
  }
  return source;
}

// The kernels that served the target class (every class for global), sorted and distinct.
std::vector<std::string> kernels_of(const profile::Measurement &m, const std::string &target) {
  std::set<std::string> kernels;
  for (const auto &c : m.configs) {
    if ((target == "global" || c.config_class == target) && !c.kernel.empty()) {
      kernels.insert(c.kernel);
    }
  }
  return {kernels.begin(), kernels.end()};
}

std::string proposal_of(const spec::CandidateSpec &spec) {
  return spec.proposal.empty() ? spec.id : spec.proposal;
}

// What a record reads under the lock: state.json (none before the first record) and the checked
// lines of attempts.jsonl, which performance.md shows beside the state.
struct Contents {
  std::optional<State> state;
  std::vector<nlohmann::json> attempts;
};

// The ways out of a state.json lost beside a history: it is never started over silently.
std::string ways_out(const Files &files, size_t lines) {
  return files.attempts().string() + " holds " + std::to_string(lines) +
         (lines == 1 ? " line" : " lines") +
         " of history: restore state.json (e.g. from a backup or git), or rebuild it from "
         "attempts.jsonl with kopt ledger rebuild";
}

// Reads the ledger; with the lock held, `recover` first completes what a killed or failed
// record left (journal.hpp) and says so on stderr.
enum class Recover { yes, no };

Contents read_contents(const Files &files, Recover recovering = Recover::yes) {
  if (recovering == Recover::yes) {
    for (const std::string &note : recover(files)) {
      std::cerr << "kopt: ledger: " << note << "\n";
    }
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

// `history` is attempts.jsonl as read under the lock; `attempt` is the line recorded now.
void write_all(const Files &files, const State &state, std::vector<nlohmann::json> history,
               const nlohmann::json &attempt) {
  commit(files, state, std::move(history), attempt);
}

void clear_regressions(State &s) {
  s.consecutive_regressions = 0;
  s.recent_regressions.clear();
}

} // namespace

nlohmann::json to_json(const State &s) {
  nlohmann::json recent = nlohmann::json::array();
  for (const RegressionSummary &r : s.recent_regressions) {
    nlohmann::json classes = nlohmann::json::array();
    for (const ClassChange &c : r.classes) {
      classes.push_back(change_json(c));
    }
    recent.push_back({{"date", r.date},
                      {"best", r.best},
                      {"candidate", r.candidate},
                      {"hash", r.hash},
                      {"hypothesis", r.hypothesis},
                      {"target", r.target},
                      {"classes", classes},
                      {"overall", change_json(r.overall)}});
  }
  nlohmann::json kept = nlohmann::json::array();
  for (const KeptRow &k : s.kept) {
    kept.push_back({{"date", k.date},
                    {"candidate", k.candidate},
                    {"hash", k.hash},
                    {"status", k.status},
                    {"target", k.target},
                    {"kernels", k.kernels},
                    {"measured_by", k.measured_by},
                    {"geomean_us", k.geomean_us},
                    {"change", k.change ? nlohmann::json(*k.change) : nlohmann::json(nullptr)},
                    {"interval", k.interval ? nlohmann::json{k.interval->first, k.interval->second}
                                            : nlohmann::json(nullptr)},
                    {"hypothesis", k.hypothesis},
                    {"build", k.build},
                    {"build_flags", k.build_flags},
                    {"configs", k.configs},
                    {"configs_hash", k.configs_hash}});
  }
  nlohmann::json recorded = nlohmann::json::array();
  for (const RecordedAttempt &a : s.recorded) {
    recorded.push_back({{"candidate", a.candidate}, {"hash", a.hash}, {"verdict", a.verdict}});
  }
  return {{"family", s.family},
          {"best", s.best},
          {"best_hash", s.best_hash},
          {"consecutive_regressions", s.consecutive_regressions},
          {"recent_regressions", recent},
          {"repair_attempts", s.repair_attempts},
          {"abandoned", s.abandoned},
          {"stopped", s.stopped},
          {"stop_reason", s.stop_reason},
          {"stop_date", s.stop_date},
          {"kept", kept},
          {"recorded", recorded}};
}

State state_from_json(const nlohmann::json &j, const std::string &source) {
  State s;
  s.family = util::json_field<std::string>(j, "family", source);
  s.best = util::json_field<std::string>(j, "best", source);
  s.best_hash = util::json_field<std::string>(j, "best_hash", source);
  s.consecutive_regressions =
      static_cast<int>(util::json_int_in(j, "consecutive_regressions", 0, 1000000, source));
  auto recent = array_field(j, "recent_regressions", source);
  for (size_t i = 0; i < recent.size(); ++i) {
    std::string where = source + ": recent_regressions[" + std::to_string(i) + "]";
    const auto &r = recent[i];
    RegressionSummary summary;
    summary.date = util::json_field<std::string>(r, "date", where);
    summary.best = util::json_field<std::string>(r, "best", where);
    summary.candidate = util::json_field<std::string>(r, "candidate", where);
    summary.hash = util::json_field<std::string>(r, "hash", where);
    summary.hypothesis = util::json_field<std::string>(r, "hypothesis", where);
    summary.target = util::json_field<std::string>(r, "target", where);
    auto classes = array_field(r, "classes", where);
    for (size_t k = 0; k < classes.size(); ++k) {
      summary.classes.push_back(
          change_from_json(classes[k], where + ": classes[" + std::to_string(k) + "]"));
    }
    summary.overall = change_from_json(util::json_field<nlohmann::json>(r, "overall", where),
                                       where + ": overall");
    s.recent_regressions.push_back(std::move(summary));
  }
  s.repair_attempts = util::json_field<std::map<std::string, int>>(j, "repair_attempts", source);
  s.abandoned = util::json_field<std::vector<std::string>>(j, "abandoned", source);
  s.stopped = util::json_field<bool>(j, "stopped", source);
  s.stop_reason = util::json_field<std::string>(j, "stop_reason", source);
  s.stop_date = util::json_field<std::string>(j, "stop_date", source);
  auto kept = array_field(j, "kept", source);
  for (size_t i = 0; i < kept.size(); ++i) {
    std::string where = source + ": kept[" + std::to_string(i) + "]";
    const auto &k = kept[i];
    KeptRow row;
    row.date = util::json_field<std::string>(k, "date", where);
    row.candidate = util::json_field<std::string>(k, "candidate", where);
    row.hash = util::json_field<std::string>(k, "hash", where);
    row.status = util::json_field<std::string>(k, "status", where);
    row.target = util::json_field<std::string>(k, "target", where);
    row.kernels = util::json_field<std::vector<std::string>>(k, "kernels", where);
    row.measured_by = util::json_field<std::string>(k, "measured_by", where);
    row.geomean_us = util::json_field<double>(k, "geomean_us", where);
    auto change = util::json_field<nlohmann::json>(k, "change", where);
    if (!change.is_null()) {
      row.change = util::json_field<double>(k, "change", where);
    }
    row.hypothesis = util::json_field<std::string>(k, "hypothesis", where);
    auto interval = util::json_field_or<nlohmann::json>(k, "interval", nullptr, where);
    if (!interval.is_null()) {
      auto bounds = util::json_field<std::vector<double>>(k, "interval", where);
      if (bounds.size() != 2) {
        throw Error(where + ": interval: expected [low, high], got " +
                    util::dump_json(interval, -1));
      }
      row.interval = std::pair{bounds[0], bounds[1]};
    }
    // Written since kept rows name what they measured; older rows lack them.
    row.build = util::json_field_or<std::string>(k, "build", "", where);
    row.build_flags = util::json_field_or<std::string>(k, "build_flags", "", where);
    row.configs = static_cast<int>(util::json_int_in_or(k, "configs", 0, INT32_MAX, 0, where));
    row.configs_hash = util::json_field_or<std::string>(k, "configs_hash", "", where);
    s.kept.push_back(std::move(row));
  }
  auto recorded = array_field(j, "recorded", source);
  for (size_t i = 0; i < recorded.size(); ++i) {
    std::string where = source + ": recorded[" + std::to_string(i) + "]";
    s.recorded.push_back({util::json_field<std::string>(recorded[i], "candidate", where),
                          util::json_field<std::string>(recorded[i], "hash", where),
                          util::json_field<std::string>(recorded[i], "verdict", where)});
  }
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
    return read_contents(files).state;
  }
  return read_contents(files, Recover::no).state;
}

std::string render_performance(const State &s, const std::vector<nlohmann::json> &attempts) {
  std::vector<std::string> kept_rows;
  for (const KeptRow &k : s.kept) {
    kept_rows.push_back("| " + cell(k.date) + " | " + cell(k.candidate) + " | " +
                        cell(short_hash(k.hash)) + " | " + k.status + " | " + cell(k.target) +
                        " | " + cell(util::join(k.kernels, ", ")) + " | " + cell(k.measured_by) +
                        " | " + fixed(k.geomean_us) + " | " +
                        (k.change ? decide::format_change(*k.change) : "-") +
                        interval_text(k.interval) + " | " + cell(k.hypothesis) + " |");
  }
  std::vector<std::string> regression_rows;
  for (const RegressionSummary &r : s.recent_regressions) {
    std::vector<std::string> classes;
    for (const ClassChange &c : r.classes) {
      classes.push_back(c.config_class + ": " + fixed(c.best_us) + " -> " + fixed(c.candidate_us) +
                        " (" + decide::format_change(c.change) + ")");
    }
    regression_rows.push_back(
        "| " + cell(r.candidate + " (" + short_hash(r.hash) + ") vs " + r.best) + " | " +
        cell(r.date) + " | " + cell(r.hypothesis) + " | " + cell(r.target) + " | " +
        cell(util::join(classes, "; ")) + " | " + fixed(r.overall.best_us) + " -> " +
        fixed(r.overall.candidate_us) + " | " + decide::format_change(r.overall.change) + " |");
  }
  std::vector<std::string> attempt_rows;
  for (const nlohmann::json &line : attempts) {
    attempt_rows.push_back(attempt_row(line));
  }
  const KeptRow *best = s.kept.empty() ? nullptr : &s.kept.back();
  return gen::expand_builtin(
      "performance.md.in", {{"family", s.family.empty() ? std::string("kopt") : s.family},
                            {"kept_rows", util::join(kept_rows, "\n")},
                            {"attempt_rows", util::join(attempt_rows, "\n")},
                            {"stopped", s.stopped ? "stopped" : ""},
                            {"stop_date", cell(s.stop_date)},
                            {"stop_reason", cell(s.stop_reason)},
                            {"best", cell(s.best)},
                            {"best_hash", cell(short_hash(s.best_hash))},
                            {"best_geomean_us", best ? fixed(best->geomean_us) : ""},
                            {"best_measured_by", best ? cell(best->measured_by) : ""},
                            {"consecutive_regressions", std::to_string(s.consecutive_regressions)},
                            {"regression_rows", util::join(regression_rows, "\n")}});
}

namespace {

// One row of attempts.jsonl: a class's (or the traffic overall row's) change and interval.
nlohmann::json row_json(const decide::ClassRow &row) {
  return {
      {"class", row.config_class},
      {"best_us", row.best_us},
      {"candidate_us", row.candidate_us},
      {"change", row.change},
      {"interval", row.has_interval ? nlohmann::json{row.low, row.high} : nlohmann::json(nullptr)},
      {"state", decide::to_string(row.state)}};
}

} // namespace

// Each class's change and interval, for attempts.jsonl.
nlohmann::json classes_json(const decide::Decision &d) {
  nlohmann::json classes = nlohmann::json::array();
  for (const decide::ClassRow &row : d.classes) {
    classes.push_back(row_json(row));
  }
  return classes;
}

namespace {

// Where a decision came from, for errors: its decision.json, or "the decision" in memory.
std::string decision_file(const Decision &d) { return d.file.empty() ? "decision" : d.file; }

// The decision, candidate.json and measurement must all be of the same candidate.
void check_same_candidate(const Decision &d, const spec::CandidateSpec &candidate,
                          const profile::Measurement &measurement) {
  if (candidate.id != d.candidate) {
    throw Error(decision_file(d) + ": the decision is for candidate '" + d.candidate +
                "', but the candidate recorded is '" + candidate.id + "'");
  }
  if (!measurement.candidate.empty() && measurement.candidate != d.candidate) {
    throw Error(decision_file(d) + ": the decision is for candidate '" + d.candidate +
                "', but the measurement is for '" + measurement.candidate + "'");
  }
}

// The first record: the baseline decided against itself starts the state as BEST.
Recorded record_first_baseline(const Files &files, std::vector<nlohmann::json> history,
                               const Decision &d, const spec::CandidateSpec &candidate,
                               const profile::Measurement &measurement, const std::string &date) {
  if (d.candidate != d.best) {
    throw Error(files.state().string() + ": no ledger yet: record the baseline " + d.best +
                " first");
  }
  if (d.verdict != Verdict::keep || !d.overall) {
    throw Error("baseline " + d.candidate + " cannot be recorded: " + decide::to_string(d.verdict) +
                " (" + d.reason + ")");
  }
  State s;
  s.family = d.family;
  s.best = d.candidate;
  s.best_hash = d.hash;
  s.kept.push_back({date, d.candidate, d.hash, "baseline", d.target,
                    kernels_of(measurement, d.target), source_of(measurement),
                    d.overall->candidate_us, std::nullopt, std::nullopt,
                    candidate.hypothesis.empty() ? "baseline" : candidate.hypothesis});
  set_measured(s.kept.back(), measurement);
  nlohmann::json line{{"kind", "baseline"},
                      {"date", date},
                      {"candidate", d.candidate},
                      {"hash", d.hash},
                      {"geomean_us", d.overall->candidate_us},
                      {"measured_by", source_of(measurement)},
                      {"target", d.target},
                      {"kernels", kernels_of(measurement, d.target)},
                      {"hypothesis", s.kept.back().hypothesis}};
  line.update(measured_json(measurement));
  write_all(files, s, std::move(history), std::move(line));
  return {Outcome::recorded, "recorded baseline " + d.candidate + ": BEST is " + d.candidate, s};
}

// A decision that changes nothing (identical code, BEST itself, already recorded) returns why;
// one the ledger cannot take (another family, stopped, made against another BEST) throws.
std::optional<Recorded> nothing_to_record(const Files &files, const State &s, const Decision &d) {
  if (!s.family.empty() && !d.family.empty() && s.family != d.family) {
    throw Error(files.state().string() + ": the ledger is for family " + s.family +
                ", the decision for " + d.family);
  }
  if (s.stopped) {
    throw Error(files.state().string() + ": the ledger stopped on " + s.stop_date + " (" +
                s.stop_reason + "); no more attempts are recorded");
  }
  if (!d.identical_to.empty()) {
    return Recorded{Outcome::identical,
                    "candidate " + d.candidate + " is identical to " + d.identical_to +
                        ": nothing recorded, regression counter unchanged",
                    s};
  }
  if (d.candidate == s.best) {
    return Recorded{Outcome::candidate_is_best,
                    "candidate " + d.candidate + " is BEST; nothing recorded", s};
  }
  // A failed decision may carry whatever hash BEST's broken measurement had; its id still
  // has to be the ledger's BEST.
  bool check_hash = d.verdict != Verdict::failed;
  if (d.best != s.best || (check_hash && d.best_hash != s.best_hash)) {
    throw Error(decision_file(d) + ": the decision for " + d.candidate + " was made against BEST " +
                d.best + " (hash " + short_hash(d.best_hash) + "), but the ledger's BEST is " +
                s.best + " (hash " + short_hash(s.best_hash) + ", " + files.state().string() +
                "): run kopt decide --candidate " + d.candidate + " again");
  }
  std::string verdict = decide::to_string(d.verdict);
  for (const RecordedAttempt &a : s.recorded) {
    if (a.candidate == d.candidate && a.hash == d.hash && a.verdict == verdict) {
      return Recorded{Outcome::duplicate,
                      "candidate " + d.candidate + " (hash " + short_hash(d.hash) +
                          ") was already recorded as " + verdict + " against BEST " + s.best +
                          "; nothing changed",
                      s};
    }
  }
  return std::nullopt;
}

// What one verdict did to the state: the user's message and the attempt's event ("" for none).
struct Applied {
  std::string message;
  std::string event;
};

// A keep: the candidate becomes BEST, its row joins performance.md, the counters reset.
Applied apply_keep(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                   const profile::Measurement &measurement, const std::string &date) {
  if (!d.overall) {
    throw Error("the keep decision for " + d.candidate + " has no overall numbers");
  }
  KeptRow row{date,
              d.candidate,
              d.hash,
              "keep",
              d.target,
              kernels_of(measurement, d.target),
              source_of(measurement),
              d.overall->candidate_us,
              d.overall->change,
              std::nullopt,
              candidate.hypothesis};
  set_measured(row, measurement);
  if (d.overall->has_interval) {
    row.interval = std::pair{d.overall->low, d.overall->high};
  }
  std::string message = d.candidate + " kept: BEST is now " + d.candidate;
  if (!s.kept.empty() && s.kept.back().measured_by != row.measured_by) {
    // The change is side by side; the geomean column against the row above is not.
    message += " (measured by " + row.measured_by + "; " + s.kept.back().candidate + "'s row by " +
               s.kept.back().measured_by +
               ": performance.md's geomean us of the two rows compare "
               "machines or builds, the change compares the candidates)";
  }
  s.kept.push_back(std::move(row));
  s.best = d.candidate;
  s.best_hash = d.hash;
  clear_regressions(s);
  s.recorded.clear();
  return {message, ""};
}

// A regression: counted (into the Stop Summary's window) unless confirmed within the threshold;
// enough in a row stop the loop.
Applied apply_regression(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                         const std::string &date, const Options &options) {
  if (!d.counts_as_regression()) {
    // Confirmed but within the threshold: a real regression too small to count.
    return {d.candidate + " regressed within the threshold (confirmed by two side-by-side "
                          "measurements): regression counter unchanged",
            ""};
  }
  RegressionSummary summary{date,     d.best, d.candidate, d.hash, candidate.hypothesis,
                            d.target, {},     {}};
  for (const decide::ClassRow &row : d.classes) {
    summary.classes.push_back(change_of(row));
  }
  if (d.overall) {
    summary.overall = change_of(*d.overall);
  }
  s.recent_regressions.push_back(std::move(summary));
  if (s.recent_regressions.size() > kRegressionWindow) {
    s.recent_regressions.erase(s.recent_regressions.begin());
  }
  s.consecutive_regressions += 1;
  Applied applied{d.candidate + " regressed: " + std::to_string(s.consecutive_regressions) +
                      " of " + std::to_string(options.max_consecutive) + " consecutive regressions",
                  ""};
  if (s.consecutive_regressions >= options.max_consecutive) {
    s.stopped = true;
    s.stop_reason = std::to_string(s.consecutive_regressions) + " consecutive measured regressions";
    s.stop_date = date;
    applied.message += "; stopped";
    applied.event = "stopped";
  }
  return applied;
}

// An incorrect attempt: one more repair attempt for its proposal, abandoned at the limit.
Applied apply_incorrect(State &s, const Decision &d, const std::string &proposal,
                        const Options &options) {
  int &attempts = s.repair_attempts[proposal];
  attempts += 1;
  Applied applied{d.candidate + " incorrect: repair attempt " + std::to_string(attempts) + " of " +
                      std::to_string(options.max_repairs) + " for proposal " + proposal,
                  ""};
  if (attempts >= options.max_repairs) {
    if (std::find(s.abandoned.begin(), s.abandoned.end(), proposal) == s.abandoned.end()) {
      s.abandoned.push_back(proposal);
    }
    applied.message += "; proposal abandoned";
    applied.event = "abandoned";
  }
  return applied;
}

// What the verdict does to BEST and the counters.
Applied apply_verdict(State &s, const Decision &d, const spec::CandidateSpec &candidate,
                      const profile::Measurement &measurement, const std::string &date,
                      const std::string &proposal, const Options &options) {
  switch (d.verdict) {
  case Verdict::keep:
    return apply_keep(s, d, candidate, measurement, date);
  case Verdict::regression:
    return apply_regression(s, d, candidate, date, options);
  // Only a keep resets the counter: a tie, a failure or an incorrect output costs an agent
  // nothing to make, so none of them may clear the regressions before it.
  case Verdict::tie:
    return {d.candidate + " tied with BEST: regression counter unchanged", ""};
  case Verdict::failed:
    return {d.candidate + " failed (no comparable measurement): regression counter unchanged", ""};
  case Verdict::incorrect:
    return apply_incorrect(s, d, proposal, options);
  case Verdict::split:
    return {d.candidate + " split: regression counter unchanged (" + d.split_advice + ")", ""};
  }
  return {};
}

// The attempt's line in attempts.jsonl: with the numbers and kernels that rebuild_state needs
// to give back the state this record writes.
nlohmann::json attempt_json(const Decision &d, const State &s, const spec::CandidateSpec &candidate,
                            const profile::Measurement &measurement, const std::string &date,
                            const std::string &proposal, const std::string &event,
                            const std::string &other) {
  nlohmann::json line{
      {"kind", "attempt"},
      {"date", date},
      {"candidate", d.candidate},
      {"hash", d.hash},
      {"best", d.best},
      {"best_hash", d.best_hash},
      {"proposal", proposal},
      {"target", d.target},
      {"hypothesis", candidate.hypothesis},
      {"verdict", decide::to_string(d.verdict)},
      {"reason", d.reason},
      {"overall_change", d.overall ? nlohmann::json(d.overall->change) : nlohmann::json(nullptr)},
      {"overall_interval", d.overall && d.overall->has_interval
                               ? nlohmann::json{d.overall->low, d.overall->high}
                               : nlohmann::json(nullptr)},
      // What decide concluded of the overall row, so that no view decides it again.
      {"overall_state",
       d.overall ? nlohmann::json(decide::to_string(d.overall->state)) : nlohmann::json(nullptr)},
      {"method", decide::to_string(d.method)},
      {"classes", classes_json(d)},
      // The application's kernel time under the captured traffic (decide's traffic rows).
      {"traffic", d.traffic ? row_json(d.traffic->overall) : nlohmann::json(nullptr)},
      {"weighting", decide::to_string(d.options.weighting)},
      {"consecutive_regressions", s.consecutive_regressions},
      {"event", event},
      {"geomean_us", d.overall ? nlohmann::json(d.overall->candidate_us) : nlohmann::json(nullptr)},
      {"best_us", d.overall ? nlohmann::json(d.overall->best_us) : nlohmann::json(nullptr)},
      {"measured_by", source_of(measurement)},
      {"kernels", kernels_of(measurement, d.target)}};
  line.update(measured_json(measurement));
  if (!other.empty()) {
    line["other_build"] = other; // recorded as asked (--allow-other-build)
  }
  return line;
}

} // namespace

Recorded record(const Files &files, const Decision &d, const spec::CandidateSpec &candidate,
                const profile::Measurement &measurement, const Options &options) {
  check_same_candidate(d, candidate, measurement);
  std::string date = d.date.empty() ? util::utc_now() : d.date;
  util::FileLock lock(files.lock());
  util::InterruptShield shield; // state.json, performance.md and attempts.jsonl agree
  Contents contents = read_contents(files);
  if (!contents.state) {
    return record_first_baseline(files, std::move(contents.attempts), d, candidate, measurement,
                                 date);
  }
  State s = *contents.state;
  if (std::optional<Recorded> unchanged = nothing_to_record(files, s, d)) {
    return *unchanged;
  }
  // Times of another build (-O0 against the -O3 BEST was kept with, say) are no measure
  // against BEST's row: recorded only when asked, and the attempt's line says so.
  std::string other = other_build(s, measurement);
  if (!other.empty() && !options.allow_other_build) {
    throw Error("not recorded: " + other + ": its times are no measure against BEST's row; " +
                "build with the flags BEST was recorded with and measure again, or record it " +
                "anyway with --allow-other-build");
  }
  std::string proposal = proposal_of(candidate);
  Applied applied = apply_verdict(s, d, candidate, measurement, date, proposal, options);
  if (d.verdict != Verdict::keep) {
    s.recorded.push_back({d.candidate, d.hash, decide::to_string(d.verdict)});
  }
  write_all(files, s, std::move(contents.attempts),
            attempt_json(d, s, candidate, measurement, date, proposal, applied.event, other));
  return {Outcome::recorded, applied.message, s};
}

Recorded rebase(const Files &files, const std::function<std::string(const std::string &)> &hash_of,
                const std::string &reason, const std::string &date) {
  if (util::trim(reason).empty()) {
    throw Error("rebase: a reason is required: why BEST's content changed (e.g. \"heuristic "
                "refreshed from the sweeps of 16\")");
  }
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  if (!contents.state) {
    throw Error(files.state().string() + ": no ledger yet: nothing to rebase");
  }
  State s = *contents.state;
  if (s.stopped) {
    throw Error(files.state().string() + ": the ledger stopped on " + s.stop_date + " (" +
                s.stop_reason + "); nothing is rebased");
  }
  std::string hash = hash_of(s.best);
  if (hash == s.best_hash) {
    return {Outcome::identical,
            "BEST " + s.best + "'s content hash is already " + short_hash(hash) +
                ": nothing to rebase",
            s};
  }
  std::string from = s.best_hash;
  s.best_hash = hash;
  s.recorded.clear(); // they were compared with other code
  write_all(files, s, std::move(contents.attempts),
            {{"kind", "rebase"},
             {"date", date.empty() ? util::utc_now() : date},
             {"candidate", s.best},
             {"best", s.best},
             {"from_hash", from},
             {"hash", hash},
             {"reason", reason}});
  return {Outcome::recorded,
          "rebased BEST " + s.best + ": content hash " + short_hash(from) + " -> " +
              short_hash(hash) + " (" + reason +
              "); the next keep test measures it beside the candidate",
          s};
}

nlohmann::json land_line(const Files &files, const Landing &landing, const std::string &date) {
  std::optional<State> state = read_state(files);
  if (!state) {
    throw Error(files.state().string() + ": no ledger yet: nothing was kept to land");
  }
  if (state->best != landing.candidate || state->best_hash != landing.hash) {
    throw Error("land: candidate " + landing.candidate + " (hash " + short_hash(landing.hash) +
                ") is not BEST: BEST is " + state->best + " (hash " + short_hash(state->best_hash) +
                "); only BEST lands");
  }
  std::string reason = "the family's files are " + landing.candidate + "'s";
  if (!landing.removed.empty()) {
    reason += "; removed " + util::join(landing.removed, ", ");
  }
  if (!landing.rebased.empty()) {
    reason += "; rebased onto them: " + util::join(landing.rebased, ", ");
  }
  return {{"kind", "land"},
          {"date", date.empty() ? util::utc_now() : date},
          {"candidate", landing.candidate},
          {"best", state->best},
          {"hash", landing.hash},
          {"removed", landing.removed},
          {"rebased", landing.rebased},
          {"reason", reason}};
}

bool record_land(const Files &files, const nlohmann::json &line) {
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  if (!contents.state) {
    throw Error(files.state().string() + ": no ledger yet: nothing was kept to land");
  }
  for (const nlohmann::json &recorded : contents.attempts) {
    if (recorded == line) {
      return false;
    }
  }
  write_all(files, *contents.state, std::move(contents.attempts), line);
  return true;
}

const char *to_string(Outcome outcome) {
  switch (outcome) {
  case Outcome::recorded:
    return "recorded";
  case Outcome::duplicate:
    return "duplicate";
  case Outcome::candidate_is_best:
    return "candidate_is_best";
  case Outcome::identical:
    return "identical";
  }
  return "?";
}

State stop_no_idle_gpu(const Files &files, const std::string &family, const std::string &date,
                       int waited_min) {
  util::FileLock lock(files.lock());
  util::InterruptShield shield;
  Contents contents = read_contents(files);
  State s = contents.state.value_or(State{});
  if (s.stopped) {
    return s;
  }
  if (s.family.empty()) {
    s.family = family;
  }
  s.stopped = true;
  s.stop_reason = "no idle GPU for " + std::to_string(waited_min) + " min";
  s.stop_date = date.empty() ? util::utc_now() : date;
  write_all(files, s, std::move(contents.attempts),
            {{"kind", "stop"}, {"date", s.stop_date}, {"reason", s.stop_reason}});
  return s;
}

std::string summary_line(const State &s) {
  std::string line = "BEST " + (s.best.empty() ? std::string("none") : s.best) + " (hash " +
                     short_hash(s.best_hash) + "), consecutive regressions " +
                     std::to_string(s.consecutive_regressions) + ", ";
  return line + (s.stopped ? "stopped: " + s.stop_reason : std::string("running"));
}

std::string format_status(const State &s) {
  std::string text = "family: " + s.family + "\n";
  text += "BEST: " + (s.best.empty() ? std::string("none") : s.best) + " (hash " +
          short_hash(s.best_hash) + ")";
  if (!s.kept.empty()) {
    text +=
        ", geomean " + fixed(s.kept.back().geomean_us) + " us (" + s.kept.back().measured_by + ")";
  }
  text += "\nconsecutive regressions: " + std::to_string(s.consecutive_regressions) + "\n";
  std::vector<std::string> repairs;
  for (const auto &[proposal, n] : s.repair_attempts) {
    bool abandoned =
        std::find(s.abandoned.begin(), s.abandoned.end(), proposal) != s.abandoned.end();
    repairs.push_back(proposal + " " + std::to_string(n) + (abandoned ? " (abandoned)" : ""));
  }
  text +=
      "repair attempts: " + (repairs.empty() ? std::string("none") : util::join(repairs, ", ")) +
      "\n";
  text +=
      "stopped: " + (s.stopped ? "yes, " + s.stop_date + ": " + s.stop_reason : std::string("no")) +
      "\n";
  text += "recent regressions:";
  if (s.recent_regressions.empty()) {
    return text + " none\n";
  }
  text += "\n";
  for (const RegressionSummary &r : s.recent_regressions) {
    std::vector<std::string> classes;
    for (const ClassChange &c : r.classes) {
      classes.push_back(c.config_class + " " + decide::format_change(c.change));
    }
    text += "  " + r.date + " " + r.candidate + " vs " + r.best + " (target " + r.target +
            "): overall " + decide::format_change(r.overall.change) + "; " +
            util::join(classes, ", ") + "\n";
  }
  return text;
}

} // namespace kopt::ledger
