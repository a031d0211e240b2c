// An aiter tuned CSV as gen reads it for a family's tuned table (read_tuned_table).
#include "fuzz_target.hpp"
#include "gen/tuned.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path file = kopt::fuzz::scratch() / "tuned.csv";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(file.string(), [&] {
    std::vector<std::string> warnings;
    for (const kopt::gen::TunedRow &row : kopt::gen::read_tuned_table(file, "gfx942", warnings)) {
      kopt::gen::padded_m(row.m, row.n, 0);
      kopt::gen::padded_m(row.m, row.n, 1);
    }
  });
  return 0;
}
