// The hip_gemm_a8w8_blockscale harness: makes the fp8 inputs and scales of each config on the
// device and runs the kernel the candidate's dispatch picks (or --kernel); configs, golden,
// comparison, timing loop and CSV come from kopt's harness library, events and roctx from its
// hip backend (kopt/harness/hip.hpp). The HIP port of examples/cuda_gemm_a8w8_blockscale's.
//
// The golden of this family is the fp32 reference, not the baseline's bf16 output: under
// --write-golden, output() returns the reference GEMM on the same fp8 inputs (reference.cuh:
// plain FMAs on the GPU, whose rows are checked against a CPU fp32 reference first). The kernel
// still runs and is timed, and its own error against the reference is logged.
#include "kopt_manifest.h"

#include "reference.hpp"

#include <kopt/harness/harness.hpp>
#include <kopt/harness/hip.hpp>

#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;
namespace kc = kopt::harness::hip;

/// Whether this run writes the golden: then outputs are the reference's.
enum class GoldenSource { kernel, reference };

class GemmProblem final : public kh::Problem {
public:
  GemmProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel,
              hipStream_t stream, GoldenSource source)
      : range_("config_" + std::to_string(config.index()) + " M=" + config.str("M") +
               " N=" + config.str("N") + " K=" + config.str("K")),
        kernel_(kernel), source_(source) {
    args_.M = config.get_int("M");
    args_.N = config.get_int("N");
    args_.K = config.get_int("K");
    if (args_.M <= 0 || args_.N <= 0 || args_.K <= 0) {
      throw kh::Error(config.where() + ": M, N and K must be positive");
    }
    if (args_.N % kScaleBlock != 0 || args_.K % kScaleBlock != 0) {
      throw kh::Error(config.where() + ": N and K must be multiples of 128 (the scale block)");
    }
    const std::size_t M = args_.M, N = args_.N, K = args_.K, KB = K / kScaleBlock;
    a_ = kc::DeviceBuffer<std::uint8_t>(M * K);
    b_ = kc::DeviceBuffer<std::uint8_t>(N * K);
    sa_ = kc::DeviceBuffer<float>(M * KB);
    sb_ = kc::DeviceBuffer<float>(N / kScaleBlock * KB);
    c_ = kc::DeviceBuffer<std::uint16_t>(M * N);
    args_.A = a_.get();
    args_.B = b_.get();
    args_.scale_a = sa_.get();
    args_.scale_b = sb_.get();
    args_.C = c_.get();
    args_.stream = stream;
  }

  // One 64-bit seed from the config's Rng; the device expands it by element index, so a config
  // gets the same inputs on any GPU (inputs.hpp's rule, kept on the device for size).
  void fill_inputs(kh::Rng &rng) override {
    const std::uint64_t seed = rng.next_u64();
    const std::int64_t KB = args_.K / kScaleBlock;
    hipLaunchKernelGGL(a8w8_ref::fill_fp8, dim3(1024), dim3(256), 0, args_.stream, a_.get(),
                       args_.M * args_.K, seed * 4 + 0);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_fp8, dim3(1024), dim3(256), 0, args_.stream, b_.get(),
                       args_.N * args_.K, seed * 4 + 1);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_scale, dim3(256), dim3(256), 0, args_.stream, sa_.get(),
                       args_.M * KB, seed * 4 + 2);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_scale, dim3(256), dim3(256), 0, args_.stream, sb_.get(),
                       args_.N / kScaleBlock * KB, seed * 4 + 3);
    KOPT_HIP_CHECK(hipGetLastError());
    KOPT_HIP_CHECK(hipStreamSynchronize(args_.stream));
  }

  // 0xFFFF is a bf16 NaN: an element the kernel never writes fails the comparison.
  void poison_output() override {
    KOPT_HIP_CHECK(hipMemsetAsync(c_.get(), 0xFF, c_.bytes(), args_.stream));
  }

  void run() override { KOPT_HIP_CHECK(kernel_.fn(args_)); }

  void sync() override {
    KOPT_HIP_CHECK(hipStreamSynchronize(args_.stream));
    KOPT_HIP_CHECK(hipGetLastError());
  }

  std::vector<float> output() override {
    sync();
    std::vector<std::uint16_t> bits(c_.size());
    KOPT_HIP_CHECK(hipMemcpy(bits.data(), c_.get(), c_.bytes(), hipMemcpyDeviceToHost));
    std::vector<float> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const std::uint32_t word = static_cast<std::uint32_t>(bits[i]) << 16; // bf16 -> fp32
      std::memcpy(&out[i], &word, sizeof word);
    }
    if (source_ == GoldenSource::kernel) {
      return out;
    }
    std::vector<float> golden = reference();
    const kh::Comparison c = kh::compare(out, golden, tolerance());
    std::cerr << "harness: golden: reference of M=" << args_.M << " N=" << args_.N
              << " K=" << args_.K << "; kernel " << kernel_.name << " against it: " << c.mismatches
              << "/" << c.elements << " outside, max abs " << c.max_abs << "\n";
    return golden;
  }

  // bf16 output (8 significant bits) of sums of O(sqrt(K)) magnitude, against an fp32 reference.
  kh::Tolerance tolerance() const override { return kh::tolerance_for("bf16"); }

private:
  // The fp32 reference of the whole output on the GPU, after checking its first and last rows
  // against the CPU reference on the same fp8 bytes (fp32 sums in another order: ~1e-4 apart at
  // K = 16384, so 1e-3, ten times under the bf16 tolerance).
  std::vector<float> reference() {
    const std::size_t M = args_.M, N = args_.N, K = args_.K, KB = K / kScaleBlock;
    kc::DeviceBuffer<float> ref(M * N);
    const a8w8_ref::RefArgs r{args_.M, args_.N,       args_.K,       args_.A,
                              args_.B, args_.scale_a, args_.scale_b, args_.stream};
    KOPT_HIP_CHECK(a8w8_ref::launch_reference(r, ref.get()));
    std::vector<float> golden(M * N);
    KOPT_HIP_CHECK(
        hipMemcpyAsync(golden.data(), ref.get(), ref.bytes(), hipMemcpyDeviceToHost, args_.stream));
    std::vector<std::uint8_t> b(N * K), a(K);
    std::vector<float> sb(N / kScaleBlock * KB), sa(KB);
    KOPT_HIP_CHECK(
        hipMemcpyAsync(b.data(), b_.get(), b_.bytes(), hipMemcpyDeviceToHost, args_.stream));
    KOPT_HIP_CHECK(
        hipMemcpyAsync(sb.data(), sb_.get(), sb_.bytes(), hipMemcpyDeviceToHost, args_.stream));
    sync();
    for (std::size_t row : {std::size_t{0}, M - 1}) {
      KOPT_HIP_CHECK(hipMemcpy(a.data(), a_.get() + row * K, K, hipMemcpyDeviceToHost));
      KOPT_HIP_CHECK(
          hipMemcpy(sa.data(), sa_.get() + row * KB, KB * sizeof(float), hipMemcpyDeviceToHost));
      const std::vector<float> want =
          a8w8_ref::cpu_reference_row(a.data(), sa.data(), b, sb, args_.N, args_.K);
      for (std::size_t n = 0; n < N; ++n) {
        const float got = golden[row * N + n];
        if (!(std::fabs(got - want[n]) <= 1e-3f * (1.f + std::fabs(want[n])))) {
          throw kh::Error("the GPU reference differs from the CPU reference at row " +
                          std::to_string(row) + ", column " + std::to_string(n) + ": " +
                          std::to_string(got) + " vs " + std::to_string(want[n]));
        }
      }
    }
    return golden;
  }

  kc::RoctxRange range_; // first member: open while the buffers exist and every run is made
  const kopt_generated::KernelEntry &kernel_;
  GoldenSource source_;
  GemmArgs args_{};
  kc::DeviceBuffer<std::uint8_t> a_, b_;
  kc::DeviceBuffer<float> sa_, sb_;
  kc::DeviceBuffer<std::uint16_t> c_;
};

// The stream every launch and event of the run goes to; created once, never destroyed (the
// process ends with it).
hipStream_t harness_stream() {
  static hipStream_t stream = [] {
    hipStream_t s = nullptr;
    KOPT_HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    return s;
  }();
  return stream;
}

} // namespace

int main(int argc, char **argv) {
  GoldenSource source = GoldenSource::kernel;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--write-golden") == 0) {
      source = GoldenSource::reference;
    }
  }
  kh::FamilySpec spec;
  spec.impl = "kopt"; // family.json's "impl"
  spec.candidate_id = kopt_generated::candidate_id();
  spec.candidate_hash = kopt_generated::candidate_hash();
  for (std::size_t i = 0; i < kopt_generated::kernel_count(); ++i) {
    spec.kernels.emplace_back(kopt_generated::kernel_at(i).name);
  }
  spec.dispatch = [](const kh::Config &config) {
    const std::int64_t dims[] = {config.get_int("M"), config.get_int("N"), config.get_int("K")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [source](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<GemmProblem>(config, *kernel, harness_stream(), source);
  };
  spec.make_timer = [] { return std::make_unique<kc::EventTimer>(harness_stream()); };
  spec.warmup = 2; // family.json's bench values, for runs by hand; kopt bench passes its own
  spec.repeat = 15;
  return kh::run_main(argc, argv, spec);
}
