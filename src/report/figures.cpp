#include "report/figures_detail.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace kopt::report {

namespace detail {

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
                        const std::string &caption, size_t marks, const std::string &after) {
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

} // namespace detail

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

} // namespace kopt::report
