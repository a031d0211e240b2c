#include "profile/ncu.hpp"

#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <regex>

namespace kopt::profile {

ProfileReport unprofiled(std::string reason) {
  ProfileReport report;
  report.profiled = false;
  report.reason = std::move(reason);
  return report;
}

const ProfiledConfig *ProfileReport::find(int config) const {
  for (const auto &c : configs) {
    if (c.config == config) {
      return &c;
    }
  }
  return nullptr;
}

std::vector<std::string> ncu_command(const std::vector<std::string> &harness,
                                     NcuLaunches launches) {
  std::vector<std::string> argv = {"ncu",
                                   "--csv",
                                   "--print-units",
                                   "base",
                                   "--metrics",
                                   "gpu__time_duration.sum",
                                   "--clock-control",
                                   "none",
                                   "--nvtx"};
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

std::vector<std::string> ProfiledConfig::kernel_names() const {
  std::vector<std::string> names;
  for (const auto &k : kernels) {
    names.push_back(k.kernel);
  }
  return names;
}

std::vector<KernelTime> ProfiledConfig::outside_regex() const {
  std::vector<KernelTime> outside;
  std::copy_if(kernels.begin(), kernels.end(), std::back_inserter(outside),
               [](const KernelTime &k) { return !k.family; });
  return outside;
}

namespace {

// The kernel's qualified name without return type, template arguments and parameters:
// "void kopt::harness::cuda::kopt_l2_flush_read<0>(const uint4 *, ...)" gives
// "kopt::harness::cuda::kopt_l2_flush_read".
std::string qualified_name(const std::string &kernel) {
  std::string name;
  int depth = 0;
  for (char c : kernel) {
    if (c == '(' && depth == 0) {
      break;
    }
    if (c == '<' || c == '>') {
      depth += c == '<' ? 1 : (depth > 0 ? -1 : 0);
    } else if (depth == 0) {
      name += c;
    }
  }
  std::string trimmed(util::trim(name));
  size_t space = trimmed.rfind(' ');
  return space == std::string::npos ? trimmed : trimmed.substr(space + 1);
}

// HIP runs memsets and some copies as rocclr blit kernels, so rocprofv3's kernel trace shows the
// harness's output poisoning (before each flush) and read-back (after the last run) as kernels.
bool is_runtime_blit(const std::string &kernel) { return kernel.rfind("__amd_rocclr_", 0) == 0; }

using Launches = std::vector<const KernelLaunch *>;

// Splits one config's launches into its timed runs; returns why they cannot be told apart, or "".
std::string split_runs(const Launches &launches, int runs_per_config, HarnessFlush flush,
                       std::vector<Launches> &runs) {
  size_t flushes = flush == HarnessFlush::outside
                       ? 0
                       : std::count_if(launches.begin(), launches.end(), [](const KernelLaunch *l) {
                           return is_harness_flush(l->kernel);
                         });
  if (flushes > 0) {
    // Only a profiler that sees the harness's flush (rocprofv3 traces everything; ncu when the
    // harness marked no profiler start) gets here. The flush starts each timed run, so what
    // precedes the first one is warm-up, and a candidate's extra "flush" shows as one too many.
    if (runs_per_config > 0 && flushes != static_cast<size_t>(runs_per_config)) {
      return std::to_string(flushes) +
             " launches of the harness's L2 flush (kopt_l2_flush_read), expected " +
             std::to_string(runs_per_config) + ", one per timed run";
    }
    // The harness marks each run's end (kopt_timed_end) after its stop event: what follows is
    // its own check and the next run's fills. A harness without the mark leaves none at all.
    bool marked = std::any_of(launches.begin(), launches.end(),
                              [](const KernelLaunch *l) { return is_harness_end(l->kernel); });
    std::vector<int> ends;
    for (const KernelLaunch *l : launches) {
      if (is_harness_flush(l->kernel)) {
        runs.emplace_back();
        ends.push_back(0);
      } else if (!runs.empty() && is_harness_end(l->kernel)) {
        ++ends.back();
      } else if (!runs.empty() && ends.back() == 0) {
        runs.back().push_back(l);
      }
    }
    for (size_t r = 0; marked && r < runs.size(); ++r) {
      if (ends[r] != 1) {
        return "timed run " + std::to_string(r + 1) + " has " + std::to_string(ends[r]) +
               " launches of the harness's end mark (kopt_timed_end), expected 1";
      }
    }
    // A run's trailing blits are the next run's poisoning (or the output's read-back): the
    // harness's, not the candidate's. A candidate's own trailing memset is left out with them.
    for (auto &run : runs) {
      while (!run.empty() && is_runtime_blit(run.back()->kernel)) {
        run.pop_back();
      }
    }
    return "";
  }
  if (runs_per_config <= 0) {
    for (const KernelLaunch *l : launches) {
      runs.push_back({l});
    }
    return "";
  }
  if (launches.size() % runs_per_config != 0) {
    return std::to_string(launches.size()) + " launches do not divide into " +
           std::to_string(runs_per_config) + " timed runs";
  }
  size_t per_run = launches.size() / runs_per_config;
  for (size_t i = 0; i < launches.size(); i += per_run) {
    runs.emplace_back(launches.begin() + i, launches.begin() + i + per_run);
  }
  return "";
}

// Assigns launches to configs in order: each launch of the family's kernels counts toward
// options.launches_per_config, the harness's kernels go with the next one. Returns why not.
std::string assign_in_order(const std::vector<KernelLaunch> &launches,
                            const std::vector<bool> &family, const ProfileOptions &options,
                            std::map<int, Launches> &configs) {
  std::vector<std::string> outside;
  size_t matching = 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    const std::string &kernel = launches[i].kernel;
    matching += family[i];
    bool harness = options.flush == HarnessFlush::inside &&
                   (is_harness_flush(kernel) || is_harness_end(kernel) || is_runtime_blit(kernel));
    if (!family[i] && !harness &&
        std::find(outside.begin(), outside.end(), kernel) == outside.end()) {
      outside.push_back(kernel);
    }
  }
  if (!outside.empty()) {
    return "kernels outside '" + options.kernel_regex + "' (" + util::join(outside, ", ") +
           ") ran, and without config_<index> ranges they cannot be attributed to configs";
  }
  int per_config = options.launches_per_config;
  if (per_config > 0 && matching % per_config != 0) {
    return std::to_string(matching) + " matching launches do not divide into " +
           std::to_string(per_config) + " per config";
  }
  Launches pending;
  size_t seen = 0;
  int index = 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    pending.push_back(&launches[i]);
    if (family[i]) {
      index = per_config > 0 ? static_cast<int>(seen / per_config) : 0;
      ++seen;
      Launches &config = configs[index];
      config.insert(config.end(), pending.begin(), pending.end());
      pending.clear();
    }
  }
  Launches &last = configs[index];
  last.insert(last.end(), pending.begin(), pending.end());
  return "";
}

} // namespace

bool is_harness_end(const std::string &kernel) {
  std::string name = qualified_name(kernel);
  return name == "kopt::harness::cuda::kopt_timed_end" ||
         name == "kopt::harness::hip::kopt_timed_end";
}

bool is_harness_flush(const std::string &kernel) {
  std::string name = qualified_name(kernel);
  return name == "kopt::harness::cuda::kopt_l2_flush_read" ||
         name == "kopt::harness::hip::kopt_l2_flush_read";
}

ProfileReport attribute_launches(const std::vector<KernelLaunch> &launches, bool by_range,
                                 const ProfileOptions &options, const std::string &source) {
  std::regex pattern;
  try {
    pattern = std::regex(options.kernel_regex, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    throw Error("kernel regex '" + options.kernel_regex + "': " + e.what());
  }
  std::vector<bool> family;
  std::vector<std::string> seen;
  for (const auto &launch : launches) {
    family.push_back(std::regex_search(launch.kernel, pattern));
    if (!family.back() && std::find(seen.begin(), seen.end(), launch.kernel) == seen.end()) {
      seen.push_back(launch.kernel);
    }
  }
  if (std::find(family.begin(), family.end(), true) == family.end()) {
    return unprofiled(source + ": no launch of a kernel matching '" + options.kernel_regex + "'" +
                      (seen.empty() ? "" : " (kernels seen: " + util::join(seen, ", ") + ")"));
  }
  std::map<int, Launches> assigned;
  if (by_range) {
    for (const auto &launch : launches) {
      int index = config_index_of_range(launch.range);
      if (index >= 0) {
        assigned[index].push_back(&launch);
      }
    }
  } else if (std::string why = assign_in_order(launches, family, options, assigned); !why.empty()) {
    return unprofiled(source + ": " + why);
  }
  if (assigned.empty()) {
    return unprofiled(source + ": no launch of a kernel matching '" + options.kernel_regex +
                      "' inside a config_<index> range");
  }
  ProfileReport report;
  for (const auto &[index, config_launches] : assigned) {
    std::string name = "config_" + std::to_string(index);
    std::vector<Launches> runs;
    if (std::string why = split_runs(config_launches, options.runs_per_config, options.flush, runs);
        !why.empty()) {
      return unprofiled(source + ": " + name + ": " + why);
    }
    ProfiledConfig config;
    config.config = index;
    config.range = by_range ? config_launches.front()->range : "";
    for (const Launches &run : runs) {
      double run_ns = 0;
      for (const KernelLaunch *launch : run) {
        run_ns += launch->ns;
        config.launches += 1;
        auto it = std::find_if(config.kernels.begin(), config.kernels.end(),
                               [&](const KernelTime &k) { return k.kernel == launch->kernel; });
        if (it == config.kernels.end()) {
          bool matches = std::regex_search(launch->kernel, pattern);
          it = config.kernels.insert(config.kernels.end(), {launch->kernel, 0, 0, matches});
        }
        it->launches += 1;
        it->ns += launch->ns;
      }
      config.run_ns.push_back(run_ns);
      config.total_ns += run_ns;
    }
    if (std::none_of(config.kernels.begin(), config.kernels.end(),
                     [](const KernelTime &k) { return k.family; })) {
      std::vector<std::string> names = config.kernel_names();
      return unprofiled(source + ": " + name + ": no launch of a kernel matching '" +
                        options.kernel_regex + "' in its timed runs (" +
                        (names.empty() ? "no kernel" : "kernels: " + util::join(names, ", ")) +
                        ")");
    }
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
