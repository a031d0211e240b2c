// GPU status tools' output: nvidia-smi's query and compute-apps CSV, rocm-smi's JSON and text,
// amd-smi's metric and process JSON. The first byte picks the parser.
#include "gpu/smi.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::string source = "fuzz-smi";
  std::string_view text = kopt::fuzz::text_of(data + 1, size - 1);
  kopt::fuzz::expect_contract(source, [&] {
    switch (data[0] % 6) {
    case 0:
      kopt::gpu::parse_nvidia_query(text, source);
      break;
    case 1:
      kopt::gpu::parse_nvidia_apps(text, source);
      break;
    case 2:
      kopt::gpu::parse_rocm_smi_json(text, source);
      break;
    case 3:
      kopt::gpu::parse_rocm_smi_text(text, source);
      break;
    case 4:
      kopt::gpu::parse_amd_smi_metric(text, source);
      break;
    default:
      kopt::gpu::parse_amd_smi_process(text, source);
      break;
    }
  });
  return 0;
}
