#include "tune/tune.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

namespace fs = std::filesystem;
using kopt::test::fixture;
using kopt::test::TempDir;

namespace {

// A harness that times every config at 10 us + its kernel's index, prints `hash` and a device.
class FakeHarness : public kopt::util::ProcessRunner {
public:
  std::string hash = "h1";
  std::string device = "host 4";
  int runs = 0;
  double *clock = nullptr; ///< advanced 2 s per run when set
  bool write_trace = true; ///< writes the CUPTI trace when the tracer is injected

  kopt::util::ProcessResult run(const kopt::util::Command &command) override {
    ++runs;
    if (clock != nullptr) {
      *clock += 2;
    }
    auto arg = [&](const std::string &flag) {
      auto it = std::find(command.argv.begin(), command.argv.end(), flag);
      return it + 1 < command.argv.end() ? *(it + 1) : std::string();
    };
    kopt::util::CsvTable configs = kopt::util::read_csv(arg("--configs"));
    std::string kernel = arg("--kernel");
    std::string csv = "M,N,K,kernel,us_tiny,err_tiny\n";
    for (const auto &row : configs.rows) {
      csv += kopt::util::csv_line(row) + "," + kernel + "," + std::to_string(10 + kernel.size()) +
             ",0\n";
    }
    kopt::util::write_file_atomic(arg("--out"), csv);
    auto trace = command.env.find("KOPT_CUPTI_TRACE");
    if (trace != command.env.end() && write_trace) {
      // Config c's run r (of `repeat`) takes 1000 (c + 1) + 100 r ns: its median is the middle.
      int repeat = std::stoi(arg("--repeat"));
      std::string text = "# kopt cupti trace 2\n# ranges " +
                         std::to_string(configs.rows.size() * repeat) +
                         "\n# dropped 0\nrange,kind,start_ns,end_ns,stream,correlation,name\n";
      for (size_t r = 0; r < configs.rows.size() * repeat; ++r) {
        text += std::to_string(r) + ",range," + std::to_string(10000 * r) + "," +
                std::to_string(10000 * r + 5000) + ",7,0,\"\"\n";
      }
      for (size_t r = 0; r < configs.rows.size() * repeat; ++r) {
        text += std::to_string(r) + ",kernel,0," +
                std::to_string(1000 * (r / repeat + 1) + 100 * (r % repeat)) + ",7," +
                std::to_string(r) + ",\"void " + kernel + "(float*)\"\n";
      }
      kopt::util::write_file_atomic(trace->second, text + "# end\n");
    }
    kopt::util::ProcessResult result;
    result.exit_code = 0;
    result.out = "kopt-candidate: 00 " + hash + "\nkopt-device: " + device + "\n";
    return result;
  }
};

struct Tuning {
  TempDir tmp;
  kopt::spec::Family family = kopt::spec::load_family(fixture("gen/tiny/family.json"));
  kopt::spec::Layout layout{tmp.path() / "state"};
  kopt::tune::TuneOptions options;
  FakeHarness harness;
  std::ostringstream log;
  std::ostringstream progress_text;
  double clock = 0; ///< seconds; each harness run of the fake takes none
  kopt::util::StatusLine progress{progress_text, kopt::util::StatusStyle::lines, 0,
                                  [this] { return clock; }};

  Tuning() {
    harness.clock = &clock;
    tmp.write("state/bin/candidate_00", "");
    options.candidate = "00";
    options.hash = "h1";
    options.kernels = {"tiny_1x1", "tiny_2x2"};
  }
  kopt::tune::TuneReport run() {
    return kopt::tune::tune(family, layout, options, harness, {}, log, progress);
  }
};

} // namespace

TEST_SUITE_BEGIN("tune");

TEST_CASE("tune reuses only rows measured as this run would, and re-measures the rest") {
  Tuning t;
  kopt::tune::TuneReport first = t.run();
  CHECK(first.measured == 6);
  CHECK(first.reused == 0);
  CHECK(first.stale.empty());
  CHECK(first.arch == "host");
  CHECK(first.compute_units == 4);
  kopt::util::CsvTable full = kopt::util::read_csv(first.full_csv);
  CHECK(full.header == std::vector<std::string>{"M", "N", "K", "kernel", "us", "err", "hash",
                                                "device", "arch", "compute_units", "driver",
                                                "profiler", "warmup", "repeat"});
  CHECK(full.rows[0][6] == "h1");
  CHECK(full.rows[0][9] == "4");
  CHECK(full.rows[0][11] == "chrono");
  std::string tuned = kopt::util::read_file(first.tuned_csv);
  CHECK(tuned.find("\nhost,4,16,64,128,tiny,0,0,18.000,tiny_1x1,") != std::string::npos);

  SUBCASE("the same run again measures nothing") {
    kopt::tune::TuneReport again = t.run();
    CHECK(again.measured == 0);
    CHECK(again.reused == 6);
    CHECK(t.harness.runs == 2);
  }
  SUBCASE(
      "edited code: every row of the tuned kernels is measured again, the file keeps one each") {
    t.options.hash = t.harness.hash = "h2";
    kopt::tune::TuneReport again = t.run();
    CHECK(again.measured == 6);
    CHECK(again.reused == 0);
    CHECK(again.stale == std::map<std::string, size_t>{
                             {"measured with content hash h1, the candidate's is now h2", 6}});
    kopt::util::CsvTable now = kopt::util::read_csv(again.full_csv);
    CHECK(now.rows.size() == 6);
    CHECK(std::all_of(now.rows.begin(), now.rows.end(),
                      [](const auto &row) { return row[6] == "h2"; }));
  }
  SUBCASE("other run counts re-measure; kernels not tuned now keep their rows") {
    t.options.repeat = 3;
    t.options.kernels = {"tiny_2x2"};
    kopt::tune::TuneReport again = t.run();
    CHECK(again.measured == 3);
    CHECK(again.stale.size() == 1);
    CHECK(kopt::util::read_csv(again.full_csv).rows.size() == 6);
  }
  SUBCASE("a stale binary is an error, not a measurement") {
    t.options.hash = "h2";
    CHECK_THROWS_WITH_AS(t.run(),
                         ("tune: " + (t.tmp.path() / "state/bin/candidate_00").string() +
                          " printed hash 'h1', but candidate 00's sources hash to h2: the binary "
                          "is stale (build target candidate_00, or give --build-dir)")
                             .c_str(),
                         kopt::Error);
  }
  SUBCASE("rows of two devices make no tuned table; both are named") {
    t.harness.device = "host 8";
    t.options.kernels = {"tiny_1x2"};
    CHECK_THROWS_WITH_AS(
        t.run(),
        (first.full_csv.string() + ": rows measured on two devices: '" + full.rows[0][7] +
         "' (host, 4 compute units) (line 2) and '" + full.rows[0][7] +
         "' (host, 8 compute units) (line 8); a tuned table is for one device: tune every kernel "
         "on one (rows measured on another are measured again)")
            .c_str(),
        kopt::Error);
  }
}

TEST_CASE("tune reports its rows to measure, each chunk with the time elapsed and left") {
  Tuning t;
  t.run();
  CHECK(t.progress_text.str() ==
        "tune: 6 rows to measure (2 kernels), 0 reused\n"
        "[3/6] elapsed 0:02, ~0:02 left: tune: tiny_1x1 on configs 1-3 of 3: 3 rows\n"
        "[6/6] elapsed 0:04, ~0:00 left: tune: tiny_2x2 on configs 1-3 of 3: 3 rows\n");
}

TEST_CASE("a full.csv of an older kopt is widened and its tuned rows measured again") {
  Tuning t;
  t.tmp.write("state/tune/00/full.csv", "M,N,K,kernel,us,err\n16,64,128,tiny_1x1,5.000,0\n"
                                        "16,64,128,tiny_big,7.000,0\n");
  t.options.kernels = {"tiny_1x1"};
  // tiny_big's row stays, of an unknown device: no tuned table mixes it with this run's.
  CHECK_THROWS_AS(t.run(), kopt::Error);
  kopt::util::CsvTable full = kopt::util::read_csv(t.layout.root / "tune/00/full.csv");
  CHECK(full.header.size() == 14);
  CHECK(full.rows.size() == 4);
  CHECK(full.rows[0][3] == "tiny_big");
  CHECK(full.rows[0][6] == "");

  t.options.kernels = {"tiny_1x1", "tiny_big"};
  kopt::tune::TuneReport report = t.run();
  CHECK(report.measured == 3);
  CHECK(report.reused == 3);
  CHECK(report.stale == std::map<std::string, size_t>{
                            {"no record of what measured it (written by an older kopt)", 1}});
}

TEST_CASE("a CUDA family's rows are timed by the CUPTI tracer, each the median of its runs") {
  Tuning t;
  t.family.backend = kopt::spec::Backend::cuda;
  t.options.warmup = 0;
  t.options.repeat = 3;
  auto tracer = t.tmp.write("lib/libkopt_cupti_trace.so", "the tracer");
  setenv("KOPT_CUPTI_TRACER", tracer.c_str(), 1);
  SUBCASE("traced") {
    kopt::tune::TuneReport report = t.run();
    CHECK(report.measured == 6);
    CHECK(report.failures.empty());
    kopt::util::CsvTable full = kopt::util::read_csv(report.full_csv);
    REQUIRE(full.rows.size() == 6);
    CHECK(full.rows[0][11] == "cupti");
    // The first chunk's configs 1, 2, 3: medians 1.1, 2.1, 3.1 us (the harness said 18).
    CHECK(full.rows[0][4] == "1.100");
    CHECK(full.rows[2][4] == "3.100");
  }
  SUBCASE("no trace: the chunk fails, saying why, and no row is kept") {
    t.harness.write_trace = false;
    kopt::tune::TuneReport report = t.run();
    CHECK(report.measured == 0);
    REQUIRE(report.failures.size() == 2);
    CHECK(report.failures[0].find("the CUPTI trace cannot time these rows: the harness left no "
                                  "CUPTI trace") != std::string::npos);
  }
  unsetenv("KOPT_CUPTI_TRACER");
}

TEST_SUITE_END();
