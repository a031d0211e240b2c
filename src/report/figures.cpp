#include "report/figures.hpp"

#include "report/svg.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace kopt::report {

namespace {

constexpr int kWidth = 960;

std::string seconds_tick(double value) { return num(value, 3) + " s"; }

std::string power_tick(double value) {
  if (value >= 1 << 20) {
    return num(value / (1 << 20), 3) + "Mi";
  }
  if (value >= 1 << 10) {
    return num(value / (1 << 10), 3) + "Ki";
  }
  return num(value, 4);
}

std::string interval_text(const std::optional<std::pair<double, double>> &interval) {
  return interval ? " [" + percent(interval->first) + ", " + percent(interval->second) + "]" : "";
}

std::string verdict_colour(const std::string &verdict) {
  static const std::map<std::string, std::string> colours = {
      {"keep", "#1a9850"},     {"regression", "#d73027"}, {"tie", "#7f7f7f"},
      {"split", "#f28e2b"},    {"failed", "#222222"},     {"incorrect", "#8e44ad"},
      {"baseline", "#1f77b4"}, {"better", "#1a9850"},     {"worse", "#d73027"},
      {"pending", "#f28e2b"}};
  auto found = colours.find(verdict);
  return found == colours.end() ? "#7f7f7f" : found->second;
}

// A legend row of coloured squares and names, from x at row y.
void legend(Svg &svg, double x, double y,
            const std::vector<std::pair<std::string, std::string>> &items) {
  for (const auto &[name, colour] : items) {
    svg.box(x, y - 10, 12, 12, colour);
    svg.text(x + 16, y, name, "class=\"legend\"");
    x += 28 + 7.5 * static_cast<double>(name.size());
  }
}

std::string figure_html(const std::string &id, const std::string &title, const std::string &svg,
                        const std::string &caption, size_t marks, const std::string &after = "") {
  return "<figure id=\"" + id + "\" data-figure=\"" + id + "\" data-marks=\"" +
         std::to_string(marks) + "\">\n<h2>" + escape(title) + "</h2>\n" + svg + "\n" +
         "<figcaption>" + caption + "</figcaption>\n" + after + "</figure>\n";
}

size_t count_marks(const std::string &svg) {
  size_t n = 0;
  for (size_t at = svg.find("class=\"mark\""); at != std::string::npos;
       at = svg.find("class=\"mark\"", at + 1)) {
    ++n;
  }
  return n;
}

std::string shape_text(const std::vector<std::string> &columns, const std::vector<int64_t> &dims) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < columns.size() && i < dims.size(); ++i) {
    parts.push_back(columns[i] + "=" + std::to_string(dims[i]));
  }
  return util::join(parts, ",");
}

std::string verdict_of(const Attempt &a) { return a.kind == "baseline" ? "baseline" : a.verdict; }

// The change axis over `changes`, with the threshold band always in range.
ChangeAxis axis_over(const std::vector<ClassChange> &changes, double threshold) {
  double lo = -threshold, hi = threshold;
  bool below = false, above = false;
  for (const ClassChange &c : changes) {
    lo = std::min({lo, c.change, c.interval ? c.interval->first : c.change});
    hi = std::max({hi, c.change, c.interval ? c.interval->second : c.change});
    below = below || c.change < 0;
    above = above || c.change > 0;
  }
  return change_axis(lo, hi, below, above);
}

// A marker centred at (x, y) as a path: a diamond (baseline), a triangle (incorrect), a cross
// (failed, drawn as a stroke), else a square.
struct Marker {
  std::string d;
  std::string fill;
  std::string extra;
};

Marker marker(const std::string &verdict, double x, double y, const std::string &colour) {
  auto at = [&](double dx, double dy) { return num(x + dx, 6) + " " + num(y + dy, 6); };
  if (verdict == "baseline") {
    return {"M" + at(0, -7) + " L" + at(7, 0) + " L" + at(0, 7) + " L" + at(-7, 0) + " Z", colour,
            ""};
  }
  if (verdict == "incorrect") {
    return {"M" + at(0, -7) + " L" + at(7, 5) + " L" + at(-7, 5) + " Z", colour, ""};
  }
  if (verdict == "failed") {
    return {"M" + at(-5, -5) + " L" + at(5, 5) + " M" + at(-5, 5) + " L" + at(5, -5), "none",
            "stroke=\"" + colour + "\" stroke-width=\"3\""};
  }
  return {"M" + at(-5, -5) + " L" + at(5, -5) + " L" + at(5, 5) + " L" + at(-5, 5) + " Z", colour,
          ""};
}

// The label of each attempt shown: its candidate id, with the attempt's number among those of
// the same id when there are several ("07 (1)", "07 (2)"), so they read as one candidate.
std::vector<std::string> attempt_labels(const std::vector<const Attempt *> &shown) {
  std::map<std::string, int> total, seen;
  for (const Attempt *a : shown) {
    ++total[a->candidate];
  }
  std::vector<std::string> labels;
  for (const Attempt *a : shown) {
    int n = ++seen[a->candidate];
    labels.push_back(total[a->candidate] > 1 ? a->candidate + " (" + std::to_string(n) + ")"
                                             : a->candidate);
  }
  return labels;
}

// One table cell of a change: the change coloured by its state, the state, the interval under.
std::string change_cell(double change, const std::optional<std::pair<double, double>> &interval,
                        const std::string &state) {
  return "<td><b style=\"color:" + verdict_colour(state) + "\">" + escape(percent(change)) +
         "</b> " + escape(state) +
         (interval ? "<br><small>" + escape(interval_text(interval).substr(1)) + "</small>" : "") +
         "</td>";
}

// The history's table: one row per attempt shown, each class's change and the overall one as
// text, so that a screenshot or a printout keeps every number the chart shows.
// An ISO 8601 date as two lines that do not break: the day, then the time.
std::string date_cell(const std::string &date) {
  size_t t = date.find('T');
  if (t == std::string::npos) {
    return escape(date);
  }
  return "<span class=\"day\">" + escape(date.substr(0, t)) + "</span><br><small>" +
         escape(date.substr(t + 1)) + "</small>";
}

// An event's row in the history table (a rebase, a land, a stop), across the columns after the
// date: what happened, in the order recorded.
std::string event_row(const Attempt &e, size_t columns) {
  return "<tr class=\"event\" data-event=\"" + escape(e.kind) + "\"><td></td><td>" +
         date_cell(e.date) + "</td><td colspan=\"" + std::to_string(columns - 2) + "\"><b>" +
         escape(e.kind == "stop" ? "stopped: " + e.verdict : e.verdict) + "</b></td></tr>\n";
}

// The one line a failed or incorrect attempt's verdict cell carries under the verdict: the
// reason's first line, cut at 160 characters (the whole reason is the cell's title).
std::string reason_line(const Attempt &a) {
  if (a.kind != "attempt" || !a.classes.empty() || a.reason.empty()) {
    return "";
  }
  std::string line = a.reason.substr(0, a.reason.find('\n'));
  if (line.size() > 160) {
    line = line.substr(0, 157) + "...";
  }
  return "<div class=\"reason\" title=\"" + escape(a.reason) + "\">" + escape(line) + "</div>";
}

std::string history_table(const std::vector<const Attempt *> &shown,
                          const std::vector<std::string> &labels,
                          const std::vector<std::string> &classes, double threshold,
                          const std::vector<std::pair<size_t, const Attempt *>> &events) {
  std::string table = "<table class=\"attempts\"><tr><th>#</th><th>date</th><th>attempt</th>"
                      "<th>vs BEST</th><th>verdict</th>";
  for (const std::string &c : classes) {
    table += "<th>" + escape(c) + "</th>";
  }
  // The traffic-weighted verdict and the application A/B, beside the kernel verdict, when any
  // attempt has them.
  bool traffic =
      std::any_of(shown.begin(), shown.end(), [](const Attempt *a) { return a->traffic; });
  bool application =
      std::any_of(shown.begin(), shown.end(), [](const Attempt *a) { return a->application; });
  table += "<th>all configs</th>";
  table += traffic ? "<th>traffic: the application's kernel time</th>" : "";
  table += application ? "<th>application A/B (predicted)</th>" : "";
  table += "<th>hypothesis</th></tr>\n";
  size_t columns = 7 + classes.size() + (traffic ? 1 : 0) + (application ? 1 : 0);
  auto events_before = [&](size_t i) {
    for (const auto &[at, e] : events) {
      table += at == i ? event_row(*e, columns) : "";
    }
  };
  for (size_t i = 0; i < shown.size(); ++i) {
    events_before(i);
    const Attempt &a = *shown[i];
    table += "<tr data-attempt=\"" + escape(labels[i]) + "\"><td>" + std::to_string(i + 1) +
             "</td><td>" + date_cell(a.date) + "</td><td>" + escape(labels[i]) +
             (a.hash.empty() ? "" : "<br><small>" + escape(a.hash.substr(0, 8)) + "</small>") +
             "</td><td>" + escape(a.best) +
             "</td><td style=\"color:" + verdict_colour(verdict_of(a)) + "\">" +
             escape(verdict_of(a)) + reason_line(a) + "</td>";
    for (const std::string &name : classes) {
      auto c = std::find_if(a.classes.begin(), a.classes.end(),
                            [&](const ClassChange &cc) { return cc.config_class == name; });
      table += c == a.classes.end() ? "<td>-</td>" : change_cell(c->change, c->interval, c->state);
    }
    table += a.overall_change
                 ? change_cell(*a.overall_change, a.overall_interval,
                               a.overall_state.empty()
                                   ? change_state(*a.overall_change, a.overall_interval, threshold)
                                   : a.overall_state)
                 : "<td>-</td>";
    if (traffic) {
      table += a.traffic ? change_cell(a.traffic->change, a.traffic->interval, a.traffic->state)
                         : "<td>-</td>";
    }
    if (application) {
      std::string cell = a.application ? change_cell(a.application->change, a.application->interval,
                                                     a.application->state)
                                       : "<td>-</td>";
      if (a.predicted) {
        cell.insert(cell.size() - 5, "<br><small>predicted " + percent(*a.predicted) + "</small>");
      }
      table += cell;
    }
    table += "<td>" + escape(a.hypothesis) + "</td></tr>\n";
  }
  events_before(shown.size());
  return table + "</table>\n";
}

// The history's plot area; rows under it hold the attempts that compared no class.
constexpr double kHistoryLeft = 110, kHistoryRight = kWidth - 20, kHistoryTop = 84,
                 kHistoryBottom = 334, kLaneHeight = 22;

// The history's legend: verdict colours, the markers, the tie band and the class order.
void history_legend(Svg &svg, const std::vector<std::string> &classes, double threshold) {
  legend(svg, kHistoryLeft, 22,
         {{"keep", verdict_colour("keep")},
          {"regression", verdict_colour("regression")},
          {"tie", verdict_colour("tie")},
          {"split", verdict_colour("split")},
          {"failed", verdict_colour("failed")},
          {"incorrect", verdict_colour("incorrect")},
          {"baseline", verdict_colour("baseline")}});
  double x = kHistoryLeft;
  auto item = [&](const Marker &m, const std::string &text) {
    svg.path(m.d, m.fill, m.extra);
    svg.text(x + 12, 48, text, "class=\"legend\"");
    x += 30 + 6.4 * static_cast<double>(text.size());
  };
  item(Marker{"M" + num(x - 4.5, 6) + " 44 a4.5 4.5 0 1 0 9 0 a4.5 4.5 0 1 0 -9 0", "#555", ""},
       "a class's change (bar: its interval)");
  item(marker("baseline", x, 44, "#555"), "baseline");
  item(marker("incorrect", x, 44, "#555"), "incorrect");
  item(marker("failed", x, 44, "#555"), "failed");
  svg.box(x - 6, 38, 12, 12, "#d0d0d0");
  svg.text(x + 12, 48, "tie band (noise threshold) \u00b1" + percent(threshold).substr(1),
           "class=\"legend\"");
  svg.text(kHistoryLeft, 70,
           "one dot per config class, left to right in each attempt: " + util::join(classes, ", "),
           "class=\"legend\"");
}

// The tie band, at least 4 px high so that it shows at any scale, and the 0 line.
void tie_band(Svg &svg, const Scale &y, double threshold, double left, double right) {
  double high = y(1 + threshold), low = y(1 - threshold);
  double h = std::max(std::abs(low - high), 4.0);
  svg.box(left, y(1) - h / 2, right - left, h, "#d0d0d0");
  svg.line(left, y(1), right, y(1), "#555", "stroke-dasharray=\"4 3\"");
}

// One attempt's column: a dot and interval bar per class, or its marker in its lane when it
// compared no class, and its label and verdict under the lanes.
void history_column(Svg &svg, const Scale &y, const Attempt &a, const std::string &label,
                    const std::vector<std::string> &classes, const std::vector<std::string> &lanes,
                    double x0, double band) {
  double centre = x0 + band / 2;
  std::string verdict = verdict_of(a);
  std::string colour = verdict_colour(verdict);
  if (a.kind == "baseline") {
    Marker m = marker("baseline", centre, y(1), colour);
    svg.shape(m.d, m.fill,
              "baseline " + label +
                  (a.geomean_us ? ", geomean " + num(*a.geomean_us) + " us" : std::string()),
              m.extra);
  } else if (a.classes.empty()) { // failed or incorrect: no times compared
    auto lane = std::find(lanes.begin(), lanes.end(), verdict) - lanes.begin();
    Marker m = marker(verdict, centre, kHistoryBottom + kLaneHeight * (0.5 + lane), colour);
    svg.shape(m.d, m.fill, label + " (" + verdict + "): no class compared -- " + a.hypothesis,
              m.extra);
  }
  for (const ClassChange &c : a.classes) {
    auto k = std::find(classes.begin(), classes.end(), c.config_class) - classes.begin();
    double x = x0 + band * (static_cast<double>(k) + 1) / static_cast<double>(classes.size() + 1);
    if (c.interval) {
      svg.line(x, y(1 + c.interval->first), x, y(1 + c.interval->second), colour,
               "stroke-width=\"2\"");
    }
    svg.circle(x, y(1 + c.change), 4.5, colour,
               label + " (" + verdict + ") class " + c.config_class + ": " + percent(c.change) +
                   interval_text(c.interval) + " -- " + a.hypothesis);
  }
  double under = kHistoryBottom + kLaneHeight * static_cast<double>(lanes.size());
  svg.text(centre, under + 18, label, "class=\"tick\" text-anchor=\"middle\"");
  svg.text(centre, under + 33, verdict,
           "class=\"tick\" text-anchor=\"middle\" fill=\"" + colour + "\"");
}

// The rows under the plot for attempts that compared no class: one per such verdict, labelled
// in the margin, apart from the 0% line.
void history_lanes(Svg &svg, const std::vector<std::string> &lanes) {
  for (size_t l = 0; l < lanes.size(); ++l) {
    double top = kHistoryBottom + kLaneHeight * static_cast<double>(l);
    svg.box(kHistoryLeft, top + 2, kHistoryRight - kHistoryLeft, kLaneHeight - 2, "#f4f4f4");
    svg.text(kHistoryLeft - 8, top + kLaneHeight / 2 + 5, lanes[l],
             "class=\"label\" text-anchor=\"end\" fill=\"" + verdict_colour(lanes[l]) + "\"");
  }
}

// Each event (a rebase, a land, a stop) as a dashed line between the attempts it came between,
// labelled at the top by what happened (its whole line in the title); events at one place stack.
void history_events(Svg &svg, const std::vector<std::pair<size_t, const Attempt *>> &events,
                    double left, double band, double top, double bottom) {
  std::map<size_t, int> stacked;
  for (const auto &[at, e] : events) {
    double x = left + band * static_cast<double>(at) + (at == 0 ? 2 : 0);
    int k = stacked[at]++;
    svg.line(x, top - 18, x, bottom, "#7a7a7a", "stroke-dasharray=\"6 3\" stroke-width=\"1.5\"");
    std::string what = e->kind == "land"     ? "landed " + e->candidate
                       : e->kind == "rebase" ? "rebased " + e->best
                                             : "stopped";
    // After the last attempt the line is the plot's right edge: its label goes to its left.
    bool last = at > 0 && x >= kHistoryRight - 1;
    svg.text(last ? x - 4 : x + 4, top - 6 + 13.0 * k, what, e->verdict,
             std::string(last ? "text-anchor=\"end\" " : "") + "class=\"note\" data-event=\"" +
                 escape(e->kind) + "\"");
  }
}

} // namespace

std::string change_state(double change, const std::optional<std::pair<double, double>> &interval,
                         double threshold) {
  if (!interval) {
    return std::abs(change) >= threshold ? (change < 0 ? "better" : "worse") : "tie";
  }
  if (interval->second < -threshold || interval->first > threshold) {
    return interval->second < 0 ? "better" : "worse";
  }
  return interval->second < 0 || interval->first > 0 ? "pending" : "tie";
}

std::optional<Figure> history_figure(const std::vector<Attempt> &attempts, double threshold) {
  std::vector<const Attempt *> shown;
  std::vector<std::string> classes;
  std::vector<ClassChange> changes;
  std::vector<std::string> lanes; // verdicts of attempts that compared no class
  // Rebases, lands and stops compared no times: each is a dashed line before the attempt that
  // follows it, and a row of the table, not a column.
  std::vector<std::pair<size_t, const Attempt *>> events;
  for (const Attempt &a : attempts) {
    if (a.is_event()) {
      events.emplace_back(shown.size(), &a);
      continue;
    }
    shown.push_back(&a);
    if (a.kind == "attempt" && a.classes.empty() &&
        std::find(lanes.begin(), lanes.end(), a.verdict) == lanes.end()) {
      lanes.push_back(a.verdict);
    }
    for (const ClassChange &c : a.classes) {
      if (std::find(classes.begin(), classes.end(), c.config_class) == classes.end()) {
        classes.push_back(c.config_class);
      }
      changes.push_back(c);
    }
  }
  if (shown.empty()) {
    return std::nullopt;
  }
  std::stable_partition(lanes.begin(), lanes.end(),
                        [](const std::string &v) { return v == "incorrect"; });
  // Time over BEST's: linear while the changes are moderate, else on a log scale, where -90% and
  // +900% are as far from 0 and small changes stay apart.
  ChangeAxis axis = axis_over(changes, threshold);
  const double left = kHistoryLeft, right = kHistoryRight, top = kHistoryTop;
  const double bottom = kHistoryBottom + kLaneHeight * static_cast<double>(lanes.size());
  Scale y(axis.lo, axis.hi, kHistoryBottom, top, axis.log);
  double band = (right - left) / static_cast<double>(shown.size());
  Svg svg(kWidth, static_cast<int>(bottom) + 80,
          "the loop's history: per attempt and class, the change vs BEST");
  tie_band(svg, y, threshold, left, right);
  history_lanes(svg, lanes);
  svg.y_axis(y, left,
             std::string("change vs BEST") + (axis.log ? " (log scale)" : "") +
                 ", below 0 = faster",
             change_tick, axis.ticks);
  std::vector<std::string> labels = attempt_labels(shown);
  for (size_t i = 0; i < shown.size(); ++i) {
    double x0 = left + band * static_cast<double>(i);
    history_column(svg, y, *shown[i], labels[i], classes, lanes, x0, band);
    if (i > 0) {
      svg.line(x0, top, x0, bottom, "#ddd");
    }
  }
  history_events(svg, events, left, band, top, bottom);
  svg.text((left + right) / 2, bottom + 55,
           "attempt, in the order recorded (candidate, its attempt number when repeated; verdict)",
           "class=\"axis\" text-anchor=\"middle\"");
  history_legend(svg, classes, threshold);
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  return Figure{
      "history", "The loop's history",
      figure_html("history", "The loop's history: every attempt, change per class", svg_text,
                  "Each dot is one config class of one attempt: its geomean time vs BEST at the "
                  "time, with the confidence interval as a bar; the table under the chart lists "
                  "the same numbers. The grey band is the tie band (the noise threshold " +
                      escape(percent(threshold)).substr(1) +
                      "): a class counts as better or worse when its interval lies outside it. "
                      "Attempts that compared no class (incorrect, failed) sit in the rows under "
                      "the plot, not on the 0% line.",
                  marks, history_table(shown, labels, classes, threshold, events)),
      marks};
}

std::optional<Figure> best_figure(const ledger::State &state) {
  if (state.kept.empty()) {
    return std::nullopt;
  }
  double lo = state.kept.front().geomean_us;
  double hi = lo;
  for (const ledger::KeptRow &row : state.kept) {
    lo = std::min(lo, row.geomean_us);
    hi = std::max(hi, row.geomean_us);
  }
  const double left = 90, right = kWidth - 20, top = 30, bottom = 200;
  Scale y(0, hi * 1.15, bottom, top);
  double step = (right - left) / static_cast<double>(state.kept.size());
  Svg svg(kWidth, 260, "BEST's geomean after each keep");
  svg.y_axis(y, left, "BEST geomean (us)");
  double px = 0, py = 0;
  for (size_t i = 0; i < state.kept.size(); ++i) {
    const ledger::KeptRow &row = state.kept[i];
    double x = left + step * (static_cast<double>(i) + 0.5);
    double yy = y(row.geomean_us);
    if (i > 0) {
      svg.line(px, py, x, py, "#1f77b4", "stroke-width=\"2\"");
      svg.line(x, py, x, yy, "#1f77b4", "stroke-width=\"2\"");
    }
    svg.circle(x, yy, 5, "#1f77b4",
               row.candidate + " (" + row.status + ", " + row.date + "): geomean " +
                   num(row.geomean_us) + " us" +
                   (row.change ? ", " + percent(*row.change) + " vs the previous BEST" : ""));
    svg.text(x, yy - 10, num(row.geomean_us, 4) + " us", "class=\"note\" text-anchor=\"middle\"");
    svg.text(x, bottom + 18, row.candidate + " (" + row.status + ")",
             "class=\"tick\" text-anchor=\"middle\"");
    svg.text(x, bottom + 33, row.date.substr(0, 16), "class=\"tick\" text-anchor=\"middle\"");
    px = x;
    py = yy;
  }
  svg.line(left, bottom, right, bottom, "#333");
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  return Figure{"best", "BEST over time",
                figure_html("best", "BEST's geomean over time", svg_text,
                            "BEST's geomean time over all configs (us, " +
                                escape(state.kept.back().measured_by) +
                                ") when it became BEST: the baseline, then each keep.",
                            marks),
                marks};
}

std::optional<Figure> decision_figure(const DecisionView &d) {
  std::vector<ClassChange> rows = d.classes;
  if (d.overall) {
    rows.push_back(*d.overall);
  }
  if (rows.empty()) {
    return std::nullopt;
  }
  ChangeAxis axis = axis_over(rows, d.threshold);
  const double left = 170, right = kWidth - 300, top = 40, row_h = 34;
  double bottom = top + row_h * static_cast<double>(rows.size());
  Scale x(axis.lo, axis.hi, left, right, axis.log);
  Svg svg(kWidth, static_cast<int>(bottom) + 60, "the latest decision per class");
  double band = std::max(x(1 + d.threshold) - x(1 - d.threshold), 4.0); // visible at any scale
  svg.box(x(1) - band / 2, top - 10, band, bottom - top + 10, "#d0d0d0");
  svg.text(left, top - 16,
           "grey band: the tie band, noise threshold \u00b1" + percent(d.threshold).substr(1),
           "class=\"note\"");
  svg.line(x(1), top - 10, x(1), bottom, "#555", "stroke-dasharray=\"4 3\"");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ClassChange &c = rows[i];
    double yy = top + row_h * (static_cast<double>(i) + 0.5);
    bool overall = d.overall && i + 1 == rows.size();
    if (overall) {
      svg.line(20, yy - row_h / 2, kWidth - 20, yy - row_h / 2, "#bbb");
    }
    std::string colour = verdict_colour(c.state);
    svg.text(left - 12, yy + 4, overall ? "all configs" : c.config_class,
             "class=\"label\" text-anchor=\"end\"");
    if (c.interval) {
      double a = x(1 + c.interval->first);
      double b = x(1 + c.interval->second);
      svg.line(a, yy, b, yy, colour, "stroke-width=\"3\"");
      svg.line(a, yy - 6, a, yy + 6, colour, "stroke-width=\"2\"");
      svg.line(b, yy - 6, b, yy + 6, colour, "stroke-width=\"2\"");
    }
    svg.circle(x(1 + c.change), yy, 6, colour,
               c.config_class + ": " + percent(c.change) + interval_text(c.interval) + " " +
                   c.state);
    svg.text(right + 16, yy + 4, percent(c.change) + interval_text(c.interval) + "  " + c.state,
             "class=\"label\" fill=\"" + colour + "\"");
  }
  svg.x_axis(x, bottom + 4,
             std::string("change vs BEST") + (axis.log ? " (log scale)" : "") +
                 ", below 0 = faster",
             change_tick, axis.ticks);
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  std::string title =
      "The latest decision: candidate " + d.candidate + " vs BEST " + d.best + ": " + d.verdict;
  return Figure{"decision", title,
                figure_html("decision", title, svg_text,
                            "Per config class, the change of the geomean time with its " +
                                num(100 * d.confidence, 3) +
                                "% interval; green is better beyond the threshold, red worse, "
                                "grey a tie, orange pending. " +
                                escape(d.reason) +
                                (d.speed_of_light.empty() ? "" : " " + escape(d.speed_of_light)),
                            marks),
                marks};
}

std::optional<Figure> heatmap_figure(const heuristic::Results &results) {
  std::vector<std::string> kernels = results.kernels();
  if (kernels.empty() || results.shapes.empty() || results.winners_only) {
    return std::nullopt;
  }
  const double left = 170, top = 60, right = kWidth - 20;
  double cell_w = std::max(4.0, (right - left) / static_cast<double>(results.shapes.size()));
  double cell_h = 22;
  double bottom = top + cell_h * static_cast<double>(kernels.size());
  int width = static_cast<int>(left + cell_w * static_cast<double>(results.shapes.size()) + 20);
  Svg svg(std::max(width, kWidth), static_cast<int>(bottom) + 130, "tuning heatmap");
  size_t label_every =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(14.0 / std::max(cell_w, 1.0))));
  for (size_t s = 0; s < results.shapes.size(); ++s) {
    const heuristic::Shape &shape = results.shapes[s];
    double fastest = 0;
    for (const auto &[name, timing] : shape.kernels) {
      if (timing.usable() && (fastest == 0 || timing.us < fastest)) {
        fastest = timing.us;
      }
    }
    double x = left + cell_w * static_cast<double>(s);
    for (size_t k = 0; k < kernels.size(); ++k) {
      double y = top + cell_h * static_cast<double>(k);
      auto found = shape.kernels.find(kernels[k]);
      std::string where = shape_text(results.columns, shape.dims) + ", " + kernels[k];
      if (found == shape.kernels.end() || !found->second.usable() || fastest <= 0) {
        svg.box(x, y, cell_w - 1, cell_h - 1, "#f4f4f4");
        continue;
      }
      double ratio = found->second.us / fastest;
      bool tuned = kernels[k] == shape.tuned;
      svg.rect(x, y, cell_w - 1, cell_h - 1, heat_colour(std::log2(ratio)),
               where + ": " + num(found->second.us) + " us, " + num(ratio, 3) +
                   "x the shape's fastest" + (tuned ? " (tuned choice)" : ""),
               tuned ? "stroke=\"#000\" stroke-width=\"2\"" : "");
      if (cell_w >= 34) {
        svg.text(x + cell_w / 2, y + 15, num(ratio, 3),
                 "class=\"cell\" text-anchor=\"middle\"" +
                     std::string(ratio > 1.6 ? " fill=\"#fff\"" : ""));
      }
    }
    if (s % label_every == 0) {
      double lx = x + cell_w / 2;
      std::vector<std::string> values;
      for (int64_t v : shape.dims) {
        values.push_back(std::to_string(v));
      }
      svg.text(lx, bottom + 10, util::join(values, ","),
               "class=\"tick\" text-anchor=\"end\" transform=\"rotate(-40 " + num(lx, 6) + " " +
                   num(bottom + 10, 6) + ")\"");
    }
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    svg.text(left - 8, top + cell_h * static_cast<double>(k) + 15, kernels[k],
             "class=\"label\" text-anchor=\"end\"");
  }
  svg.text((left + right) / 2, bottom + 95, "shape (" + util::join(results.columns, ", ") + ")",
           "class=\"axis\" text-anchor=\"middle\"");
  svg.text(20, top - 40, "kernel", "class=\"axis\"");
  // The colour bar: 1x (the shape's fastest) to 2x or slower.
  double bar_x = right - 300;
  for (int i = 0; i < 30; ++i) {
    svg.box(bar_x + 8 * i, top - 40, 8, 12, heat_colour(i / 29.0));
  }
  svg.text(bar_x - 6, top - 30, "1x (fastest)", "class=\"legend\" text-anchor=\"end\"");
  svg.text(bar_x + 246, top - 30, "2x or slower", "class=\"legend\"");
  svg.text(bar_x + 120, top - 12, "time / the shape's fastest; outlined: the tuned choice",
           "class=\"legend\" text-anchor=\"middle\"");
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  return Figure{"heatmap", "Tuning heatmap",
                figure_html("heatmap", "Tuning: each kernel's time relative to the shape's fastest",
                            svg_text,
                            "From " + escape(results.source) +
                                ": one cell per kernel and shape, coloured by its time over the "
                                "fastest usable kernel's on that shape (numbers in the cells); "
                                "grey cells were not measured or failed the golden.",
                            marks),
                marks};
}

namespace {

int column_m(const heuristic::Results &results) {
  int m = results.column("M");
  return m >= 0 ? m : 0;
}

// The product of a shape's config values other than column `m`.
double rest_product(const std::vector<int64_t> &dims, int m) {
  double product = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (static_cast<int>(i) != m) {
      product *= static_cast<double>(dims[i]);
    }
  }
  return product;
}

// The region map's plot area.
constexpr double kRegionLeft = 90, kRegionRight = 700, kRegionTop = 40, kRegionBottom = 420;

// The region map's background: each cell takes the rules' pick at its M and the table's group
// (its other columns) whose product is nearest its row. Returns the kernels picked somewhere.
std::set<std::string>
region_background(Svg &svg, const Scale &x, const Scale &y,
                  const std::vector<std::vector<int64_t>> &groups, int m,
                  const std::function<std::string(std::vector<int64_t>)> &pick,
                  const std::function<std::string(const std::string &)> &colour_of) {
  const int columns = 60, rows_n = 40;
  double cw = (kRegionRight - kRegionLeft) / columns, ch = (kRegionBottom - kRegionTop) / rows_n;
  std::set<std::string> picked;
  for (int r = 0; r < rows_n; ++r) {
    double target = std::exp(std::log(y.lo()) +
                             (std::log(y.hi()) - std::log(y.lo())) * (rows_n - r - 0.5) / rows_n);
    const std::vector<int64_t> *nearest = &groups.front();
    for (const auto &g : groups) {
      if (std::abs(std::log(rest_product(g, m) / target)) <
          std::abs(std::log(rest_product(*nearest, m) / target))) {
        nearest = &g;
      }
    }
    for (int c = 0; c < columns; ++c) {
      double mv =
          std::exp(std::log(x.lo()) + (std::log(x.hi()) - std::log(x.lo())) * (c + 0.5) / columns);
      std::vector<int64_t> dims = *nearest;
      dims[static_cast<size_t>(m)] = std::max<int64_t>(1, std::llround(mv));
      std::string k = pick(dims);
      picked.insert(k);
      svg.box(kRegionLeft + cw * c, kRegionTop + ch * r, cw + 0.3, ch + 0.3, colour_of(k),
              "fill-opacity=\"0.22\"");
    }
  }
  return picked;
}

// The region map's legend: every kernel that is tuned or picked somewhere, and the miss ring.
void region_legend(Svg &svg, const std::vector<std::string> &kernels,
                   const std::set<std::string> &tuned, const std::set<std::string> &picked,
                   const std::function<std::string(const std::string &)> &colour_of) {
  double ly = kRegionTop + 6;
  svg.text(720, ly, "kernel (dot: tuned, area: picked)", "class=\"legend\"");
  for (const std::string &k : kernels) {
    if (!tuned.count(k) && !picked.count(k)) {
      continue;
    }
    ly += 20;
    svg.box(722, ly - 10, 12, 12, colour_of(k));
    svg.text(740, ly, k, "class=\"legend\"");
  }
  ly += 30;
  svg.circle(728, ly - 4, 8, "none", "legend: a miss", "stroke=\"#d62728\" stroke-width=\"2.5\"");
  svg.text(742, ly, "miss: ring grows with", "class=\"legend\"");
  svg.text(742, ly + 16, "the slowdown vs tuned", "class=\"legend\"");
}

// The job lane of each command (sorted by start): the first lane free when it starts.
// `lane_end` gets when each lane is free again; its size is the number of lanes.
std::vector<size_t> job_lanes(const std::vector<const buildinfo::LoggedCommand *> &order,
                              std::vector<int64_t> &lane_end) {
  std::vector<size_t> lane(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    size_t l = 0;
    while (l < lane_end.size() && lane_end[l] > order[i]->start_ms) {
      ++l;
    }
    if (l == lane_end.size()) {
      lane_end.push_back(0);
    }
    lane_end[l] = order[i]->end_ms;
    lane[i] = l;
  }
  return lane;
}

// Seconds from `first` to the start of the first command that compiles one of `family`'s TUs
// (0 when none does).
double first_compile_s(const std::vector<const buildinfo::LoggedCommand *> &order,
                       const std::map<std::string, const buildinfo::TuCompile *> &tus,
                       const std::string &family, int64_t first) {
  for (const auto *c : order) {
    for (const auto &output : c->outputs) {
      auto tu = tus.find(output);
      if (tu != tus.end() && tu->second->family == family) {
        return static_cast<double>(c->start_ms - first) / 1000;
      }
    }
  }
  return 0;
}

// The family's build budget on the waterfall: a dashed line where it ends, or a note at the
// right edge when it ends far beyond the build (the bars would shrink to slivers).
void budget_mark(Svg &svg, const Scale &x, double top, double bottom, const std::string &family,
                 double budget_s, double budget_at, const buildinfo::FamilyCompile *mine) {
  std::string text = family + " build budget " + num(budget_s, 4) + " s (compile_budget_s)" +
                     (mine ? ", its wall time " + num(mine->wall_s, 3) + " s" : "");
  if (budget_at <= x.hi()) {
    double bx = x(budget_at);
    svg.line(bx, top - 8, bx, bottom + 2, "#d62728", "stroke-width=\"2\" stroke-dasharray=\"6 4\"");
    svg.text(bx - 4, top - 12, text, "class=\"note\" text-anchor=\"end\" fill=\"#d62728\"");
  } else {
    svg.text(x(x.hi()), top - 12, text + ": ends at " + num(budget_at, 4) + " s, off this scale",
             "class=\"note\" text-anchor=\"end\" fill=\"#d62728\"");
  }
}

// The waterfall's title: which build it shows and how much of it came from the cache.
std::string waterfall_title(double span, size_t hits, size_t compiles) {
  return "Compile waterfall of the last build: " + num(span, 3) + " s, " + std::to_string(hits) +
         " of " + std::to_string(compiles) + " objects from the cache";
}

std::string waterfall_caption(size_t commands, size_t lanes, size_t hits, size_t misses,
                              double span, const std::string &family, double budget_s) {
  return "The last build of the build folder: the newest ninja run in its .ninja_log that "
         "compiled something (a later run of only custom commands, such as a bench, says "
         "nothing of the compile). " +
         std::to_string(commands) + " commands on " + std::to_string(lanes) + " job lanes, " +
         std::to_string(hits) + " ccache hits and " + std::to_string(misses) + " misses, wall " +
         num(span, 3) + " s. " +
         (budget_s > 0
              ? "In red: " + escape(family) +
                    "'s build wall-time budget, compile_budget_s in its family.json (" +
                    num(budget_s, 4) +
                    " s): how long its compiles and links may take from its first command; "
                    "kopt build-report fails the family when its wall time is over it."
              : escape(family) + " sets no build wall-time budget (compile_budget_s in its "
                                 "family.json).");
}

} // namespace

std::optional<Figure> region_figure(const heuristic::Results &results,
                                    const heuristic::RuleList &rules,
                                    const std::string &default_kernel,
                                    const heuristic::Evaluation &evaluation,
                                    const std::string &rules_source) {
  if (results.shapes.empty() || (rules.empty() && default_kernel.empty())) {
    return std::nullopt;
  }
  int m = column_m(results);
  std::string rest_name;
  for (size_t i = 0; i < results.columns.size(); ++i) {
    if (static_cast<int>(i) != m) {
      rest_name += (rest_name.empty() ? "" : "*") + results.columns[i];
    }
  }
  double mlo = 1e300, mhi = 0, rlo = 1e300, rhi = 0;
  std::vector<std::vector<int64_t>> groups; // one shape's dims per distinct rest
  std::set<std::vector<int64_t>> seen;
  for (const heuristic::Shape &s : results.shapes) {
    double mv = static_cast<double>(s.dims[static_cast<size_t>(m)]);
    double rv = rest_product(s.dims, m);
    mlo = std::min(mlo, mv);
    mhi = std::max(mhi, mv);
    rlo = std::min(rlo, rv);
    rhi = std::max(rhi, rv);
    std::vector<int64_t> rest = s.dims;
    rest[static_cast<size_t>(m)] = 0;
    if (seen.insert(rest).second) {
      groups.push_back(s.dims);
    }
  }
  const double left = kRegionLeft, bottom = kRegionBottom;
  Scale x(mlo / 1.5, mhi * 1.5, kRegionLeft, kRegionRight, true);
  Scale y(rlo / 1.5, rhi * 1.5, kRegionBottom, kRegionTop, true);
  std::vector<std::string> kernels = results.kernels();
  for (const std::string &k : rules.kernels()) {
    if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) {
      kernels.push_back(k);
    }
  }
  auto colour_of = [&](const std::string &k) {
    return category_colour(
        static_cast<size_t>(std::find(kernels.begin(), kernels.end(), k) - kernels.begin()));
  };
  auto pick = [&](std::vector<int64_t> dims) {
    std::string k = heuristic::evaluate(rules, results.columns, dims);
    return k.empty() ? default_kernel : k;
  };
  Svg svg(kWidth, 480, "the heuristic's region map");
  std::set<std::string> picked = region_background(svg, x, y, groups, m, pick, colour_of);
  std::map<std::string, const heuristic::Miss *> misses;
  for (const heuristic::Miss &miss : evaluation.total.misses) {
    misses[miss.shape] = &miss;
  }
  for (const heuristic::Shape &s : results.shapes) {
    if (s.tuned.empty()) {
      continue;
    }
    double px = x(static_cast<double>(s.dims[static_cast<size_t>(m)]));
    double py = y(rest_product(s.dims, m));
    std::string where = shape_text(results.columns, s.dims);
    auto miss = misses.find(where);
    if (miss != misses.end()) {
      double slowdown = miss->second->slowdown;
      double radius = 8 + std::min(24.0, 40 * std::max(0.0, slowdown - 1));
      svg.circle(px, py, radius, "none",
                 where + ": the heuristic picks " + miss->second->pick + ", tuned is " +
                     miss->second->tuned +
                     (slowdown > 0 ? ", " + num(slowdown, 3) + "x slower" : ", no timing"),
                 "stroke=\"#d62728\" stroke-width=\"2.5\" data-miss=\"" + num(slowdown, 4) + "\"");
    }
    svg.circle(px, py, 5, colour_of(s.tuned), where + ": tuned " + s.tuned,
               "stroke=\"#fff\" stroke-width=\"1\"");
  }
  svg.x_axis(x, bottom + 4, results.columns[static_cast<size_t>(m)] + " (log scale)", power_tick);
  svg.y_axis(y, left, rest_name + " (log scale)", power_tick);
  std::set<std::string> tuned;
  for (const heuristic::Shape &s : results.shapes) {
    tuned.insert(s.tuned);
  }
  region_legend(svg, kernels, tuned, picked, colour_of);
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text) - 1; // the legend's ring
  const heuristic::Score &t = evaluation.total;
  std::string caption = "Rules from " + escape(rules_source) + " (default " +
                        escape(default_kernel) + ") on " + escape(results.source) + ": " +
                        std::to_string(t.matched) + " of " + std::to_string(t.shapes) +
                        " shapes pick the tuned kernel, " + std::to_string(t.misses.size()) +
                        " misses (geomean " + num(t.geomean(), 4) + "x, worst " + num(t.worst, 4) +
                        "x vs tuned). The background is the rules' pick at that " +
                        escape(results.columns[static_cast<size_t>(m)]) + ", for the table's " +
                        escape(rest_name) + " nearest that row.";
  return Figure{"regions", "Heuristic regions",
                figure_html("regions",
                            "The heuristic's regions, the tuned kernel per shape, misses", svg_text,
                            caption, marks),
                marks};
}

std::optional<Figure> waterfall_figure(const std::vector<buildinfo::LoggedCommand> &commands,
                                       const buildinfo::BuildReport &report,
                                       const std::string &family, double budget_s) {
  if (commands.empty()) {
    return std::nullopt;
  }
  std::map<std::string, const buildinfo::TuCompile *> tus;
  for (const buildinfo::TuCompile &tu : report.tus) {
    tus[tu.object] = &tu;
  }
  std::vector<const buildinfo::LoggedCommand *> order;
  for (const auto &c : commands) {
    order.push_back(&c);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto *a, const auto *b) { return a->start_ms < b->start_ms; });
  int64_t first = order.front()->start_ms;
  int64_t last = first;
  for (const auto *c : order) {
    last = std::max(last, c->end_ms);
  }
  std::vector<int64_t> lane_end; // when each job lane is free again
  std::vector<size_t> lane = job_lanes(order, lane_end);
  const buildinfo::FamilyCompile *mine = nullptr;
  for (const auto &f : report.families) {
    mine = f.name == family ? &f : mine;
  }
  // The family's span starts at its first command; the budget is marked from there.
  double family_start = mine ? first_compile_s(order, tus, family, first) : 0;
  double span = static_cast<double>(last - first) / 1000;
  double budget_at = family_start + budget_s;
  // The budget widens the axis only when that leaves the build's bars readable.
  double axis_hi = std::max(span, budget_s > 0 && budget_at <= 3 * span ? budget_at : 0) * 1.05;
  const double left = 90, right = kWidth - 20, top = 50, lane_h = 16;
  double bottom = top + lane_h * static_cast<double>(lane_end.size());
  Scale x(0, std::max(axis_hi, 0.01), left, right);
  Svg svg(kWidth, static_cast<int>(bottom) + 70, "compile waterfall");
  const std::string hit = "#1a9850", miss = "#d73027", unknown = "#9e9e9e", other = "#6baed6";
  size_t hits = 0, misses = 0, compiles = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const buildinfo::LoggedCommand &c = *order[i];
    const buildinfo::TuCompile *tu = nullptr;
    for (const auto &output : c.outputs) {
      auto found = tus.find(output);
      tu = found != tus.end() ? found->second : tu;
    }
    std::string colour = other;
    std::string what = "link or other step";
    if (tu) {
      bool is_hit = tu->cache == buildinfo::CacheResult::direct_hit ||
                    tu->cache == buildinfo::CacheResult::preprocessed_hit;
      bool is_miss = tu->cache == buildinfo::CacheResult::miss;
      colour = is_hit ? hit : is_miss ? miss : unknown;
      what = "compile, ccache " + buildinfo::to_string(tu->cache);
      hits += is_hit ? 1 : 0;
      misses += is_miss ? 1 : 0;
      ++compiles;
    }
    double start = static_cast<double>(c.start_ms - first) / 1000;
    double end = static_cast<double>(c.end_ms - first) / 1000;
    double y = top + lane_h * static_cast<double>(lane[i]);
    svg.rect(x(start), y + 1, x(end) - x(start), lane_h - 3, colour,
             c.outputs.front() + ": " + num(end - start, 3) + " s (" + what + ")",
             "data-cache=\"" + std::string(tu ? buildinfo::to_string(tu->cache) : "none") + "\"");
  }
  for (size_t l = 0; l < lane_end.size(); ++l) {
    svg.text(left - 8, top + lane_h * static_cast<double>(l) + 12, "job " + std::to_string(l + 1),
             "class=\"tick\" text-anchor=\"end\"");
  }
  if (budget_s > 0) {
    budget_mark(svg, x, top, bottom, family, budget_s, budget_at, mine);
  }
  svg.x_axis(x, bottom + 4, "seconds since the ninja run began", seconds_tick);
  legend(svg, left, 20,
         {{"ccache hit", hit},
          {"ccache miss", miss},
          {"compile, cache unknown", unknown},
          {"link / other", other}});
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  std::string caption =
      waterfall_caption(order.size(), lane_end.size(), hits, misses, span, family, budget_s);
  return Figure{
      "waterfall", "Compile waterfall",
      figure_html("waterfall", waterfall_title(span, hits, compiles), svg_text, caption, marks),
      marks};
}

} // namespace kopt::report
