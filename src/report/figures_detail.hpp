#pragma once

#include "report/figures.hpp"
#include "report/svg.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// The pieces every figure of the report page draws with; nothing outside src/report/ calls them.
namespace kopt::report::detail {

/// The width of every figure's SVG, in px.
constexpr int kWidth = 960;

/// A time axis tick: "1.5 s".
std::string seconds_tick(double value);

/// A tick of a power-of-two axis: "4Ki", "2Mi", else the number.
std::string power_tick(double value);

/// " [-12%, -8.0%]" after a change (percent's digits), or "" when it has no interval.
inline std::string interval_text(const std::optional<std::pair<double, double>> &interval) {
  return decide::interval_after(interval, decide::Digits::compact);
}

/// The colour of a verdict or a change's state (keep, regression, better, ...); grey for others.
std::string verdict_colour(const std::string &verdict);

/// Draws a legend row of coloured squares and names, from x at row y.
void legend(Svg &svg, double x, double y,
            const std::vector<std::pair<std::string, std::string>> &items);

/// Returns a figure's HTML: its heading, the SVG, the caption, then `after` (a table).
std::string figure_html(const std::string &id, const std::string &title, const std::string &svg,
                        const std::string &caption, size_t marks, const std::string &after = "");

/// Returns how many data marks (class="mark") `svg` holds.
size_t count_marks(const std::string &svg);

/// Returns a shape as "M=16,N=1024,K=512".
std::string shape_text(const std::vector<std::string> &columns, const std::vector<int64_t> &dims);

/// Returns the change axis over `changes`, with the threshold band always in range.
ChangeAxis axis_over(const std::vector<ClassChange> &changes, double threshold);

} // namespace kopt::report::detail
