#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace kopt::report {

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double value, int digits) {
  if (!std::isfinite(value)) {
    return "0";
  }
  char text[48];
  if (std::abs(value) >= std::pow(10, digits) && std::abs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value); // 31000, not 3.1e+04
  } else {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
  }
  return text;
}

Scale::Scale(double lo, double hi, double from, double to, bool log)
    : lo_(lo), hi_(hi), from_(from), to_(to), log_(log) {
  if (log_) {
    lo_ = std::max(lo_, 1e-12);
    hi_ = std::max(hi_, lo_);
  }
  if (!(hi_ > lo_)) { // one value: a range around it
    double pad = log_ ? lo_ : std::max(std::abs(lo_) * 0.1, 1.0);
    lo_ = log_ ? lo_ / 2 : lo_ - pad;
    hi_ = log_ ? hi_ * 2 : hi_ + pad;
  }
}

double Scale::operator()(double value) const {
  double t =
      log_ ? (std::log(std::max(value, 1e-12)) - std::log(lo_)) / (std::log(hi_) - std::log(lo_))
           : (value - lo_) / (hi_ - lo_);
  return from_ + t * (to_ - from_);
}

std::vector<double> Scale::ticks(int count) const {
  std::vector<double> out;
  if (log_ && hi_ / lo_ >= 4) {
    // Exponents on multiples of the step, so that 1 (2^0) is a tick whenever it is in range.
    double step = std::max(1.0, std::ceil(std::log2(hi_ / lo_) / count));
    for (double e = std::ceil(std::log2(lo_) / step - 1e-9) * step;
         e <= std::floor(std::log2(hi_)) + 1e-9; e += step) {
      out.push_back(std::exp2(e));
    }
    return out;
  }
  double raw = (hi_ - lo_) / count;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  for (double v = std::ceil(lo_ / step) * step; v <= hi_ + step * 1e-9; v += step) {
    out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  }
  return out;
}

namespace {

// Ticks at every multiple of `step` from lo to hi, 0 exactly 0.
std::vector<double> multiples(double lo, double hi, double step) {
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9); v * step <= hi + step * 1e-9; v += 1) {
    out.push_back(v * step);
  }
  return out;
}

// A linear axis of ratios around 1: the smallest round step (1, 2, 2.5 or 5 times a power of
// ten) that gives at most 8 ticks, then one step more on a side with data and no tick.
ChangeAxis linear_change_axis(double lo, double hi, bool below, bool above) {
  double step = 1e-4;
  for (double magnitude = 1e-4; magnitude < 1e3; magnitude *= 10) {
    bool found = false;
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      if ((hi - lo) / (m * magnitude) <= 7) {
        step = m * magnitude;
        found = true;
        break;
      }
    }
    if (found) {
      break;
    }
  }
  if (below && lo > 1 - step) {
    lo = 1 - step * 1.05;
  }
  if (above && hi < 1 + step) {
    hi = 1 + step * 1.05;
  }
  ChangeAxis axis{lo, hi, false, {}};
  for (double t : multiples(lo - 1, hi - 1, step)) {
    axis.ticks.push_back(1 + t);
  }
  return axis;
}

// A log axis of ratios: ticks at `mantissas` times powers of ten, the range widened to the
// first tick on each side with data. Empty when that makes more than 9 ticks.
ChangeAxis log_change_axis(double lo, double hi, bool below, bool above,
                           const std::vector<double> &mantissas) {
  std::vector<double> ladder; // every tick value from 1e-6 to 1e6, ascending
  for (int e = -6; e <= 6; ++e) {
    for (double m : mantissas) {
      ladder.push_back(m * std::pow(10.0, e));
    }
  }
  auto first_below = std::find_if(ladder.rbegin(), ladder.rend(), [](double t) { return t < 1; });
  auto first_above = std::find_if(ladder.begin(), ladder.end(), [](double t) { return t > 1; });
  if (below && lo > *first_below) {
    lo = *first_below / 1.08;
  }
  if (above && hi < *first_above) {
    hi = *first_above * 1.08;
  }
  ChangeAxis axis{lo, hi, true, {}};
  for (double t : ladder) {
    if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) {
      axis.ticks.push_back(t);
    }
  }
  return axis.ticks.size() <= 9 ? axis : ChangeAxis{};
}

} // namespace

ChangeAxis change_axis(double lo, double hi, bool below, bool above) {
  double lo_ratio = 1 + std::min(lo, 0.0);
  double hi_ratio = 1 + std::max(hi, 0.0);
  double margin = 0.06 * (hi_ratio - lo_ratio);
  if (lo_ratio - margin >= 0.5 && hi_ratio + margin <= 2.5) {
    return linear_change_axis(lo_ratio - margin, hi_ratio + margin, below, above);
  }
  lo_ratio = std::max(1e-6, lo_ratio) / 1.08;
  hi_ratio = std::min(1e6, hi_ratio) * 1.08;
  // The densest ladder that keeps to 9 ticks: a range of a few times gets +50%, +200% too.
  for (const std::vector<double> &mantissas :
       {std::vector<double>{1, 1.5, 2, 3, 5, 7}, std::vector<double>{1, 2, 5},
        std::vector<double>{1, 3}, std::vector<double>{1}}) {
    ChangeAxis axis = log_change_axis(lo_ratio, hi_ratio, below, above, mantissas);
    if (!axis.ticks.empty()) {
      return axis;
    }
  }
  return ChangeAxis{lo_ratio, hi_ratio, true, {1}};
}

std::string change_tick(double ratio) {
  double p = 100 * (ratio - 1);
  if (std::abs(p) < 1e-9) {
    return "0%";
  }
  std::string out = p > 0 ? "+" : ""; // appended, not "+" + text: GCC 12 warns on that
  out += num(p, 3);
  return out + "%";
}

std::string category_colour(size_t index) {
  static const std::array<const char *, 12> palette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                                       "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                                                       "#7f7f7f", "#393b79", "#ad494a", "#637939"};
  return palette[index % palette.size()];
}

std::string heat_colour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  // green (26,152,80) -> yellow (254,224,139) -> red (215,48,39)
  auto mix = [](double a, double b, double u) { return static_cast<int>(a + (b - a) * u); };
  int r, g, b;
  if (t < 0.5) {
    double u = t / 0.5;
    r = mix(26, 254, u);
    g = mix(152, 224, u);
    b = mix(80, 139, u);
  } else {
    double u = (t - 0.5) / 0.5;
    r = mix(254, 215, u);
    g = mix(224, 48, u);
    b = mix(139, 39, u);
  }
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", r, g, b);
  return text;
}

Svg::Svg(int width, int height, std::string_view label)
    : width_(width), height_(height), label_(label) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view tip,
               std::string_view extra) {
  body_ += "<rect class=\"mark\" x=\"" + num(x, 6) + "\" y=\"" + num(y, 6) + "\" width=\"" +
           num(std::max(w, 0.5), 6) + "\" height=\"" + num(std::max(h, 0.5), 6) + "\" fill=\"" +
           std::string(fill) + "\" " + std::string(extra) + "><title>" + escape(tip) +
           "</title></rect>\n";
}

void Svg::circle(double x, double y, double r, std::string_view fill, std::string_view tip,
                 std::string_view extra) {
  body_ += "<circle class=\"mark\" cx=\"" + num(x, 6) + "\" cy=\"" + num(y, 6) + "\" r=\"" +
           num(r, 4) + "\" fill=\"" + std::string(fill) + "\" " + std::string(extra) + "><title>" +
           escape(tip) + "</title></circle>\n";
}

void Svg::box(double x, double y, double w, double h, std::string_view fill,
              std::string_view extra) {
  body_ += "<rect x=\"" + num(x, 6) + "\" y=\"" + num(y, 6) + "\" width=\"" + num(w, 6) +
           "\" height=\"" + num(h, 6) + "\" fill=\"" + std::string(fill) + "\" " +
           std::string(extra) + "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke,
               std::string_view extra) {
  body_ += "<line x1=\"" + num(x1, 6) + "\" y1=\"" + num(y1, 6) + "\" x2=\"" + num(x2, 6) +
           "\" y2=\"" + num(y2, 6) + "\" stroke=\"" + std::string(stroke) + "\" " +
           std::string(extra) + "/>\n";
}

void Svg::text(double x, double y, std::string_view text, std::string_view extra) {
  body_ += "<text x=\"" + num(x, 6) + "\" y=\"" + num(y, 6) + "\" " + std::string(extra) + ">" +
           escape(text) + "</text>\n";
}

void Svg::text(double x, double y, std::string_view text, std::string_view tip,
               std::string_view extra) {
  body_ += "<text x=\"" + num(x, 6) + "\" y=\"" + num(y, 6) + "\" " + std::string(extra) +
           "><title>" + escape(tip) + "</title>" + escape(text) + "</text>\n";
}

void Svg::shape(std::string_view d, std::string_view fill, std::string_view tip,
                std::string_view extra) {
  body_ += "<path class=\"mark\" d=\"" + std::string(d) + "\" fill=\"" + std::string(fill) + "\" " +
           std::string(extra) + "><title>" + escape(tip) + "</title></path>\n";
}

void Svg::path(std::string_view d, std::string_view fill, std::string_view extra) {
  body_ += "<path d=\"" + std::string(d) + "\" fill=\"" + std::string(fill) + "\" " +
           std::string(extra) + "/>\n";
}

void Svg::x_axis(const Scale &scale, double y, std::string_view label,
                 std::string (*format)(double)) {
  x_axis(scale, y, label, format, scale.ticks());
}

void Svg::x_axis(const Scale &scale, double y, std::string_view label,
                 std::string (*format)(double), const std::vector<double> &ticks) {
  double left = scale(scale.lo());
  double right = scale(scale.hi());
  line(left, y, right, y, "#333");
  for (double t : ticks) {
    double x = scale(t);
    line(x, y, x, y + 5, "#333");
    text(x, y + 18, format ? format(t) : num(t), "class=\"tick\" text-anchor=\"middle\"");
  }
  text((left + right) / 2, y + 38, label, "class=\"axis\" text-anchor=\"middle\"");
}

void Svg::y_axis(const Scale &scale, double x, std::string_view label,
                 std::string (*format)(double)) {
  y_axis(scale, x, label, format, scale.ticks());
}

void Svg::y_axis(const Scale &scale, double x, std::string_view label,
                 std::string (*format)(double), const std::vector<double> &ticks) {
  double bottom = scale(scale.lo());
  double top = scale(scale.hi());
  line(x, bottom, x, top, "#333");
  for (double t : ticks) {
    double y = scale(t);
    line(x - 5, y, x, y, "#333");
    text(x - 8, y + 4, format ? format(t) : num(t), "class=\"tick\" text-anchor=\"end\"");
  }
  double middle = (bottom + top) / 2;
  text(x - 66, middle, label,
       "class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 " + num(x - 66, 6) + " " +
           num(middle, 6) + ")\"");
}

std::string Svg::str() const {
  return "<svg width=\"" + std::to_string(width_) + "\" height=\"" + std::to_string(height_) +
         "\" viewBox=\"0 0 " + std::to_string(width_) + " " + std::to_string(height_) +
         "\" role=\"img\" aria-label=\"" + escape(label_) + "\">\n" + body_ + "</svg>";
}

} // namespace kopt::report
