#include "profile/cupti_trace.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <map>
#include <regex>

namespace kopt::profile {

namespace fs = std::filesystem;

namespace {

int64_t header_number(std::string_view value, const std::string &where) {
  int64_t n = util::parse_int(util::trim(value), where);
  if (n < 0) {
    throw Error(where + ": expected a count >= 0, got " + std::to_string(n));
  }
  return n;
}

// One `# key value` line of the trace's head into `trace`.
void read_comment(std::string_view line, const std::string &where, CuptiTrace &trace) {
  std::string_view text = util::trim(line.substr(1));
  size_t space = text.find(' ');
  std::string_view key = text.substr(0, space);
  std::string_view value = space == std::string_view::npos ? "" : text.substr(space + 1);
  if (key == "ranges") {
    int64_t n = header_number(value, where + ": ranges");
    if (n > 100000000) {
      throw Error(where + ": ranges: expected at most 100000000, got " + std::to_string(n));
    }
    trace.ranges = static_cast<int>(n);
  } else if (key == "calls") {
    trace.calls = header_number(value, where + ": calls");
  } else if (key == "dropped") {
    trace.dropped = header_number(value, where + ": dropped");
  } else if (key == "error") {
    trace.errors.push_back(util::excerpt(value, 300));
  } else if (key == "anomaly") {
    trace.anomalies.push_back(util::excerpt(value, 300));
  } else if (key == "end") {
    trace.complete = true;
  }
  // "kopt cupti trace 1" and comments of later versions are left alone.
}

} // namespace

CuptiTrace parse_cupti_trace(std::string_view text, const std::string &source) {
  CuptiTrace trace;
  // Comment lines become blank lines, which the CSV parser skips, so its line numbers hold.
  std::string table;
  table.reserve(text.size());
  int line_no = 0;
  bool ended = false;
  for (std::string_view rest = text; !rest.empty();) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    ++line_no;
    std::string where = source + ":" + std::to_string(line_no);
    if (ended && !util::trim(line).empty()) {
      throw Error(where + ": expected nothing after '# end'");
    }
    if (line.starts_with("#")) {
      read_comment(line, where, trace);
      ended = trace.complete;
      table += '\n';
    } else {
      table.append(line);
      table += '\n';
    }
  }
  util::CsvTable csv = util::parse_csv(table, source);
  if (csv.header.empty()) {
    if (trace.complete) {
      throw Error(source + ": expected the header line 'range,kind,start_ns,end_ns,stream,"
                           "correlation,name' before '# end'");
    }
    return trace; // cut off before its table: incomplete
  }
  int range = csv.column("range");
  int kind = csv.column("kind");
  int start = csv.column("start_ns");
  int end = csv.column("end_ns");
  int stream = csv.column("stream");
  int name = csv.column("name");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    const auto &row = csv.rows[r];
    std::string where = csv.where(r);
    TracedActivity a;
    a.range = static_cast<int>(header_number(row[range], where + ": range"));
    if (a.range >= trace.ranges) {
      throw Error(where + ": range: expected a range below " + std::to_string(trace.ranges) +
                  " (the '# ranges' line), got " + std::to_string(a.range));
    }
    a.kind = row[kind];
    if (a.kind != "kernel" && a.kind != "memcpy" && a.kind != "memset") {
      throw Error(where + ": kind: expected kernel, memcpy or memset, got '" +
                  util::excerpt(a.kind) + "'");
    }
    a.start_ns = header_number(row[start], where + ": start_ns");
    a.end_ns = header_number(row[end], where + ": end_ns");
    if (a.end_ns < a.start_ns) {
      throw Error(where + ": end_ns: expected at least start_ns (" + std::to_string(a.start_ns) +
                  "), got " + std::to_string(a.end_ns));
    }
    a.stream = header_number(row[stream], where + ": stream");
    a.name = row[name];
    a.line = csv.lines[r];
    trace.activities.push_back(std::move(a));
  }
  return trace;
}

namespace {

ProfileReport unprofiled(const std::string &reason) {
  ProfileReport report;
  report.profiled = false;
  report.reason = reason;
  return report;
}

} // namespace

ProfileReport attribute_cupti_trace(const CuptiTrace &trace, int configs,
                                    const ProfileOptions &options, const std::string &source) {
  if (!trace.complete) {
    return unprofiled("the CUPTI trace " + source +
                      " is incomplete (no '# end' line): the harness ended before its exit "
                      "handlers ran");
  }
  if (!trace.errors.empty()) {
    return unprofiled("the CUPTI tracer failed (" + source + "): " + trace.errors.front());
  }
  if (!trace.anomalies.empty()) {
    return unprofiled("the timed ranges in " + source +
                      " are not the harness timer's (profiler start and stop are the "
                      "harness's alone): " +
                      trace.anomalies.front());
  }
  if (trace.dropped > 0) {
    return unprofiled("CUPTI dropped " + std::to_string(trace.dropped) + " activity records (" +
                      source + ")");
  }
  int runs = std::max(options.runs_per_config, 1);
  if (trace.ranges != configs * runs) {
    return unprofiled(source + " has " + std::to_string(trace.ranges) + " timed ranges, expected " +
                      std::to_string(configs) + " configs x " + std::to_string(runs) +
                      " timed runs");
  }
  std::regex family(options.kernel_regex, std::regex::ECMAScript);
  ProfileReport report;
  report.configs.resize(static_cast<size_t>(configs));
  for (int i = 0; i < configs; ++i) {
    ProfiledConfig &c = report.configs[static_cast<size_t>(i)];
    c.config = i;
    c.range = "config_" + std::to_string(i);
    c.run_ns.assign(static_cast<size_t>(runs), 0.0);
  }
  std::vector<int> launches(static_cast<size_t>(trace.ranges), 0);
  for (const TracedActivity &a : trace.activities) {
    ProfiledConfig &c = report.configs[static_cast<size_t>(a.range / runs)];
    double ns = static_cast<double>(a.end_ns - a.start_ns);
    c.run_ns[static_cast<size_t>(a.range % runs)] += ns;
    c.total_ns += ns;
    ++c.launches;
    ++launches[static_cast<size_t>(a.range)];
    std::string name = a.kind == "kernel" ? a.name : "[" + a.name + "]";
    auto it = std::find_if(c.kernels.begin(), c.kernels.end(),
                           [&](const KernelTime &k) { return k.kernel == name; });
    if (it == c.kernels.end()) {
      bool matches = a.kind == "kernel" && std::regex_search(a.name, family);
      it = c.kernels.insert(c.kernels.end(), {name, 0, 0, matches});
    }
    ++it->launches;
    it->ns += ns;
  }
  for (int r = 0; r < trace.ranges; ++r) {
    if (launches[static_cast<size_t>(r)] == 0) {
      return unprofiled("timed run " + std::to_string(r % runs + 1) + " of config_" +
                        std::to_string(r / runs) + " launched no kernel, copy or set (" + source +
                        ")");
    }
  }
  for (const ProfiledConfig &c : report.configs) {
    if (std::none_of(c.kernels.begin(), c.kernels.end(),
                     [](const KernelTime &k) { return k.family; })) {
      return unprofiled("CUPTI saw no kernel matching '" + options.kernel_regex + "' in config_" +
                        std::to_string(c.config) + " (it ran " +
                        util::join(c.kernel_names(), ", ") + ")");
    }
  }
  return report;
}

ProfileReport read_cupti_output(const fs::path &path, int configs, const ProfileOptions &options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return unprofiled("the harness left no CUPTI trace at " + path.string() +
                      " (the tracer did not load, or the harness never reached its exit)");
  }
  return attribute_cupti_trace(
      parse_cupti_trace(util::read_file(path, util::Input::text), path.string()), configs, options,
      path.string());
}

void trace_with_cupti(util::Command &command, const fs::path &tracer, const fs::path &trace) {
  fs::remove(trace);
  command.env["CUDA_INJECTION64_PATH"] = tracer.string();
  command.env["KOPT_CUPTI_TRACE"] = trace.string();
}

ProfileReport read_cupti_runs(const fs::path &trace, int configs, const std::string &kernel_regex,
                              int repeat) {
  ProfileOptions options;
  options.kernel_regex = kernel_regex;
  options.runs_per_config = repeat;
  return read_cupti_output(trace, configs, options);
}

fs::path find_cupti_tracer() {
  const std::string name = "libkopt_cupti_trace.so";
  if (const char *env = std::getenv("KOPT_CUPTI_TRACER")) {
    std::error_code ec;
    return *env != '\0' && fs::is_regular_file(env, ec) ? fs::path(env) : fs::path();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  fs::path lib = exe.parent_path().parent_path() / "lib" / name;
  return fs::is_regular_file(lib, ec) ? lib : fs::path();
}

} // namespace kopt::profile
