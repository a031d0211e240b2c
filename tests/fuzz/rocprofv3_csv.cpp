// rocprofv3's CSVs: the kernel trace (both layouts) and marker trace attributed to configs, and
// kernel_stats.csv.
#include "fuzz_target.hpp"
#include "profile/rocprofv3.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-rocprofv3.csv";
  std::string_view text = kopt::fuzz::text_of(data, size);
  kopt::fuzz::expect_contract(source, [&] {
    kopt::util::CsvTable table = kopt::util::parse_csv(text, source);
    std::vector<kopt::profile::KernelDispatch> dispatches;
    std::vector<kopt::profile::MarkerRange> markers;
    try {
      dispatches = kopt::profile::parse_kernel_trace(table);
    } catch (const kopt::Error &) {
      markers = kopt::profile::parse_marker_trace(table);
    }
    kopt::profile::attribute_dispatches(dispatches, markers, {".*", 2}, source);
  });
  static const std::filesystem::path stats = kopt::fuzz::scratch() / "kernel_stats.csv";
  kopt::fuzz::write(stats, text);
  kopt::fuzz::expect_contract(stats.string(), [&] { kopt::profile::read_kernel_stats(stats); });
  return 0;
}
