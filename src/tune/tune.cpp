#include "tune/tune.hpp"

#include "profile/harness_csv.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
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

// The kernel x config rows full.csv already holds; checks that its header is ours.
std::set<std::pair<std::string, std::string>> done_rows(const fs::path &file,
                                                        const std::vector<std::string> &header) {
  std::set<std::pair<std::string, std::string>> done;
  if (!fs::exists(file)) {
    return done;
  }
  util::CsvTable table = util::read_csv(file);
  if (table.header != header) {
    throw Error(file.string() + ":1: expected the columns " + util::join(header, ",") + ", got " +
                util::join(table.header, ",") + " (another configs file? move it away)");
  }
  size_t columns = header.size() - heuristic::kResultColumns.size();
  size_t kernel = columns;
  for (const auto &row : table.rows) {
    done.emplace(std::string(util::trim(row[kernel])),
                 key(std::vector<std::string>(row.begin(), row.begin() + columns)));
  }
  return done;
}

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", us);
  return text;
}

} // namespace

fs::path tune_dir(const spec::Layout &layout, const std::string &id) {
  return layout.root / "tune" / id;
}

TuneReport tune(const spec::Family &family, const spec::Layout &layout, const TuneOptions &options,
                util::ProcessRunner &runner, const profile::RunSetup &setup, std::ostream &log) {
  TuneReport report;
  fs::path dir = tune_dir(layout, options.candidate);
  report.full_csv = dir / "full.csv";
  report.tuned_csv = dir / "tuned.csv";
  fs::path configs_file = options.configs.empty() ? family.configs : options.configs;
  util::CsvTable configs = util::read_csv(configs_file);
  for (const auto &column : family.dispatch) {
    configs.column(column); // throws naming the file and the missing column
  }
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
  fs::path harness = layout.harness(options.candidate);
  if (!fs::exists(harness)) {
    throw Error("tune: no harness binary at " + harness.string() + " (build target candidate_" +
                options.candidate + " first, or give --build-dir)");
  }
  std::vector<std::string> header = configs.header;
  header.insert(header.end(), heuristic::kResultColumns.begin(), heuristic::kResultColumns.end());
  auto done = done_rows(report.full_csv, header);
  if (!fs::exists(report.full_csv)) {
    util::append_line(report.full_csv, util::csv_line(header));
  }
  bool golden = fs::exists(layout.golden()) && fs::equivalent(configs_file, family.configs);
  int warmup = options.warmup >= 0 ? options.warmup : family.warmup;
  int repeat = options.repeat >= 0 ? options.repeat : family.repeat;
  size_t chunk = std::max<size_t>(options.chunk, 1);
  fs::path work = dir / "work";
  fs::create_directories(work);

  for (const auto &kernel : kernels) {
    std::vector<size_t> pending;
    for (size_t i = 0; i < configs.rows.size(); ++i) {
      if (done.count({kernel, key(configs.rows[i])})) {
        ++report.skipped;
      } else {
        pending.push_back(i);
      }
    }
    for (size_t start = 0; start < pending.size(); start += chunk) {
      size_t end = std::min(pending.size(), start + chunk);
      std::string text = util::csv_line(configs.header) + "\n";
      for (size_t i = start; i < end; ++i) {
        text += util::csv_line(configs.rows[pending[i]]) + "\n";
      }
      std::string stem = kernel + "." + std::to_string(start / chunk);
      fs::path chunk_configs = work / (stem + ".configs.csv");
      fs::path out = work / (stem + ".results.csv");
      util::write_file_atomic(chunk_configs, text);
      fs::remove(out);
      util::Command command;
      command.argv = {harness.string(),
                      "--configs",
                      chunk_configs.string(),
                      "--benchmark",
                      "--kernel",
                      kernel,
                      "--out",
                      out.string(),
                      "--warmup",
                      std::to_string(warmup),
                      "--repeat",
                      std::to_string(repeat)};
      if (golden) {
        command.argv.insert(command.argv.end(), {"--golden", layout.golden().string()});
      }
      command.timeout_s = family.timeout_s;
      command.env = setup.env;
      util::ProcessResult result = runner.run(command);
      util::write_file_atomic(work / (stem + ".log"),
                              "--- stdout\n" + result.out + "--- stderr\n" + result.err);
      std::string what = kernel + " on configs " + std::to_string(start + 1) + "-" +
                         std::to_string(end) + " of " + std::to_string(pending.size());
      std::vector<profile::HarnessRow> rows;
      if (result.ok()) {
        try {
          rows = profile::read_harness_results(out, configs.header, family.impl);
        } catch (const Error &e) {
          report.failures.push_back(what + ": " + e.what());
          continue;
        }
      } else {
        report.failures.push_back(what + ": harness " + result.describe(family.timeout_s) +
                                  " (log: " + (work / (stem + ".log")).string() + ")");
        log << "tune: " << report.failures.back() << "\n";
        continue;
      }
      for (const auto &row : rows) {
        std::vector<std::string> fields = row.values;
        fields.push_back(row.kernel);
        fields.push_back(format_us(row.us));
        fields.push_back(row.err ? util::format_number(*row.err, 9) : "");
        util::append_line(report.full_csv, util::csv_line(fields));
        ++report.measured;
      }
      log << "tune: " << what << ": " << rows.size() << " rows\n";
    }
  }
  heuristic::ReadOptions read;
  read.ties = options.ties;
  heuristic::Results results = heuristic::read_results(report.full_csv, read);
  std::string table = tuned_table(results, family, options.cu_num);
  util::write_file_atomic(report.tuned_csv, table);
  report.shapes = static_cast<size_t>(std::count(table.begin(), table.end(), '\n')) - 1;
  return report;
}

std::string tuned_table(const heuristic::Results &results, const spec::Family &family,
                        int64_t cu_num) {
  int m = results.column("M"), n = results.column("N"), k = results.column("K");
  if (m < 0 || n < 0 || k < 0) {
    throw Error(results.source + ": a tuned table needs config columns M, N and K, got " +
                util::join(results.columns, ","));
  }
  std::string out = "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n";
  for (const auto &s : results.shapes) {
    const std::string &best = s.tuned;
    if (best.empty()) {
      continue;
    }
    const heuristic::Timing &t = s.kernels.at(best);
    size_t id = 0;
    while (id < family.instances.size() && family.instances[id].name != best) {
      ++id;
    }
    double flops = 2.0 * static_cast<double>(s.dims[m]) * static_cast<double>(s.dims[n]) *
                   static_cast<double>(s.dims[k]);
    out += util::csv_line({family.arch, std::to_string(cu_num), std::to_string(s.dims[m]),
                           std::to_string(s.dims[n]), std::to_string(s.dims[k]), family.impl,
                           std::to_string(id), "0", format_us(t.us), best,
                           util::format_number(flops / t.us / 1e6, 6), "0",
                           util::format_number(t.err.value_or(0), 6)}) +
           "\n";
  }
  return out;
}

} // namespace kopt::tune
