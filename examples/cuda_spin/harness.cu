// The cuda_spin harness: one config is a spin of `cycles` SM cycles over `blocks` blocks; its
// output is one float per block (1 where the block ran), and every timed run's is compared with 1
// on the device. Timing loop, golden and CSV come from kopt's harness library, events, NVTX and
// the device check from its cuda backend.
#include "kopt_manifest.h"

#include <kopt/harness/cuda.hpp>
#include <kopt/harness/harness.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;
namespace kc = kopt::harness::cuda;

// The stream every launch and event of the run goes to; created once, never destroyed.
cudaStream_t harness_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    KOPT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  return stream;
}

class SpinProblem final : public kh::Problem {
public:
  SpinProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel)
      : range_("config_" + std::to_string(config.index()) + " cycles=" + config.str("cycles") +
               " blocks=" + config.str("blocks")),
        kernel_(kernel) {
    args_.cycles = config.get_int("cycles");
    blocks_ = config.get_int("blocks");
    if (args_.cycles <= 0 || blocks_ <= 0) {
      throw kh::Error(config.where() + ": cycles and blocks must be positive");
    }
    const std::size_t blocks = static_cast<std::size_t>(blocks_);
    out_ = kc::DeviceBuffer<float>(blocks);
    ones_ = kc::DeviceBuffer<float>(blocks);
    const std::vector<float> ones(blocks, 1.0f);
    KOPT_CUDA_CHECK(cudaMemcpy(ones_.get(), ones.data(), ones_.bytes(), cudaMemcpyHostToDevice));
    check_ = kc::DeviceCheck(kc::Dtype::fp32, blocks, harness_stream());
    args_.out = out_.get();
    args_.stream = harness_stream();
  }

  void fill_inputs(kh::Rng &) override {}
  void poison_output() override {
    KOPT_CUDA_CHECK(cudaMemsetAsync(out_.get(), 0xff, out_.bytes(), args_.stream));
  }
  void run() override { KOPT_CUDA_CHECK(kernel_.fn(args_)); }
  void sync() override {
    KOPT_CUDA_CHECK(cudaStreamSynchronize(args_.stream));
    KOPT_CUDA_CHECK(cudaGetLastError());
  }
  std::vector<float> output() override {
    sync(); // the stream does not block with the legacy stream cudaMemcpy waits for
    std::vector<float> host(static_cast<std::size_t>(blocks_));
    KOPT_CUDA_CHECK(cudaMemcpy(host.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // A spin has no inputs: every block's reference is "ran", 1.
  std::optional<kh::Comparison> check_output() override {
    check_.snapshot(out_.get());
    return check_.compare(ones_.get(), tolerance());
  }

private:
  kc::NvtxRange range_; // first member: open while every run of the config is made
  const kopt_generated::KernelEntry &kernel_;
  SpinArgs args_{};
  std::int64_t blocks_ = 0;
  kc::DeviceBuffer<float> out_;
  kc::DeviceBuffer<float> ones_; // the reference
  kc::DeviceCheck check_;
};

} // namespace

int main(int argc, char **argv) {
  // impl, id, hash, kernels, warmup and repeat: what family.json and the build already say.
  kh::FamilySpec spec = kopt_generated::family_spec();
  spec.dispatch = [](const kh::Config &config) {
    const std::int64_t dims[] = {config.get_int("cycles"), config.get_int("blocks")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<SpinProblem>(config, *kernel);
  };
  spec.make_timer = [] { return std::make_unique<kc::EventTimer>(harness_stream()); };
  return kh::run_main(argc, argv, spec);
}
