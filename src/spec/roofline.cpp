#include "spec/roofline.hpp"

#include "spec/fields.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace kopt::spec {

namespace {

// One of roofline's formulas: parsed, its columns in the configs file, and its value on every
// config a finite number >= 0 (the harness runs exactly these configs).
Formula load_formula(const Fields &roofline, const std::string &key,
                     const util::CsvTable &configs) {
  const auto &value = roofline.required(key);
  if (!value.is_string()) {
    fail_expected(roofline.where(key), "a formula over the config columns (\"2*M*N*K\")", value);
  }
  Formula formula = Formula::parse(value.get<std::string>(), roofline.where(key));
  for (const std::string &column : formula.columns()) {
    if (configs.find_column(column) < 0) {
      std::string hint = util::nearest(column, configs.header);
      throw Error(roofline.where(key) + ": '" + column + "' is not a column of " + configs.source +
                  " (columns: " + util::join(configs.header, ", ") + ")" +
                  (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
    }
  }
  for (size_t r = 0; r < configs.rows.size(); ++r) {
    std::map<std::string, double> values;
    for (const std::string &column : formula.columns()) {
      size_t c = static_cast<size_t>(configs.find_column(column));
      values[column] =
          util::parse_double(util::trim(configs.rows[r][c]),
                             configs.where(r) + ":" + std::to_string(c + 1) + ": column '" +
                                 column + "' (" + roofline.path(key) + " reads it)");
    }
    double result = formula.evaluate(values);
    if (!(result >= 0) || !std::isfinite(result)) {
      throw Error(configs.where(r) + ": " + roofline.path(key) + " '" +
                  util::excerpt(formula.text(), 200) + "' is " + util::format_number(result) +
                  " for this config: expected a finite number >= 0");
    }
  }
  return formula;
}

// roofline.peaks[i]: a device name part and at least one positive rate.
Peak load_peak(const Fields &peak) {
  peak.reject_unknown({"device", "bytes_per_s", "flops_per_s"});
  Peak p;
  p.device = peak.string("device");
  if (p.device.empty()) {
    fail_expected(peak.where("device"), "a part of a device's name, or \"*\" for any",
                  peak.json().at("device"));
  }
  for (auto [key, rate] :
       {std::pair{"bytes_per_s", &p.bytes_per_s}, std::pair{"flops_per_s", &p.flops_per_s}}) {
    *rate = peak.number_or(key, 0);
    if (peak.has(key) && !(*rate > 0 && std::isfinite(*rate))) {
      fail_expected(peak.where(key), "a positive number", peak.json().at(key));
    }
  }
  if (p.bytes_per_s == 0 && p.flops_per_s == 0) {
    throw Error(peak.where() + ": expected bytes_per_s, flops_per_s or both");
  }
  return p;
}

} // namespace

const std::vector<std::string> &math_formats() {
  static const std::vector<std::string> formats = {"fp8", "int8", "bf16", "fp16", "tf32", "fp32"};
  return formats;
}

Roofline load_roofline(const Fields &roofline, const std::string &configs_file) {
  roofline.reject_unknown({"bytes", "flops", "math", "peaks"});
  util::CsvTable configs = util::read_csv(configs_file);
  Roofline r;
  if (roofline.has("bytes")) {
    r.bytes = load_formula(roofline, "bytes", configs);
  }
  if (roofline.has("flops")) {
    r.flops = load_formula(roofline, "flops", configs);
  }
  if (!r.bytes && !r.flops) {
    throw Error(roofline.where() + ": expected bytes, flops or both (formulas over the config " +
                "columns)");
  }
  r.math = roofline.string_or("math", "");
  const auto &formats = math_formats();
  if (roofline.has("math") && std::find(formats.begin(), formats.end(), r.math) == formats.end()) {
    fail_expected(roofline.where("math"), "one of " + util::join(formats, ", "),
                  roofline.json().at("math"));
  }
  if (roofline.has("math") && !r.flops) {
    throw Error(roofline.where("math") + ": names the format of flops, and roofline has none");
  }
  if (roofline.has("peaks")) {
    const auto &list = roofline.json().at("peaks");
    if (!list.is_array()) {
      fail_expected(roofline.where("peaks"), "an array of {device, bytes_per_s, flops_per_s}",
                    list);
    }
    for (size_t i = 0; i < list.size(); ++i) {
      r.peaks.push_back(load_peak(Fields(list[i], roofline.file(),
                                         roofline.path("peaks") + "[" + std::to_string(i) + "]")));
    }
  }
  return r;
}

} // namespace kopt::spec
