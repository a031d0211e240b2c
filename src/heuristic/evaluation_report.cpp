#include "heuristic/fit.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>

namespace kopt::heuristic {

namespace {

// A score as JSON; the slowdowns are null when `measured` is false (a winners-only table).
nlohmann::json score_json(const Score &s, bool measured) {
  auto ratio = [&](size_t n) { return s.shapes ? static_cast<double>(n) / s.shapes : 0.0; };
  auto slowdown = [&](double x) { return measured ? nlohmann::json(x) : nlohmann::json(); };
  return {{"shapes", s.shapes},
          {"matched", s.matched},
          {"match", ratio(s.matched)},
          {"within_tie", s.within_tie},
          {"match_within_tie", ratio(s.within_tie)},
          {"unmeasured", s.unmeasured},
          {"geomean_slowdown", slowdown(s.geomean())},
          {"worst_slowdown", slowdown(s.worst)},
          {"worst_shape", measured ? s.worst_shape : ""},
          {"default_geomean_slowdown", slowdown(s.default_geomean())},
          {"default_worst_slowdown", slowdown(s.default_worst)},
          {"default_matched", s.default_matched},
          {"default_match", ratio(s.default_matched)},
          {"baseline_matched", s.baseline_matched},
          {"baseline_match", ratio(s.baseline_matched)},
          {"tuned_vs_raw_geomean", slowdown(s.tuned_geomean())},
          {"tuned_vs_raw_worst", slowdown(s.tuned_worst)},
          {"tuned_vs_raw_worst_shape", measured ? s.tuned_worst_shape : ""}};
}

std::string percent(size_t n, size_t of) {
  return util::format_number(of ? 100.0 * static_cast<double>(n) / of : 0.0, 4) + "%";
}

// The misses, slowest first (unmeasured picks first of all), then in shape order.
std::vector<Miss> slowest_first(std::vector<Miss> misses) {
  auto key = [](const Miss &m) { return m.slowdown == 0 ? HUGE_VAL : m.slowdown; };
  std::stable_sort(misses.begin(), misses.end(),
                   [&](const Miss &a, const Miss &b) { return key(a) > key(b); });
  return misses;
}

} // namespace

nlohmann::json to_json(const Evaluation &e) {
  const bool measured = !e.winners_only;
  nlohmann::json out = score_json(e.total, measured);
  nlohmann::json misses = nlohmann::json::array();
  for (const auto &m : slowest_first(e.total.misses)) {
    misses.push_back(
        {{"shape", m.shape},
         {"pick", m.pick},
         {"tuned", m.tuned},
         {"slowdown", m.slowdown == 0 ? nlohmann::json() : nlohmann::json(m.slowdown)}});
  }
  out["misses"] = std::move(misses);
  out["tie"] = e.tie;
  out["ties"] = e.ties;
  out["winners_only"] = e.winners_only;
  out["source"] = e.source;
  out["default"] = e.default_kernel;
  out["baseline"] = e.baseline;
  out["held_out"] = e.held_out;
  out["split"] = e.split;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto &[name, score] : e.groups) {
    nlohmann::json row = score_json(score, measured);
    row["group"] = name;
    groups.push_back(std::move(row));
  }
  out["groups"] = std::move(groups);
  return out;
}

namespace {

// "99.1% (8100/8172)"
std::string match_of(size_t n, size_t of) {
  return percent(n, of) + " (" + std::to_string(n) + "/" + std::to_string(of) + ")";
}

// The lines of a winners-only evaluation: match rates against the one-kernel anchors.
std::string winners_text(const Evaluation &e) {
  const Score &t = e.total;
  const std::string none = "not measured (winners only: no time for a kernel that did not win)\n";
  std::string out = "shapes: " + std::to_string(t.shapes) + " of " + e.source +
                    ", winners only: picks are scored by match alone\n";
  out += "match vs tuned: " + match_of(t.matched, t.shapes) + "\n";
  out += "most frequent kernel alone (" + e.baseline +
         "): " + match_of(t.baseline_matched, t.shapes) + "; misses " +
         std::to_string(t.shapes - t.matched) + " vs " +
         std::to_string(t.shapes - t.baseline_matched) + "\n";
  if (e.default_kernel != e.baseline) {
    out += "default kernel alone (" + e.default_kernel +
           "): " + match_of(t.default_matched, t.shapes) + "\n";
  }
  out += "geomean slowdown vs tuned: " + none;
  out += "worst slowdown vs tuned: " + none;
  out += "\n| group | shapes | match | most frequent alone |\n|---|---|---|---|\n";
  for (const auto &[name, s] : e.groups) {
    out += "| " + name + " | " + std::to_string(s.shapes) + " | " + percent(s.matched, s.shapes) +
           " | " + percent(s.baseline_matched, s.shapes) + " |\n";
  }
  return out;
}

// The lines of an evaluation on a full table: match rates, slowdowns and what the ties cost.
std::string full_text(const Evaluation &e) {
  const Score &t = e.total;
  std::string out = "shapes: " + std::to_string(t.shapes) + "\n";
  out += "match vs tuned: " + match_of(t.matched, t.shapes) + "; within " +
         util::format_number(100 * e.tie, 3) + "% of tuned: " + percent(t.within_tie, t.shapes) +
         "\n";
  out += "geomean slowdown vs tuned: " + util::format_number(t.geomean(), 4) +
         "x (default only: " + util::format_number(t.default_geomean(), 4) + "x)\n";
  out += "worst slowdown vs tuned: " + util::format_number(t.worst, 4) + "x at " + t.worst_shape +
         " (default only: " + util::format_number(t.default_worst, 4) + "x)\n";
  out += "tuned (ties " + util::format_number(100 * e.ties, 3) + "%) vs the raw argmin: geomean " +
         util::format_number(t.tuned_geomean(), 5) + "x, worst " +
         util::format_number(t.tuned_worst, 5) + "x" +
         (t.tuned_worst > 1 ? " at " + t.tuned_worst_shape : std::string()) + "\n";
  if (t.unmeasured) {
    out +=
        "picks without a usable timing (left out of the means): " + std::to_string(t.unmeasured) +
        "\n";
  }
  out += "\n| group | shapes | match | geomean | worst | default geomean |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const auto &[name, s] : e.groups) {
    out += "| " + name + " | " + std::to_string(s.shapes) + " | " + percent(s.matched, s.shapes) +
           " | " + util::format_number(s.geomean(), 4) + " | " + util::format_number(s.worst, 4) +
           " | " + util::format_number(s.default_geomean(), 4) + " |\n";
  }
  return out;
}

} // namespace

std::string to_text(const Evaluation &e, size_t misses) {
  const Score &t = e.total;
  std::string out;
  if (!e.held_out.empty()) {
    out += "held out" + (e.split.empty() ? std::string() : " (" + e.split + ")") + ": " +
           util::join(e.held_out, "; ") + "\n";
  }
  out += e.winners_only ? winners_text(e) : full_text(e);
  if (misses > 0 && !t.misses.empty()) {
    std::vector<Miss> slowest = slowest_first(t.misses);
    slowest.resize(std::min(misses, slowest.size()));
    out += "\nmisses, slowest first (" + std::to_string(slowest.size()) + " of " +
           std::to_string(t.misses.size()) +
           "):\n| shape | pick | tuned | slowdown |\n|---|---|---|---|\n";
    for (const auto &m : slowest) {
      out +=
          "| " + m.shape + " | " + m.pick + " | " + m.tuned + " | " +
          (m.slowdown == 0 ? std::string("no timing") : util::format_number(m.slowdown, 4) + "x") +
          " |\n";
    }
  }
  return out;
}

} // namespace kopt::heuristic
