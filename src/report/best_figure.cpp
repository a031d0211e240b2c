#include "report/figures_detail.hpp"

#include <algorithm>

namespace kopt::report {

using namespace detail;

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

} // namespace kopt::report
