// A harness results CSV (read_harness_results) for the config columns M, N, K.
#include "profile/harness_csv.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path file = kopt::fuzz::scratch() / "results.csv";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(file.string(), [&] {
    kopt::profile::read_harness_results(file, {"M", "N", "K"}, "kopt");
    kopt::profile::harness_device(std::string(kopt::fuzz::text_of(data, size)));
    kopt::profile::harness_hash(std::string(kopt::fuzz::text_of(data, size)));
  });
  return 0;
}
