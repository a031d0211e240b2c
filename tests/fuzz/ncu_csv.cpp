// ncu's stdout: the raw or details page, with or without NVTX ranges, attributed by range and
// in order (parse_ncu_output), and the details page analyze reads (parse_ncu_details), each
// launch judged.
#include "fuzz_target.hpp"
#include "profile/ncu.hpp"
#include "profile/ncu_details.hpp"
#include "util/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-ncu.csv";
  std::string_view text = kopt::fuzz::text_of(data, size);
  kopt::fuzz::expect_contract(source, [&] {
    kopt::profile::parse_ncu_output(text, source, {".*", 0});
  });
  kopt::fuzz::expect_contract(source, [&] {
    kopt::profile::parse_ncu_output(text, source, {"gemm", 2});
  });
  kopt::fuzz::expect_contract(source, [&] {
    for (const auto &launch : kopt::profile::parse_ncu_details(text, source)) {
      kopt::util::dump_json(
          kopt::profile::to_json(launch, kopt::profile::judge_bottleneck(launch)));
    }
  });
  return 0;
}
