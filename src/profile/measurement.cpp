#include "profile/measurement.hpp"

#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <kopt/harness/config.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kopt::profile {

namespace {

std::string short_hash(const std::string &hash) {
  return hash.empty() ? "(none)" : hash.substr(0, 8);
}

std::string quoted(const std::string &text) { return text.empty() ? "(none)" : "'" + text + "'"; }

// A time is a positive finite number of microseconds: a zero, negative or non-finite one (JSON's
// null for NaN) would turn geomeans and intervals into NaN or a sign flip.
void check_time(double us, const std::string &where, const std::string &field) {
  if (!(us > 0) || !std::isfinite(us)) {
    throw Error(where + ": " + field + ": expected a positive finite time in us, got " +
                util::format_number(us));
  }
}

// The finest time a timer kopt reads gives: the profilers count whole ns, the harness's CSV has
// three decimals of us. A time below it was written by no measurement.
constexpr double kFinestUs = 0.001;

void check_plausible(double us, const std::string &where, const std::string &field) {
  check_time(us, where, field);
  if (us < kFinestUs * (1 - 1e-9)) {
    throw Error(where + ": " + field + ": expected at least 0.001 us (1 ns, the finest time a " +
                "timer gives), got " + util::format_number(us));
  }
}

// `us` must be what the samples say, within the CSV's rounding: merged rounds give the median
// of the rounds' medians, and one round's median (harness) or mean (profiler) lies within its
// samples. Samples that disagree with `us` would decide on numbers nobody measured.
void check_consistent(const ConfigResult &c, const std::string &where) {
  std::vector<double> medians;
  double low = std::numeric_limits<double>::infinity();
  double high = 0;
  for (const auto &round : c.rounds) {
    if (round.empty()) {
      return; // nothing to compare with
    }
    medians.push_back(util::median(round));
    low = std::min(low, *std::min_element(round.begin(), round.end()));
    high = std::max(high, *std::max_element(round.begin(), round.end()));
  }
  double tolerance = 0.0015 + 1e-9 * c.us; // us and samples each rounded to 0.001 us
  if (medians.size() >= 2 && std::abs(c.us - util::median(medians)) > tolerance) {
    throw Error(where + ": us: expected the median of the rounds' sample medians, " +
                util::format_number(util::median(medians), 9) + ", got " +
                util::format_number(c.us, 9));
  }
  if (medians.size() == 1 && (c.us < low - tolerance || c.us > high + tolerance)) {
    throw Error(where + ": us: expected a time within the samples (" + util::format_number(low, 9) +
                " to " + util::format_number(high, 9) + "), got " + util::format_number(c.us, 9));
  }
}

void check_times(const ConfigResult &c, const std::string &where) {
  check_plausible(c.us, where, "us");
  for (size_t k = 0; k < c.rounds.size(); ++k) {
    for (size_t i = 0; i < c.rounds[k].size(); ++i) {
      check_plausible(c.rounds[k][i], where,
                      "samples[" + std::to_string(k) + "][" + std::to_string(i) + "]");
    }
  }
  check_consistent(c, where);
}

// A config's values are the configs file's: one per column, none with a control byte.
void check_values(const ConfigResult &c, const std::vector<std::string> &columns,
                  const std::string &where) {
  if (c.values.size() != columns.size()) {
    throw Error(where + ": values: expected " + std::to_string(columns.size()) +
                " (one per config column), got " + std::to_string(c.values.size()));
  }
  for (size_t i = 0; i < c.values.size(); ++i) {
    for (char ch : c.values[i]) {
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
        throw Error(where + ": values[" + std::to_string(i) + "]: expected no control bytes");
      }
    }
  }
}

} // namespace

Conditions conditions_of(const Measurement &m) {
  return {m.hash, m.device, m.driver, to_string(m.measured_by), m.warmup, m.repeat};
}

std::string stale_reason(const Conditions &then, const Conditions &now) {
  if (then.hash.empty()) {
    return "no record of what measured it (written by an older kopt)";
  }
  if (then.hash != now.hash) {
    return "measured with content hash " + short_hash(then.hash) + ", the candidate's is now " +
           short_hash(now.hash);
  }
  if (then.device != now.device) {
    return "measured on " + quoted(then.device) + ", this run is on " + quoted(now.device);
  }
  if (then.driver != now.driver) {
    return "measured with driver " + quoted(then.driver) + ", now " + quoted(now.driver);
  }
  if (then.profiler != now.profiler) {
    return "timed by " + quoted(then.profiler) + ", this run by " + quoted(now.profiler);
  }
  if (then.warmup != now.warmup || then.repeat != now.repeat) {
    return "measured with warmup " + std::to_string(then.warmup) + " and repeat " +
           std::to_string(then.repeat) + ", this run uses " + std::to_string(now.warmup) + " and " +
           std::to_string(now.repeat);
  }
  return "";
}

namespace {

constexpr std::array<util::EnumName<Source>, 5> kSources = {{{Source::chrono, "chrono"},
                                                             {Source::events, "events"},
                                                             {Source::ncu, "ncu"},
                                                             {Source::rocprofv3, "rocprofv3"},
                                                             {Source::cupti, "cupti"}}};

// measurement.json's string fields by name: one list for its writer and its reader.
template <typename M> util::TextFields<util::TextOf<M>> required_texts(M &m) {
  return {{"family", &m.family}, {"candidate", &m.candidate}, {"hash", &m.hash},
          {"status", &m.status}, {"reason", &m.reason},       {"device", &m.device},
          {"date", &m.date}};
}

// Written since samples were kept; older measurements lack them and still load.
template <typename M> util::TextFields<util::TextOf<M>> later_texts(M &m) {
  return {{"driver", &m.driver},
          {"clocks", &m.clocks},
          {"build", &m.build},
          {"build_flags", &m.build_flags},
          {"configs_hash", &m.configs_hash},
          {"golden", &m.golden},
          {"harness_source", &m.harness_source},
          {"paired_best", &m.paired_best},
          {"paired_best_hash", &m.paired_best_hash},
          {"arrangement", &m.arrangement}};
}

} // namespace

const char *to_string(Source source) { return util::name_of(kSources, source); }

Source parse_source(const std::string &text, const std::string &where) {
  return util::parse_name(kSources, text, where);
}

nlohmann::json to_json(const Measurement &m) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto &c : m.configs) {
    nlohmann::json row{{"values", c.values}, {"class", c.config_class},    {"kernel", c.kernel},
                       {"us", c.us},         {"harness_us", c.harness_us}, {"samples", c.rounds}};
    row["err"] = c.err_known ? nlohmann::json(c.err) : nlohmann::json(nullptr);
    if (c.checked >= 0) {
      row["checked"] = c.checked;
    }
    if (!c.check.empty()) {
      row["check"] = c.check;
    }
    if (!c.outside_regex.empty()) {
      nlohmann::json outside = nlohmann::json::array();
      for (const OutsideKernel &k : c.outside_regex) {
        outside.push_back({{"kernel", k.kernel}, {"share", k.share}});
      }
      row["outside_kernel_regex"] = std::move(outside);
    }
    configs.push_back(std::move(row));
  }
  nlohmann::json j{{"measured_by", to_string(m.measured_by)},
                   {"profiled", m.profiled},
                   {"warmup", m.warmup},
                   {"repeat", m.repeat},
                   {"config_columns", m.config_columns},
                   {"configs", configs}};
  util::put_texts(j, required_texts(m));
  util::put_texts(j, later_texts(m));
  if (m.others_cpu >= 0) {
    j["others_cpu"] = m.others_cpu;
  }
  if (m.looks > 1) {
    j["looks"] = m.looks;
  }
  return j;
}

Measurement measurement_from_json(const nlohmann::json &j, const std::string &source) {
  Measurement m;
  util::get_texts(j, required_texts(m), source);
  m.measured_by = parse_source(util::json_field<std::string>(j, "measured_by", source),
                               source + ": measured_by");
  m.profiled = util::json_field<bool>(j, "profiled", source);
  util::get_texts(j, later_texts(m), source, "");
  m.warmup = static_cast<int>(util::json_int_in_or(j, "warmup", 0, 1000000, 0, source));
  m.repeat = static_cast<int>(util::json_int_in_or(j, "repeat", 0, 1000000, 0, source));
  if (!m.arrangement.empty() && m.arrangement != "best-first" &&
      m.arrangement != "candidate-first") {
    throw Error(source +
                ": field 'arrangement': expected \"best-first\" or \"candidate-first\", got '" +
                m.arrangement + "'");
  }
  m.others_cpu = util::json_field_or<double>(j, "others_cpu", -1, source);
  if (j.contains("others_cpu") && !(m.others_cpu >= 0 && m.others_cpu <= 1)) {
    throw Error(source +
                ": field 'others_cpu': expected a share of the machine's CPU time in [0, "
                "1], got " +
                util::format_number(m.others_cpu));
  }
  m.looks = static_cast<int>(util::json_int_in_or(j, "looks", 1, 1000000, 1, source));
  m.config_columns = util::json_field<std::vector<std::string>>(j, "config_columns", source);
  auto configs = util::json_field<nlohmann::json>(j, "configs", source);
  if (!configs.is_array()) {
    throw Error(source + ": field 'configs': expected an array of config results, got " +
                util::excerpt(util::dump_json(configs, -1)));
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    std::string where = source + ": configs[" + std::to_string(i) + "]";
    const auto &row = configs[i];
    ConfigResult c;
    c.values = util::json_field<std::vector<std::string>>(row, "values", where);
    check_values(c, m.config_columns, where);
    c.config_class = util::json_field<std::string>(row, "class", where);
    c.kernel = util::json_field<std::string>(row, "kernel", where);
    c.us = util::json_field<double>(row, "us", where);
    c.harness_us = util::json_field<double>(row, "harness_us", where);
    c.rounds = util::json_field_or<std::vector<std::vector<double>>>(row, "samples", {}, where);
    check_times(c, where + " (" + harness::config_label(m.config_columns, c.values) + ")");
    if (!row.contains("err")) {
      throw Error(where + ": missing field 'err'");
    }
    c.err_known = !row["err"].is_null();
    c.err = c.err_known ? util::json_field<double>(row, "err", where) : 0;
    c.checked = util::json_field_or<int>(row, "checked", -1, where);
    c.check = util::json_field_or<std::string>(row, "check", "", where);
    // Written since every kernel in the timed runs counts; absent when none was outside.
    auto outside = util::json_field_or<nlohmann::json>(row, "outside_kernel_regex",
                                                       nlohmann::json::array(), where);
    if (!outside.is_array()) {
      throw Error(where + ": field 'outside_kernel_regex': expected an array, got " +
                  util::excerpt(util::dump_json(outside, -1)));
    }
    for (size_t k = 0; k < outside.size(); ++k) {
      std::string at = where + ": outside_kernel_regex[" + std::to_string(k) + "]";
      c.outside_regex.push_back({util::json_field<std::string>(outside[k], "kernel", at),
                                 util::json_field<double>(outside[k], "share", at)});
    }
    m.configs.push_back(std::move(c));
  }
  return m;
}

size_t Measurement::sampled_rounds() const {
  size_t rounds = configs.empty() ? 0 : configs.front().rounds.size();
  for (const ConfigResult &c : configs) {
    if (c.rounds.size() != rounds) {
      return 0;
    }
    for (const auto &samples : c.rounds) {
      if (samples.empty()) {
        return 0;
      }
    }
  }
  return rounds;
}

double config_time_us(const ConfigResult &c, size_t rounds) {
  if (rounds < 2 || c.rounds.size() < rounds) {
    return c.us;
  }
  std::vector<double> medians;
  for (size_t k = 0; k < rounds; ++k) {
    medians.push_back(util::median(c.rounds[k]));
  }
  return util::geomean(medians);
}

Measurement read_measurement(const std::filesystem::path &path) {
  return measurement_from_json(util::read_json(path), path.string());
}

void write_measurement(const std::filesystem::path &path, const Measurement &m) {
  util::write_json_atomic(path, to_json(m));
}

} // namespace kopt::profile
