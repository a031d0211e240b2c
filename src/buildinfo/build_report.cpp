#include "buildinfo/build_report.hpp"

#include "util/enum_names.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace kopt::buildinfo {

namespace fs = std::filesystem;

namespace {

bool is_object(const std::string &output) {
  auto ends = [&](const std::string &suffix) {
    return output.size() > suffix.size() &&
           output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".o") || ends(".obj");
}

double seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

std::string fmt(double value, int digits = 3) { return util::format_number(value, digits); }

// The candidate target folder of an object: "<dir>/candidate_01.dir" -> ("<...>candidate_01",
// "01"); empty when the object is not a candidate's.
// Paths are matched with string searches, not std::regex: its recursive matcher overflows the
// stack on a path of some 100 KB, and .ninja_log lines are not ours.
std::pair<std::string, std::string> candidate_of(const std::string &object) {
  for (size_t dir = object.find(".dir/"); dir != std::string::npos;
       dir = object.find(".dir/", dir + 1)) {
    size_t slash = object.rfind('/', dir == 0 ? 0 : dir - 1);
    size_t start = slash == std::string::npos || slash >= dir ? 0 : slash + 1;
    std::string segment = object.substr(start, dir - start); // "[^/]*candidate_<id>"
    size_t prefix = segment.rfind("candidate_");
    if (prefix == std::string::npos) {
      continue;
    }
    std::string id = segment.substr(prefix + 10);
    if (!id.empty() && id.find('.') == std::string::npos) {
      return {segment, id};
    }
  }
  return {"", ""};
}

// The family folder of a candidate's generated file: ".../<family>/gen/<id>/..."; "" if none.
std::string generated_family(const std::string &output, const std::string &id) {
  const std::string marker = "/gen/" + id + "/";
  for (size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
    size_t slash = at == 0 ? std::string::npos : output.rfind('/', at - 1);
    if (slash != std::string::npos && slash + 1 < at) {
      return output.substr(slash + 1, at - slash - 1);
    }
  }
  return "";
}

// The instance of an object ".../instances/<name>.<ext>.o" (or .obj); "" for other objects.
std::string instance_of(const std::string &object) {
  std::string_view rest(object);
  if (rest.size() > 4 && rest.substr(rest.size() - 4) == ".obj") {
    rest.remove_suffix(4);
  } else if (rest.size() > 2 && rest.substr(rest.size() - 2) == ".o") {
    rest.remove_suffix(2);
  } else {
    return "";
  }
  size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == rest.size() ||
      !std::all_of(rest.begin() + static_cast<std::ptrdiff_t>(dot) + 1, rest.end(),
                   [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; })) {
    return "";
  }
  rest = rest.substr(0, dot);
  const std::string_view marker = "/instances/";
  size_t at = rest.rfind(marker);
  if (at == std::string_view::npos) {
    return "";
  }
  std::string_view name = rest.substr(at + marker.size());
  return name.empty() || name.find('/') != std::string_view::npos ? "" : std::string(name);
}

} // namespace

NinjaLog parse_ninja_log(const std::string &text, const std::string &file) {
  NinjaLog log;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (number == 1) {
      const std::string header = "# ninja log v";
      std::string digits =
          line.substr(0, header.size()) == header ? line.substr(header.size()) : "";
      if (!util::is_digits(digits) || digits.size() > 3) {
        throw Error(file + ":1: header: expected '# ninja log v<N>', got '" + util::excerpt(line) +
                    "'");
      }
      log.version = std::stoi(digits);
      if (log.version < 5 || log.version > 7) {
        throw Error(file + ":1: version: expected a ninja log version from 5 to 7, got " +
                    std::to_string(log.version));
      }
      continue;
    }
    if (line.empty()) {
      continue;
    }
    std::string where = file + ":" + std::to_string(number);
    std::vector<std::string> fields = util::split(line, '\t');
    if (fields.size() != 5) {
      throw Error(where + ": expected 5 tab-separated fields (start, end, mtime, output, hash), " +
                  "got " + std::to_string(fields.size()));
    }
    LogEntry entry;
    entry.start_ms = util::parse_int(fields[0], where + ": start");
    entry.end_ms = util::parse_int(fields[1], where + ": end");
    entry.mtime = util::parse_int(fields[2], where + ": mtime");
    entry.output = fields[3];
    entry.hash = fields[4];
    entry.line = number;
    if (entry.end_ms < entry.start_ms) {
      throw Error(where + ": end: " + fields[1] + " is before start " + fields[0]);
    }
    if (entry.output.empty()) {
      throw Error(where + ": output: expected a path, got nothing");
    }
    if (!util::is_hex(entry.hash)) {
      throw Error(where + ": hash: expected a hexadecimal command hash, got '" + entry.hash + "'");
    }
    log.entries.push_back(std::move(entry));
  }
  if (number == 0) {
    throw Error(file + ":1: header: expected '# ninja log v<N>', got an empty file");
  }
  return log;
}

std::vector<LogEntry> latest_run(const NinjaLog &log) {
  size_t begin = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < log.entries.size(); ++i) {
    const LogEntry &entry = log.entries[i];
    bool new_run =
        i > begin && (entry.end_ms < log.entries[i - 1].end_ms || seen.count(entry.output) != 0);
    if (new_run) {
      begin = i;
      seen.clear();
    }
    seen.insert(entry.output);
  }
  return {log.entries.begin() + static_cast<std::ptrdiff_t>(begin), log.entries.end()};
}

std::vector<LogEntry> latest_compile_run(const NinjaLog &log) {
  NinjaLog rest = log;
  while (!rest.entries.empty()) {
    std::vector<LogEntry> run = latest_run(rest);
    bool compiled = std::any_of(run.begin(), run.end(), [](const LogEntry &e) {
      std::string ext = fs::path(e.output).extension().string();
      return ext == ".o" || ext == ".obj";
    });
    if (compiled) {
      return run;
    }
    rest.entries.resize(rest.entries.size() - run.size());
  }
  return latest_run(log);
}

std::vector<LoggedCommand> group_commands(const std::vector<LogEntry> &run) {
  std::vector<LoggedCommand> commands;
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> index;
  for (const auto &entry : run) {
    auto key = std::make_tuple(entry.hash, entry.start_ms, entry.end_ms);
    auto found = index.find(key);
    if (found != index.end()) {
      commands[found->second].outputs.push_back(entry.output);
      continue;
    }
    index[key] = commands.size();
    commands.push_back({{entry.output}, entry.hash, entry.start_ms, entry.end_ms});
  }
  return commands;
}

CacheResult parse_ccache_stats_log(const std::string &text) {
  std::istringstream lines(text);
  std::string line;
  CacheResult result = CacheResult::unknown;
  while (std::getline(lines, line)) {
    std::string word(util::trim(line));
    if (word.empty() || word[0] == '#') {
      continue;
    }
    // The log is appended once per ccache call; the newest call decides.
    if (word == "direct_cache_hit") {
      result = CacheResult::direct_hit;
    } else if (word == "preprocessed_cache_hit") {
      result = CacheResult::preprocessed_hit;
    } else if (word == "cache_miss") {
      result = CacheResult::miss;
    } else if (result == CacheResult::unknown && word != "direct_cache_miss" &&
               word != "preprocessed_cache_miss" && word.rfind("local_storage", 0) != 0 &&
               word.rfind("remote_storage", 0) != 0) {
      // Any other counter (unsupported_compiler_option, called_for_link, ...) means ccache
      // passed the compile through without caching it.
      result = CacheResult::uncacheable;
    }
  }
  return result;
}

std::string to_string(CacheResult result) {
  static constexpr util::EnumName<CacheResult> kNames[] = {
      {CacheResult::direct_hit, "direct_hit"},
      {CacheResult::preprocessed_hit, "preprocessed_hit"},
      {CacheResult::miss, "miss"},
      {CacheResult::uncacheable, "uncacheable"}};
  return util::name_of(kNames, result, "unknown");
}

namespace {

// A candidate's own objects name its family through their generated folder
// (<family>/gen/<id>/...); its other objects (the harness) belong to the same family.
std::map<std::string, std::string> family_of_targets(const std::vector<LoggedCommand> &commands) {
  std::map<std::string, std::string> family_of_target;
  for (const auto &command : commands) {
    for (const auto &output : command.outputs) {
      auto [target, id] = candidate_of(output);
      std::string family = target.empty() ? "" : generated_family(output, id);
      if (!family.empty()) {
        family_of_target[target] = family;
      }
    }
  }
  return family_of_target;
}

// The family a command builds for, or "".
std::string family_of(const LoggedCommand &command,
                      const std::map<std::string, std::string> &family_of_target) {
  std::string family;
  for (const auto &output : command.outputs) {
    // Objects name their target folder; the link's output is the target's own name.
    std::string target = candidate_of(output).first;
    auto found = family_of_target.find(target.empty() ? fs::path(output).stem().string() : target);
    if (found != family_of_target.end()) {
      family = found->second;
    }
  }
  return family;
}

// Counts one compiled object in the report's totals and its family's.
void count_tu(const TuCompile &tu, BuildReport &report,
              std::map<std::string, FamilyCompile> &families) {
  report.tu_sum_s += tu.seconds;
  bool hit = tu.cache == CacheResult::direct_hit || tu.cache == CacheResult::preprocessed_hit;
  report.hits += hit ? 1 : 0;
  report.direct_hits += tu.cache == CacheResult::direct_hit ? 1 : 0;
  report.misses += tu.cache == CacheResult::miss ? 1 : 0;
  if (!tu.family.empty()) {
    FamilyCompile &f = families[tu.family];
    f.name = tu.family;
    ++f.tus;
    f.compile_s += tu.seconds;
    f.hits += hit ? 1 : 0;
    f.misses += tu.cache == CacheResult::miss ? 1 : 0;
  }
}

} // namespace

BuildReport make_report(const NinjaLog &log, int jobs,
                        const std::function<CacheResult(const std::string &)> &cache_of) {
  if (jobs < 1) {
    throw Error("build-report: jobs: expected at least 1, got " + std::to_string(jobs));
  }
  BuildReport report;
  report.log_version = log.version;
  report.jobs = jobs;
  std::vector<LoggedCommand> commands = group_commands(latest_run(log));
  report.commands = static_cast<int>(commands.size());
  if (commands.empty()) {
    return report;
  }
  const std::map<std::string, std::string> family_of_target = family_of_targets(commands);
  int64_t first = commands.front().start_ms;
  int64_t last = commands.front().end_ms;
  std::map<std::string, std::pair<int64_t, int64_t>> family_span;
  std::map<std::string, FamilyCompile> families;
  for (const auto &command : commands) {
    first = std::min(first, command.start_ms);
    last = std::max(last, command.end_ms);
    std::string family = family_of(command, family_of_target);
    if (!family.empty()) {
      auto [span, inserted] = family_span.try_emplace(family, command.start_ms, command.end_ms);
      if (!inserted) {
        span->second.first = std::min(span->second.first, command.start_ms);
        span->second.second = std::max(span->second.second, command.end_ms);
      }
    }
    const std::string &object = command.outputs.front();
    if (!is_object(object)) {
      continue;
    }
    TuCompile tu;
    tu.object = object;
    tu.family = family;
    tu.candidate = candidate_of(object).second;
    tu.instance = instance_of(object);
    tu.seconds = seconds(command.end_ms - command.start_ms);
    tu.cache = cache_of(object);
    count_tu(tu, report, families);
    report.tus.push_back(std::move(tu));
  }
  report.wall_s = seconds(last - first);
  report.efficiency = report.wall_s > 0 ? report.tu_sum_s / (report.wall_s * jobs) : 0;
  std::stable_sort(report.tus.begin(), report.tus.end(),
                   [](const TuCompile &a, const TuCompile &b) { return a.seconds > b.seconds; });
  for (auto &[name, f] : families) {
    f.wall_s = seconds(family_span[name].second - family_span[name].first);
    report.families.push_back(f);
  }
  return report;
}

BuildReport read_build_report(const fs::path &build_dir, int jobs, Run run) {
  fs::path file = build_dir / ".ninja_log";
  std::error_code ec;
  if (!fs::exists(file, ec) && !fs::is_symlink(file, ec)) {
    throw Error(file.string() + ": no ninja log: build the folder with the Ninja generator first");
  }
  NinjaLog log = parse_ninja_log(util::read_file(file), file.string());
  if (run == Run::newest_compile) {
    log.entries = latest_compile_run(log);
  }
  return make_report(log, jobs, [&](const std::string &object) {
    fs::path path(object);
    fs::path stats = (path.is_absolute() ? path : build_dir / path);
    stats += ".kopt-ccache";
    if (!fs::is_regular_file(stats)) {
      return CacheResult::unknown;
    }
    // A stats log older than its object belongs to an earlier compile made without ccache.
    std::error_code ec;
    fs::path object_path = path.is_absolute() ? path : build_dir / path;
    auto object_time = fs::last_write_time(object_path, ec);
    if (!ec && fs::last_write_time(stats) + std::chrono::seconds(2) < object_time) {
      return CacheResult::unknown;
    }
    return parse_ccache_stats_log(util::read_file(stats));
  });
}

std::string format_report(const BuildReport &report, int top) {
  std::ostringstream out;
  out << "newest run (.ninja_log v" << report.log_version << "): " << report.commands
      << " commands, " << report.tus.size() << " TUs, wall " << fmt(report.wall_s) << " s\n";
  out << "TU compile time: " << fmt(report.tu_sum_s) << " s; parallel efficiency "
      << fmt(100 * report.efficiency) << "% of " << report.jobs << " jobs\n";
  out << "ccache: " << report.hits << " hits (" << report.direct_hits << " direct), "
      << report.misses << " misses\n";
  if (!report.tus.empty()) {
    out << "slowest TUs:\n";
  }
  for (size_t i = 0; i < report.tus.size() && static_cast<int>(i) < top; ++i) {
    const TuCompile &tu = report.tus[i];
    out << "  " << fmt(tu.seconds) << " s  " << tu.object;
    if (tu.cache != CacheResult::unknown) {
      out << "  (" << to_string(tu.cache) << ")";
    }
    out << "\n";
  }
  for (const auto &f : report.families) {
    out << "family " << f.name << ": " << f.tus << " TUs, compile " << fmt(f.compile_s)
        << " s, wall " << fmt(f.wall_s) << " s, " << f.hits << " hits, " << f.misses << " misses\n";
  }
  return out.str();
}

// A family's row: each field under its own name.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FamilyCompile, name, tus, compile_s, wall_s, hits, misses)

nlohmann::json to_json(const BuildReport &report) {
  nlohmann::json tus = nlohmann::json::array();
  for (const auto &tu : report.tus) {
    tus.push_back({{"object", tu.object},
                   {"family", tu.family},
                   {"candidate", tu.candidate},
                   {"instance", tu.instance},
                   {"seconds", tu.seconds},
                   {"ccache", to_string(tu.cache)}});
  }
  return {{"log_version", report.log_version},
          {"jobs", report.jobs},
          {"commands", report.commands},
          {"wall_s", report.wall_s},
          {"tu_sum_s", report.tu_sum_s},
          {"efficiency", report.efficiency},
          {"ccache",
           {{"hits", report.hits}, {"direct_hits", report.direct_hits}, {"misses", report.misses}}},
          {"tus", tus},
          {"families", report.families}};
}

BudgetCheck check_budget(const BuildReport &report, const std::string &family, double budget_s,
                         int top) {
  BudgetCheck check;
  auto found = std::find_if(report.families.begin(), report.families.end(),
                            [&](const FamilyCompile &f) { return f.name == family; });
  if (found == report.families.end() || found->wall_s <= budget_s) {
    return check;
  }
  check.ok = false;
  std::ostringstream out;
  out << "family " << family << ": the newest build took " << fmt(found->wall_s)
      << " s, over its compile budget of " << fmt(budget_s)
      << " s (family.json compile_budget_s); slowest TUs:\n";
  int shown = 0;
  for (const auto &tu : report.tus) {
    if (tu.family == family && shown++ < top) {
      out << "  " << fmt(tu.seconds) << " s  " << tu.object << "\n";
    }
  }
  check.message = out.str();
  return check;
}

} // namespace kopt::buildinfo
