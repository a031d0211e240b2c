// The cuda_gemm_a8w8_blockscale harness: makes the fp8 inputs and scales of each config on the
// device and runs the kernel the candidate's dispatch picks (or --kernel); configs, golden,
// comparison, timing loop and CSV come from kopt's harness library, events and NVTX from its
// cuda backend (kopt/harness/cuda.hpp).
//
// The golden of this family is the fp32 reference, not the baseline's bf16 output: under
// --write-golden, output() returns the reference GEMM on the same fp8 inputs (reference.cuh:
// exact bf16 products summed in fp32 on the GPU's tensor cores, whose rows are checked against a
// CPU fp32 reference first). The kernel
// still runs and is timed, and its own error against the reference is logged.
//
// Every run gets fresh inputs, made on the device from one seed (a few launches, no copy), and
// every timed run is checked on the device (check_output): the output is snapshotted (all of it,
// or past 64 rows its last row and 63 others drawn at random after the run), the inputs are made
// again from their seed into buffers of the family's own, the reference GEMM runs on them for
// those rows, and the snapshot is compared with it element by element; 32 bytes come back. The
// golden's run is compared with the golden in full, on the device too (compare_output).
#include "kopt_manifest.h"

#include "reference.cuh"

#include <kopt/harness/cuda.hpp>
#include <kopt/harness/harness.hpp>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace kh = kopt::harness;
namespace kc = kopt::harness::cuda;

/// Whether this run writes the golden: then outputs are the reference's.
enum class GoldenSource { kernel, reference };

/// One set of the family's inputs on the device: fp8 A [M, K] and B [N, K] as bytes, and fp32
/// scales [M, K / 128] and [N / 128, K / 128].
struct Inputs {
  Inputs() = default;
  Inputs(std::int64_t M, std::int64_t N, std::int64_t K, cudaStream_t stream)
      : M(M), N(N), K(K), a(M * K, stream), b(N * K, stream),
        sa(M * (K / a8w8_ref::kScaleBlock), stream),
        sb(N / a8w8_ref::kScaleBlock * (K / a8w8_ref::kScaleBlock), stream) {}

  /// Makes every input from `seed` on `stream` and returns without waiting: each element is a
  /// hash of the seed and its index (reference.cuh), so one seed gives the same bytes on any GPU
  /// and in either buffer set. The seeds of the four arrays are the ones every golden was made
  /// with; changing them changes the inputs of every config (see golden_is_current).
  void fill(std::uint64_t seed, cudaStream_t stream) {
    a8w8_ref::fill_fp8<<<1024, 256, 0, stream>>>(a.get(), M * K, seed * 4 + 0);
    KOPT_CUDA_CHECK(cudaGetLastError());
    a8w8_ref::fill_fp8<<<1024, 256, 0, stream>>>(b.get(), N * K, seed * 4 + 1);
    KOPT_CUDA_CHECK(cudaGetLastError());
    a8w8_ref::fill_scale<<<256, 256, 0, stream>>>(sa.get(), sa.size(), seed * 4 + 2);
    KOPT_CUDA_CHECK(cudaGetLastError());
    a8w8_ref::fill_scale<<<256, 256, 0, stream>>>(sb.get(), sb.size(), seed * 4 + 3);
    KOPT_CUDA_CHECK(cudaGetLastError());
  }

  /// Returns the reference's view of these inputs.
  a8w8_ref::RefArgs ref_args(cudaStream_t stream) const {
    return {M, N, K, a.get(), b.get(), sa.get(), sb.get(), stream};
  }

  std::int64_t M = 0, N = 0, K = 0;
  kc::DeviceBuffer<std::uint8_t> a, b;
  kc::DeviceBuffer<float> sa, sb;
};

class GemmProblem final : public kh::Problem {
public:
  GemmProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel,
              cudaStream_t stream, GoldenSource source)
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
    // Every buffer is stream-ordered: the next round's problem of the same config reuses it.
    inputs_ = Inputs(args_.M, args_.N, args_.K, stream);
    own_inputs_ = Inputs(args_.M, args_.N, args_.K, stream);
    c_ = kc::DeviceBuffer<std::uint16_t>(M * N, stream);
    const std::size_t checked = std::min<std::size_t>(M, kCheckedRows) * N;
    ref_ = kc::DeviceBuffer<float>(checked, stream);
    check_ = kc::DeviceCheck(kc::Dtype::bf16, checked, stream);
    if (args_.M > kCheckedRows) {
      rows_ = kc::DeviceBuffer<std::int64_t>(kCheckedRows, stream);
      sample_c_ = kc::DeviceBuffer<std::uint16_t>(checked, stream);
    }
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
    KOPT_CUDA_CHECK(cudaMemsetAsync(c_.get(), 0xFF, c_.bytes(), args_.stream));
  }

  void run() override { KOPT_CUDA_CHECK(kernel_.fn(args_)); }

  void sync() override {
    KOPT_CUDA_CHECK(cudaStreamSynchronize(args_.stream));
    KOPT_CUDA_CHECK(cudaGetLastError());
  }

  std::vector<float> output() override {
    sync();
    std::vector<std::uint16_t> bits(c_.size());
    KOPT_CUDA_CHECK(cudaMemcpy(bits.data(), c_.get(), c_.bytes(), cudaMemcpyDeviceToHost));
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
  // device (Problem::check_output). Up to kCheckedRows rows every output row is checked; past
  // that a sample of rows: the last (the edge tile) and kCheckedRows - 1 others drawn at random
  // after the kernel returned, fresh for every check, so no row is safe to get wrong. A kernel
  // that skips or fakes a share f of the rows passes one check with odds (1 - f)^63 at best, and
  // a keep test checks each config 20 times per side; the golden's run is compared in full.
  std::optional<kh::Comparison> check_output() override {
    if (args_.M <= kCheckedRows) {
      check_.snapshot(c_.get());
      compute_reference(ref_.get(), {nullptr, args_.M});
      return check_.compare(ref_.get(), tolerance());
    }
    draw_rows();
    a8w8_ref::gather_rows<<<256, 256, 0, args_.stream>>>(c_.get(), rows_.get(), kCheckedRows,
                                                         args_.N, sample_c_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    check_.snapshot(sample_c_.get());
    compute_reference(ref_.get(), {rows_.get(), kCheckedRows});
    return check_.compare(ref_.get(), tolerance());
  }

  // The golden run's output against the golden, on the device: the output snapshotted, the
  // golden's entry copied into the reference's buffer, compared there (Problem::compare_output).
  // A golden of another size is left to the host comparison, which names it.
  std::optional<kh::Comparison> compare_output(const std::vector<float> &golden) override {
    if (golden.size() != c_.size()) {
      return std::nullopt;
    }
    kc::DeviceBuffer<float> want(c_.size(), args_.stream);
    kc::DeviceCheck full(kc::Dtype::bf16, c_.size(), args_.stream);
    full.snapshot(c_.get());
    KOPT_CUDA_CHECK(cudaMemcpyAsync(want.get(), golden.data(), want.bytes(), cudaMemcpyHostToDevice,
                                    args_.stream));
    return full.compare(want.get(), tolerance());
  }

  // bf16 output (8 significant bits) of sums of O(sqrt(K)) magnitude, against an fp32 reference.
  kh::Tolerance tolerance() const override { return kh::tolerance_for("bf16"); }

private:
  // The output rows one check compares past which it samples (one tile of the reference).
  static constexpr std::int64_t kCheckedRows = 64;

  // Draws the rows the next check compares into rows_: M - 1 and kCheckedRows - 1 distinct others,
  // from the OS's entropy, ascending.
  void draw_rows() {
    // drawn_ is a member: the copy reads it after this returns.
    drawn_.assign(1, args_.M - 1);
    std::random_device entropy;
    std::mt19937_64 pick((static_cast<std::uint64_t>(entropy()) << 32) ^ entropy());
    std::uniform_int_distribution<std::int64_t> row(0, args_.M - 2);
    while (static_cast<std::int64_t>(drawn_.size()) < kCheckedRows) {
      const std::int64_t r = row(pick);
      if (std::find(drawn_.begin(), drawn_.end(), r) == drawn_.end()) {
        drawn_.push_back(r);
      }
    }
    std::sort(drawn_.begin(), drawn_.end());
    KOPT_CUDA_CHECK(cudaMemcpyAsync(rows_.get(), drawn_.data(), rows_.bytes(),
                                    cudaMemcpyHostToDevice, args_.stream));
  }

  // The fp32 reference of the current inputs' rows `rows` names into `out` ([rows.count, N]),
  // queued on the stream. The inputs are made again from their seed into the family's own
  // buffers, whose address the candidate never gets: its inputs are const by type only, and what
  // it writes there must not reach the reference.
  void compute_reference(float *out, a8w8_ref::RowSample rows) {
    own_inputs_.fill(seed_, args_.stream);
    KOPT_CUDA_CHECK(a8w8_ref::launch_reference_rows(own_inputs_.ref_args(args_.stream), rows, out));
  }

  // The fp32 reference of the whole output on the GPU, after checking its first and last rows
  // against the CPU reference on the same fp8 bytes (fp32 sums in another order: ~1e-4 apart at
  // K = 16384, so 1e-3, ten times under the bf16 tolerance).
  std::vector<float> reference() {
    const std::size_t M = args_.M, N = args_.N, K = args_.K, KB = K / kScaleBlock;
    const Inputs &in = own_inputs_;
    kc::DeviceBuffer<float> full(M * N, args_.stream);
    compute_reference(full.get(), {nullptr, args_.M});
    std::vector<float> golden(M * N);
    KOPT_CUDA_CHECK(cudaMemcpyAsync(golden.data(), full.get(), full.bytes(), cudaMemcpyDeviceToHost,
                                    args_.stream));
    std::vector<std::uint8_t> b(N * K), a(K);
    std::vector<float> sb(N / kScaleBlock * KB), sa(KB);
    KOPT_CUDA_CHECK(
        cudaMemcpyAsync(b.data(), in.b.get(), in.b.bytes(), cudaMemcpyDeviceToHost, args_.stream));
    KOPT_CUDA_CHECK(cudaMemcpyAsync(sb.data(), in.sb.get(), in.sb.bytes(), cudaMemcpyDeviceToHost,
                                    args_.stream));
    sync();
    for (std::size_t row : {std::size_t{0}, M - 1}) {
      KOPT_CUDA_CHECK(cudaMemcpy(a.data(), in.a.get() + row * K, K, cudaMemcpyDeviceToHost));
      KOPT_CUDA_CHECK(cudaMemcpy(sa.data(), in.sa.get() + row * KB, KB * sizeof(float),
                                 cudaMemcpyDeviceToHost));
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

  kc::NvtxRange range_; // first member: open while the buffers exist and every run is made
  const kopt_generated::KernelEntry &kernel_;
  GoldenSource source_;
  GemmArgs args_{};
  std::uint64_t seed_ = 0; // of the current inputs
  Inputs inputs_;          // the candidate's (args_ points at them)
  Inputs own_inputs_;      // the reference's, made again from seed_ for every check
  kc::DeviceBuffer<std::uint16_t> c_;
  kc::DeviceBuffer<float> ref_; // fp32 [min(M, kCheckedRows), N]: the checked rows' reference
  kc::DeviceCheck check_;
  kc::DeviceBuffer<std::int64_t> rows_;      // the rows a check compares, past kCheckedRows
  kc::DeviceBuffer<std::uint16_t> sample_c_; // those rows of the output, gathered
  std::vector<std::int64_t> drawn_;          // rows_'s host copy
};

// The stream every launch and event of the run goes to; created once, never destroyed (the
// process ends with it).
cudaStream_t harness_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    KOPT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
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
