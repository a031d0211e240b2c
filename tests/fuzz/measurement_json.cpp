// measurement.json: read back, written out and read again (the two reads must agree).
#include "fuzz_target.hpp"
#include "profile/measurement.hpp"
#include "util/json_file.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path file = kopt::fuzz::scratch() / "measurement.json";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(file.string(), [&] {
    kopt::profile::Measurement m = kopt::profile::read_measurement(file);
    std::string once = kopt::util::dump_json(kopt::profile::to_json(m));
    std::string twice = kopt::util::dump_json(kopt::profile::to_json(
        kopt::profile::measurement_from_json(kopt::util::parse_json(once, "again"), "again")));
    if (once != twice) {
      std::fprintf(stderr, "kopt fuzz: measurement.json does not read back as written\n");
      std::abort();
    }
  });
  return 0;
}
