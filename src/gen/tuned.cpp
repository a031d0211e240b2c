#include "gen/tuned.hpp"

#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <tuple>

namespace kopt::gen {

std::vector<TunedRow> read_tuned_table(const std::filesystem::path &file, const std::string &arch,
                                       std::vector<std::string> &warnings) {
  util::CsvTable table = util::read_csv(file);
  int arch_column = table.find_column("gfx");
  if (arch_column < 0) {
    arch_column = table.find_column("arch");
  }
  int cu = table.column("cu_num");
  int m = table.column("M");
  int n = table.column("N");
  int k = table.column("K");
  int us = table.column("us");
  int name = table.column("kernelName");

  std::map<std::tuple<int64_t, int64_t, int64_t>, TunedRow> rows;
  std::string other_arch; // the first row of another arch, for the message below
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto &fields = table.rows[i];
    std::string where = table.where(i);
    TunedRow row;
    row.line = table.lines[i];
    row.arch = arch_column < 0 ? "" : std::string(util::trim(fields[arch_column]));
    if (!arch.empty() && !row.arch.empty() && row.arch != arch) {
      if (other_arch.empty()) {
        other_arch = row.arch + " (line " + std::to_string(row.line) + ")";
      }
      continue;
    }
    row.cu_num = util::parse_int(fields[cu], where + ": cu_num");
    // A GEMM dimension is an int in aiter's and CK's APIs: larger is no shape, and would
    // overflow the padding of M.
    auto dimension = [&](int column, const char *name) {
      int64_t value = util::parse_int(fields[column], where + ": " + name);
      if (value < 1 || value > INT32_MAX) {
        throw Error(where + ": " + name + ": expected an integer from 1 to 2147483647, got " +
                    std::to_string(value));
      }
      return value;
    };
    row.m = dimension(m, "M");
    row.n = dimension(n, "N");
    row.k = dimension(k, "K");
    row.us = util::parse_double(fields[us], where + ": us");
    row.kernel = std::string(util::trim(fields[name]));
    if (row.kernel.empty()) {
      throw Error(where + ": kernelName: expected a kernel name, got ''");
    }
    auto key = std::make_tuple(row.m, row.n, row.k);
    auto [it, fresh] = rows.emplace(key, row);
    if (fresh) {
      continue;
    }
    TunedRow &kept = it->second;
    std::string shape = "M=" + std::to_string(row.m) + " N=" + std::to_string(row.n) +
                        " K=" + std::to_string(row.k);
    int previous = kept.line;
    if (row.us < kept.us) {
      kept = row;
    }
    warnings.push_back(where + ": duplicate shape " + shape + " (also line " +
                       std::to_string(previous) + "); keeping '" + kept.kernel + "' (" +
                       util::format_number(kept.us) + " us) from line " +
                       std::to_string(kept.line));
  }
  if (rows.empty() && !other_arch.empty()) {
    // A table of other devices only would leave every shape to the heuristic, silently.
    throw Error(file.string() + ": the table was measured on " + other_arch +
                ", the family's arch is " + arch + ": tune on a " + arch +
                " device (kopt tune), or change family.json's arch");
  }
  std::vector<TunedRow> out;
  for (auto &[key, row] : rows) {
    out.push_back(std::move(row));
  }
  return out;
}

int64_t padded_m(int64_t m, int64_t n, int gl) {
  if (gl == 1) {
    if (m > 8192 && n > 4096) {
      return 8192;
    }
    int64_t p = 1;
    while (p < m && p <= INT64_MAX / 2) {
      p *= 2;
    }
    return std::max(p, m); // past 2^62 no power of two is larger: M itself
  }
  // Past INT64_MAX - step no multiple above M exists: M itself.
  auto round_up = [m](int64_t step) {
    return m > INT64_MAX - step ? m : (m + step - 1) / step * step;
  };
  if (m <= 256) {
    return round_up(16);
  }
  if (m <= 1024) {
    return round_up(32);
  }
  if (m <= 4096) {
    return round_up(64);
  }
  return round_up(128);
}

} // namespace kopt::gen
