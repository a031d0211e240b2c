// The host_spin harness: one config is a spin of `us` microseconds; its output is one float (1
// once the spin ran). Everything else comes from kopt's harness library.
#include "kopt_manifest.h"

#include <kopt/harness/harness.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;

class SpinProblem final : public kh::Problem {
public:
  SpinProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel)
      : kernel_(kernel) {
    args_.us = config.get_int("us");
    if (args_.us <= 0) {
      throw kh::Error(config.where() + ": us must be positive");
    }
    args_.out = &out_;
  }

  void fill_inputs(kh::Rng &) override {}
  void poison_output() override { out_ = 0.0f; }
  void run() override { kernel_.fn(args_); }
  std::vector<float> output() override { return {out_}; }
  // A spin has no inputs: its reference is "ran", 1.
  std::optional<kh::Comparison> check_output() override {
    return kh::compare({out_}, {1.0f}, tolerance());
  }

private:
  const kopt_generated::KernelEntry &kernel_;
  SpinArgs args_{};
  float out_ = 0.0f;
};

} // namespace

int main(int argc, char **argv) {
  // impl, id, hash, kernels, warmup and repeat: what family.json and the build already say.
  kh::FamilySpec spec = kopt_generated::family_spec();
  spec.dispatch = [](const kh::Config &config) {
    const std::int64_t dims[] = {config.get_int("us")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<SpinProblem>(config, *kernel);
  };
  return kh::run_main(argc, argv, spec);
}
