// The CUPTI tracer's trace: parsed, then attributed to configs (1 to 4 configs of 1 to 3 runs,
// from the input's first byte) and read back from a file.
#include "profile/cupti_trace.hpp"
#include "fuzz_target.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-cupti_trace.csv";
  std::string_view text = kopt::fuzz::text_of(data, size);
  int configs = size > 0 ? 1 + data[0] % 4 : 1;
  kopt::profile::ProfileOptions options;
  options.kernel_regex = "gemm|spin";
  options.runs_per_config = size > 0 ? 1 + (data[0] / 4) % 3 : 1;
  kopt::fuzz::expect_contract(source, [&] {
    kopt::profile::attribute_cupti_trace(kopt::profile::parse_cupti_trace(text, source), configs,
                                         options, source);
  });
  static const std::filesystem::path file = kopt::fuzz::scratch() / "cupti_trace.csv";
  kopt::fuzz::write(file, text);
  kopt::fuzz::expect_contract(file.string(),
                              [&] { kopt::profile::read_cupti_output(file, configs, options); });
  return 0;
}
