// The anchor of the family's figures, every implementation measured in the same run, on the
// same GPU, with the same inputs and the same timer: kopt's candidates (00, the baseline; 02 and
// 03, the tensor-core kernels; anchor_kopt.cu compiles each into a function of its own), the
// implementations other translation units add (anchor_impl.hpp's add_external_impls), and the
// device's copy rate: a 2 GiB device-to-device copy (bytes read plus bytes written), the bytes
// of K and V each config must read over that rate (its copy-rate limit), and per config a copy
// of those bytes timed as the kernels are.
//
//   anchor configs.csv [--sets S] [--repeat R] [--csv FILE]
//
// Inputs are the family's: the config's context lengths (reference_host.hpp's config_contexts),
// S inputs sets per config, each with its contexts dealt in a fresh order and the cache's pages in
// a fresh random permutation (make_layout), q, K and V made on the device from a fresh seed
// (reference.cuh's fill_bf16: q of U(-8, 8), K and V of U(-1, 1), bf16). For each set every
// implementation's whole output is compared with the fp32 reference (reference.cuh's
// reference_rows) under the family's tolerance (atol 4e-3, rtol 1e-2); an implementation wrong
// on any set is reported `incorrect` and its time is not counted. Timing: per set, R rounds in
// which every implementation runs once, in an order rotated each round, each run after an L2
// flush (bench_flush's read of twice the L2 size, as the blockscale family's anchor does), timed
// by CUDA events around the call (launches included); the median of the S x R runs.
#include "../../cuda_gemm_a8w8_blockscale/bench/flush.cuh"
#include "../reference.cuh"
#include "anchor_impl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

// The family's kernels, one function per candidate (anchor_kopt.cu).
cudaError_t anchor_kopt_00(const PagedArgs &a);
cudaError_t anchor_kopt_02(const PagedArgs &a);
cudaError_t anchor_kopt_04(const PagedArgs &a);
cudaError_t anchor_kopt_07(const PagedArgs &a);
cudaError_t anchor_kopt_09(const PagedArgs &a);
cudaError_t anchor_kopt_10(const PagedArgs &a);

namespace {

using paged_anchor::Impl;
using paged_anchor::Impls;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

/// Device memory of n T, freed with the object.
template <class T> class DevBuf {
public:
  DevBuf() = default;
  explicit DevBuf(std::size_t n) : n_(n) {
    CHECK(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  DevBuf &operator=(DevBuf &&o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DevBuf() { cudaFree(p_); }
  T *get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

private:
  T *p_ = nullptr;
  std::size_t n_ = 0;
};

/// One config: its name and shape.
struct Config {
  std::string model;
  paged_ref::Shape shape;
};

std::vector<Config> read_configs(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    std::exit(2);
  }
  std::vector<Config> out;
  std::string line;
  std::getline(in, line); // header: model,batch,ctx_min,ctx_max,block_size,mtp,head_size,Hq,Hkv
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty())
      continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    Config c;
    paged_ref::Shape &s = c.shape;
    if (!(fields >> c.model >> s.batch >> s.ctx_min >> s.ctx_max >> s.block_size >> s.mtp >>
          s.head_size >> s.num_q_heads >> s.num_kv_heads) ||
        !s.problem().empty()) {
      std::fprintf(stderr, "%s:%d: expected model and 8 integers (%s)\n", path.c_str(), row,
                   s.problem().c_str());
      std::exit(2);
    }
    out.push_back(c);
  }
  return out;
}

// Counts the outputs outside atol + rtol |ref| (NaN included) and the largest |out - ref|.
__global__ void compare(const __nv_bfloat16 *out, const float *ref, std::int64_t n,
                        unsigned long long *bad, unsigned *max_abs_bits) {
  unsigned long long mine = 0;
  float worst = 0.f;
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
       i += (std::int64_t)gridDim.x * blockDim.x) {
    const float got = __bfloat162float(out[i]), want = ref[i], err = fabsf(got - want);
    if (!(err <= 4e-3f + 1e-2f * fabsf(want)))
      ++mine;
    if (err == err)
      worst = fmaxf(worst, err);
  }
  if (mine)
    atomicAdd(bad, mine);
  atomicMax(max_abs_bits, __float_as_uint(worst)); // non-negative floats order as their bits
}

/// One config's inputs, reference and output on the device.
struct Case {
  Case(const paged_ref::Shape &s, int num_blocks)
      : q(std::size_t(s.batch) * s.mtp * s.num_q_heads * s.head_size),
        k(std::size_t(num_blocks) * s.block_size * s.num_kv_heads * s.head_size), v(k.size()),
        tables(std::size_t(s.batch) * ((s.ctx_max + s.block_size - 1) / s.block_size)),
        lens(s.batch), out(q.size()), ref(q.size()), workspace((std::size_t{128} << 20) / 4),
        bad(1), max_abs(1) {}

  void fill(std::uint64_t seed, const paged_ref::Layout &l) {
    paged_ref::fill_bf16<<<1024, 256>>>(q.get(), q.size(), seed * 3 + 0, paged_ref::kQueryGain);
    paged_ref::fill_bf16<<<1024, 256>>>(k.get(), k.size(), seed * 3 + 1, 1.f);
    paged_ref::fill_bf16<<<1024, 256>>>(v.get(), v.size(), seed * 3 + 2, 1.f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(tables.get(), l.block_tables.data(), tables.bytes(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(lens.get(), l.context_lens.data(), lens.bytes(), cudaMemcpyHostToDevice));
  }

  /// Mismatches and the largest error of `out` against `ref`.
  std::pair<unsigned long long, float> check() {
    CHECK(cudaMemset(bad.get(), 0, bad.bytes()));
    CHECK(cudaMemset(max_abs.get(), 0, max_abs.bytes()));
    compare<<<512, 256>>>(out.get(), ref.get(), out.size(), bad.get(), max_abs.get());
    CHECK(cudaGetLastError());
    unsigned long long b = 0;
    unsigned bits = 0;
    CHECK(cudaMemcpy(&b, bad.get(), sizeof b, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&bits, max_abs.get(), sizeof bits, cudaMemcpyDeviceToHost));
    float m = 0;
    std::memcpy(&m, &bits, sizeof m);
    return {b, m};
  }

  DevBuf<__nv_bfloat16> q, k, v;
  DevBuf<int> tables, lens;
  DevBuf<__nv_bfloat16> out;
  DevBuf<float> ref, workspace;
  DevBuf<unsigned long long> bad;
  DevBuf<unsigned> max_abs;
};

/// A kopt candidate's entry point.
class Kopt final : public Impl {
public:
  Kopt(std::string name, cudaError_t (*fn)(const PagedArgs &)) : name_(std::move(name)), fn_(fn) {}
  std::string name() const override { return name_; }
  void prepare(const PagedArgs &, const paged_ref::Layout &) override {}
  void run(const PagedArgs &a) override { CHECK(fn_(a)); }

private:
  std::string name_;
  cudaError_t (*fn_)(const PagedArgs &);
};

/// K and V bytes a config reads: every token of every sequence, every KV head.
double kv_bytes(const paged_ref::Shape &s, const std::vector<int> &contexts) {
  double tokens = 0;
  for (int n : contexts)
    tokens += n;
  return 2.0 * 2.0 * tokens * s.num_kv_heads * s.head_size;
}

/// A device-to-device copy of the config's K and V bytes (half read, half written), timed as the
/// kernels are: the copy rate at this size, launch included. Writes no attention output.
class SameBytesCopy final : public Impl {
public:
  std::string name() const override { return "copy_same"; }
  bool checked() const override { return false; }
  /// Sizes the copy for a config: kv / 2 bytes read and as many written.
  void set_config(const paged_ref::Shape &s, const std::vector<int> &contexts) {
    const std::size_t bytes =
        static_cast<std::size_t>(kv_bytes(s, contexts) / 2) & ~std::size_t{255};
    from_ = DevBuf<unsigned char>(bytes);
    to_ = DevBuf<unsigned char>(bytes);
    CHECK(cudaMemset(from_.get(), 1, bytes));
  }
  void prepare(const PagedArgs &, const paged_ref::Layout &) override {}
  void run(const PagedArgs &a) override {
    CHECK(cudaMemcpyAsync(to_.get(), from_.get(), to_.bytes(), cudaMemcpyDeviceToDevice, a.stream));
  }

private:
  DevBuf<unsigned char> from_, to_;
};

struct Result {
  std::vector<double> us;
  unsigned long long mismatches = 0, elements = 0;
  float max_abs = 0;
  std::string status = "ok";
};

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// One timed run of `impl` after an L2 flush: microseconds between events around the call.
double time_once(Impl &impl, const PagedArgs &a, bench_flush::Flush &flush, int i, cudaEvent_t e0,
                 cudaEvent_t e1) {
  flush.run(i);
  CHECK(cudaEventRecord(e0, a.stream));
  impl.run(a);
  CHECK(cudaEventRecord(e1, a.stream));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  return 1000.0 * ms;
}

/// The 2 GiB device-to-device copy rate in TB/s, bytes read plus written, median of 20.
double copy_rate_tbs() {
  const std::size_t bytes = std::size_t{2} << 30;
  DevBuf<unsigned char> src(bytes), dst(bytes);
  CHECK(cudaMemset(src.get(), 1, bytes));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<double> us;
  for (int i = 0; i < 22; ++i) {
    CHECK(cudaEventRecord(e0));
    CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 2)
      us.push_back(1000.0 * ms);
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return 2.0 * bytes / median(us) * 1e-6;
}

PagedArgs make_args(const paged_ref::Shape &s, const paged_ref::Layout &l, Case &c) {
  PagedArgs a;
  a.num_seqs = s.batch;
  a.mtp = s.mtp;
  a.num_q_heads = s.num_q_heads;
  a.num_kv_heads = s.num_kv_heads;
  a.head_size = s.head_size;
  a.block_size = s.block_size;
  a.max_blocks_per_seq = l.max_blocks_per_seq;
  a.max_context_len = s.ctx_max;
  a.scale = 1.f / std::sqrt(static_cast<float>(s.head_size));
  a.q = c.q.get();
  a.k_cache = c.k.get();
  a.v_cache = c.v.get();
  a.block_tables = c.tables.get();
  a.context_lens = c.lens.get();
  a.out = c.out.get();
  a.workspace = c.workspace.get();
  a.workspace_bytes = c.workspace.bytes();
  a.stream = nullptr;
  return a;
}

/// Prepares and checks every supported implementation on one inputs set; returns those whose
/// output matched the reference so far.
void check_set(Impls &impls, std::vector<Result> &results, const PagedArgs &a,
               const paged_ref::Layout &l, Case &c) {
  CHECK(paged_ref::launch_reference(a, {nullptr, a.num_seqs}, c.ref.get()));
  for (std::size_t i = 0; i < impls.size(); ++i) {
    Result &r = results[i];
    if (r.status != "ok")
      continue;
    impls[i]->prepare(a, l);
    CHECK(cudaMemset(c.out.get(), 0xFF, c.out.bytes())); // bf16 NaN: unwritten outputs fail
    impls[i]->run(a);
    CHECK(cudaDeviceSynchronize());
    if (!impls[i]->checked())
      continue;
    const auto [bad, max_abs] = c.check();
    r.mismatches += bad;
    r.elements += c.out.size();
    r.max_abs = std::max(r.max_abs, max_abs);
    if (bad)
      r.status = "incorrect";
  }
}

/// Times one config over `sets` inputs sets; returns one Result per implementation.
std::vector<Result> run_config(const Config &cfg, int index, Impls &impls, int sets, int repeat,
                               bench_flush::Flush &flush, SameBytesCopy &copy) {
  const paged_ref::Shape &s = cfg.shape;
  const std::vector<int> contexts = paged_ref::config_contexts(s);
  copy.set_config(s, contexts);
  Case c(s, paged_ref::config_pages(s, contexts));
  std::vector<Result> results(impls.size());
  for (std::size_t i = 0; i < impls.size(); ++i) {
    paged_ref::Layout l0 = paged_ref::make_layout(s, contexts, 0);
    const std::string why = impls[i]->unsupported(make_args(s, l0, c));
    if (!why.empty()) {
      results[i].status = "unsupported";
      std::printf("  %s: unsupported: %s\n", impls[i]->name().c_str(), why.c_str());
    }
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (int set = 0; set < sets; ++set) {
    const std::uint64_t seed = paged_ref::mix(0xA7C40000ull + 1000ull * index + set);
    const paged_ref::Layout l =
        paged_ref::make_layout(s, contexts, paged_ref::mix(seed ^ 0x1a7007ull));
    c.fill(seed, l);
    const PagedArgs a = make_args(s, l, c);
    check_set(impls, results, a, l, c);
    for (int round = 0; round < repeat; ++round) {
      for (std::size_t k = 0; k < impls.size(); ++k) {
        const std::size_t i = (k + round + set) % impls.size();
        if (results[i].status == "ok")
          results[i].us.push_back(time_once(*impls[i], a, flush, round, e0, e1));
      }
    }
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return results;
}

void write_rows(std::FILE *csv, const Config &cfg, int index, const Impls &impls,
                const std::vector<Result> &results, double kv, double copy_tbs) {
  const paged_ref::Shape &s = cfg.shape;
  const double limit_us = kv / copy_tbs * 1e-6;
  for (std::size_t i = 0; i < impls.size(); ++i) {
    const Result &r = results[i];
    const double med = median(r.us);
    std::printf("  %-16s %-11s %10.1f us  (%zu runs, %llu/%llu outside, max abs %.4f)\n",
                impls[i]->name().c_str(), r.status.c_str(), med, r.us.size(), r.mismatches,
                r.elements, r.max_abs);
    if (!csv)
      continue;
    const auto [lo, hi] =
        r.us.empty() ? std::pair<double, double>{0, 0}
                     : std::pair<double, double>{*std::min_element(r.us.begin(), r.us.end()),
                                                 *std::max_element(r.us.begin(), r.us.end())};
    std::fprintf(
        csv,
        "%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%.3f,%.3f,%.3f,%zu,%llu,%llu,%.5f,%.0f,%.4f,%.3f\n",
        index, cfg.model.c_str(), s.batch, s.ctx_min, s.ctx_max, s.block_size, s.mtp, s.head_size,
        s.num_q_heads, s.num_kv_heads, impls[i]->name().c_str(), r.status.c_str(), med, lo, hi,
        r.us.size(), r.elements, r.mismatches, r.max_abs, kv, copy_tbs, limit_us);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: anchor configs.csv [--sets S] [--repeat R] [--csv FILE]\n");
    return 2;
  }
  int sets = 3, repeat = 10;
  std::string csv_path;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--sets")
      sets = std::atoi(argv[i + 1]);
    else if (opt == "--repeat")
      repeat = std::atoi(argv[i + 1]);
    else if (opt == "--csv")
      csv_path = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", opt.c_str());
      return 2;
    }
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  const double copy_tbs = copy_rate_tbs();
  std::printf("copy rate: %.3f TB/s (2 GiB device to device, read + written)\n", copy_tbs);
  bench_flush::Flush flush;
  Impls impls;
  impls.push_back(std::make_unique<Kopt>("kopt_00", anchor_kopt_00));
  impls.push_back(std::make_unique<Kopt>("kopt_02", anchor_kopt_02));
  impls.push_back(std::make_unique<Kopt>("kopt_04", anchor_kopt_04));
  impls.push_back(std::make_unique<Kopt>("kopt_07", anchor_kopt_07));
  impls.push_back(std::make_unique<Kopt>("kopt_09", anchor_kopt_09));
  impls.push_back(std::make_unique<Kopt>("kopt_10", anchor_kopt_10));
  paged_anchor::add_external_impls(impls);
  auto copy = std::make_unique<SameBytesCopy>();
  SameBytesCopy &copy_ref = *copy;
  impls.push_back(std::move(copy));
  std::FILE *csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv)
    std::fprintf(csv, "config,model,batch,ctx_min,ctx_max,block_size,mtp,head_size,num_q_heads,"
                      "num_kv_heads,impl,status,us_median,us_min,us_max,runs,checked_outputs,"
                      "mismatches,max_abs,kv_bytes,copy_tbs,limit_us\n");
  const std::vector<Config> configs = read_configs(argv[1]);
  for (std::size_t n = 0; n < configs.size(); ++n) {
    const Config &cfg = configs[n];
    const paged_ref::Shape &s = cfg.shape;
    const double kv = kv_bytes(s, paged_ref::config_contexts(s));
    std::printf("config %zu: %s batch %d ctx %d-%d page %d mtp %d head %d (%d/%d heads): K+V "
                "%.1f MB, limit %.1f us\n",
                n, cfg.model.c_str(), s.batch, s.ctx_min, s.ctx_max, s.block_size, s.mtp,
                s.head_size, s.num_q_heads, s.num_kv_heads, kv * 1e-6, kv / copy_tbs * 1e-6);
    std::fflush(stdout);
    const std::vector<Result> results =
        run_config(cfg, int(n), impls, sets, repeat, flush, copy_ref);
    write_rows(csv, cfg, int(n), impls, results, kv, copy_tbs);
    if (csv)
      std::fflush(csv);
  }
  if (csv)
    std::fclose(csv);
  return 0;
}
