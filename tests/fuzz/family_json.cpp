// family.json: load_family over a copy of the tiny test family whose family.json is the input.
#include "fuzz_target.hpp"
#include "spec/family.hpp"

namespace {

std::filesystem::path family_dir() {
  std::filesystem::path dir = kopt::fuzz::scratch() / "family";
  for (const char *file : {"harness.cpp", "tiny_kernel.hpp", "instance.cpp.in", "configs.csv",
                           "tuned.csv", "candidates/00/candidate.json"}) {
    kopt::fuzz::copy_fixture(std::string("gen/tiny/") + file, dir / file);
  }
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path dir = family_dir();
  std::filesystem::path file = dir / "family.json";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(dir.string(), [&] { kopt::spec::load_family(file); });
  return 0;
}
