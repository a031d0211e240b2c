// The cuda_paged_decode harness: makes each run's queries, paged K/V cache, block tables and
// context lengths, runs the kernel the candidate's dispatch picks (or --kernel); configs,
// golden, comparison, timing loop and CSV come from kopt's harness library, events and NVTX from
// its cuda backend (kopt/harness/cuda.hpp).
//
// Inputs. A config's context lengths are drawn once from its columns (reference_host.hpp:
// ctx_max, ctx_min and uniform draws between), so every run does the same amount of work; each
// run deals them to the sequences in a fresh order, hands the cache's pages out in a fresh random
// permutation (no sequence's blocks contiguous), and fills q, K and V with fresh values made on
// the device from one seed (reference.cuh). Nothing of one run is the next one's.
//
// The golden is the fp32 reference, not the baseline's bf16 output: under --write-golden,
// output() returns the reference on the same inputs, whose rows of the longest and the
// shortest sequence are checked against the CPU reference first. Every timed run is checked on
// the device (check_output): the output is snapshotted (all of it, or past 16 sequences the
// longest's, the shortest's and 14 others drawn at random after the run), the inputs are made
// again from their seed into buffers of the family's own, the reference runs on those sequences,
// and the snapshot is compared with it element by element.
#include "kopt_manifest.h"

#include "reference.cuh"

#include <kopt/harness/cuda.hpp>
#include <kopt/harness/harness.hpp>

#include <algorithm>
#include <cmath>
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
using paged_ref::Shape;

/// Whether this run writes the golden: then outputs are the reference's.
enum class GoldenSource { kernel, reference };

/// Scratch memory every call may use (PagedArgs::workspace): room for 32 fp32 partial outputs of
/// every query row of the largest config.
constexpr std::size_t kWorkspaceBytes = std::size_t{128} << 20;

/// One set of the family's inputs on the device, sized for one config.
struct Inputs {
  Inputs() = default;
  Inputs(const Shape &s, const paged_ref::Layout &l, cudaStream_t stream)
      : q(std::size_t(s.batch) * s.mtp * s.num_q_heads * s.head_size, stream),
        k(std::size_t(l.num_blocks) * s.block_size * s.num_kv_heads * s.head_size, stream),
        v(k.size(), stream), tables(l.block_tables.size(), stream), lens(s.batch, stream) {}

  /// Makes q, K and V from `seed` and copies the layout's tables, on `stream`.
  void fill(std::uint64_t seed, const paged_ref::Layout &l, cudaStream_t stream) {
    paged_ref::fill_bf16<<<1024, 256, 0, stream>>>(q.get(), q.size(), seed * 3 + 0,
                                                   paged_ref::kQueryGain);
    KOPT_CUDA_CHECK(cudaGetLastError());
    paged_ref::fill_bf16<<<1024, 256, 0, stream>>>(k.get(), k.size(), seed * 3 + 1, 1.f);
    KOPT_CUDA_CHECK(cudaGetLastError());
    paged_ref::fill_bf16<<<1024, 256, 0, stream>>>(v.get(), v.size(), seed * 3 + 2, 1.f);
    KOPT_CUDA_CHECK(cudaGetLastError());
    KOPT_CUDA_CHECK(cudaMemcpyAsync(tables.get(), l.block_tables.data(), tables.bytes(),
                                    cudaMemcpyHostToDevice, stream));
    KOPT_CUDA_CHECK(cudaMemcpyAsync(lens.get(), l.context_lens.data(), lens.bytes(),
                                    cudaMemcpyHostToDevice, stream));
  }

  /// Points `a`'s inputs at these buffers.
  void point(PagedArgs &a) const {
    a.q = q.get();
    a.k_cache = k.get();
    a.v_cache = v.get();
    a.block_tables = tables.get();
    a.context_lens = lens.get();
  }

  kc::DeviceBuffer<__nv_bfloat16> q, k, v;
  kc::DeviceBuffer<int> tables, lens;
};

/// Reads the config's shape, naming the config and what is wrong.
Shape read_shape(const kh::Config &config) {
  auto get = [&](const char *column) { return static_cast<int>(config.get_int(column)); };
  Shape s;
  s.batch = get("batch");
  s.ctx_min = get("ctx_min");
  s.ctx_max = get("ctx_max");
  s.block_size = get("block_size");
  s.mtp = get("mtp");
  s.head_size = get("head_size");
  s.num_q_heads = get("num_q_heads");
  s.num_kv_heads = get("num_kv_heads");
  const std::string problem = s.problem();
  if (!problem.empty()) {
    throw kh::Error(config.where() + ": " + problem);
  }
  return s;
}

std::vector<float> bf16_to_floats(const std::vector<std::uint16_t> &bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    out[i] = paged_ref::bf16_to_float(bits[i]);
  }
  return out;
}

template <class T> std::vector<T> to_host(const T *device, std::size_t count) {
  std::vector<T> host(count);
  KOPT_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

class PagedProblem final : public kh::Problem {
public:
  PagedProblem(const kh::Config &config, const kopt_generated::KernelEntry &kernel,
               cudaStream_t stream, GoldenSource source)
      : range_("config_" + std::to_string(config.index()) + " " + config.key()), kernel_(kernel),
        source_(source), key_(config.key()), shape_(read_shape(config)),
        contexts_(paged_ref::config_contexts(shape_)),
        layout_(paged_ref::make_layout(shape_, contexts_, 0)) {
    const Shape &s = shape_;
    inputs_ = Inputs(s, layout_, stream);
    own_inputs_ = Inputs(s, layout_, stream);
    per_seq_ = std::int64_t(s.mtp) * s.num_q_heads * s.head_size;
    out_ = kc::DeviceBuffer<std::uint16_t>(std::size_t(s.batch) * per_seq_, stream);
    workspace_ = kc::DeviceBuffer<float>(kWorkspaceBytes / sizeof(float), stream);
    const int checked = std::min(s.batch, kCheckedSeqs);
    ref_ = kc::DeviceBuffer<float>(std::size_t(checked) * per_seq_, stream);
    check_ = kc::DeviceCheck(kc::Dtype::bf16, std::size_t(checked) * per_seq_, stream);
    if (s.batch > kCheckedSeqs) {
      seqs_ = kc::DeviceBuffer<int>(kCheckedSeqs, stream);
      sample_out_ = kc::DeviceBuffer<std::uint16_t>(std::size_t(checked) * per_seq_, stream);
    }
    args_.num_seqs = s.batch;
    args_.mtp = s.mtp;
    args_.num_q_heads = s.num_q_heads;
    args_.num_kv_heads = s.num_kv_heads;
    args_.head_size = s.head_size;
    args_.block_size = s.block_size;
    args_.max_blocks_per_seq = layout_.max_blocks_per_seq;
    args_.max_context_len = s.ctx_max;
    args_.scale = 1.f / std::sqrt(static_cast<float>(s.head_size));
    inputs_.point(args_);
    args_.out = reinterpret_cast<__nv_bfloat16 *>(out_.get());
    args_.workspace = workspace_.get();
    args_.workspace_bytes = workspace_.bytes();
    args_.stream = stream;
  }

  // One 64-bit seed from the Rng (the config's for the golden's run, fresh entropy for the
  // others): the layout on the host, the values on the device; no wait.
  void fill_inputs(kh::Rng &rng) override {
    seed_ = rng.next_u64();
    layout_ = paged_ref::make_layout(shape_, contexts_, paged_ref::mix(seed_ ^ 0x1a7007ull));
    inputs_.fill(seed_, layout_, args_.stream);
  }

  // 0xFFFF is a bf16 NaN: an element the kernel never writes fails the comparison.
  void poison_output() override {
    KOPT_CUDA_CHECK(cudaMemsetAsync(out_.get(), 0xFF, out_.bytes(), args_.stream));
  }

  void run() override { KOPT_CUDA_CHECK(kernel_.fn(args_)); }

  void sync() override {
    KOPT_CUDA_CHECK(cudaStreamSynchronize(args_.stream));
    KOPT_CUDA_CHECK(cudaGetLastError());
  }

  std::vector<float> output() override {
    sync();
    std::vector<float> out = bf16_to_floats(to_host(out_.get(), out_.size()));
    if (source_ == GoldenSource::kernel) {
      return out;
    }
    std::vector<float> golden = reference();
    const kh::Comparison c = kh::compare(out, golden, tolerance());
    std::cerr << "harness: golden: reference of " << range_name() << "; kernel " << kernel_.name
              << " against it: " << c.mismatches << "/" << c.elements << " outside, max abs "
              << c.max_abs << "\n";
    return golden;
  }

  // The snapshot first, then the reference of this run's inputs, then the comparison on the
  // device. Up to kCheckedSeqs sequences all are checked; past that the longest, the shortest
  // and kCheckedSeqs - 2 others drawn at random after the kernel returned, fresh every check. A
  // kernel wrong on a share f of the sequences passes one check with odds (1 - f)^14 at best,
  // and a keep test checks each config 20 times per side; the golden's run is compared in full.
  std::optional<kh::Comparison> check_output() override {
    if (shape_.batch <= kCheckedSeqs) {
      check_.snapshot(out_.get());
      compute_reference(ref_.get(), {nullptr, shape_.batch});
      return check_.compare(ref_.get(), tolerance());
    }
    draw_seqs();
    paged_ref::gather_seqs<<<256, 256, 0, args_.stream>>>(out_.get(), seqs_.get(), kCheckedSeqs,
                                                          per_seq_, sample_out_.get());
    KOPT_CUDA_CHECK(cudaGetLastError());
    check_.snapshot(sample_out_.get());
    compute_reference(ref_.get(), {seqs_.get(), kCheckedSeqs});
    return check_.compare(ref_.get(), tolerance());
  }

  // The golden run's output against the golden, on the device.
  std::optional<kh::Comparison> compare_output(const std::vector<float> &golden) override {
    if (golden.size() != out_.size()) {
      return std::nullopt;
    }
    kc::DeviceBuffer<float> want(out_.size(), args_.stream);
    kc::DeviceCheck full(kc::Dtype::bf16, out_.size(), args_.stream);
    full.snapshot(out_.get());
    KOPT_CUDA_CHECK(cudaMemcpyAsync(want.get(), golden.data(), want.bytes(), cudaMemcpyHostToDevice,
                                    args_.stream));
    return full.compare(want.get(), tolerance());
  }

  // An output is a convex mix of values in (-1, 1). An honest kernel differs from the fp32
  // reference by the bf16 rounding of the output (2^-9 |o|) and, where it multiplies bf16
  // weights into the values on tensor cores, by at most 2^-9 max|v| < 2e-3 plus 2^-9 |o| for
  // the sum's normalisation: atol 4e-3 and rtol 1e-2 leave twice that. One key too many or too
  // few moves an output by its weight times |v - o|: caught where that weight passes about 1%
  // (NOTES.md).
  kh::Tolerance tolerance() const override { return kh::Tolerance{4e-3, 1e-2}; }

private:
  // The sequences one check compares past which it samples.
  static constexpr int kCheckedSeqs = 16;

  std::string range_name() const { return key_; }
  void draw_seqs();
  void compute_reference(float *out, paged_ref::SeqSample seqs);
  std::vector<float> reference();
  void check_against_cpu(const std::vector<float> &golden, int seq);

  kc::NvtxRange range_; // first member: open while the buffers exist and every run is made
  const kopt_generated::KernelEntry &kernel_;
  GoldenSource source_;
  std::string key_; // the config's
  Shape shape_;
  std::vector<int> contexts_; // the config's context lengths
  paged_ref::Layout layout_;  // the current run's tables (the family's copy)
  PagedArgs args_{};
  std::uint64_t seed_ = 0; // of the current run's values
  std::int64_t per_seq_ = 0;
  Inputs inputs_;     // the candidate's (args_ points at them)
  Inputs own_inputs_; // the reference's, made again from seed_ and layout_ for every check
  kc::DeviceBuffer<std::uint16_t> out_;
  kc::DeviceBuffer<float> workspace_;
  kc::DeviceBuffer<float> ref_; // fp32 [min(batch, kCheckedSeqs), mtp, Hq, D]
  kc::DeviceCheck check_;
  kc::DeviceBuffer<int> seqs_;                 // the sequences a check compares, past 16
  kc::DeviceBuffer<std::uint16_t> sample_out_; // their outputs, gathered
  std::vector<int> drawn_;                     // seqs_'s host copy
};

// Draws the sequences the next check compares into seqs_: the longest and the shortest of this
// run, and kCheckedSeqs - 2 distinct others from the OS's entropy, ascending.
void PagedProblem::draw_seqs() {
  const std::vector<int> &lens = layout_.context_lens;
  const int longest = int(std::max_element(lens.begin(), lens.end()) - lens.begin());
  const int shortest = int(std::min_element(lens.begin(), lens.end()) - lens.begin());
  drawn_.assign({longest});
  if (shortest != longest) {
    drawn_.push_back(shortest);
  }
  std::random_device entropy;
  std::mt19937_64 pick((static_cast<std::uint64_t>(entropy()) << 32) ^ entropy());
  std::uniform_int_distribution<int> seq(0, shape_.batch - 1);
  while (static_cast<int>(drawn_.size()) < kCheckedSeqs) {
    const int s = seq(pick);
    if (std::find(drawn_.begin(), drawn_.end(), s) == drawn_.end()) {
      drawn_.push_back(s);
    }
  }
  std::sort(drawn_.begin(), drawn_.end());
  KOPT_CUDA_CHECK(cudaMemcpyAsync(seqs_.get(), drawn_.data(), seqs_.bytes(), cudaMemcpyHostToDevice,
                                  args_.stream));
}

// The fp32 reference of the sequences `seqs` names into `out`, queued on the stream. The inputs
// are made again from the run's seed and layout into the family's own buffers, whose address the
// candidate never gets: what it writes into its inputs must not reach the reference.
void PagedProblem::compute_reference(float *out, paged_ref::SeqSample seqs) {
  own_inputs_.fill(seed_, layout_, args_.stream);
  PagedArgs g = args_;
  own_inputs_.point(g);
  g.out = nullptr;
  g.workspace = nullptr;
  KOPT_CUDA_CHECK(paged_ref::launch_reference(g, seqs, out));
}

// The fp32 reference of the whole output on the GPU, after checking the rows of the longest and
// the shortest sequence against the CPU reference on the same bf16 inputs.
std::vector<float> PagedProblem::reference() {
  kc::DeviceBuffer<float> full(out_.size(), args_.stream);
  compute_reference(full.get(), {nullptr, shape_.batch});
  sync();
  std::vector<float> golden = to_host(full.get(), full.size());
  const std::vector<int> &lens = layout_.context_lens;
  check_against_cpu(golden, int(std::max_element(lens.begin(), lens.end()) - lens.begin()));
  check_against_cpu(golden, int(std::min_element(lens.begin(), lens.end()) - lens.begin()));
  return golden;
}

// Compares sequence seq's rows of the GPU reference with the CPU reference (fp32 sums in another
// order and expf against exp: about 1e-6 apart, so 1e-3, four times under the kernel's
// tolerance). The sequence's pages are copied into a cache of its own, in table order.
void PagedProblem::check_against_cpu(const std::vector<float> &golden, int seq) {
  const Shape &s = shape_;
  const int ctx = layout_.context_lens[seq], blocks = (ctx + s.block_size - 1) / s.block_size;
  const std::size_t page = std::size_t(s.block_size) * s.num_kv_heads * s.head_size;
  std::vector<std::uint16_t> k(blocks * page), v(blocks * page);
  for (int b = 0; b < blocks; ++b) {
    const std::size_t from =
        std::size_t(layout_.block_tables[std::size_t(seq) * layout_.max_blocks_per_seq + b]) * page;
    KOPT_CUDA_CHECK(cudaMemcpy(k.data() + b * page, own_inputs_.k.get() + from, page * 2,
                               cudaMemcpyDeviceToHost));
    KOPT_CUDA_CHECK(cudaMemcpy(v.data() + b * page, own_inputs_.v.get() + from, page * 2,
                               cudaMemcpyDeviceToHost));
  }
  const std::vector<float> q = bf16_to_floats(
      to_host(reinterpret_cast<const std::uint16_t *>(own_inputs_.q.get()) + seq * per_seq_,
              std::size_t(per_seq_)));
  const std::vector<float> kf = bf16_to_floats(k), vf = bf16_to_floats(v);
  paged_ref::Layout one;
  one.context_lens = {ctx};
  one.max_blocks_per_seq = one.num_blocks = blocks;
  for (int b = 0; b < blocks; ++b) {
    one.block_tables.push_back(b);
  }
  Shape s1 = s;
  s1.batch = 1;
  const paged_ref::HostInputs in{s1, args_.scale, q.data(), kf.data(), vf.data(), &one};
  std::vector<float> want(s.head_size);
  for (int j = 0; j < s.mtp; ++j) {
    for (int h = 0; h < s.num_q_heads; ++h) {
      paged_ref::cpu_reference_row(in, 0, j, h, want.data());
      const float *got =
          golden.data() + seq * per_seq_ + (std::size_t(j) * s.num_q_heads + h) * s.head_size;
      for (int d = 0; d < s.head_size; ++d) {
        if (!(std::fabs(got[d] - want[d]) <= 1e-3f * (1.f + std::fabs(want[d])))) {
          throw kh::Error("the GPU reference differs from the CPU reference at sequence " +
                          std::to_string(seq) + ", token " + std::to_string(j) + ", head " +
                          std::to_string(h) + ", element " + std::to_string(d) + ": " +
                          std::to_string(got[d]) + " vs " + std::to_string(want[d]));
        }
      }
    }
  }
}

// The stream every launch and event of the run goes to; created once, never destroyed.
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
    const std::int64_t dims[] = {config.get_int("batch"), config.get_int("ctx_max"),
                                 config.get_int("head_size"), config.get_int("mtp")};
    return std::string(kopt_generated::dispatch(dims).name);
  };
  spec.make_problem = [source](const kh::Config &config, const std::string &name) {
    const kopt_generated::KernelEntry *kernel = kopt_generated::find_kernel(name.c_str());
    if (!kernel) {
      throw kh::Error("kernel " + name + " is not compiled in this candidate");
    }
    return std::make_unique<PagedProblem>(config, *kernel, harness_stream(), source);
  };
  spec.make_timer = [] { return std::make_unique<kc::EventTimer>(harness_stream()); };
  return kh::run_main(argc, argv, spec);
}
