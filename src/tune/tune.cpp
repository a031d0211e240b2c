#include "tune/tune.hpp"

#include "profile/confined.hpp"
#include "profile/cupti_trace.hpp"
#include "profile/harness_csv.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"
#include "util/interrupt.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>

namespace kopt::tune {

namespace fs = std::filesystem;

namespace {

std::string key(const std::vector<std::string> &values) {
  std::vector<std::string> trimmed;
  for (const auto &v : values) {
    trimmed.emplace_back(util::trim(v));
  }
  return util::join(trimmed, ",");
}

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", us);
  return text;
}

std::string quoted(const std::string &text) { return text.empty() ? "(none)" : "'" + text + "'"; }

// full.csv's header for a configs file's columns.
std::vector<std::string> full_header(const std::vector<std::string> &config_columns) {
  std::vector<std::string> header = config_columns;
  header.insert(header.end(), heuristic::kResultColumns.begin(), heuristic::kResultColumns.end());
  header.insert(header.end(), kOriginColumns.begin(), kOriginColumns.end());
  return header;
}

// The origin of row `i` of a full.csv in the current format.
profile::Conditions origin_of(const util::CsvTable &table, size_t i) {
  const auto &row = table.rows[i];
  auto field = [&](const char *name) {
    return std::string(util::trim(row[static_cast<size_t>(table.column(name))]));
  };
  auto number = [&](const char *name) {
    std::string text = field(name);
    return text.empty() ? 0 : static_cast<int>(util::parse_int(text, table.where(i) + ": " + name));
  };
  return {field("hash"),     field("device"),  field("driver"),
          field("profiler"), number("warmup"), number("repeat")};
}

// The rows of full.csv, each widened to the current header (rows of an older full.csv, which
// recorded no origin, get empty origin fields), and whether the file needs rewriting to it.
struct FullRows {
  util::CsvTable table;
  bool has_origin = true;
};

FullRows read_full(const fs::path &file, const std::vector<std::string> &config_columns) {
  FullRows full;
  full.table = util::read_csv(file);
  std::vector<std::string> header = full_header(config_columns);
  std::vector<std::string> old_header(header.begin(),
                                      header.end() - static_cast<long>(kOriginColumns.size()));
  if (full.table.header == old_header) {
    full.has_origin = false;
    for (auto &row : full.table.rows) {
      row.resize(header.size());
    }
    full.table.header = header;
  } else if (full.table.header != header) {
    throw Error(file.string() + ":1: expected the columns " + util::join(header, ",") + ", got " +
                util::join(full.table.header, ",") + " (another configs file? move it away)");
  }
  return full;
}

std::string origin_line(const std::vector<std::string> &values, const std::string &kernel,
                        const profile::HarnessRow &row, const profile::Conditions &origin,
                        const profile::HarnessDevice &device) {
  std::vector<std::string> fields = values;
  fields.insert(fields.end(),
                {kernel, format_us(row.us), row.err ? util::format_number(*row.err, 9) : "",
                 origin.hash, origin.device, device.arch,
                 device.arch.empty() ? "" : std::to_string(device.compute_units), origin.driver,
                 origin.profiler, std::to_string(origin.warmup), std::to_string(origin.repeat)});
  return util::csv_line(fields);
}

// The kernels to tune: --kernels, else every instance; a name that is no instance is an error
// with the nearest one.
std::vector<std::string> kernels_to_tune(const spec::Family &family, const TuneOptions &options) {
  std::vector<std::string> kernels = options.kernels;
  if (kernels.empty()) {
    for (const auto &instance : family.instances) {
      kernels.push_back(instance.name);
    }
  }
  for (const auto &k : kernels) {
    if (!family.find_instance(k)) {
      std::vector<std::string> names;
      for (const auto &instance : family.instances) {
        names.push_back(instance.name);
      }
      std::string hint = util::nearest(k, names);
      throw Error("tune: --kernels: '" + k + "' is not an instance of " + family.file.string() +
                  (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
    }
  }
  return kernels;
}

// Rows of the tuned kernels measured otherwise than this run would are dropped first, so that
// full.csv never holds two measurements of one kernel on one shape. Returns the (kernel, shape)
// pairs full.csv already holds for this run's conditions.
std::set<std::pair<std::string, std::string>>
keep_current_rows(const std::vector<std::string> &config_columns,
                  const std::vector<std::string> &kernels, const profile::Conditions &now,
                  TuneReport &report) {
  std::vector<std::string> header = full_header(config_columns);
  std::set<std::string> tuned_kernels(kernels.begin(), kernels.end());
  std::set<std::pair<std::string, std::string>> done;
  size_t columns = config_columns.size();
  if (!fs::exists(report.full_csv)) {
    util::append_line(report.full_csv, util::csv_line(header));
    return done;
  }
  FullRows full = read_full(report.full_csv, config_columns);
  std::string text = util::csv_line(header) + "\n";
  for (size_t i = 0; i < full.table.rows.size(); ++i) {
    const auto &row = full.table.rows[i];
    std::string kernel(util::trim(row[columns]));
    std::string reason = profile::stale_reason(origin_of(full.table, i), now);
    if (tuned_kernels.count(kernel) && !reason.empty()) {
      ++report.stale[reason];
      continue;
    }
    if (tuned_kernels.count(kernel)) {
      done.emplace(kernel, key(std::vector<std::string>(row.begin(), row.begin() + columns)));
    }
    text += util::csv_line(row) + "\n";
  }
  if (!report.stale.empty() || !full.has_origin) {
    util::write_file_atomic(report.full_csv, text);
  }
  return done;
}

// What every chunk of one tune run shares.
struct TuneRun {
  const spec::Family &family;
  const spec::Layout &layout;
  const TuneOptions &options;
  util::ProcessRunner &runner;
  const profile::RunSetup &setup;
  std::ostream &log;
  util::Progress &progress;
  const util::CsvTable &configs;
  fs::path harness;
  fs::path work;           ///< the chunks' configs, results and logs
  profile::Conditions now; ///< what this run measures under (its warmup and repeat too)
  bool golden = false;     ///< compare against the golden (the family's own configs)
  fs::path tracer;         ///< the CUPTI tracer that times each run; empty: the harness's timer
};

// Each row's time from the CUPTI trace of its chunk: the median of its timed runs, each the sum
// of what its range launched. Returns why the trace cannot time the rows ("" when it did).
std::string use_trace(const TuneRun &run, const fs::path &trace,
                      std::vector<profile::HarnessRow> &rows) {
  profile::ProfileReport report = profile::read_cupti_runs(trace, static_cast<int>(rows.size()),
                                                           run.family.kernel_regex, run.now.repeat);
  if (!report.profiled) {
    return report.reason;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> us;
    for (double ns : report.configs[i].run_ns) {
      us.push_back(ns / 1000.0);
    }
    rows[i].samples = us;
    rows[i].us = util::median(us);
  }
  return "";
}

// Runs `kernel` on configs pending[start, end) (chunk number `index`) and appends the rows it
// measured to full.csv; a failed or unreadable run is a failure of that chunk only.
void run_chunk(const TuneRun &run, const std::string &kernel, const std::vector<size_t> &pending,
               size_t start, size_t end, size_t index, TuneReport &report) {
  std::string text = util::csv_line(run.configs.header) + "\n";
  for (size_t i = start; i < end; ++i) {
    text += util::csv_line(run.configs.rows[pending[i]]) + "\n";
  }
  std::string stem = kernel + "." + std::to_string(index);
  fs::path chunk_configs = run.work / (stem + ".configs.csv");
  fs::path out = run.work / (stem + ".results.csv");
  util::write_file_atomic(chunk_configs, text);
  fs::remove(out);
  kopt::harness::Options args;
  args.mode = kopt::harness::Mode::benchmark;
  args.configs = chunk_configs.string();
  args.kernel = kernel;
  args.out = out.string();
  args.warmup = run.now.warmup;
  args.repeat = run.now.repeat;
  if (run.golden) {
    args.golden = run.layout.golden().string();
  }
  util::Command command;
  command.argv = profile::harness_argv(run.harness, args);
  command.timeout_s = run.family.timeout_s;
  command.env = run.setup.env;
  fs::path trace = run.work / (stem + ".cupti_trace.csv");
  if (!run.tracer.empty()) {
    profile::trace_with_cupti(command, run.tracer, trace);
  }
  profile::confine_harness(command, {run.work}, run.family);
  std::string what = kernel + " on configs " + std::to_string(start + 1) + "-" +
                     std::to_string(end) + " of " + std::to_string(pending.size());
  run.progress.starting("tune: " + what);
  util::ProcessResult result = run.runner.run(command);
  util::write_file_atomic(run.work / (stem + ".log"),
                          "--- stdout\n" + result.out + "--- stderr\n" + result.err);
  std::string printed = profile::harness_hash(result.out);
  const std::string &id = run.options.candidate;
  if (printed != run.now.hash) {
    throw Error("tune: " + run.harness.string() + " printed hash '" + printed +
                "', but candidate " + id + "'s sources hash to " + run.now.hash +
                ": the binary is stale (build target candidate_" + id + ", or give --build-dir)");
  }
  std::vector<profile::HarnessRow> rows;
  if (!result.ok()) {
    report.failures.push_back(what + ": harness " + result.describe(run.family.timeout_s) +
                              " (log: " + (run.work / (stem + ".log")).string() + ")");
    run.progress.note("tune: " + report.failures.back());
    run.progress.advance(end - start, "tune: " + what + ": failed");
    return;
  }
  try {
    rows = profile::read_harness_results(out, run.configs.header, run.family.impl);
    if (!run.tracer.empty()) {
      if (std::string why = use_trace(run, trace, rows); !why.empty()) {
        throw Error("the CUPTI trace cannot time these rows: " + why);
      }
    }
  } catch (const Error &e) {
    report.failures.push_back(what + ": " + e.what());
    run.progress.note("tune: " + report.failures.back());
    run.progress.advance(end - start, "tune: " + what + ": failed");
    return;
  }
  profile::HarnessDevice device = profile::harness_device(result.out);
  for (const auto &row : rows) {
    util::append_line(report.full_csv, origin_line(row.values, row.kernel, row, run.now, device));
    ++report.measured;
  }
  run.progress.advance(end - start, "tune: " + what + ": " + std::to_string(rows.size()) + " rows");
}

// Each kernel on the shapes full.csv lacks, `chunk` configs per harness run.
void run_kernels(const TuneRun &run, const std::vector<std::string> &kernels,
                 const std::set<std::pair<std::string, std::string>> &done, size_t chunk,
                 TuneReport &report) {
  std::vector<std::vector<size_t>> pending(kernels.size()); // per kernel, the configs to run
  size_t rows = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (size_t i = 0; i < run.configs.rows.size(); ++i) {
      if (done.count({kernels[k], key(run.configs.rows[i])})) {
        ++report.reused;
      } else {
        pending[k].push_back(i);
      }
    }
    rows += pending[k].size();
  }
  run.progress.begin("tune: " + std::to_string(rows) + " rows to measure (" +
                         std::to_string(kernels.size()) + " kernels), " +
                         std::to_string(report.reused) + " reused",
                     rows);
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (size_t start = 0; start < pending[k].size(); start += chunk) {
      run_chunk(run, kernels[k], pending[k], start, std::min(pending[k].size(), start + chunk),
                start / chunk, report);
    }
  }
  run.progress.end();
}

// tuned.csv from all of full.csv: the fastest kernel per shape, on the device full.csv names.
void write_tuned(const spec::Family &family, const TuneOptions &options, TuneReport &report) {
  util::CsvTable full = util::read_csv(report.full_csv);
  profile::HarnessDevice device = table_device(full);
  report.arch = device.arch.empty() ? family.arch : device.arch;
  report.compute_units = device.compute_units;
  heuristic::ReadOptions read;
  read.ties = options.ties;
  heuristic::Results results = heuristic::parse_results(full, read);
  std::string table = tuned_table(results, family, {report.arch, report.compute_units});
  util::write_file_atomic(report.tuned_csv, table);
  report.shapes = static_cast<size_t>(std::count(table.begin(), table.end(), '\n')) - 1;
}

} // namespace

fs::path tune_dir(const spec::Layout &layout, const std::string &id) {
  return layout.root / "tune" / id;
}

TuneReport tune(const spec::Family &family, const spec::Layout &layout, const TuneOptions &options,
                util::ProcessRunner &runner, const profile::RunSetup &setup, std::ostream &log,
                util::Progress &progress) {
  TuneReport report;
  fs::path dir = tune_dir(layout, options.candidate);
  util::FileLock lock(layout.lock("tune-" + options.candidate), &log);
  report.full_csv = dir / "full.csv";
  report.tuned_csv = dir / "tuned.csv";
  fs::path configs_file = options.configs.empty() ? family.configs : options.configs;
  util::CsvTable configs = util::read_csv(configs_file);
  for (const auto &column : family.dispatch) {
    configs.column(column); // throws naming the file and the missing column
  }
  std::vector<std::string> kernels = kernels_to_tune(family, options);
  fs::path harness = layout.harness(options.candidate);
  if (!fs::exists(harness)) {
    throw Error("tune: no harness binary at " + harness.string() + " (build target candidate_" +
                options.candidate + " first, or give --build-dir)");
  }
  bool host = family.backend == spec::Backend::host;
  int warmup = options.warmup >= 0 ? options.warmup : family.warmup;
  int repeat = options.repeat >= 0 ? options.repeat : family.repeat;
  // A CUDA family's rows are timed by the CUPTI tracer where kopt has it (as its benchmarks
  // are), unless the setup asks for ncu; the harness's own timer otherwise.
  fs::path tracer;
  if (family.backend == spec::Backend::cuda && setup.profiler != "ncu") {
    tracer = profile::find_cupti_tracer();
  }
  std::string timer = host ? "chrono" : tracer.empty() ? "events" : "cupti";
  profile::Conditions now{options.hash, host ? profile::host_cpu_model() : setup.device,
                          setup.driver, timer,
                          warmup,       repeat};
  std::set<std::pair<std::string, std::string>> done =
      keep_current_rows(configs.header, kernels, now, report);
  bool golden = fs::exists(layout.golden()) && fs::equivalent(configs_file, family.configs);
  TuneRun run{family,  layout,  options,      runner, setup,  log,   progress,
              configs, harness, dir / "work", now,    golden, tracer};
  fs::create_directories(run.work);
  try {
    run_kernels(run, kernels, done, std::max<size_t>(options.chunk, 1), report);
  } catch (const util::Interrupted &e) {
    throw util::Interrupted(
        e.signal(), "tune of candidate " + options.candidate + ": " +
                        std::to_string(report.measured) + " rows measured and kept in " +
                        report.full_csv.string() + " (the same command resumes): " + e.what());
  }
  write_tuned(family, options, report);
  return report;
}

profile::HarnessDevice table_device(const util::CsvTable &full) {
  int device = full.find_column("device");
  int arch = full.find_column("arch");
  int units = full.find_column("compute_units");
  if (device < 0 || arch < 0 || units < 0) {
    return {};
  }
  profile::HarnessDevice first;
  std::string first_name;
  auto describe = [](const std::string &name, const profile::HarnessDevice &d) {
    return quoted(name) + " (" + (d.arch.empty() ? "arch unknown" : d.arch) + ", " +
           std::to_string(d.compute_units) + " compute units)";
  };
  for (size_t i = 0; i < full.rows.size(); ++i) {
    const auto &row = full.rows[i];
    std::string name(util::trim(row[static_cast<size_t>(device)]));
    std::string units_text(util::trim(row[static_cast<size_t>(units)]));
    profile::HarnessDevice d{
        std::string(util::trim(row[static_cast<size_t>(arch)])),
        units_text.empty() ? 0 : util::parse_int(units_text, full.where(i) + ": compute_units")};
    if (i == 0) {
      first = d;
      first_name = name;
      continue;
    }
    if (name != first_name || d.arch != first.arch || d.compute_units != first.compute_units) {
      throw Error(full.source + ": rows measured on two devices: " + describe(first_name, first) +
                  " (line " + std::to_string(full.lines[0]) + ") and " + describe(name, d) +
                  " (line " + std::to_string(full.lines[i]) +
                  "); a tuned table is for one device: tune every kernel on one (rows measured "
                  "on another are measured again)");
    }
  }
  return first;
}

namespace {

// The instance index of kernel `name` in family.json (the count when it is none).
size_t instance_index(const spec::Family &family, const std::string &name) {
  const spec::Instance *instance = family.find_instance(name);
  return instance ? static_cast<size_t>(instance - family.instances.data())
                  : family.instances.size();
}

// tuned_table of a family without M, N and K: its config columns, then the choice.
std::string shapes_table(const heuristic::Results &results, const spec::Family &family) {
  std::vector<std::string> header = results.columns;
  header.insert(header.end(), {"kernelName", "kernelId", "us", "errRatio"});
  std::string out = util::csv_line(header) + "\n";
  for (const auto &s : results.shapes) {
    if (s.tuned.empty()) {
      continue;
    }
    const heuristic::Timing &t = s.kernels.at(s.tuned);
    std::vector<std::string> row;
    for (int64_t d : s.dims) {
      row.push_back(std::to_string(d));
    }
    row.insert(row.end(), {s.tuned, std::to_string(instance_index(family, s.tuned)),
                           format_us(t.us), util::format_number(t.err.value_or(0), 6)});
    out += util::csv_line(row) + "\n";
  }
  return out;
}

} // namespace

std::string tuned_table(const heuristic::Results &results, const spec::Family &family,
                        const profile::HarnessDevice &device) {
  int m = results.column("M"), n = results.column("N"), k = results.column("K");
  if (m < 0 || n < 0 || k < 0) {
    return shapes_table(results, family);
  }
  const std::string &arch = device.arch.empty() ? family.arch : device.arch;
  std::string out = "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n";
  for (const auto &s : results.shapes) {
    const std::string &best = s.tuned;
    if (best.empty()) {
      continue;
    }
    const heuristic::Timing &t = s.kernels.at(best);
    size_t id = instance_index(family, best);
    double flops = 2.0 * static_cast<double>(s.dims[m]) * static_cast<double>(s.dims[n]) *
                   static_cast<double>(s.dims[k]);
    out += util::csv_line({arch, std::to_string(device.compute_units), std::to_string(s.dims[m]),
                           std::to_string(s.dims[n]), std::to_string(s.dims[k]), family.impl,
                           std::to_string(id), "0", format_us(t.us), best,
                           util::format_number(flops / t.us / 1e6, 6), "0",
                           util::format_number(t.err.value_or(0), 6)}) +
           "\n";
  }
  return out;
}

} // namespace kopt::tune
