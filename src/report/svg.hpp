#pragma once

#include "decide/format.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kopt::report {

/// Escapes `&`, `<`, `>` and quotes for HTML text and attribute values.
std::string escape(std::string_view text);

/// Formats a number with at most `digits` significant digits and no trailing zeros, without an
/// exponent up to 1e15 (31000, not 3.1e+04).
std::string num(double value, int digits = 4);

/// Formats a change (0.05) as the figures write it (decide's compact digits): +5%, -0.25%, +3100%.
inline std::string percent(double change) {
  return decide::format_change(change, decide::Digits::compact);
}

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

/// An axis of time ratios (1: as fast as BEST) for changes from `lo` to `hi` (-0.3: 30% faster),
/// and its ticks as ratios. Linear with round percent steps (4 to 8 ticks) while the ratios stay
/// within 0.5 to 2.5, else a log scale with ticks at round ratios (1, 1.5, 2, 3, 5, 7 times a
/// power of ten, or fewer of them on a wide range: -50%, +100%, +400%, +900%). 0 is always a tick,
/// and the range is widened so that each side that holds data (`below`, `above`: some change
/// below or above 0) has a tick of its own.
struct ChangeAxis {
  double lo = 1; ///< the smallest ratio shown
  double hi = 1; ///< the largest ratio shown
  bool log = false;
  std::vector<double> ticks;
};

/// Returns the axis for changes from `lo` to `hi`; see ChangeAxis.
ChangeAxis change_axis(double lo, double hi, bool below, bool above);

/// Formats a ratio tick of a ChangeAxis as its signed change: -30%, 0%, +2.5%, +1900%.
std::string change_tick(double ratio);

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
  /// A text with a tooltip (its <title>): the whole of what a short label stands for.
  void text(double x, double y, std::string_view text, std::string_view tip,
            std::string_view extra);
  /// A data mark: an SVG path (`d` in path syntax), for markers other than dots and boxes.
  void shape(std::string_view d, std::string_view fill, std::string_view tip,
             std::string_view extra = "");
  /// A decoration (no data): an SVG path, e.g. a marker drawn in a legend.
  void path(std::string_view d, std::string_view fill, std::string_view extra = "");

  /// An x axis at pixel row `y` from `scale`'s ticks, with `label` centred under it; `format`
  /// turns a tick value into its text.
  void x_axis(const Scale &scale, double y, std::string_view label,
              std::string (*format)(double) = nullptr);
  /// An x axis with the given tick values instead of `scale`'s own.
  void x_axis(const Scale &scale, double y, std::string_view label, std::string (*format)(double),
              const std::vector<double> &ticks);
  /// A y axis at pixel column `x`, `label` written upwards beside it.
  void y_axis(const Scale &scale, double x, std::string_view label,
              std::string (*format)(double) = nullptr);
  /// A y axis with the given tick values instead of `scale`'s own.
  void y_axis(const Scale &scale, double x, std::string_view label, std::string (*format)(double),
              const std::vector<double> &ticks);

  /// The finished <svg> element.
  std::string str() const;

private:
  int width_, height_;
  std::string label_;
  std::string body_;
};

} // namespace kopt::report
