#include "profile/cupti_trace.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <algorithm>
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
  } else if (key == "running") {
    size_t space = value.find(' ');
    RunningKernel running;
    running.range = static_cast<int>(header_number(value.substr(0, space), where + ": running"));
    running.name = space == std::string_view::npos ? "?" : util::excerpt(value.substr(space + 1));
    trace.running.push_back(std::move(running));
  } else if (key == "kopt" && value.starts_with("cupti trace ")) {
    trace.version = static_cast<int>(header_number(value.substr(12), where + ": version"));
  } else if (key == "end") {
    trace.complete = true;
  }
  // Comments of later versions are left alone.
}

// The table's columns.
struct Columns {
  int range, kind, start, end, stream, name;
};

// A `range` row: range `r`'s span and the timer's stream.
void read_span(const std::vector<std::string> &row, const Columns &c, int r, int line,
               const std::string &where, CuptiTrace &trace) {
  RangeSpan &span = trace.spans[static_cast<size_t>(r)];
  if (span.line != 0) {
    throw Error(where + ": a second 'range' row for range " + std::to_string(r) +
                " (the first is line " + std::to_string(span.line) + ")");
  }
  span.start_ns = header_number(row[c.start], where + ": start_ns");
  span.stop_ns = header_number(row[c.end], where + ": end_ns");
  if (span.stop_ns < span.start_ns) {
    throw Error(where + ": end_ns: expected at least start_ns (" + std::to_string(span.start_ns) +
                "), got " + std::to_string(span.stop_ns));
  }
  span.stream = util::trim(row[c.stream]).empty() ? -1 : header_number(row[c.stream], where);
  span.line = line;
}

// An activity row: launched in range `r`, or outside every range (-1).
TracedActivity read_activity(const std::vector<std::string> &row, const Columns &c, int r, int line,
                             const std::string &where) {
  TracedActivity a;
  a.range = r;
  a.kind = row[c.kind];
  if (a.kind != "kernel" && a.kind != "memcpy" && a.kind != "memset") {
    throw Error(where + ": kind: expected kernel, memcpy, memset or range, got '" +
                util::excerpt(a.kind) + "'");
  }
  a.start_ns = header_number(row[c.start], where + ": start_ns");
  a.end_ns = header_number(row[c.end], where + ": end_ns");
  if (a.end_ns < a.start_ns) {
    throw Error(where + ": end_ns: expected at least start_ns (" + std::to_string(a.start_ns) +
                "), got " + std::to_string(a.end_ns));
  }
  a.stream = header_number(row[c.stream], where + ": stream");
  a.name = row[c.name];
  a.line = line;
  return a;
}

// The table's rows into `trace`: spans and activities.
void read_rows(const util::CsvTable &csv, CuptiTrace &trace) {
  Columns c{csv.column("range"),  csv.column("kind"),   csv.column("start_ns"),
            csv.column("end_ns"), csv.column("stream"), csv.column("name")};
  trace.spans.assign(static_cast<size_t>(trace.ranges), RangeSpan{});
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    const auto &row = csv.rows[i];
    std::string where = csv.where(i);
    bool outside = util::trim(row[c.range]) == "-";
    int64_t n = outside ? -1 : header_number(row[c.range], where + ": range");
    if (n >= trace.ranges) {
      throw Error(where + ": range: expected a range below " + std::to_string(trace.ranges) +
                  " (the '# ranges' line), got " + std::to_string(n));
    }
    int r = static_cast<int>(n);
    if (row[c.kind] != "range") {
      trace.activities.push_back(read_activity(row, c, r, csv.lines[i], where));
    } else if (outside) {
      throw Error(where + ": range: expected the number of the range this row spans, got '-'");
    } else {
      read_span(row, c, r, csv.lines[i], where, trace);
    }
  }
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
  read_rows(csv, trace);
  return trace;
}

namespace {

// Range r as the harness ran it: "timed run <n> of config_<c>".
std::string run_name(int range, int runs) {
  return "timed run " + std::to_string(range % runs + 1) + " of config_" +
         std::to_string(range / runs);
}

// An activity as a verdict names it: a kernel by its name, "a memcpy DtoD", "a memset".
std::string what(const TracedActivity &a) { return a.kind == "kernel" ? a.name : "a " + a.name; }

// A kernel the tracer found running when a range ended, as a refusal.
std::string running_reason(const CuptiTrace &trace, int runs, const std::string &source) {
  const RunningKernel &k = trace.running.front();
  return k.name + " ran during " + run_name(k.range, runs) +
         " but was launched outside it: it was still running when that run ended (" + source + ")";
}

// Why a trace of `runs` runs a range cannot be trusted at all, or "".
std::string untrusted(const CuptiTrace &trace, int runs, const std::string &source) {
  if (!trace.complete) {
    return "the CUPTI trace " + source +
           " is incomplete (no '# end' line): the harness ended before its exit handlers ran";
  }
  if (!trace.running.empty()) {
    return running_reason(trace, runs, source);
  }
  if (!trace.errors.empty()) {
    return "the CUPTI tracer failed (" + source + "): " + trace.errors.front();
  }
  if (!trace.anomalies.empty()) {
    return "the timed ranges in " + source +
           " are not the harness timer's (profiler start and stop are the harness's alone): " +
           trace.anomalies.front();
  }
  if (trace.version < 2) {
    return source + " is a version " + std::to_string(trace.version) +
           " trace, which holds no span of its timed ranges: work launched outside them that "
           "ran during one cannot be found (the tracer is older than kopt)";
  }
  if (trace.dropped > 0) {
    return "CUPTI dropped " + std::to_string(trace.dropped) + " activity records (" + source + ")";
  }
  for (size_t r = 0; r < trace.spans.size(); ++r) {
    if (trace.spans[r].line == 0) {
      return source + " has no 'range' row (the span) of timed range " + std::to_string(r);
    }
    if (r > 0 && trace.spans[r].start_ns < trace.spans[r - 1].stop_ns) {
      return source + ":" + std::to_string(trace.spans[r].line) + ": timed range " +
             std::to_string(r) + " begins before range " + std::to_string(r - 1) + " ends";
    }
  }
  return "";
}

// The first activity launched outside every range that ran during one, named with the run it
// ran in, or "". The harness's own work queued before a range on the timer's stream is not the
// range's: it ends before the range's first activity on that stream begins (the range's end
// when it launched none there).
std::string launched_outside(const CuptiTrace &trace, int runs, const std::string &source) {
  std::vector<int64_t> timer_first(trace.spans.size());
  for (size_t r = 0; r < trace.spans.size(); ++r) {
    timer_first[r] = trace.spans[r].stop_ns;
  }
  for (const TracedActivity &a : trace.activities) {
    const RangeSpan *span = a.range >= 0 ? &trace.spans[static_cast<size_t>(a.range)] : nullptr;
    if (span != nullptr && a.stream == span->stream) {
      int64_t &first = timer_first[static_cast<size_t>(a.range)];
      first = std::min(first, a.start_ns);
    }
  }
  for (const TracedActivity &a : trace.activities) {
    if (a.range >= 0) {
      continue;
    }
    // The spans follow each other: from the first that ends after `a` begins, while they begin
    // before it ends.
    auto it = std::partition_point(trace.spans.begin(), trace.spans.end(),
                                   [&](const RangeSpan &s) { return s.stop_ns <= a.start_ns; });
    for (; it != trace.spans.end() && it->start_ns < a.end_ns; ++it) {
      size_t r = static_cast<size_t>(it - trace.spans.begin());
      if (it->stream >= 0 && a.stream == it->stream && a.end_ns <= timer_first[r]) {
        continue; // queued before the range on the timer's stream: the harness's
      }
      return what(a) + " ran during " + run_name(static_cast<int>(r), runs) +
             " but was launched outside it (" + source + ":" + std::to_string(a.line) + ")";
    }
  }
  return "";
}

// The time at least one of `intervals` (start, end in ns) was running: overlapping activities
// (another stream, a programmatic dependent launch that starts during the kernel before it)
// count once.
double busy_ns(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double busy = 0;
  int64_t from = 0, to = 0;
  bool open = false;
  for (const auto &[start, end] : intervals) {
    if (open && start <= to) {
      to = std::max(to, end);
      continue;
    }
    busy += open ? static_cast<double>(to - from) : 0.0;
    from = start;
    to = end;
    open = true;
  }
  return busy + (open ? static_cast<double>(to - from) : 0.0);
}

} // namespace

ProfileReport attribute_cupti_trace(const CuptiTrace &trace, int configs,
                                    const ProfileOptions &options, const std::string &source) {
  int runs = std::max(options.runs_per_config, 1);
  if (std::string why = untrusted(trace, runs, source); !why.empty()) {
    return unprofiled(why);
  }
  if (trace.ranges != configs * runs) {
    return unprofiled(source + " has " + std::to_string(trace.ranges) + " timed ranges, expected " +
                      std::to_string(configs) + " configs x " + std::to_string(runs) +
                      " timed runs");
  }
  if (std::string why = launched_outside(trace, runs, source); !why.empty()) {
    return unprofiled(why);
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
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ran(static_cast<size_t>(trace.ranges));
  for (const TracedActivity &a : trace.activities) {
    if (a.range < 0) {
      continue;
    }
    ProfiledConfig &c = report.configs[static_cast<size_t>(a.range / runs)];
    double ns = static_cast<double>(a.end_ns - a.start_ns);
    ++c.launches;
    ran[static_cast<size_t>(a.range)].emplace_back(a.start_ns, a.end_ns);
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
  // A run's time: the time at least one of what its range launched ran (busy_ns).
  for (int r = 0; r < trace.ranges; ++r) {
    if (ran[static_cast<size_t>(r)].empty()) {
      return unprofiled(run_name(r, runs) + " launched no kernel, copy or set (" + source + ")");
    }
    ProfiledConfig &c = report.configs[static_cast<size_t>(r / runs)];
    double ns = busy_ns(std::move(ran[static_cast<size_t>(r)]));
    c.run_ns[static_cast<size_t>(r % runs)] = ns;
    c.total_ns += ns;
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

std::string running_kernel_refusal(const fs::path &path, int repeat) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return "";
  }
  try {
    CuptiTrace trace = parse_cupti_trace(util::read_file(path, util::Input::text), path.string());
    return trace.running.empty() ? "" : running_reason(trace, std::max(repeat, 1), path.string());
  } catch (const Error &) {
    return ""; // a trace cut off mid-line: the harness's own failure says more
  }
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
