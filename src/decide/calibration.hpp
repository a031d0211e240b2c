#pragma once
// The machine's resolution (`kopt calibrate`): what an A/A decision says this machine can
// resolve per config class, and its file (calibration.json).

#include "decide/decision.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::decide {

/// Per config class, the smallest change this machine resolves: the half-width of an A/A
/// interval (BEST measured beside itself by `kopt calibrate`).
struct Resolution {
  std::string config_class;
  double half_width = 0;
};

/// What `kopt calibrate` recorded: calibration.json.
struct Calibration {
  std::string family;
  std::string best;
  std::string device;
  std::string date;
  int rounds = 0;
  double confidence = 0;
  std::vector<Resolution> classes;
};

/// Returns the machine's resolution from an A/A decision (BEST decided against its own side by
/// side measurement); throws kopt::Error when the decision has no intervals.
Calibration calibration_from(const Decision &aa);

/// Serialises a calibration (stable key order).
nlohmann::json to_json(const Calibration &calibration);

/// Reads calibration.json; errors name the file and field.
Calibration read_calibration(const std::filesystem::path &path);

/// Writes calibration.json atomically.
void write_calibration(const std::filesystem::path &path, const Calibration &calibration);

} // namespace kopt::decide
