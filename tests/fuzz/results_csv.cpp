// Tuning results: kopt tune's full.csv or an aiter winners-only table (parse_results), with the
// ties resolved and, for small tables, a heuristic fitted (the fit once ran away on bad shapes).
#include "fuzz_target.hpp"
#include "heuristic/fit.hpp"
#include "heuristic/results.hpp"
#include "util/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-results.csv";
  kopt::fuzz::expect_contract(source, [&] {
    kopt::util::CsvTable table = kopt::util::parse_csv(kopt::fuzz::text_of(data, size), source);
    kopt::heuristic::config_columns(table);
    kopt::heuristic::ReadOptions options;
    options.ties = 0.02;
    kopt::heuristic::Results results = kopt::heuristic::parse_results(table, options);
    kopt::heuristic::most_frequent(results);
    if (results.shapes.size() <= 64 && results.kernels().size() <= 16) {
      kopt::heuristic::fit(results, kopt::heuristic::FitOptions{});
    }
  });
  return 0;
}
