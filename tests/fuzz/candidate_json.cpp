// candidate.json: load_candidate_spec of candidate 01.
#include "fuzz_target.hpp"
#include "spec/candidate_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path file =
      kopt::fuzz::scratch() / "candidates" / "01" / "candidate.json";
  kopt::fuzz::write(file, kopt::fuzz::text_of(data, size));
  kopt::fuzz::expect_contract(file.string(), [&] { kopt::spec::load_candidate_spec(file, "01"); });
  return 0;
}
