#include "report/figures_detail.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace kopt::report {

namespace {

using namespace detail;

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
std::string change_cell(const ClassChange &c) {
  return "<td><b style=\"color:" + verdict_colour(c.state) + "\">" + escape(percent(c.change)) +
         "</b> " + escape(c.state) +
         (c.interval ? "<br><small>" + escape(interval_text(c.interval).substr(1)) + "</small>"
                     : "") +
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
  return "<tr class=\"event\" data-event=\"" + escape(ledger::to_string(e.kind)) +
         "\"><td></td><td>" + date_cell(e.date) + "</td><td colspan=\"" +
         std::to_string(columns - 2) + "\"><b>" +
         escape(e.kind == ledger::Kind::stop ? "stopped: " + verdict_of(e) : verdict_of(e)) +
         "</b></td></tr>\n";
}

// The one line a failed or incorrect attempt's verdict cell carries under the verdict: the
// reason's first line, cut at 160 characters (the whole reason is the cell's title).
std::string reason_line(const Attempt &a) {
  if (a.kind != ledger::Kind::attempt || !a.classes.empty() || a.reason.empty()) {
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
                            [&](const auto &cc) { return cc.config_class == name; });
      table += c == a.classes.end() ? "<td>-</td>" : change_cell(change_of(*c));
    }
    table += a.overall_change
                 ? change_cell({"overall", *a.overall_change, a.overall_interval,
                                a.overall_state ? decide::to_string(*a.overall_state)
                                                : change_state(*a.overall_change,
                                                               a.overall_interval, threshold)})
                 : "<td>-</td>";
    if (traffic) {
      table += a.traffic ? change_cell(change_of(*a.traffic)) : "<td>-</td>";
    }
    if (application) {
      std::string cell = a.application ? change_cell(*a.application) : "<td>-</td>";
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
  if (a.kind == ledger::Kind::baseline) {
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
  for (const ledger::AttemptClass &c : a.classes) {
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
    std::string what = e->kind == ledger::Kind::land     ? "landed " + e->candidate
                       : e->kind == ledger::Kind::rebase ? "rebased " + e->best
                                                         : "stopped";
    // After the last attempt the line is the plot's right edge: its label goes to its left.
    bool last = at > 0 && x >= kHistoryRight - 1;
    svg.text(last ? x - 4 : x + 4, top - 6 + 13.0 * k, what, verdict_of(*e),
             std::string(last ? "text-anchor=\"end\" " : "") + "class=\"note\" data-event=\"" +
                 escape(ledger::to_string(e->kind)) + "\"");
  }
}

} // namespace

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
    if (a.kind == ledger::Kind::attempt && a.classes.empty() &&
        std::find(lanes.begin(), lanes.end(), verdict_of(a)) == lanes.end()) {
      lanes.push_back(verdict_of(a));
    }
    for (const ledger::AttemptClass &c : a.classes) {
      if (std::find(classes.begin(), classes.end(), c.config_class) == classes.end()) {
        classes.push_back(c.config_class);
      }
      changes.push_back(change_of(c));
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

} // namespace kopt::report
