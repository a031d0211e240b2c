#include "profile/rocprofv3.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>

namespace kopt::profile {

namespace fs = std::filesystem;

std::vector<std::string> rocprofv3_command(const fs::path &dir, const std::string &name,
                                           const std::vector<std::string> &harness,
                                           MarkerTrace markers) {
  std::vector<std::string> argv = {"rocprofv3", "--kernel-trace"};
  if (markers == MarkerTrace::yes) {
    argv.emplace_back("--marker-trace");
  }
  for (const char *arg : {"--output-format", "csv", "-d"}) {
    argv.emplace_back(arg);
  }
  argv.push_back(dir.string());
  argv.emplace_back("-o");
  argv.push_back(name);
  argv.emplace_back("--");
  argv.insert(argv.end(), harness.begin(), harness.end());
  return argv;
}

std::optional<fs::path> find_rocprofv3_file(const fs::path &dir, const std::string &suffix) {
  std::vector<fs::path> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return std::nullopt;
  }
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (it->is_regular_file() && file.size() >= suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found.push_back(it->path());
    }
  }
  if (found.empty()) {
    return std::nullopt;
  }
  if (found.size() > 1) {
    std::sort(found.begin(), found.end());
    std::vector<std::string> names;
    for (const auto &path : found) {
      names.push_back(path.string());
    }
    throw Error(dir.string() + ": expected one *" + suffix + ", found " +
                std::to_string(found.size()) + ": " + util::join(names, ", "));
  }
  return found.front();
}

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Columns are matched ignoring case: rocpd releases spell some as `Lds_Block_Size`.
int find_column(const util::CsvTable &table, std::string_view name) {
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (same_name(table.header[i], name)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int column(const util::CsvTable &table, std::string_view name) {
  int index = find_column(table, name);
  return index >= 0 ? index : table.column(name); // table.column throws naming the file
}

int64_t field_int(const util::CsvTable &table, size_t row, int col) {
  return util::parse_int(table.rows[row][col], table.where(row) + ": " + table.header[col]);
}

double field_double(const util::CsvTable &table, size_t row, int col) {
  return util::parse_double(table.rows[row][col], table.where(row) + ": " + table.header[col]);
}

} // namespace

std::vector<KernelDispatch> parse_kernel_trace(const util::CsvTable &table) {
  int name_col = column(table, "Kernel_Name");
  int start_col = column(table, "Start_Timestamp");
  int end_col = column(table, "End_Timestamp");
  int agent_col = find_column(table, "Agent_Id");
  int dispatch_col = find_column(table, "Dispatch_Id");
  std::vector<KernelDispatch> dispatches;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    KernelDispatch d;
    d.kernel = table.rows[r][name_col];
    d.agent = agent_col >= 0 ? table.rows[r][agent_col] : "";
    d.dispatch_id = dispatch_col >= 0 ? field_int(table, r, dispatch_col) : -1;
    d.start_ns = field_int(table, r, start_col);
    d.end_ns = field_int(table, r, end_col);
    d.line = table.lines[r];
    if (d.end_ns < d.start_ns) {
      throw Error(table.where(r) + ": " + table.header[end_col] + ": " + std::to_string(d.end_ns) +
                  " is before " + table.header[start_col] + " " + std::to_string(d.start_ns));
    }
    dispatches.push_back(std::move(d));
  }
  // Rows come per queue, not in launch order: Dispatch_Id is the order the host submitted.
  std::stable_sort(dispatches.begin(), dispatches.end(),
                   [](const KernelDispatch &a, const KernelDispatch &b) {
                     return a.dispatch_id != b.dispatch_id ? a.dispatch_id < b.dispatch_id
                                                           : a.start_ns < b.start_ns;
                   });
  return dispatches;
}

std::vector<KernelDispatch> read_kernel_trace(const fs::path &path) {
  return parse_kernel_trace(util::read_csv(path));
}

std::vector<MarkerRange> parse_marker_trace(const util::CsvTable &table) {
  int name_col = column(table, "Function");
  int start_col = column(table, "Start_Timestamp");
  int end_col = column(table, "End_Timestamp");
  std::vector<MarkerRange> ranges;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    ranges.push_back(
        {table.rows[r][name_col], field_int(table, r, start_col), field_int(table, r, end_col)});
  }
  return ranges;
}

std::vector<MarkerRange> read_marker_trace(const fs::path &path) {
  return parse_marker_trace(util::read_csv(path));
}

std::vector<KernelStat> read_kernel_stats(const fs::path &path) {
  util::CsvTable table = util::read_csv(path);
  int name_col = column(table, "Name");
  int calls_col = column(table, "Calls");
  int total_col = column(table, "TotalDurationNs");
  int average_col = column(table, "AverageNs");
  int min_col = column(table, "MinNs");
  int max_col = column(table, "MaxNs");
  std::vector<KernelStat> stats;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    stats.push_back({table.rows[r][name_col], field_int(table, r, calls_col),
                     field_double(table, r, total_col), field_double(table, r, average_col),
                     field_double(table, r, min_col), field_double(table, r, max_col)});
  }
  return stats;
}

ProfileReport attribute_dispatches(const std::vector<KernelDispatch> &dispatches,
                                   const std::vector<MarkerRange> &markers,
                                   const ProfileOptions &options, const std::string &source) {
  std::vector<const MarkerRange *> ranges;
  for (const auto &marker : markers) {
    if (config_index_of_range(marker.name) >= 0) {
      ranges.push_back(&marker);
    }
  }
  std::vector<KernelLaunch> launches;
  for (const auto &d : dispatches) {
    KernelLaunch launch{d.kernel, static_cast<double>(d.duration_ns()), ""};
    const MarkerRange *innermost = nullptr;
    for (const MarkerRange *range : ranges) {
      if (range->start_ns <= d.start_ns && d.start_ns <= range->end_ns &&
          (!innermost ||
           range->end_ns - range->start_ns < innermost->end_ns - innermost->start_ns)) {
        innermost = range;
      }
    }
    if (innermost) {
      launch.range = innermost->name;
    }
    launches.push_back(std::move(launch));
  }
  return attribute_launches(launches, !ranges.empty(), options, source);
}

ProfileReport read_rocprofv3_output(const fs::path &dir, const ProfileOptions &options) {
  auto trace = find_rocprofv3_file(dir, "kernel_trace.csv");
  if (!trace) {
    ProfileReport report;
    report.profiled = false;
    report.reason = dir.string() + ": rocprofv3 wrote no *kernel_trace.csv (no kernel was traced)";
    return report;
  }
  std::vector<MarkerRange> markers;
  if (auto marker_file = find_rocprofv3_file(dir, "marker_api_trace.csv")) {
    markers = read_marker_trace(*marker_file);
  }
  return attribute_dispatches(read_kernel_trace(*trace), markers, options, trace->string());
}

} // namespace kopt::profile
