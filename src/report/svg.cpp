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

std::string percent(double change) {
  double p = 100 * change;
  char text[48];
  int decimals = std::abs(p) >= 10 ? 0 : std::abs(p) >= 1 ? 1 : 2;
  std::snprintf(text, sizeof text, "%+.*f%%", decimals, p);
  std::string out = text;
  return out == "+0%" || out == "-0.00%" || out == "+0.00%" ? "0%" : out;
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

void Svg::x_axis(const Scale &scale, double y, std::string_view label,
                 std::string (*format)(double)) {
  double left = scale(scale.lo());
  double right = scale(scale.hi());
  line(left, y, right, y, "#333");
  for (double t : scale.ticks()) {
    double x = scale(t);
    line(x, y, x, y + 5, "#333");
    text(x, y + 18, format ? format(t) : num(t), "class=\"tick\" text-anchor=\"middle\"");
  }
  text((left + right) / 2, y + 38, label, "class=\"axis\" text-anchor=\"middle\"");
}

void Svg::y_axis(const Scale &scale, double x, std::string_view label,
                 std::string (*format)(double)) {
  double bottom = scale(scale.lo());
  double top = scale(scale.hi());
  line(x, bottom, x, top, "#333");
  for (double t : scale.ticks()) {
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
