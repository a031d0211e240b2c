#pragma once

#include "heuristic/results.hpp"
#include "profile/bench.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace kopt::tune {

/// What to tune: one candidate's harness, some or all instances, on some configs.
struct TuneOptions {
  std::string candidate;
  std::vector<std::string> kernels; ///< empty: every instance of the family
  std::filesystem::path configs;    ///< empty: the family's configs
  size_t chunk = 64;                ///< configs per harness run (the most a kill can lose)
  int warmup = -1;                  ///< < 0: the family's
  int repeat = -1;                  ///< < 0: the family's
  int64_t cu_num = 0;               ///< the tuned table's cu_num column
  double ties = 0;                  ///< the tuned choice's slack (heuristic::resolve_ties)
};

/// What a tune run did.
struct TuneReport {
  size_t measured = 0;               ///< kernel x config rows measured now
  size_t skipped = 0;                ///< rows already in full.csv
  std::vector<std::string> failures; ///< one line per harness run that failed
  size_t shapes = 0;                 ///< shapes written to tuned.csv
  std::filesystem::path full_csv;
  std::filesystem::path tuned_csv;
};

/// <state>/tune/<id>: where a candidate's tuning results live.
std::filesystem::path tune_dir(const spec::Layout &layout, const std::string &id);

/// Runs the candidate's harness once per instance and chunk of configs (--kernel NAME
/// --benchmark), appending every measured row to full.csv as soon as its run ends; rows already
/// there are skipped, so a killed run is resumed where it stopped. The golden is compared only
/// when the configs are the family's own. A harness run that fails is reported and skipped (its
/// rows stay missing, so the next run retries them). Then writes tuned.csv (tuned_table).
TuneReport tune(const spec::Family &family, const spec::Layout &layout, const TuneOptions &options,
                util::ProcessRunner &runner, const profile::RunSetup &setup, std::ostream &log);

/// The tuned table in aiter's format (gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,
/// tflops,bw,errRatio): per shape the tuned choice (Shape::tuned: the fastest kernel with err 0
/// or not compared, or with ties the resolved one) and its own time; kernelId is the instance's
/// index in family.json, tflops 2*M*N*K/us, bw 0 (kopt does not know a family's bytes). Shapes
/// without a usable kernel are left out. Needs config columns M, N and K.
std::string tuned_table(const heuristic::Results &results, const spec::Family &family,
                        int64_t cu_num);

} // namespace kopt::tune
