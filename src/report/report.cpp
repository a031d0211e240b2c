#include "report/report.hpp"

#include "app/app.hpp"
#include "buildinfo/build_report.hpp"
#include "decide/decide.hpp"
#include "gen/text_template.hpp"
#include "heuristic/fit.hpp"
#include "ledger/ledger.hpp"
#include "report/svg.hpp"
#include "spec/candidate_spec.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace kopt::report {

namespace fs = std::filesystem;

namespace {

// The latest attempt's decision: its decision.json when that is still of the attempt's content,
// else what attempts.jsonl recorded of it.
std::optional<DecisionView> latest_decision(const spec::Family &family, const spec::Layout &layout,
                                            const std::vector<Attempt> &attempts) {
  auto last = std::find_if(attempts.rbegin(), attempts.rend(),
                           [](const Attempt &a) { return a.kind == ledger::Kind::attempt; });
  if (last == attempts.rend()) {
    return std::nullopt;
  }
  DecisionView view;
  view.candidate = last->candidate;
  view.best = last->best;
  view.verdict = verdict_of(*last);
  view.threshold = family.keep_threshold;
  view.confidence = family.keep_confidence;
  for (const ledger::AttemptClass &c : last->classes) {
    view.classes.push_back(change_of(c));
  }
  if (last->overall_change) {
    view.overall = ClassChange{"overall", *last->overall_change, last->overall_interval,
                               last->overall_state ? decide::to_string(*last->overall_state) : ""};
  }
  fs::path file = layout.decision(last->candidate);
  if (fs::exists(file)) {
    decide::Decision d = decide::read_decision(file);
    if (d.hash == last->hash && d.best == last->best) {
      view.reason = d.reason;
      if (d.speed_of_light) {
        view.speed_of_light = decide::describe_speed_of_light(*d.speed_of_light);
      }
      view.threshold = d.options.threshold;
      view.confidence = d.options.confidence;
      if (d.overall) {
        view.overall = change_of(*d.overall);
      }
      // Judged on the traffic rows: those are the rows the verdict speaks of.
      if (d.options.weighting == decide::Weighting::traffic && d.traffic) {
        view.classes.clear();
        for (const decide::ClassRow &row : d.traffic->classes) {
          view.classes.push_back(change_of(row));
          view.classes.back().config_class += " (traffic)";
        }
        view.overall = change_of(d.traffic->overall);
      }
    }
  }
  // The overall row's state as decide recorded it (attempts.jsonl's overall_state, or the
  // decision's row); from its change, interval and today's threshold only for lines written
  // before the state was kept (decision.json files of kopt before 2026-11-28 hold "tie" there).
  if (view.overall && !last->overall_state) {
    view.overall->state =
        change_state(view.overall->change, view.overall->interval, view.threshold);
  }
  return view;
}

// tune/<id>/full.csv: the one asked for, else the newest.
fs::path tune_results(const spec::Layout &layout, const std::string &candidate) {
  if (!candidate.empty()) {
    // The id names a folder under tune/: a candidate's id, never a path that leaves it.
    if (!spec::is_canonical_candidate_id(candidate)) {
      throw Error("report: --tune-candidate: unknown candidate '" + util::excerpt(candidate) +
                  "' (expected a candidate id: two or more digits)");
    }
    fs::path file = layout.root / "tune" / candidate / "full.csv";
    if (!fs::exists(file)) {
      throw Error("report: --tune-candidate " + candidate + ": no " + file.string() +
                  " (run kopt tune --candidate " + candidate + ")");
    }
    return file;
  }
  fs::path newest;
  if (fs::is_directory(layout.root / "tune")) {
    for (const auto &dir : fs::directory_iterator(layout.root / "tune")) {
      fs::path file = dir.path() / "full.csv";
      if (fs::exists(file) &&
          (newest.empty() || fs::last_write_time(file) > fs::last_write_time(newest))) {
        newest = file;
      }
    }
  }
  return newest;
}

void add(Page &page, std::optional<Figure> figure, const std::string &missing) {
  if (figure) {
    page.figures.push_back(std::move(*figure));
  } else {
    page.not_shown.push_back(missing);
  }
}

// Each attempt's application A/B: the last `kopt app` of its candidate, when it was of the same
// content against the same BEST (a later A/B against another BEST is another attempt's).
void add_application(std::vector<Attempt> &attempts, const spec::Layout &layout) {
  for (Attempt &a : attempts) {
    std::error_code ec;
    if (a.kind != ledger::Kind::attempt || !fs::exists(layout.app_result(a.candidate), ec)) {
      continue;
    }
    app::Result r = app::read_result(layout.app_result(a.candidate));
    if (r.status != "ok" || r.hash != a.hash || r.best != a.best) {
      continue;
    }
    a.application = change_of(r.change);
    if (r.prediction) {
      a.predicted = r.prediction->change;
    }
  }
}

void loop_figures(Page &page, const spec::Family &family, const spec::Layout &layout) {
  ledger::Files files{layout.ledger};
  std::vector<Attempt> attempts = read_attempts(files.attempts());
  add_application(attempts, layout);
  add(page, history_figure(attempts, family.keep_threshold),
      "the loop's history: no attempts in " + files.attempts().string() + " (kopt record)");
  std::optional<ledger::State> state = ledger::read_state(files);
  add(page, state ? best_figure(*state) : std::nullopt,
      "BEST over time: no ledger at " + files.state().string() + " (record the baseline)");
  std::optional<DecisionView> decision = latest_decision(family, layout, attempts);
  add(page, decision ? decision_figure(*decision) : std::nullopt,
      "the latest decision: no attempt recorded against BEST yet (kopt decide, kopt record)");
}

void tuning_figures(Page &page, const spec::Family &family, const spec::Layout &layout,
                    const ReportOptions &options) {
  fs::path full = tune_results(layout, options.tune_candidate);
  if (full.empty()) {
    page.not_shown.push_back("the tuning heatmap: no " + (layout.root / "tune").string() +
                             "/<id>/full.csv (kopt tune)");
    page.not_shown.push_back("the heuristic's regions: no tuning results to score it on");
    return;
  }
  heuristic::Results results = heuristic::read_results(full);
  add(page, heatmap_figure(results), "the tuning heatmap: " + full.string() + " has no rows");
  heuristic::RuleList rules = family.heuristic;
  std::string source = family.file.string();
  if (!options.heuristic.empty()) {
    rules = heuristic::parse_rules(util::read_json(options.heuristic), results.columns,
                                   options.heuristic.string());
    source = options.heuristic.string();
  }
  std::string fallback = family.default_kernel;
  heuristic::Evaluation evaluation = heuristic::evaluate_rules(results, rules, fallback, 0.01);
  add(page, region_figure(results, rules, fallback, evaluation, source),
      "the heuristic's regions: no rules and no default kernel in " + source);
}

void compile_figure(Page &page, const spec::Family &family, const ReportOptions &options) {
  fs::path log_file = options.build_dir / ".ninja_log";
  if (options.build_dir.empty() || !fs::exists(log_file)) {
    page.not_shown.push_back(options.build_dir.empty()
                                 ? "the compile waterfall: no --build-dir"
                                 : "the compile waterfall: no " + log_file.string() +
                                       " (build with Ninja)");
    return;
  }
  buildinfo::NinjaLog log =
      buildinfo::parse_ninja_log(util::read_file(log_file), log_file.string());
  buildinfo::BuildReport report =
      buildinfo::read_build_report(options.build_dir, 1, buildinfo::Run::newest_compile);
  add(page,
      waterfall_figure(buildinfo::group_commands(buildinfo::latest_compile_run(log)), report,
                       family.name, family.compile_budget_s),
      "the compile waterfall: " + log_file.string() + " holds no run");
}

std::string render(const Page &page, const spec::Family &family, const std::string &date) {
  std::string figures;
  std::string contents;
  for (const Figure &f : page.figures) {
    figures += f.html;
    contents += "<li><a href=\"#" + f.id + "\">" + escape(f.title) + "</a></li>\n";
  }
  std::string missing;
  for (const std::string &line : page.not_shown) {
    missing += "<li>" + escape(line) + "</li>\n";
  }
  return gen::expand_builtin("report.html.in",
                             {{"family", escape(family.name)},
                              {"backend", escape(spec::to_string(family.backend))},
                              {"date", escape(date)},
                              {"spec", escape(family.file.string())},
                              {"contents", contents},
                              {"figures", figures},
                              {"not_shown", missing}});
}

} // namespace

Page make_report(const spec::Family &family, const spec::Layout &layout,
                 const ReportOptions &options) {
  Page page;
  loop_figures(page, family, layout);
  tuning_figures(page, family, layout, options);
  compile_figure(page, family, options);
  page.html = render(page, family, options.date.empty() ? util::utc_now() : options.date);
  return page;
}

} // namespace kopt::report
