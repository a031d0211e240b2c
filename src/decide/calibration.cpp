#include "decide/calibration.hpp"

#include "util/error.hpp"
#include "util/json_file.hpp"

#include <algorithm>
#include <cstdint>

namespace kopt::decide {

Calibration calibration_from(const Decision &aa) {
  if (aa.method != Method::paired) {
    throw Error("calibration of " + aa.best +
                ": the A/A measurement has no side-by-side "
                "samples (" +
                aa.reason + ")");
  }
  Calibration c;
  c.family = aa.family;
  c.best = aa.best;
  c.date = aa.date;
  c.rounds = aa.rounds;
  c.confidence = aa.options.confidence;
  for (const ClassRow &row : aa.classes) {
    c.classes.push_back({row.config_class, std::max(row.high - row.change, row.change - row.low)});
  }
  return c;
}

nlohmann::json to_json(const Calibration &c) {
  nlohmann::json classes = nlohmann::json::array();
  for (const Resolution &r : c.classes) {
    classes.push_back({{"class", r.config_class}, {"half_width", r.half_width}});
  }
  return {{"family", c.family}, {"best", c.best},     {"device", c.device},
          {"date", c.date},     {"rounds", c.rounds}, {"confidence", c.confidence},
          {"classes", classes}};
}

Calibration read_calibration(const std::filesystem::path &path) {
  std::string source = path.string();
  nlohmann::json j = util::read_json(path);
  Calibration c;
  c.family = util::json_field<std::string>(j, "family", source);
  c.best = util::json_field<std::string>(j, "best", source);
  c.device = util::json_field<std::string>(j, "device", source);
  c.date = util::json_field<std::string>(j, "date", source);
  c.rounds = static_cast<int>(util::json_int_in(j, "rounds", 0, INT32_MAX, source));
  c.confidence = util::json_field<double>(j, "confidence", source);
  auto classes = util::json_field<nlohmann::json>(j, "classes", source);
  if (!classes.is_array()) {
    throw Error(source + ": field 'classes' has the wrong type");
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    std::string where = source + ": classes[" + std::to_string(i) + "]";
    c.classes.push_back({util::json_field<std::string>(classes[i], "class", where),
                         util::json_field<double>(classes[i], "half_width", where)});
  }
  return c;
}

void write_calibration(const std::filesystem::path &path, const Calibration &calibration) {
  util::write_json_atomic(path, to_json(calibration));
}

} // namespace kopt::decide
