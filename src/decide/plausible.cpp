#include "decide/plausible.hpp"

#include "decide/decide.hpp"
#include "decide/format.hpp"
#include "gpu/peak.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

namespace kopt::decide {

namespace {

using profile::ConfigResult;
using profile::Measurement;

// The device's rates a roofline is bounded by, and whose figures they are.
struct Rates {
  double bytes_per_s = 0; ///< 0: bytes bound nothing
  double flops_per_s = 0; ///< 0: flops bound nothing
  std::string source;     ///< "kopt's table: NVIDIA H200 SXM", "family.json roofline.peaks[0]"
};

// A value with a decimal prefix, below `below` of it: "21.6 MB", "4.8 TB/s"; "1979 TFLOP/s"
// with `below` 10000, as data sheets write tensor throughput.
std::string si(double value, const std::string &unit, double below = 1000) {
  static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  size_t i = 0;
  while (std::fabs(value) >= below && i + 1 < std::size(prefixes)) {
    value /= 1000;
    ++i;
  }
  return util::format_number(value, 4) + " " + prefixes[i] + unit;
}

// The family's declared peak for `device` (the first of roofline.peaks that names part of it),
// a rate it leaves out taken from kopt's table; else the table's; nullopt when neither knows.
std::optional<Rates> rates_for(const spec::Roofline &roofline, const std::string &device) {
  std::optional<gpu::DevicePeak> known = gpu::known_peak(device);
  std::optional<Rates> rates;
  if (known) {
    rates = Rates{known->bytes_per_s, known->flops_per_s(roofline.math),
                  "kopt's table: " + known->model};
  }
  for (size_t i = 0; i < roofline.peaks.size(); ++i) {
    const spec::Peak &peak = roofline.peaks[i];
    if (peak.device == "*" || device.find(peak.device) != std::string::npos) {
      Rates declared = rates.value_or(Rates{});
      declared.bytes_per_s = peak.bytes_per_s > 0 ? peak.bytes_per_s : declared.bytes_per_s;
      declared.flops_per_s = peak.flops_per_s > 0 ? peak.flops_per_s : declared.flops_per_s;
      declared.source = "family.json roofline.peaks[" + std::to_string(i) + "]" +
                        (known ? ", else kopt's table: " + known->model : "");
      rates = declared;
      break;
    }
  }
  if (!rates) {
    return std::nullopt;
  }
  // A rate with no formula to bound bounds nothing.
  rates->bytes_per_s = roofline.bytes ? rates->bytes_per_s : 0;
  rates->flops_per_s = roofline.flops ? rates->flops_per_s : 0;
  if (rates->bytes_per_s == 0 && rates->flops_per_s == 0) {
    return std::nullopt;
  }
  return rates;
}

// "4.8 TB/s, 1979 TFLOP/s fp8 (kopt's table: NVIDIA H200 SXM)".
std::string describe_rates(const Rates &rates, const std::string &math) {
  std::vector<std::string> parts;
  if (rates.bytes_per_s > 0) {
    parts.push_back(si(rates.bytes_per_s, "B/s"));
  }
  if (rates.flops_per_s > 0) {
    parts.push_back(si(rates.flops_per_s, "FLOP/s", 1e4) + (math.empty() ? "" : " " + math));
  }
  return util::join(parts, ", ") + " (" + rates.source + ")";
}

// One config's limit: the longer of its bytes' and its flops' times, and what it is.
struct Limit {
  double us = 0; ///< 0: not known (a value that is not a number)
  std::string figure;
};

Limit limit_of(const spec::Roofline &roofline, const Rates &rates,
               const std::vector<std::string> &columns, const std::vector<std::string> &values) {
  std::map<std::string, double> numbers;
  for (size_t c = 0; c < columns.size() && c < values.size(); ++c) {
    char *end = nullptr;
    double v = std::strtod(values[c].c_str(), &end);
    if (end != values[c].c_str() && std::isfinite(v)) {
      numbers[columns[c]] = v;
    }
  }
  Limit limit;
  try {
    if (rates.bytes_per_s > 0) {
      double bytes = roofline.bytes->evaluate(numbers);
      limit.us = 1e6 * bytes / rates.bytes_per_s;
      limit.figure = "moving its " + si(bytes, "B") + " at " + si(rates.bytes_per_s, "B/s");
    }
    if (rates.flops_per_s > 0) {
      double flops = roofline.flops->evaluate(numbers);
      if (1e6 * flops / rates.flops_per_s > limit.us) {
        limit.us = 1e6 * flops / rates.flops_per_s;
        limit.figure =
            "its " + si(flops, "FLOP", 1e4) + " at " + si(rates.flops_per_s, "FLOP/s", 1e4);
      }
    }
  } catch (const Error &) {
    return Limit{}; // a config without a number the formula reads: no limit known for it
  }
  return std::isfinite(limit.us) && limit.us > 0 ? limit : Limit{};
}

// Per class, limit / time and the limit of each config; and the configs faster than their limits.
struct Side {
  std::map<std::string, std::vector<double>> fraction;
  std::map<std::string, std::vector<double>> limit_us;
  std::vector<std::string> impossible;
};

Side measure_side(const Measurement &m, const spec::Roofline &roofline, const Rates &rates) {
  Side side;
  for (const ConfigResult &config : m.configs) {
    Limit limit = limit_of(roofline, rates, m.config_columns, config.values);
    if (limit.us <= 0 || !(config.us > 0)) {
      continue;
    }
    for (const std::string &name : {config.config_class, std::string("overall")}) {
      side.fraction[name].push_back(limit.us / config.us);
      side.limit_us[name].push_back(limit.us);
    }
    if (config.us < limit.us) {
      side.impossible.push_back(harness::config_label(m.config_columns, config.values) + " in " +
                                util::format_number(config.us, 4) + " us, below the " +
                                util::format_number(limit.us, 4) + " us of " + limit.figure);
    }
  }
  return side;
}

// A fraction in percent with three significant digits: "43.3%", "1.53e-05%".
std::string percent(double fraction) { return format_percent(fraction, 3); }

// The class order of the table: the decision's, then any other class a side has, then overall.
std::vector<std::string> class_order(const Decision &d, const Side &best, const Side &candidate) {
  std::vector<std::string> order;
  auto add = [&](const std::string &name) {
    if (name != "overall" && std::find(order.begin(), order.end(), name) == order.end()) {
      order.push_back(name);
    }
  };
  for (const ClassRow &row : d.classes) {
    add(row.config_class);
  }
  for (const Side *side : {&best, &candidate}) {
    for (const auto &[name, unused] : side->fraction) {
      add(name);
    }
  }
  order.push_back("overall");
  return order;
}

// The reason of a refusal: each side's impossible configs (BEST's only when it is another
// measurement than the candidate's).
std::string impossible_reason(const Measurement &best, const Side &b, const Measurement &candidate,
                              const Side &c, const SpeedOfLight &light) {
  std::vector<std::pair<std::string, const Side *>> sides = {
      {"candidate " + candidate.candidate, &c}};
  if (best.candidate != candidate.candidate) {
    sides.emplace_back("BEST " + best.candidate, &b);
  }
  std::vector<std::string> parts;
  for (const auto &[who, side] : sides) {
    const std::vector<std::string> &configs = side->impossible;
    if (configs.empty()) {
      continue;
    }
    std::vector<std::string> shown(configs.begin(),
                                   configs.begin() + std::min<long>(3, std::ssize(configs)));
    parts.push_back(who + " ran " + std::to_string(configs.size()) + " config" +
                    (configs.size() == 1 ? "" : "s") + " faster than " + light.device +
                    " can: " + util::join(shown, "; ") + (configs.size() > 3 ? "; and more" : ""));
  }
  return "impossible time: " + util::join(parts, "; ") + " (peaks " + light.peak +
         "); a measurement faster than the device allows is refused";
}

} // namespace

void apply_roofline(Decision &d, const Measurement &best, const Measurement &candidate,
                    const spec::Roofline &roofline) {
  SpeedOfLight light;
  light.device = candidate.device.empty() ? best.device : candidate.device;
  std::optional<Rates> rates = rates_for(roofline, light.device);
  if (!rates) {
    light.missing = "no peak known for device '" + light.device +
                    "': declare one in family.json's roofline.peaks";
    d.speed_of_light = light;
    return;
  }
  light.peak = describe_rates(*rates, roofline.math);
  Side b = measure_side(best, roofline, *rates);
  Side c = measure_side(candidate, roofline, *rates);
  for (const std::string &name : class_order(d, b, c)) {
    const Side &limits = c.limit_us.count(name) ? c : b;
    if (!limits.limit_us.count(name)) {
      continue;
    }
    ClassLight row;
    row.config_class = name;
    row.configs = static_cast<int>(limits.limit_us.at(name).size());
    row.limit_us = util::geomean(limits.limit_us.at(name));
    row.best_fraction = b.fraction.count(name) ? util::geomean(b.fraction.at(name)) : 0;
    row.candidate_fraction = c.fraction.count(name) ? util::geomean(c.fraction.at(name)) : 0;
    light.classes.push_back(row);
  }
  d.speed_of_light = light;
  bool judged = d.verdict == Verdict::keep || d.verdict == Verdict::tie ||
                d.verdict == Verdict::regression || d.verdict == Verdict::split;
  bool best_impossible = !b.impossible.empty() && best.candidate != candidate.candidate;
  if (judged && d.identical_to.empty() && (!c.impossible.empty() || best_impossible)) {
    d.verdict = Verdict::failed;
    d.reason = impossible_reason(best, b, candidate, c, light);
    d.winning.clear();
    d.split_advice.clear();
  }
}

std::string format_speed_of_light(const SpeedOfLight &light) {
  if (!light.missing.empty()) {
    return "speed of light: " + light.missing + "\n";
  }
  size_t width = std::string("overall").size();
  for (const ClassLight &row : light.classes) {
    width = std::max(width, row.config_class.size());
  }
  std::string text = "speed of light on " + light.device + ", peaks " + light.peak +
                     ": each class's limit (its bytes at the bandwidth or its flops at the peak, "
                     "the longer) over its time, geomean\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %7s %12s %9s %9s\n", static_cast<int>(width), "class",
                "configs", "limit us", "best", "cand");
  text += line;
  for (const ClassLight &row : light.classes) {
    // Significant digits, not decimals: a fraction far from the limit still shows.
    std::snprintf(line, sizeof line, "%-*s %7d %12s %9s %9s\n", static_cast<int>(width),
                  row.config_class.c_str(), row.configs,
                  util::format_number(row.limit_us, 4).c_str(), percent(row.best_fraction).c_str(),
                  percent(row.candidate_fraction).c_str());
    text += line;
  }
  return text;
}

std::string describe_speed_of_light(const SpeedOfLight &light) {
  if (!light.missing.empty()) {
    return "Speed of light: " + light.missing + ".";
  }
  std::vector<std::string> parts;
  for (const ClassLight &row : light.classes) {
    parts.push_back(row.config_class + " " + percent(row.candidate_fraction) + " (BEST " +
                    percent(row.best_fraction) + ")");
  }
  return "Speed of light on " + light.device + " (each class's limit over its time; peaks " +
         light.peak + "): " + util::join(parts, ", ") + ".";
}

nlohmann::json to_json(const SpeedOfLight &light) {
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassLight &row : light.classes) {
    classes.push_back({{"class", row.config_class},
                       {"configs", row.configs},
                       {"limit_us", row.limit_us},
                       {"best_fraction", row.best_fraction},
                       {"candidate_fraction", row.candidate_fraction}});
  }
  return {{"device", light.device},
          {"peak", light.peak},
          {"missing", light.missing},
          {"classes", classes}};
}

SpeedOfLight speed_of_light_from_json(const nlohmann::json &j, const std::string &where) {
  SpeedOfLight light;
  light.device = util::json_field<std::string>(j, "device", where);
  light.peak = util::json_field<std::string>(j, "peak", where);
  light.missing = util::json_field<std::string>(j, "missing", where);
  light.classes =
      util::json_items(j, "classes", where, [](const nlohmann::json &c, const std::string &at) {
        ClassLight row;
        row.config_class = util::json_field<std::string>(c, "class", at);
        row.configs = static_cast<int>(util::json_int_in(c, "configs", 0, INT32_MAX, at));
        for (auto [key, value] :
             {std::pair{"limit_us", &row.limit_us}, std::pair{"best_fraction", &row.best_fraction},
              std::pair{"candidate_fraction", &row.candidate_fraction}}) {
          *value = util::json_field<double>(c, key, at);
          if (!std::isfinite(*value) || *value < 0) {
            throw Error(at + ": " + key + ": expected a finite number >= 0, got " +
                        util::format_number(*value));
          }
        }
        return row;
      });
  return light;
}

} // namespace kopt::decide
