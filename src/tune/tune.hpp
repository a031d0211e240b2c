#pragma once

#include "heuristic/results.hpp"
#include "profile/bench.hpp"
#include "profile/harness_csv.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/csv.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace kopt::tune {

/// What to tune: one candidate's harness, some or all instances, on some configs.
struct TuneOptions {
  std::string candidate;
  std::string hash;                 ///< the candidate's content hash, which its harness must print
  std::vector<std::string> kernels; ///< empty: every instance of the family
  std::filesystem::path configs;    ///< empty: the family's configs
  size_t chunk = 64;                ///< configs per harness run (the most a kill can lose)
  int warmup = -1;                  ///< < 0: the family's
  int repeat = -1;                  ///< < 0: the family's
  double ties = 0;                  ///< the tuned choice's slack (heuristic::resolve_ties)
};

/// The columns full.csv holds after the config columns and heuristic::kResultColumns: the
/// row's profile::Conditions and the device's architecture and compute units (from the harness).
inline const std::vector<std::string> kOriginColumns = {
    "hash", "device", "arch", "compute_units", "driver", "profiler", "warmup", "repeat"};

/// What a tune run did.
struct TuneReport {
  size_t measured = 0;                 ///< kernel x config rows measured now
  size_t reused = 0;                   ///< rows already in full.csv, measured as this run would
  std::map<std::string, size_t> stale; ///< rows dropped to be measured again, by reason
  std::vector<std::string> failures;   ///< one line per harness run that failed
  size_t shapes = 0;                   ///< shapes written to tuned.csv
  std::string arch;                    ///< tuned.csv's gfx column: the rows' device's
  int64_t compute_units = 0;           ///< tuned.csv's cu_num column
  std::filesystem::path full_csv;
  std::filesystem::path tuned_csv;
};

/// <state>/tune/<id>: where a candidate's tuning results live.
std::filesystem::path tune_dir(const spec::Layout &layout, const std::string &id);

/// Runs the candidate's harness once per instance and chunk of configs (--kernel NAME
/// --benchmark), appending every measured row to full.csv, with its profile::Conditions, as soon
/// as its run ends, all under the tune folder's lock. Rows of the tuned instances that are
/// already there are reused only when profile::stale_reason finds nothing: the others are dropped
/// from full.csv and measured again (TuneReport::stale says why), so a killed run resumes where it
/// stopped and an edited candidate is measured afresh. A harness that prints another hash than
/// options.hash is a stale binary: an error. The golden is compared only when the configs are
/// the family's own. A harness run that fails is reported and skipped (its rows stay missing,
/// so the next run retries them). Then writes tuned.csv (tuned_table) for the device of the
/// rows (table_device). `progress` counts the rows to measure, one chunk at a time, and gets
/// each failed run as a note; `log` gets the re-measure reasons and lock waits.
TuneReport tune(const spec::Family &family, const spec::Layout &layout, const TuneOptions &options,
                util::ProcessRunner &runner, const profile::RunSetup &setup, std::ostream &log,
                util::Progress &progress);

/// The device a tuned table is for: the one every row of `full` was measured on. Throws
/// kopt::Error naming both devices (and a line of each) when rows of two devices are mixed.
profile::HarnessDevice table_device(const util::CsvTable &full);

/// The tuned table in aiter's format (gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,
/// tflops,bw,errRatio): per shape the tuned choice (Shape::tuned: the fastest kernel with err 0
/// or not compared, or with ties the resolved one) and its own time; gfx and cu_num are
/// `device`'s (the family's arch when the device has none), kernelId the instance's index in
/// family.json, tflops 2*M*N*K/us, bw 0 (kopt does not know a family's bytes). Shapes without a
/// usable kernel are left out. A family without config columns M, N and K (no GEMM) gets its
/// own columns instead: the config columns, then kernelName, kernelId, us and errRatio (a table
/// to read; such a family dispatches through a heuristic, not a tuned lookup).
std::string tuned_table(const heuristic::Results &results, const spec::Family &family,
                        const profile::HarnessDevice &device);

} // namespace kopt::tune
