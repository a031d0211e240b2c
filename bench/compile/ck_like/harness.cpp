// The ck_like harness (bench/compile): the host_gemm example's harness for this synthetic family.
#include "kopt_manifest.h"

#include <kopt/harness/harness.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;

class GemmProblem final : public kh::Problem {
public:
  GemmProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel)
      : kernel_(kernel) {
    args_.M = config.get_int("M");
    args_.N = config.get_int("N");
    args_.K = config.get_int("K");
    if (args_.M <= 0 || args_.N <= 0 || args_.K <= 0) {
      throw kh::Error(config.where() + ": M, N and K must be positive");
    }
    a_.resize(args_.M * args_.K);
    b_.resize(args_.K * args_.N);
    c_.resize(args_.M * args_.N);
    args_.A = a_.data();
    args_.B = b_.data();
    args_.C = c_.data();
  }

  void fill_inputs(kh::Rng &rng) override {
    rng.fill(a_);
    rng.fill(b_);
  }
  void poison_output() override { kh::poison(c_); }
  void run() override { kernel_.fn(args_); }
  std::vector<float> output() override { return c_; }

  // A float sum's rounding grows with its length; every |a*b| < 1, so K * 1e-6 (a few ulps of
  // 1 per term) admits any summation order while one lost product (~0.25) is still caught.
  kh::Tolerance tolerance() const override { return {1e-6 * static_cast<double>(args_.K), 1e-4}; }

private:
  const kopt_generated::KernelEntry &kernel_;
  GemmArgs args_{};
  std::vector<float> a_, b_, c_;
};

} // namespace

int main(int argc, char **argv) {
  kh::FamilySpec spec;
  spec.impl = "ck_like"; // family.json names no "impl", so it is the family's name
  spec.candidate_id = kopt_generated::candidate_id();
  spec.candidate_hash = kopt_generated::candidate_hash();
  for (std::size_t i = 0; i < kopt_generated::kernel_count(); ++i) {
    spec.kernels.emplace_back(kopt_generated::kernel_at(i).name);
  }
  spec.dispatch = [](const kh::Config &config) {
    const std::int64_t dims[] = {config.get_int("M"), config.get_int("N"), config.get_int("K")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<GemmProblem>(config, *kernel);
  };
  spec.warmup = 1; // family.json's bench values, for runs by hand; kopt bench passes its own
  spec.repeat = 3;
  return kh::run_main(argc, argv, spec);
}
