// The hip_gemm_a8w8_blockscale harness: makes the fp8 inputs and scales of each config on the
// device and runs the kernel the candidate's dispatch picks (or --kernel); configs, golden,
// comparison, timing loop and CSV come from kopt's harness library, events and roctx from its
// hip backend (kopt/harness/hip.hpp). The HIP port of examples/cuda_gemm_a8w8_blockscale's.
//
// The golden of this family is the fp32 reference, not the baseline's bf16 output: under
// --write-golden, output() returns the reference GEMM on the same fp8 inputs (reference.cuh:
// plain FMAs on the GPU, whose rows are checked against a CPU fp32 reference first). The kernel
// still runs and is timed, and its own error against the reference is logged.
//
// Every run gets fresh inputs, made on the device from one seed (a few launches, no copy), and
// every timed run is checked on the device (check_output): the output is snapshotted, the inputs
// are made again from their seed into buffers of the family's own, the reference GEMM runs on
// them, and the snapshot is compared with it element by element; 32 bytes come back.
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
#include <optional>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;
namespace kc = kopt::harness::hip;

/// Whether this run writes the golden: then outputs are the reference's.
enum class GoldenSource { kernel, reference };

/// One set of the family's inputs on the device: fp8 A [M, K] and B [N, K] as bytes, and fp32
/// scales [M, K / 128] and [N / 128, K / 128].
struct Inputs {
  Inputs() = default;
  Inputs(std::int64_t M, std::int64_t N, std::int64_t K)
      : M(M), N(N), K(K), a(M * K), b(N * K), sa(M * (K / a8w8_ref::kScaleBlock)),
        sb(N / a8w8_ref::kScaleBlock * (K / a8w8_ref::kScaleBlock)) {}

  /// Makes every input from `seed` on `stream` and returns without waiting: each element is a
  /// hash of the seed and its index (reference.hpp), so one seed gives the same bytes on any GPU
  /// and in either buffer set. The seeds of the four arrays are the ones every golden was made
  /// with; changing them changes the inputs of every config (see golden_is_current).
  void fill(std::uint64_t seed, hipStream_t stream) {
    const std::int64_t na = M * K, nb = N * K, nsa = sa.size(), nsb = sb.size();
    hipLaunchKernelGGL(a8w8_ref::fill_fp8, dim3(1024), dim3(256), 0, stream, a.get(), na,
                       seed * 4 + 0);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_fp8, dim3(1024), dim3(256), 0, stream, b.get(), nb,
                       seed * 4 + 1);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_scale, dim3(256), dim3(256), 0, stream, sa.get(), nsa,
                       seed * 4 + 2);
    KOPT_HIP_CHECK(hipGetLastError());
    hipLaunchKernelGGL(a8w8_ref::fill_scale, dim3(256), dim3(256), 0, stream, sb.get(), nsb,
                       seed * 4 + 3);
    KOPT_HIP_CHECK(hipGetLastError());
  }

  /// Returns the reference's view of these inputs.
  a8w8_ref::RefArgs ref_args(hipStream_t stream) const {
    return {M, N, K, a.get(), b.get(), sa.get(), sb.get(), stream};
  }

  std::int64_t M = 0, N = 0, K = 0;
  kc::DeviceBuffer<std::uint8_t> a, b;
  kc::DeviceBuffer<float> sa, sb;
};

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
    const std::size_t M = args_.M, N = args_.N;
    inputs_ = Inputs(args_.M, args_.N, args_.K);
    own_inputs_ = Inputs(args_.M, args_.N, args_.K);
    c_ = kc::DeviceBuffer<std::uint16_t>(M * N);
    ref_ = kc::DeviceBuffer<float>(M * N);
    check_ = kc::DeviceCheck(kc::Dtype::bf16, M * N, stream);
    args_.A = inputs_.a.get();
    args_.B = inputs_.b.get();
    args_.scale_a = inputs_.sa.get();
    args_.scale_b = inputs_.sb.get();
    args_.C = c_.get();
    args_.stream = stream;
  }

  // One 64-bit seed from the Rng (the config's for the golden's run, fresh entropy for the
  // others), expanded on the device: a few launches per run, whatever the shape, and no wait,
  // since the poison, the run and the check follow on the same stream.
  void fill_inputs(kh::Rng &rng) override {
    seed_ = rng.next_u64();
    inputs_.fill(seed_, args_.stream);
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

  // The snapshot first, then the reference of this run's inputs, then the comparison on the
  // device (Problem::check_output).
  std::optional<kh::Comparison> check_output() override {
    check_.snapshot(c_.get());
    compute_reference();
    return check_.compare(ref_.get(), tolerance());
  }

  // bf16 output (8 significant bits) of sums of O(sqrt(K)) magnitude, against an fp32 reference.
  kh::Tolerance tolerance() const override { return kh::tolerance_for("bf16"); }

private:
  // The fp32 reference of the current inputs into ref_, queued on the stream. The inputs are
  // made again from their seed into the family's own buffers, whose address the candidate never
  // gets: its inputs are const by type only, and what it writes there must not reach the
  // reference.
  void compute_reference() {
    own_inputs_.fill(seed_, args_.stream);
    KOPT_HIP_CHECK(a8w8_ref::launch_reference(own_inputs_.ref_args(args_.stream), ref_.get()));
  }

  // The fp32 reference of the whole output on the GPU, after checking its first and last rows
  // against the CPU reference on the same fp8 bytes (fp32 sums in another order: ~1e-4 apart at
  // K = 16384, so 1e-3, ten times under the bf16 tolerance).
  std::vector<float> reference() {
    const std::size_t M = args_.M, N = args_.N, K = args_.K, KB = K / kScaleBlock;
    const Inputs &in = own_inputs_;
    compute_reference();
    std::vector<float> golden(M * N);
    KOPT_HIP_CHECK(hipMemcpyAsync(golden.data(), ref_.get(), ref_.bytes(), hipMemcpyDeviceToHost,
                                  args_.stream));
    std::vector<std::uint8_t> b(N * K), a(K);
    std::vector<float> sb(N / kScaleBlock * KB), sa(KB);
    KOPT_HIP_CHECK(
        hipMemcpyAsync(b.data(), in.b.get(), in.b.bytes(), hipMemcpyDeviceToHost, args_.stream));
    KOPT_HIP_CHECK(
        hipMemcpyAsync(sb.data(), in.sb.get(), in.sb.bytes(), hipMemcpyDeviceToHost, args_.stream));
    sync();
    for (std::size_t row : {std::size_t{0}, M - 1}) {
      KOPT_HIP_CHECK(hipMemcpy(a.data(), in.a.get() + row * K, K, hipMemcpyDeviceToHost));
      KOPT_HIP_CHECK(
          hipMemcpy(sa.data(), in.sa.get() + row * KB, KB * sizeof(float), hipMemcpyDeviceToHost));
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
  std::uint64_t seed_ = 0; // of the current inputs
  Inputs inputs_;          // the candidate's (args_ points at them)
  Inputs own_inputs_;      // the reference's, made again from seed_ for every check
  kc::DeviceBuffer<std::uint16_t> c_;
  kc::DeviceBuffer<float> ref_; // fp32 [M, N]
  kc::DeviceCheck check_;
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
  // impl, id, hash, kernels, warmup and repeat: what family.json and the build already say.
  kh::FamilySpec spec = kopt_generated::family_spec();
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
  return kh::run_main(argc, argv, spec);
}
