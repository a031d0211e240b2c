// The host_softmax harness, written from docs/HARNESS.md: makes x and out for each config
// (rows x cols, row-major), runs the kernel the candidate's dispatch picks, and checks every
// timed run against a reference in double precision on buffers the kernel never sees.
#include "kopt_manifest.h"

#include <kopt/harness/harness.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;

class SoftmaxProblem final : public kh::Problem {
public:
  SoftmaxProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel)
      : kernel_(kernel) {
    args_.rows = config.get_int("rows");
    args_.cols = config.get_int("cols");
    if (args_.rows <= 0 || args_.cols <= 0) {
      throw kh::Error(config.where() + ": rows and cols must be positive");
    }
    x_.resize(static_cast<std::size_t>(args_.rows * args_.cols));
    out_.resize(x_.size());
    args_.x = x_.data();
    args_.out = out_.data();
  }

  // Inputs in (-4, 4): rows whose exps differ by up to e^8, so a row's max matters.
  void fill_inputs(kh::Rng &rng) override {
    inputs_ = rng;
    rng.fill(x_);
    for (float &v : x_) {
      v *= 4.0f;
    }
  }
  void poison_output() override { kh::poison(out_); }
  void run() override { kernel_.fn(args_); }
  std::vector<float> output() override { return out_; }

  // The reference: the same inputs made again from their seed, each row's softmax in double.
  std::optional<kh::Comparison> check_output() override {
    std::vector<float> got = out_;
    std::vector<float> x(x_.size());
    kh::Rng again = inputs_;
    again.fill(x);
    reference_.resize(x.size());
    const std::size_t cols = static_cast<std::size_t>(args_.cols);
    for (std::size_t r = 0; r < static_cast<std::size_t>(args_.rows); ++r) {
      const float *row = &x[r * cols];
      double max = 4.0 * *std::max_element(row, row + cols);
      double sum = 0;
      for (std::size_t c = 0; c < cols; ++c) {
        sum += std::exp(4.0 * row[c] - max);
      }
      for (std::size_t c = 0; c < cols; ++c) {
        reference_[r * cols + c] = static_cast<float>(std::exp(4.0 * row[c] - max) / sum);
      }
    }
    return kh::compare(got, reference_, tolerance());
  }
  // A float sum of `cols` positive terms rounds by about sqrt(cols) ulps (8e-6 at 16384 columns),
  // so 1e-4 relative passes any honest order; a row that loses one term is off by that term's
  // share of its sum, about 1/cols on average (3% at 32 columns), and fails.
  kh::Tolerance tolerance() const override { return {1e-9, 1e-4}; }

private:
  const kopt_generated::KernelEntry &kernel_;
  SoftmaxArgs args_{};
  kh::Rng inputs_{0};
  std::vector<float> x_, out_, reference_;
};

} // namespace

int main(int argc, char **argv) {
  // impl, id, hash, kernels, warmup and repeat: what family.json and the build already say.
  kh::FamilySpec spec = kopt_generated::family_spec();
  spec.dispatch = [](const kh::Config &config) {
    const std::int64_t dims[] = {config.get_int("rows"), config.get_int("cols")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<SoftmaxProblem>(config, *kernel);
  };
  return kh::run_main(argc, argv, spec);
}
