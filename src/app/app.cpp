#include "app/app.hpp"

#include "buildinfo/hash_stamp.hpp"
#include "decide/stats.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kopt::app {

namespace fs = std::filesystem;

namespace {

// One run's command: the family's, with {exe} standing for the variant.
std::vector<std::string> expand(const std::vector<std::string> &command, const fs::path &exe) {
  std::vector<std::string> argv;
  for (std::string word : command) {
    for (size_t at = word.find("{exe}"); at != std::string::npos; at = word.find("{exe}", at)) {
      word.replace(at, 5, exe.string());
      at += exe.string().size();
    }
    argv.push_back(word);
  }
  return argv;
}

// One timed run of one side: its time in us and whether the application reported it.
struct Run {
  double us = 0;
  double wall_us = 0; ///< the whole process's wall time
  bool reported = false;
  std::string failure; ///< "" when it ran
};

// The kopt-app-us lines of a run's stdout: how many, and the last one's value (NaN when it is
// not a number) and text as printed.
struct TimeLines {
  int count = 0;
  std::optional<double> last;
  std::string text;
};

TimeLines scan_time_lines(const std::string &out) {
  std::istringstream lines(out);
  std::string line;
  TimeLines found;
  while (std::getline(lines, line)) {
    std::string_view text = util::trim(line);
    if (text.rfind(kTimeLine, 0) != 0) {
      continue;
    }
    ++found.count;
    std::string value(util::trim(text.substr(std::string_view(kTimeLine).size())));
    found.text = value;
    try {
      found.last = util::parse_double(value, kTimeLine);
    } catch (const Error &) {
      found.last = std::nan("");
    }
  }
  return found;
}

Run run_once(const spec::Family &family, const fs::path &exe, const std::string &who,
             util::ProcessRunner &runner, const profile::RunSetup &setup) {
  util::Command command;
  command.argv = expand(family.app->command, exe);
  command.env = setup.env;
  command.cpu = family.backend == spec::Backend::host && family.pin_cpu ? setup.cpu : -1;
  command.timeout_s = family.app->timeout_s > 0 ? family.app->timeout_s : family.timeout_s;
  command.max_output = std::size_t{16} << 20;
  // A run is over when the application exits: what it leaves running is killed, and fails it.
  command.ends_at_exit = true;
  util::ProcessResult r = runner.run(command);
  Run run;
  if (!r.left_running.empty()) {
    run.failure =
        who + "'s application left " + std::to_string(r.left_running.size()) +
        " process(es) running after it exited (killed: " + util::join(r.left_running, ", ") +
        "): a run may leave nothing running";
    return run;
  }
  if (!r.ok()) {
    std::string err = util::excerpt(std::string(util::trim(r.err)), 400);
    run.failure =
        who + "'s application " + r.describe(command.timeout_s) + (err.empty() ? "" : ": " + err);
    return run;
  }
  // One line, the application's: code of the candidate's in the same process could print
  // another one (a smaller time) before or after it.
  TimeLines reported = scan_time_lines(r.out);
  if (reported.count > 1) {
    run.failure = who + "'s application printed " + std::to_string(reported.count) + " " +
                  kTimeLine + " lines: a run prints exactly one (its timed region's)";
    return run;
  }
  run.reported = reported.last.has_value();
  run.wall_us = r.seconds * 1e6;
  run.us = reported.last.value_or(run.wall_us);
  if (!(run.us > 0) || !std::isfinite(run.us)) {
    run.failure = who + "'s application printed '" + kTimeLine + " " + reported.text +
                  "': expected a positive time in microseconds";
  } else if (run.reported && run.us > run.wall_us) {
    // The timed region lies inside the run: a time above the whole run's is in other units
    // (ns for us), or not this run's.
    run.failure = who + "'s application printed '" + kTimeLine + " " + reported.text +
                  "', above its whole run's wall time of " + util::format_number(run.wall_us) +
                  " us: implausible (a time in other units, or not the run's)";
  }
  return run;
}

// The paired comparison over the rounds, judged by the threshold alone (no earlier measurement
// confirms a change within it): the application's change counts when its whole interval lies
// beyond the threshold.
decide::ClassRow compare_rounds(const Result &r, double confidence, double threshold) {
  std::vector<double> per_round;
  for (size_t k = 0; k < r.best_us.size(); ++k) {
    per_round.push_back(std::log(r.candidate_us[k] / r.best_us[k]));
  }
  decide::ClassRow row;
  row.config_class = "application";
  row.configs = 1;
  // Each side's geomean over the rounds: their ratio is the paired change's centre exactly
  // (the mean of the per-round log ratios), so the times and the change printed agree.
  row.best_us = util::geomean(r.best_us);
  row.candidate_us = util::geomean(r.candidate_us);
  decide::set_paired_change(row, per_round, confidence);
  decide::paired_state(row, threshold);
  return row;
}

// The application's own times against the runs' wall times: what the timed region saved, the
// whole run saved too (the work outside it is the same on both sides). Per round, the reported
// saving minus the wall-time saving, over BEST's reported time: the candidate's untimed part of
// its run less BEST's. Two checks, one-sided (a run whose whole time saved more than its timed
// region, a faster start, says nothing against the times): its interval lying wholly above
// twice the threshold, and, as few rounds leave that interval wide, its median round lying
// above twice the threshold plus the spread of BEST's own untimed parts over the rounds (what
// that part varies by itself). Either means the times do not describe the runs: a time printed
// by code that did not do the work, or work the candidate moved out of the timed region.
// Returns why, or "".
std::string wall_disagrees(Result &r, const decide::Options &options) {
  std::vector<double> gap;
  std::vector<double> best_untimed;
  for (size_t k = 0; k < r.best_us.size(); ++k) {
    double reported = r.best_us[k] - r.candidate_us[k];
    double wall = r.best_wall_us[k] - r.candidate_wall_us[k];
    gap.push_back((reported - wall) / r.best_us[k]);
    best_untimed.push_back(r.best_wall_us[k] - r.best_us[k]);
  }
  decide::Interval interval = decide::t_interval(gap, options.confidence);
  r.wall_gap = {interval.mean, interval.low, interval.high};
  auto [low, high] = std::minmax_element(best_untimed.begin(), best_untimed.end());
  double bound = 2 * options.threshold;
  double round_bound = bound + (*high - *low) / util::median(r.best_us);
  double median = util::median(gap);
  std::string what = "the application's " + std::string(kTimeLine) + " times do not agree " +
                     "with its runs' wall times: the timed region saved ";
  std::string why = ": a time printed without the work, or work moved out of the timed region";
  if (interval.low > bound) {
    return what + decide::format_change(interval.mean).substr(1) +
           " of BEST's time more than the whole run did (interval " +
           decide::format_interval(interval.low, interval.high) + ", beyond " +
           decide::format_change(bound).substr(1) + ")" + why;
  }
  if (median > round_bound) {
    return what + decide::format_change(median).substr(1) +
           " of BEST's time more than the whole run did in the median round of " +
           std::to_string(gap.size()) + ", beyond " + decide::format_change(round_bound).substr(1) +
           " (twice the threshold and the spread of BEST's untimed part over the rounds)" + why;
  }
  return "";
}

std::string verdict_reason(const decide::ClassRow &row, double threshold) {
  std::string measured =
      decide::format_change(row.change) + " " + decide::format_interval(row.low, row.high);
  std::string limit = decide::format_change(threshold).substr(1);
  switch (row.state) {
  case decide::State::better:
    return "the application got faster: " + measured;
  case decide::State::worse:
    return "the application got slower beyond " + limit + ": " + measured;
  case decide::State::tie:
    break;
  }
  return "the application's change is within " + limit + ": " + measured;
}

Result failed(Result r, std::string reason) {
  r.status = "failed";
  r.reason = std::move(reason);
  return r;
}

// Who is compared, with which command, and when.
Result begin(const spec::Family &family, const Sides &sides) {
  Result r;
  r.family = family.name;
  r.candidate = sides.candidate;
  r.hash = sides.hash;
  r.best = sides.best;
  r.best_hash = sides.best_hash;
  r.date = util::utc_now();
  r.command = family.app->command;
  return r;
}

} // namespace

std::optional<double> reported_us(const std::string &out) { return scan_time_lines(out).last; }

std::vector<std::string> identity_problems(const Sides &sides) {
  std::vector<std::string> problems;
  for (const auto &[id, hash, exe] :
       {std::tuple{sides.best, sides.best_hash, sides.best_exe},
        std::tuple{sides.candidate, sides.hash, sides.candidate_exe}}) {
    std::error_code ec;
    if (!fs::is_regular_file(exe, ec)) {
      problems.push_back(exe.string() + ": candidate " + id +
                         "'s application is not built (build candidate_" + id + "_application)");
      continue;
    }
    try {
      std::string stamped = buildinfo::stamped_hash(exe);
      if (!hash.empty() && stamped != hash) {
        problems.push_back(exe.string() + ": carries hash '" + stamped + "', candidate " + id +
                           "'s content hash is " + hash + " (a stale or foreign build)");
      }
    } catch (const Error &e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

std::optional<Prediction> predict(const decide::Decision &d, double app_best_us,
                                  std::string &why_not) {
  if (d.verdict == decide::Verdict::failed || d.verdict == decide::Verdict::incorrect) {
    why_not = "the keep test compared no times (" + std::string(decide::to_string(d.verdict)) + ")";
    return std::nullopt;
  }
  if (!d.identical_to.empty()) {
    why_not =
        "the keep test compared no times: the candidate's code is identical to " + d.identical_to;
    return std::nullopt;
  }
  if (!d.traffic) {
    why_not = d.options.weighting == decide::Weighting::traffic
                  ? "the keep test has no traffic rows: the configs carry no count column (make "
                    "them from a capture of the application with kopt capture merge)"
                  : "the keep test weighs every config equally, not by the application's traffic "
                    "(family.json keep.weighting: \"traffic\", with a count column)";
    return std::nullopt;
  }
  const decide::ClassRow &t = d.traffic->overall;
  Prediction p;
  p.kernel_us = t.best_us;
  p.kernel_delta_us = t.candidate_us - t.best_us;
  p.kernel_share = t.best_us / app_best_us;
  // The traffic row's change is that of the kernel time, a part kernel_share of the application.
  p.change = t.change * p.kernel_share;
  p.low = (t.has_interval ? t.low : t.change) * p.kernel_share;
  p.high = (t.has_interval ? t.high : t.change) * p.kernel_share;
  p.decision = d.file;
  return p;
}

Result refused(const spec::Family &family, const Sides &sides, std::string reason) {
  return failed(begin(family, sides), std::move(reason));
}

Result run_ab(const spec::Family &family, const Sides &sides, int rounds,
              const decide::Options &options, const std::optional<decide::Decision> &decision,
              util::ProcessRunner &runner, const profile::RunSetup &setup) {
  Result r = begin(family, sides);
  r.device = setup.device;
  r.rounds = rounds;
  r.confidence = options.confidence;
  r.threshold = options.threshold;
  std::string best_side = "BEST " + sides.best;
  std::string candidate_side = "candidate " + sides.candidate;
  // One untimed run of each: the first run of a program pays for loading it.
  for (const auto &[exe, who] :
       {std::pair{sides.best_exe, best_side}, std::pair{sides.candidate_exe, candidate_side}}) {
    if (Run warm = run_once(family, exe, who, runner, setup); !warm.failure.empty()) {
      return failed(r, warm.failure);
    }
  }
  std::optional<bool> reported;
  for (int k = 0; k < rounds; ++k) {
    bool best_first = k % 2 == 0; // the order alternates, so a drift falls on both sides alike
    Run first = run_once(family, best_first ? sides.best_exe : sides.candidate_exe,
                         best_first ? best_side : candidate_side, runner, setup);
    Run second = first.failure.empty()
                     ? run_once(family, best_first ? sides.candidate_exe : sides.best_exe,
                                best_first ? candidate_side : best_side, runner, setup)
                     : Run{};
    for (const Run *run : {&first, &second}) {
      if (!run->failure.empty()) {
        return failed(r, run->failure + " (round " + std::to_string(k + 1) + ")");
      }
      if (reported && *reported != run->reported) {
        return failed(r, std::string("one run printed its ") + kTimeLine +
                             " line and another did not: both sides must time the same way");
      }
      reported = run->reported;
    }
    r.best_us.push_back(best_first ? first.us : second.us);
    r.candidate_us.push_back(best_first ? second.us : first.us);
    r.best_wall_us.push_back(best_first ? first.wall_us : second.wall_us);
    r.candidate_wall_us.push_back(best_first ? second.wall_us : first.wall_us);
  }
  r.timed_by = reported.value_or(false) ? "app" : "wall";
  r.change = compare_rounds(r, options.confidence, options.threshold);
  r.reason = verdict_reason(r.change, options.threshold);
  if (r.timed_by == "app") {
    if (std::string why = wall_disagrees(r, options); !why.empty()) {
      return failed(r, why);
    }
  }
  if (!decision) {
    r.no_prediction = "candidate " + sides.candidate + " has no keep test against BEST " +
                      sides.best + " (run its bench and keep test first)";
  } else if (decision->candidate != sides.candidate || decision->hash != sides.hash ||
             decision->best != sides.best || decision->best_hash != sides.best_hash) {
    r.no_prediction = "the keep test in " + decision->file + " is of candidate " +
                      decision->candidate + " (hash " + decision->hash + ") against BEST " +
                      decision->best + ", not of this content against this BEST";
  } else {
    r.prediction = predict(*decision, r.change.best_us, r.no_prediction);
  }
  if (r.prediction) {
    r.prediction_inside =
        r.change.low <= r.prediction->change && r.prediction->change <= r.change.high;
  }
  return r;
}

nlohmann::json to_json(const Result &r) {
  nlohmann::json prediction = nullptr;
  if (r.prediction) {
    const Prediction &p = *r.prediction;
    prediction = {{"change", p.change},
                  {"low", p.low},
                  {"high", p.high},
                  {"kernel_us", p.kernel_us},
                  {"kernel_delta_us", p.kernel_delta_us},
                  {"kernel_share", p.kernel_share},
                  {"decision", p.decision},
                  {"inside_interval", r.prediction_inside}};
  }
  const decide::ClassRow &c = r.change;
  bool measured = r.status == "ok";
  auto number = [&](double v) { return measured ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"family", r.family},
          {"candidate", r.candidate},
          {"hash", r.hash},
          {"best", r.best},
          {"best_hash", r.best_hash},
          {"date", r.date},
          {"device", r.device},
          {"status", r.status},
          {"reason", r.reason},
          {"passes", r.passes()},
          {"command", r.command},
          {"timed_by", r.timed_by},
          {"rounds", r.rounds},
          {"confidence", r.confidence},
          {"threshold", r.threshold},
          {"best_us", r.best_us},
          {"candidate_us", r.candidate_us},
          {"best_wall_us", r.best_wall_us},
          {"candidate_wall_us", r.candidate_wall_us},
          {"wall_gap", r.wall_gap ? nlohmann::json{{"mean", (*r.wall_gap)[0]},
                                                   {"low", (*r.wall_gap)[1]},
                                                   {"high", (*r.wall_gap)[2]}}
                                  : nlohmann::json(nullptr)},
          {"best_geomean_us", number(c.best_us)},
          {"candidate_geomean_us", number(c.candidate_us)},
          {"change", number(c.change)},
          {"low", number(c.low)},
          {"high", number(c.high)},
          {"state", measured ? nlohmann::json(decide::to_string(c.state)) : nullptr},
          {"prediction", prediction},
          {"no_prediction", r.no_prediction}};
}

namespace {

// A written result's "prediction" object; `where` names it in errors.
Prediction read_prediction(const nlohmann::json &j, const std::string &where) {
  auto number = [&](const char *key) { return util::json_field<double>(j, key, where); };
  return Prediction{.change = number("change"),
                    .low = number("low"),
                    .high = number("high"),
                    .kernel_us = number("kernel_us"),
                    .kernel_delta_us = number("kernel_delta_us"),
                    .kernel_share = number("kernel_share"),
                    .decision = util::json_field<std::string>(j, "decision", where)};
}

} // namespace

Result read_result(const fs::path &path) {
  std::string source = path.string();
  nlohmann::json j = util::read_json(path);
  auto text = [&](const char *key) { return util::json_field<std::string>(j, key, source); };
  auto number = [&](const char *key) { return util::json_field<double>(j, key, source); };
  auto times = [&](const char *key) {
    return util::json_field<std::vector<double>>(j, key, source);
  };
  Result r;
  r.family = text("family");
  r.candidate = text("candidate");
  r.hash = text("hash");
  r.best = text("best");
  r.best_hash = text("best_hash");
  r.date = text("date");
  r.device = text("device");
  r.status = text("status");
  r.reason = text("reason");
  r.timed_by = text("timed_by");
  r.rounds = static_cast<int>(util::json_int_in(j, "rounds", 0, 1000, source));
  r.best_us = times("best_us");
  r.candidate_us = times("candidate_us");
  r.best_wall_us = times("best_wall_us");
  r.candidate_wall_us = times("candidate_wall_us");
  r.no_prediction = text("no_prediction");
  if (r.status == "ok") {
    r.change.config_class = "application";
    r.change.best_us = number("best_geomean_us");
    r.change.candidate_us = number("candidate_geomean_us");
    r.change.change = number("change");
    r.change.has_interval = true;
    r.change.low = number("low");
    r.change.high = number("high");
    r.change.state = decide::parse_state(text("state"), source + ": state");
  }
  auto prediction = util::json_field<nlohmann::json>(j, "prediction", source);
  if (!prediction.is_null()) {
    std::string where = source + ": prediction";
    r.prediction = read_prediction(prediction, where);
    r.prediction_inside = util::json_field<bool>(prediction, "inside_interval", where);
  }
  return r;
}

void write_result(const fs::path &path, const Result &result) {
  util::write_json_atomic(path, to_json(result));
}

std::string format_result(const Result &r) {
  std::string text = "application A/B: candidate " + r.candidate + " vs BEST " + r.best;
  if (r.status != "ok") {
    return text + ": failed: " + r.reason + "\n";
  }
  const decide::ClassRow &c = r.change;
  text += ", " + std::to_string(r.rounds) + " side-by-side rounds, timed by " +
          (r.timed_by == "app" ? std::string("its ") + kTimeLine + " line" : "wall time") + "\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "  BEST %s: %.1f us; candidate %s: %.1f us (geomeans over the rounds)\n",
                r.best.c_str(), c.best_us, r.candidate.c_str(), c.candidate_us);
  text += line;
  text += "  measured:  " + decide::format_change(c.change) + " " +
          decide::format_interval(c.low, c.high) + " (" +
          util::format_number(r.confidence * 100, 4) + "%)\n";
  if (r.prediction) {
    const Prediction &p = *r.prediction;
    std::snprintf(line, sizeof line,
                  " (kernel time %.1f us per run, %.1f%% of the application's; it changes by "
                  "%+.1f us)\n",
                  p.kernel_us, 100 * p.kernel_share, p.kernel_delta_us);
    text += "  predicted: " + decide::format_change(p.change) + " " +
            decide::format_interval(p.low, p.high) + line;
    text += std::string("  the measured interval ") +
            (r.prediction_inside ? "holds" : "does not hold") + " the prediction\n";
  } else {
    text += "  predicted: none: " + r.no_prediction + "\n";
  }
  text += std::string("app: ") + (r.passes() ? "pass" : "FAIL") + " (" + r.reason + ")\n";
  return text;
}

} // namespace kopt::app
