#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kopt::gen {

/// One row of a tuned table in aiter's format.
struct TunedRow {
  std::string arch; ///< the gfx / arch column, "" in old files without it
  int64_t cu_num = 0;
  int64_t m = 0, n = 0, k = 0;
  std::string kernel;
  double us = 0;
  int line = 0; ///< where it came from, for errors
};

/// Reads an aiter tuned CSV (gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,
/// bw,errRatio; old files lack gfx; `arch` is accepted for gfx). Rows for another arch than
/// `arch` (when both are non-empty) are dropped; a table whose every row is of another arch is
/// an error naming both. Duplicate (M,N,K) keep the lowest us; each
/// duplicate adds a warning to `warnings` naming both lines. Errors name file:line:column.
std::vector<TunedRow> read_tuned_table(const std::filesystem::path &file, const std::string &arch,
                                       std::vector<std::string> &warnings);

/// aiter's getPaddedM: gl=0 rounds M up to multiples of 16 up to 256, 32 up to 1024, 64 up to
/// 4096, else 128; gl=1 gives 8192 when M>8192 and N>4096, else the next power of two.
int64_t padded_m(int64_t m, int64_t n, int gl);

} // namespace kopt::gen
