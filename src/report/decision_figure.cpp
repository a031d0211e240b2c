#include "report/figures_detail.hpp"

#include <algorithm>

namespace kopt::report {

using namespace detail;

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

} // namespace kopt::report
