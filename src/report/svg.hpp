#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kopt::report {

/// Escapes `&`, `<`, `>` and quotes for HTML text and attribute values.
std::string escape(std::string_view text);

/// Formats a number with at most `digits` significant digits and no trailing zeros, without an
/// exponent up to 1e15 (31000, not 3.1e+04).
std::string num(double value, int digits = 4);

/// Formats a change (0.05) as a signed percentage: +5%, -0.25%, +3100%.
std::string percent(double change);

/// Maps data values onto pixels along one axis, linearly or on a log scale.
class Scale {
public:
  /// A scale from [lo, hi] onto [from, to] pixels; `log` needs lo > 0. An empty range is widened.
  Scale(double lo, double hi, double from, double to, bool log = false);

  /// The pixel of `value`.
  double operator()(double value) const;

  double lo() const { return lo_; }
  double hi() const { return hi_; }
  bool log() const { return log_; }

  /// About `count` round tick values inside the range (powers of 2 on a log scale that spans
  /// at least 4x, else round values as on a linear one).
  std::vector<double> ticks(int count = 5) const;

private:
  double lo_, hi_, from_, to_;
  bool log_;
};

/// The colour of category `index` of a palette that stays apart for a dozen categories.
std::string category_colour(size_t index);

/// A colour from green (0) through yellow to red (1) for a value in [0, 1].
std::string heat_colour(double t);

/// Builds one inline SVG figure (no namespace URL: HTML parses inline SVG without one).
/// Data marks carry class="mark" so a test can count them.
class Svg {
public:
  Svg(int width, int height, std::string_view label);

  /// A data mark: a rectangle; `tip` becomes its hover title.
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view tip,
            std::string_view extra = "");
  /// A data mark: a circle.
  void circle(double x, double y, double r, std::string_view fill, std::string_view tip,
              std::string_view extra = "");
  /// A decoration (no data): a rectangle, line or text.
  void box(double x, double y, double w, double h, std::string_view fill,
           std::string_view extra = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            std::string_view extra = "");
  void text(double x, double y, std::string_view text, std::string_view extra = "");

  /// An x axis at pixel row `y` from `scale`'s ticks, with `label` centred under it; `format`
  /// turns a tick value into its text.
  void x_axis(const Scale &scale, double y, std::string_view label,
              std::string (*format)(double) = nullptr);
  /// A y axis at pixel column `x`, `label` written upwards beside it.
  void y_axis(const Scale &scale, double x, std::string_view label,
              std::string (*format)(double) = nullptr);

  /// The finished <svg> element.
  std::string str() const;

private:
  int width_, height_;
  std::string label_;
  std::string body_;
};

} // namespace kopt::report
