#include "profile/ncu.hpp"

#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>

namespace kopt::profile {

const ProfiledConfig *ProfileReport::find(int config) const {
  for (const auto &c : configs) {
    if (c.config == config) {
      return &c;
    }
  }
  return nullptr;
}

std::vector<std::string> ncu_command(const std::string &kernel_regex,
                                     const std::vector<std::string> &harness,
                                     NcuLaunches launches) {
  std::vector<std::string> argv = {"ncu",
                                   "--csv",
                                   "--print-units",
                                   "base",
                                   "--metrics",
                                   "gpu__time_duration.sum",
                                   "--clock-control",
                                   "none",
                                   "--nvtx",
                                   "-k",
                                   "regex:" + kernel_regex};
  if (launches == NcuLaunches::timed) {
    // The harness's timer flushes L2 before each timed run itself, so ncu need not (it saves
    // about 4 ms per profiled launch on an H100).
    argv.insert(argv.end(), {"--profile-from-start", "off", "--cache-control", "none"});
  }
  argv.insert(argv.end(), harness.begin(), harness.end());
  return argv;
}

bool ncu_profiled_nothing(std::string_view ncu_stdout) {
  return ncu_stdout.find("No kernels were profiled") != std::string_view::npos;
}

int config_index_of_range(std::string_view range) {
  constexpr std::string_view prefix = "config_";
  if (range.substr(0, prefix.size()) != prefix) {
    return -1;
  }
  size_t pos = prefix.size();
  int index = 0;
  bool digits = false;
  while (pos < range.size() && std::isdigit(static_cast<unsigned char>(range[pos]))) {
    index = index * 10 + (range[pos] - '0');
    digits = true;
    ++pos;
    if (index > 100000000) {
      return -1;
    }
  }
  if (!digits || (pos < range.size() && range[pos] != ' ')) {
    return -1;
  }
  return index;
}

ProfileReport attribute_launches(const std::vector<KernelLaunch> &launches, bool by_range,
                                 const ProfileOptions &options, const std::string &source) {
  std::regex pattern;
  try {
    pattern = std::regex(options.kernel_regex, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    throw Error("kernel regex '" + options.kernel_regex + "': " + e.what());
  }
  std::vector<const KernelLaunch *> matching;
  std::vector<std::string> seen;
  for (const auto &launch : launches) {
    if (std::regex_search(launch.kernel, pattern)) {
      matching.push_back(&launch);
    } else if (std::find(seen.begin(), seen.end(), launch.kernel) == seen.end()) {
      seen.push_back(launch.kernel);
    }
  }
  ProfileReport report;
  if (matching.empty()) {
    report.profiled = false;
    report.reason = source + ": no launch of a kernel matching '" + options.kernel_regex + "'" +
                    (seen.empty() ? "" : " (kernels seen: " + util::join(seen, ", ") + ")");
    return report;
  }
  int per_config = options.launches_per_config;
  if (!by_range && per_config > 0 && matching.size() % per_config != 0) {
    report.profiled = false;
    report.reason = source + ": " + std::to_string(matching.size()) +
                    " matching launches do not divide into " + std::to_string(per_config) +
                    " per config";
    return report;
  }
  std::map<int, ProfiledConfig> configs;
  for (size_t i = 0; i < matching.size(); ++i) {
    const KernelLaunch &launch = *matching[i];
    int index = 0;
    if (by_range) {
      index = config_index_of_range(launch.range);
      if (index < 0) {
        continue;
      }
    } else if (per_config > 0) {
      index = static_cast<int>(i) / per_config;
    }
    ProfiledConfig &config = configs[index];
    config.config = index;
    config.range = by_range ? launch.range : "";
    config.launches += 1;
    config.total_ns += launch.ns;
    config.launch_ns.push_back(launch.ns);
    if (std::find(config.kernels.begin(), config.kernels.end(), launch.kernel) ==
        config.kernels.end()) {
      config.kernels.push_back(launch.kernel);
    }
  }
  if (configs.empty()) {
    report.profiled = false;
    report.reason = source + ": no launch of a kernel matching '" + options.kernel_regex +
                    "' inside a config_<index> range";
    return report;
  }
  for (auto &[index, config] : configs) {
    report.configs.push_back(std::move(config));
  }
  return report;
}

namespace {

constexpr std::string_view kTimeMetric = "gpu__time_duration.sum";

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines = util::split(text, '\n');
  for (auto &line : lines) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
  }
  return lines;
}

bool is_csv_header(const std::string &line) {
  return line.rfind("\"ID\",", 0) == 0 && line.find("\"Kernel Name\"") != std::string::npos &&
         (line.find("\"Metric Value\"") != std::string::npos ||
          line.find("\"gpu__time_duration.sum\"") != std::string::npos);
}

// Nanoseconds per unit as ncu spells them with and without --print-units base.
double ns_per_unit(const std::string &unit, const std::string &where) {
  static const std::map<std::string, double> scale = {
      {"ns", 1},   {"nsecond", 1},   {"us", 1e3}, {"usecond", 1e3},
      {"ms", 1e6}, {"msecond", 1e6}, {"s", 1e9},  {"second", 1e9}};
  auto it = scale.find(std::string(util::trim(unit)));
  if (it == scale.end()) {
    throw Error(where + ": expected a time unit (ns, us, ms, s), got '" + unit + "'");
  }
  return it->second;
}

// The innermost `config_<index>` range of an NVTX push/pop stack cell such as
// `464  "<default domain>:config_0 M=65536:none:none:none:none:none:none" `.
std::string config_range(const std::string &cell) {
  std::string found;
  size_t pos = 0;
  while ((pos = cell.find('"', pos)) != std::string::npos) {
    size_t end = cell.find('"', pos + 1);
    if (end == std::string::npos) {
      break;
    }
    std::string entry = cell.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    // Domain:Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg; the range may hold colons.
    size_t first = entry.find(':');
    size_t last = entry.size();
    for (int i = 0; i < 6 && last != std::string::npos && last > 0; ++i) {
      last = entry.rfind(':', last - 1);
    }
    std::string range = (first == std::string::npos || last == std::string::npos || last <= first)
                            ? entry
                            : entry.substr(first + 1, last - first - 1);
    if (config_index_of_range(range) >= 0) {
      found = range;
    }
  }
  return found;
}

ProfileReport not_profiled(const std::vector<std::string> &lines, const std::string &source) {
  ProfileReport report;
  report.profiled = false;
  bool listing = false;
  for (const auto &line : lines) {
    if (line.rfind("Available Kernels:", 0) == 0) {
      listing = true;
      continue;
    }
    if (listing) {
      size_t dot = line.find(". ");
      if (dot == std::string::npos || dot == 0 ||
          !std::all_of(line.begin(), line.begin() + dot,
                       [](unsigned char c) { return std::isdigit(c); })) {
        listing = false;
        continue;
      }
      report.available_kernels.push_back(line.substr(dot + 2));
    }
  }
  report.reason = source + ": ncu: No kernels were profiled";
  if (!report.available_kernels.empty()) {
    report.reason += " (available kernels: " + util::join(report.available_kernels, ", ") + ")";
  }
  return report;
}

} // namespace

ProfileReport parse_ncu_output(std::string_view text, const std::string &source,
                               const ProfileOptions &options) {
  std::vector<std::string> lines = split_lines(text);
  size_t header = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (is_csv_header(lines[i])) {
      header = i;
      break;
    }
  }
  if (header == lines.size()) {
    if (ncu_profiled_nothing(text)) {
      return not_profiled(lines, source);
    }
    throw Error(source + ": no ncu CSV header (\"ID\",...,\"Kernel Name\",...) in the output");
  }
  // Lines that are not CSV become blank so that CSV errors keep the file's line numbers.
  std::string csv;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i >= header && lines[i].rfind("==", 0) != 0) {
      csv += lines[i];
    }
    csv += '\n';
  }
  util::CsvTable table = util::parse_csv(csv, source);
  int id_col = table.column("ID");
  int kernel_col = table.column("Kernel Name");
  int range_col = -1;
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i].find("Push/Pop_Range") != std::string::npos) {
      range_col = static_cast<int>(i);
      break;
    }
  }
  bool details = table.find_column("Metric Name") >= 0;
  int name_col = details ? table.column("Metric Name") : -1;
  int unit_col = details ? table.column("Metric Unit") : -1;
  int value_col = details ? table.column("Metric Value") : table.column(kTimeMetric);
  std::string raw_unit = "ns";

  std::vector<KernelLaunch> launches;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto &row = table.rows[r];
    if (!details && row[id_col].empty()) {
      raw_unit = row[value_col]; // the raw page's units row
      continue;
    }
    if (details && row[name_col] != kTimeMetric) {
      continue;
    }
    std::string where = table.where(r);
    const std::string &unit = details ? row[unit_col] : raw_unit;
    double scale = ns_per_unit(unit, where + ": " + (details ? "Metric Unit" : "units row"));
    const std::string value_name = details ? "Metric Value" : std::string(kTimeMetric);
    double value = util::parse_double(row[value_col], where + ": " + value_name);
    KernelLaunch launch;
    launch.kernel = row[kernel_col];
    launch.ns = value * scale;
    if (range_col >= 0) {
      launch.range = config_range(row[range_col]);
    }
    launches.push_back(std::move(launch));
  }
  // A --nvtx run whose harness pushed no config ranges falls back to launch order.
  bool by_range = std::any_of(launches.begin(), launches.end(),
                              [](const KernelLaunch &l) { return !l.range.empty(); });
  return attribute_launches(launches, by_range, options, source);
}

ProfileReport read_ncu_output(const std::filesystem::path &path, const ProfileOptions &options) {
  return parse_ncu_output(util::read_file(path), path.string(), options);
}

} // namespace kopt::profile
