#pragma once

#include <kopt/harness/run.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kopt::profile {

/// Returns the argv of one harness run: the binary, then `options` as the harness library
/// spells them (harness::to_args, the inverse of the harness's own parser), so the flags are
/// written in one place for kopt and the harness alike.
std::vector<std::string> harness_argv(const std::filesystem::path &binary,
                                      const harness::Options &options);

/// One row of a harness results CSV: the config values, the kernel it ran, its median time,
/// every timed run's time, and its error against the golden (nullopt when the harness compared
/// nothing).
struct HarnessRow {
  std::vector<std::string> values;
  std::string kernel;
  double us = 0;
  std::vector<double> samples; ///< empty when the harness wrote no samples column (older ones)
  std::optional<double> err;
  int checked = -1;  ///< runs checked against the family's reference; -1: no such column
  std::string check; ///< the first failed check, empty when every check passed
};

/// Reads a harness results CSV (docs/FORMATS.md): `config_columns` first, then kernel,
/// us_<impl>, err_<impl> and the optional samples_<impl> (';'-separated us). A missing column is
/// an error naming the file and the column; a bad number names file:line and the column.
std::vector<HarnessRow> read_harness_results(const std::filesystem::path &file,
                                             const std::vector<std::string> &config_columns,
                                             const std::string &impl);

/// The first line a harness prints, `kopt-candidate: <id> <hash>`; returns the hash, or "" when
/// the output holds no such line.
std::string harness_hash(const std::string &stdout_text);

/// The device a harness measured on: its architecture ("sm_90", "gfx942", "host") and compute
/// units (SMs, CUs, hardware threads).
struct HarnessDevice {
  std::string arch; ///< "" when the harness printed no device (an older harness library)
  int64_t compute_units = 0;
};

/// Returns the device of the harness's `kopt-device: <arch> <units>` line in `stdout_text`.
HarnessDevice harness_device(const std::string &stdout_text);

} // namespace kopt::profile
