#include "decide/format.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kopt::decide {

std::string format_change(double change, Digits digits) {
  double percent = change * 100;
  double size = std::abs(percent);
  int decimals = digits == Digits::two ? 2 : size >= 10 ? 0 : size >= 1 ? 1 : 2;
  const double half_unit[] = {0.5, 0.05, 0.005}; // what rounds to zero at 0, 1, 2 decimals
  bool zero = size < half_unit[decimals];
  if (zero && digits == Digits::compact) {
    return "0%";
  }
  char text[48];
  // A change that rounds to zero prints as +0.00%, never -0.00%.
  std::snprintf(text, sizeof text, "%+.*f%%", decimals, zero ? 0.0 : percent);
  return text;
}

std::string format_percent(double fraction, int digits) {
  return util::format_number(fraction * 100, digits) + "%";
}

std::string format_interval(double low, double high, Digits digits) {
  std::string text = "["; // appended, not "[" + text: GCC 12 warns on that (-Wrestrict)
  text += format_change(low, digits);
  text += ", ";
  text += format_change(high, digits);
  return text + "]";
}

std::string interval_after(const std::optional<std::pair<double, double>> &interval,
                           Digits digits) {
  std::string text;
  if (interval) {
    text = " ";
    text += format_interval(interval->first, interval->second, digits);
  }
  return text;
}

namespace {

// A table row's state column: "better", with `*` when repeated and `?` when pending.
std::string state_mark(const ClassRow &row) {
  return std::string(to_string(row.state)) + (row.repeated ? "*" : "") + (row.pending ? "?" : "");
}

// Appends `line` without its trailing blanks, and a newline.
void append_line(std::string &text, std::string line) {
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  text += line + "\n";
}

} // namespace

std::string format_table(const Decision &d) {
  if (d.classes.empty()) {
    return "";
  }
  size_t width = std::string("overall").size();
  for (const ClassRow &row : d.classes) {
    width = std::max(width, row.config_class.size());
  }
  bool paired = d.method == Method::paired;
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %7s %12s %12s %8s %9s %s %s\n", static_cast<int>(width),
                "class", "configs", "best us", "cand us", "ratio", "change",
                paired ? " interval            " : "", "state");
  text += line;
  bool repeated = false;
  bool pending = false;
  auto add = [&](const ClassRow &row, const std::string &state) {
    std::string interval;
    if (row.has_interval) {
      interval = " " + format_interval(row.low, row.high);
      interval.resize(std::max<size_t>(interval.size(), 21), ' ');
    } else if (paired) {
      interval = std::string(21, ' ');
    }
    std::snprintf(line, sizeof line, "%-*s %7d %12.3f %12.3f %8.4f %9s%s  %s",
                  static_cast<int>(width), row.config_class.c_str(), row.configs, row.best_us,
                  row.candidate_us, row.ratio, format_change(row.change).c_str(), interval.c_str(),
                  state.c_str());
    append_line(text, line);
  };
  for (const ClassRow &row : d.classes) {
    repeated = repeated || row.repeated;
    pending = pending || row.pending;
    add(row, state_mark(row));
  }
  if (d.overall) {
    add(*d.overall, "");
  }
  std::string threshold = format_change(d.options.threshold).substr(1);
  if (paired) {
    text += "intervals: " + util::format_number(d.options.confidence * 100, 4) + "% over " +
            std::to_string(d.rounds) + " side-by-side rounds" +
            (d.arrangement.empty() ? "" : " (" + d.arrangement + ")") + "; threshold " + threshold +
            "\n";
  } else {
    text += "unpaired: BEST and the candidate were not measured side by side with samples "
            "(decided on geomeans, threshold " +
            threshold + ")\n";
  }
  if (repeated) {
    text += "* within the threshold, counted by an earlier kopt's rule (two measurements that "
            "agreed): kopt no longer counts such a change\n";
  }
  if (pending) {
    text += "? within the threshold, the interval excludes zero: not counted (a side effect of "
            "the arrangement does that too); a change this small needs a lower keep.threshold\n";
  }
  for (const std::string &note : d.notes) {
    text += "note: " + note + "\n";
  }
  return text;
}

std::string format_traffic(const Decision &d) {
  if (!d.traffic) {
    return "";
  }
  const Traffic &t = *d.traffic;
  size_t width = std::string("overall").size();
  for (const ClassRow &row : t.classes) {
    width = std::max(width, row.config_class.size());
  }
  std::string text = "traffic: each config weighs its calls per application run (count, " +
                     util::format_number(t.calls, 12) + " calls) x its time" +
                     (d.options.weighting == Weighting::traffic ? "; the verdict's rows" : "") +
                     "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %7s %12s %12s %9s %s %s\n", static_cast<int>(width),
                "class", "share", "best us/run", "cand us/run", "change", " interval            ",
                "state");
  text += line;
  auto add = [&](const ClassRow &row, const std::string &state) {
    std::string interval = row.has_interval ? " " + format_interval(row.low, row.high) : "";
    interval.resize(std::max<size_t>(interval.size(), 21), ' ');
    std::snprintf(line, sizeof line, "%-*s %6.1f%% %12.1f %12.1f %9s%s  %s",
                  static_cast<int>(width), row.config_class.c_str(), 100 * row.share, row.best_us,
                  row.candidate_us, format_change(row.change).c_str(), interval.c_str(),
                  state.c_str());
    append_line(text, line);
  };
  for (const ClassRow &row : t.classes) {
    add(row, state_mark(row));
  }
  ClassRow overall = t.overall;
  overall.share = 1;
  add(overall, "");
  text += "the application's kernel time: " + format_change(t.overall.change) +
          (t.overall.has_interval ? " " + format_interval(t.overall.low, t.overall.high)
                                  : std::string()) +
          " (" + util::format_number(t.overall.best_us, 6) + " us per run for BEST)\n";
  return text;
}

std::string format_verdict(const Decision &d) {
  std::string text = std::string("verdict: ") + to_string(d.verdict) + " (" + d.reason + ")\n";
  if (!d.split_advice.empty()) {
    text += "split advice: " + d.split_advice + "\n";
  }
  return text;
}

} // namespace kopt::decide
