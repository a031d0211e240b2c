// A family's configs CSV: load_family of the tiny test family with the input as configs.csv
// (header and class checks), then the configs read as analyze picks its representatives.
#include "fuzz_target.hpp"
#include "profile/analyze.hpp"
#include "spec/family.hpp"
#include "util/csv.hpp"

namespace {

std::filesystem::path family_dir() {
  std::filesystem::path dir = kopt::fuzz::scratch() / "family";
  for (const char *file : {"family.json", "harness.cpp", "tiny_kernel.hpp", "instance.cpp.in",
                           "tuned.csv", "candidates/00/candidate.json"}) {
    kopt::fuzz::copy_fixture(std::string("gen/tiny/") + file, dir / file);
  }
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path dir = family_dir();
  std::filesystem::path file = dir / "configs.csv";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(file.string(), [&] {
    kopt::spec::Family family = kopt::spec::load_family(dir / "family.json");
    kopt::profile::representatives(family, kopt::util::read_csv(file));
  });
  return 0;
}
