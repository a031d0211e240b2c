#include "profile/harness_csv.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <sstream>

namespace kopt::profile {

std::vector<std::string> harness_argv(const std::filesystem::path &binary,
                                      const harness::Options &options) {
  std::vector<std::string> argv = {binary.string()};
  std::vector<std::string> args = harness::to_args(options);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<HarnessRow> read_harness_results(const std::filesystem::path &file,
                                             const std::vector<std::string> &config_columns,
                                             const std::string &impl) {
  util::CsvTable table = util::read_csv(file);
  std::vector<int> value_columns;
  for (const auto &name : config_columns) {
    value_columns.push_back(table.column(name));
  }
  harness::ResultColumns names = harness::result_columns(impl);
  int kernel = table.column(names.kernel);
  if (table.find_column(names.us) < 0) {
    // The harness names its columns after its own FamilySpec::impl: another impl there is the
    // usual cause, and the fix is in the harness or in family.json, not in the results file.
    for (const std::string &column : table.header) {
      if (column.starts_with("us_")) {
        throw Error(file.string() + ": the harness wrote '" + column + "' where kopt reads '" +
                    names.us + "': the harness's FamilySpec::impl is '" + column.substr(3) +
                    "' and family.json's \"impl\" is '" + impl + "': make them the same");
      }
    }
  }
  int us = table.column(names.us);
  int err = table.column(names.err);
  int samples = table.find_column(names.samples);
  int checked = table.find_column(names.checked);
  int check = table.find_column(names.check);

  std::vector<HarnessRow> rows;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto &fields = table.rows[r];
    HarnessRow row;
    for (int c : value_columns) {
      row.values.push_back(fields[c]);
    }
    row.kernel = fields[kernel];
    row.us = util::parse_double(fields[us], table.where(r) + ": " + names.us);
    if (samples >= 0 && !util::trim(fields[samples]).empty()) {
      for (const std::string &sample : util::split(fields[samples], ';')) {
        row.samples.push_back(util::parse_double(sample, table.where(r) + ": " + names.samples));
      }
    }
    if (!util::trim(fields[err]).empty()) {
      row.err = util::parse_double(fields[err], table.where(r) + ": " + names.err);
    }
    if (checked >= 0) {
      row.checked =
          static_cast<int>(util::parse_int(fields[checked], table.where(r) + ": " + names.checked));
    }
    if (check >= 0) {
      row.check = fields[check];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

HarnessDevice harness_device(const std::string &stdout_text) {
  std::istringstream lines(stdout_text);
  std::string line;
  const std::string prefix = "kopt-device: ";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0) {
      auto fields = util::split(std::string(util::trim(line.substr(prefix.size()))), ' ');
      if (fields.size() == 2) {
        try {
          return {fields[0], util::parse_int(fields[1], "kopt-device")};
        } catch (const Error &) {
        }
      }
    }
  }
  return {};
}

std::string harness_hash(const std::string &stdout_text) {
  std::istringstream lines(stdout_text);
  std::string line;
  const std::string prefix = "kopt-candidate: ";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0) {
      auto fields = util::split(line.substr(prefix.size()), ' ');
      return fields.size() >= 2 ? std::string(util::trim(fields[1])) : "";
    }
  }
  return "";
}

} // namespace kopt::profile
