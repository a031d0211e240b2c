#include "profile/ncu_details.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <regex>

namespace kopt::profile {

namespace {

const char *kStallPrefix = "smsp__average_warps_issue_stalled_";
const char *kStallSuffix = "_per_issue_active.ratio";

// Returns the value as a number (thousands separators allowed), or false for text values.
bool to_number(const std::string &text, double &out) {
  std::string digits;
  for (char c : text) {
    if (c != ',') {
      digits += c;
    }
  }
  if (digits.empty()) {
    return false;
  }
  char *end = nullptr;
  out = std::strtod(digits.c_str(), &end);
  return end != nullptr && *end == '\0';
}

// The number of CSV fields on one line (quotes may hold commas and doubled quotes), and whether
// the line ends inside a quoted field.
struct FieldCount {
  size_t fields = 1;
  bool open_quote = false;
};

FieldCount field_count(std::string_view line) {
  FieldCount count;
  for (char c : line) {
    if (c == '"') {
      count.open_quote = !count.open_quote;
    } else if (c == ',' && !count.open_quote) {
      ++count.fields;
    }
  }
  return count;
}

// ncu leaves out the trailing rule columns of metric rows ("...","0.66",): pads every row to
// the header's field count so that the CSV reader can check the rest strictly. A row must still
// reach the Metric Value column and close its quotes: a shorter one is a file cut mid-row.
// `first_line` is the header's line in the file, for errors.
std::string pad_rows(std::string_view csv, const std::string &source, int first_line) {
  std::string out;
  size_t header_fields = 0;
  size_t needed = 0;
  int number = first_line;
  for (size_t at = 0; at < csv.size(); ++number) {
    size_t end = csv.find('\n', at);
    std::string_view line = csv.substr(at, end == std::string_view::npos ? end : end - at);
    FieldCount count = field_count(line);
    std::string where = source + ":" + std::to_string(number);
    if (count.open_quote) {
      throw Error(where + ": the row ends inside a quoted field (the file was cut mid-row?)");
    }
    out += line;
    if (header_fields == 0) {
      header_fields = count.fields;
      util::CsvTable header = util::parse_csv(std::string(line) + "\n", source);
      needed = static_cast<size_t>(header.column("Metric Value")) + 1;
    } else if (!line.empty() && count.fields < needed) {
      throw Error(where + ": " + std::to_string(count.fields) +
                  " fields, but the Metric Value column is field " + std::to_string(needed) +
                  " (the file was cut mid-row?)");
    } else if (!line.empty()) {
      for (size_t n = count.fields; n < header_fields; ++n) {
        out += ',';
      }
    }
    out += '\n';
    if (end == std::string_view::npos) {
      break;
    }
    at = end + 1;
  }
  return out;
}

std::string percent(double value) { return value < 0 ? "?" : util::format_number(value, 3) + "%"; }

} // namespace

double LaunchDetails::get(const std::string &section, const std::string &name,
                          double fallback) const {
  auto it = metrics.find(section + "/" + name);
  return it == metrics.end() ? fallback : it->second;
}

namespace {

// Where the CSV starts: at the header line that begins with "ID"; everything before it is the
// program's own output and ==PROF== lines.
size_t details_start(std::string_view text, const std::string &source) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? end : end - at);
    if (line.starts_with("\"ID\",") && line.find("\"Metric Name\"") != std::string_view::npos) {
      return at;
    }
    if (end == std::string_view::npos) {
      break;
    }
    at = end + 1;
  }
  throw Error(source +
              ": no ncu details CSV (a header with \"ID\" and \"Metric Name\"); was "
              "it run with --csv --page details? " +
              (text.find("No kernels were profiled") != std::string_view::npos
                   ? "ncu profiled no kernel"
                   : ""));
}

} // namespace

std::vector<LaunchDetails> parse_ncu_details(std::string_view text, const std::string &source) {
  const size_t start = details_start(text, source);
  int skipped_lines = static_cast<int>(std::count(text.begin(), text.begin() + start, '\n'));
  util::CsvTable table =
      util::parse_csv(pad_rows(text.substr(start), source, skipped_lines + 1), source);
  int id = table.column("ID");
  int kernel = table.column("Kernel Name");
  int section = table.column("Section Name");
  int name = table.column("Metric Name");
  int unit = table.column("Metric Unit");
  int value = table.column("Metric Value");
  int block = table.find_column("Block Size");
  int grid = table.find_column("Grid Size");
  int rule_name = table.find_column("Rule Name");
  int speedup_column = table.find_column("Estimated Speedup");
  // With --nvtx, one column holds the thread's push/pop range stack.
  int nvtx = -1;
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i].starts_with("thread Domain:Push/Pop_Range")) {
      nvtx = static_cast<int>(i);
    }
  }
  static const std::regex config_range(R"(:config_(\d+)[ :])");
  std::vector<LaunchDetails> launches;
  std::map<int, size_t> by_id;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto &row = table.rows[r];
    std::string where = source + ":" + std::to_string(table.lines[r] + skipped_lines);
    int launch_id = static_cast<int>(util::parse_int(row[id], where + ": ID"));
    auto [it, fresh] = by_id.try_emplace(launch_id, launches.size());
    if (fresh) {
      LaunchDetails launch;
      launch.id = launch_id;
      launch.kernel = row[kernel];
      if (block >= 0) {
        launch.block = row[block];
      }
      if (grid >= 0) {
        launch.grid = row[grid];
      }
      std::smatch m;
      if (nvtx >= 0 && std::regex_search(row[nvtx], m, config_range)) {
        launch.config = static_cast<int>(util::parse_int(m[1].str(), where + ": NVTX range"));
      }
      launches.push_back(launch);
    }
    LaunchDetails &launch = launches[it->second];
    double speedup = 0;
    if (rule_name >= 0 && speedup_column >= 0 && !row[rule_name].empty() &&
        to_number(row[speedup_column], speedup) && speedup > launch.top_rule_speedup) {
      launch.top_rule = row[rule_name];
      launch.top_rule_speedup = speedup;
    }
    double number = 0;
    if (row[name].empty() || !to_number(row[value], number)) {
      continue;
    }
    std::string key = row[section] + "/" + row[name];
    launch.metrics[key] = number;
    launch.units[key] = row[unit];
  }
  return launches;
}

Bottleneck judge_bottleneck(const LaunchDetails &launch) {
  const std::string sol = "GPU Speed Of Light Throughput";
  double memory = launch.get(sol, "Memory Throughput");
  double compute = launch.get(sol, "Compute (SM) Throughput");
  double dram = launch.get(sol, "DRAM Throughput");
  double theoretical = launch.get("Occupancy", "Theoretical Occupancy");
  double achieved = launch.get("Occupancy", "Achieved Occupancy");
  double by_registers = launch.get("Occupancy", "Block Limit Registers");
  double by_shared = launch.get("Occupancy", "Block Limit Shared Mem");
  double by_warps = launch.get("Occupancy", "Block Limit Warps");

  Bottleneck b;
  for (const auto &[key, v] : launch.metrics) {
    size_t at = key.find(kStallPrefix);
    if (at != std::string::npos && key.ends_with(kStallSuffix) && v > b.top_stall_cycles) {
      std::string reason = key.substr(at + std::string(kStallPrefix).size());
      reason.resize(reason.size() - std::string(kStallSuffix).size());
      b.top_stall = reason;
      b.top_stall_cycles = v;
    }
  }
  std::string stall = b.top_stall.empty()
                          ? std::string("no stall metrics")
                          : "top stall " + b.top_stall + " (" +
                                util::format_number(b.top_stall_cycles, 3) + " cycles per issue)";
  std::string figures = "SM " + percent(compute) + ", memory " + percent(memory) + ", DRAM " +
                        percent(dram) + " of peak; occupancy " + percent(achieved) +
                        " achieved of " + percent(theoretical) + " theoretical";
  if (memory >= 60 && memory >= compute) {
    // Memory Throughput is the busiest memory unit's: name it.
    std::string unit = "DRAM";
    double top = dram;
    for (const char *name : {"L1/TEX Cache Throughput", "L2 Cache Throughput"}) {
      double v = launch.get(sol, name);
      if (v > top) {
        top = v;
        unit = std::string(name).substr(0, std::string(name).find(' '));
      }
    }
    b.limiter = "memory throughput (" + unit + ")";
  } else if (compute >= 60) {
    b.limiter = "compute throughput";
  } else if (achieved >= 0 && theoretical > 0 && achieved < 0.5 * theoretical) {
    // Warps the SM could hold but never gets: too few blocks for the GPU, or a long tail.
    b.limiter = "occupancy (grid too small)";
    figures += ", grid " + launch.grid;
  } else if (theoretical >= 0 && theoretical < 50 && by_registers >= 0 &&
             (by_shared < 0 || by_registers <= by_shared) &&
             (by_warps < 0 || by_registers < by_warps)) {
    b.limiter = "occupancy (registers)";
  } else if (theoretical >= 0 && theoretical < 50 && by_shared >= 0 &&
             (by_warps < 0 || by_shared < by_warps)) {
    b.limiter = "occupancy (shared memory)";
  } else {
    b.limiter = "latency (" + (b.top_stall.empty() ? std::string("unknown") : b.top_stall) + ")";
  }
  b.line = b.limiter + ": " + figures + "; " + stall;
  return b;
}

nlohmann::json to_json(const LaunchDetails &launch, const Bottleneck &bottleneck) {
  const std::string sol = "GPU Speed Of Light Throughput";
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto &[key, v] : launch.metrics) {
    metrics[key] = v;
  }
  return {{"id", launch.id},
          {"kernel", launch.kernel},
          {"config", launch.config},
          {"block", launch.block},
          {"grid", launch.grid},
          {"duration_ns", launch.get(sol, "Duration")},
          {"limiter", bottleneck.limiter},
          {"summary", bottleneck.line},
          {"top_stall", bottleneck.top_stall},
          {"top_stall_cycles", bottleneck.top_stall_cycles},
          {"ncu_top_rule", launch.top_rule},
          {"ncu_top_rule_speedup_pct", launch.top_rule_speedup},
          {"metrics", metrics}};
}

} // namespace kopt::profile
