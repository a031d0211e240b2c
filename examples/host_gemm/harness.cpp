// The host_gemm harness: makes A, B and C for each config and runs the kernel the candidate's
// dispatch picks (or --kernel); everything else comes from kopt's harness library.
#include "kopt_manifest.h"

#include <kopt/harness/harness.hpp>

#include <algorithm>
#include <memory>
#include <optional>
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
    inputs_ = rng; // check_output makes the same inputs again
    rng.fill(a_);
    rng.fill(b_);
  }
  void poison_output() override { kh::poison(c_); }
  void run() override { kernel_.fn(args_); }
  std::vector<float> output() override { return c_; }

  // The reference is this family's own GEMM on the inputs of the run just made, made again from
  // their seed into buffers the kernel never sees (A and B are const only in type: a kernel
  // that zeroed them would make a zero output look right); the output is copied before it is
  // computed (Problem::check_output). It sums each element in k order, as
  // the baseline does, four rows of C at a time so that every load of B feeds four
  // multiply-adds: every timed run is checked, so its cost is paid often.
  std::optional<kh::Comparison> check_output() override {
    std::vector<float> got = c_;
    kh::Rng again = inputs_;
    ref_a_.resize(a_.size());
    ref_b_.resize(b_.size());
    again.fill(ref_a_);
    again.fill(ref_b_);
    reference_.assign(c_.size(), 0.0f);
    const std::int64_t M = args_.M, N = args_.N, K = args_.K;
    scratch_.assign(static_cast<std::size_t>(3 * N), 0.0f); // rows past M: written, unread
    for (std::int64_t i0 = 0; i0 < M; i0 += 4) {
      const std::int64_t rows = std::min<std::int64_t>(4, M - i0);
      float *c[4];
      const float *a[4];
      for (std::int64_t r = 0; r < 4; ++r) {
        c[r] = r < rows ? &reference_[(i0 + r) * N] : &scratch_[(r - 1) * N];
        a[r] = &ref_a_[(i0 + std::min(r, rows - 1)) * K];
      }
      float *__restrict c0 = c[0], *__restrict c1 = c[1], *__restrict c2 = c[2],
                        *__restrict c3 = c[3];
      for (std::int64_t k = 0; k < K; ++k) {
        const float *__restrict b = &ref_b_[k * N];
        const float x0 = a[0][k], x1 = a[1][k], x2 = a[2][k], x3 = a[3][k];
        for (std::int64_t j = 0; j < N; ++j) {
          c0[j] += x0 * b[j];
          c1[j] += x1 * b[j];
          c2[j] += x2 * b[j];
          c3[j] += x3 * b[j];
        }
      }
    }
    return kh::compare(got, reference_, tolerance());
  }

  // A float sum's rounding grows with its length; every |a*b| < 1, so K * 1e-6 (a few ulps of
  // 1 per term) admits any summation order while one lost product (~0.25) is still caught.
  kh::Tolerance tolerance() const override { return {1e-6 * static_cast<double>(args_.K), 1e-4}; }

private:
  const kopt_generated::KernelEntry &kernel_;
  GemmArgs args_{};
  kh::Rng inputs_{0};
  std::vector<float> a_, b_, c_;
  std::vector<float> ref_a_, ref_b_, reference_, scratch_; // the reference's own, never shared
};

} // namespace

int main(int argc, char **argv) {
  // impl, id, hash, kernels, warmup and repeat: what family.json and the build already say.
  kh::FamilySpec spec = kopt_generated::family_spec();
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
  return kh::run_main(argc, argv, spec);
}
