// .ninja_log (versions 5 to 7) made into a build report, as text and JSON; and the input as a
// ccache stats log.
#include "buildinfo/build_report.hpp"
#include "fuzz_target.hpp"
#include "util/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz/.ninja_log";
  std::string text(kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(source, [&] {
    kopt::buildinfo::NinjaLog log = kopt::buildinfo::parse_ninja_log(text, source);
    kopt::buildinfo::group_commands(kopt::buildinfo::latest_run(log));
    kopt::buildinfo::BuildReport report = kopt::buildinfo::make_report(
        log, 2, [](const std::string &) { return kopt::buildinfo::CacheResult{}; });
    kopt::buildinfo::format_report(report, 5);
    kopt::util::dump_json(kopt::buildinfo::to_json(report));
  });
  kopt::fuzz::expect_contract(source, [&] { kopt::buildinfo::parse_ccache_stats_log(text); });
  return 0;
}
