#include "report/figures_detail.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace kopt::report {

using namespace detail;

namespace {

// The shape's fastest usable kernel's time in us, or 0 when none is usable.
double fastest_us(const heuristic::Shape &shape) {
  double fastest = 0;
  for (const auto &[name, timing] : shape.kernels) {
    if (timing.usable() && (fastest == 0 || timing.us < fastest)) {
      fastest = timing.us;
    }
  }
  return fastest;
}

} // namespace

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
    double fastest = fastest_us(shape);
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

// The columns other than `m` as the name of their product: "N*K".
std::string rest_name_of(const heuristic::Results &results, int m) {
  std::string rest_name;
  for (size_t i = 0; i < results.columns.size(); ++i) {
    if (static_cast<int>(i) != m) {
      rest_name += (rest_name.empty() ? "" : "*") + results.columns[i];
    }
  }
  return rest_name;
}

// The region map's dots: each shape's tuned kernel, and a ring around each of `total_misses`
// that grows with its slowdown.
void region_dots(Svg &svg, const Scale &x, const Scale &y, const heuristic::Results &results, int m,
                 const std::vector<heuristic::Miss> &total_misses,
                 const std::function<std::string(const std::string &)> &colour_of) {
  std::map<std::string, const heuristic::Miss *> misses;
  for (const heuristic::Miss &miss : total_misses) {
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
  std::string rest_name = rest_name_of(results, m);
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
  region_dots(svg, x, y, results, m, evaluation.total.misses, colour_of);
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

} // namespace kopt::report
