// The host side of examples/cuda_paged_decode: its family.json and configs read as kopt reads
// them, each config a shape the kernel does, its classes, the run layouts (ragged contexts,
// scattered pages), and the CPU reference against a naive computation of the same attention.
#include "../../examples/cuda_paged_decode/reference_host.hpp"

#include "spec/family.hpp"
#include "temp_dir.hpp"
#include "util/csv.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

using kopt::test::fixture;
using paged_ref::Shape;

namespace {

std::filesystem::path family_json() {
  return fixture("../../examples/cuda_paged_decode/family.json");
}

// One test problem's inputs: per sequence its keys and values by logical position
// ([seq][pos][kvh][d]), scattered into a paged cache by the run's layout, and its queries.
struct Problem {
  Shape shape;
  paged_ref::Layout layout;
  std::vector<std::vector<float>> k_logical, v_logical;
  std::vector<float> q, k_cache, v_cache;
  float scale = 0.f;
};

Problem make_problem(const Shape &s, std::uint64_t seed) {
  Problem p;
  p.shape = s;
  p.scale = 1.f / std::sqrt(float(s.head_size));
  p.layout = paged_ref::make_layout(s, paged_ref::config_contexts(s), seed);
  paged_ref::HostRng rng(seed + 1);
  auto draw = [&](float gain) { return gain * (float(rng.next() >> 40) * 0x1p-23f - 1.f); };
  const int row = s.num_kv_heads * s.head_size;
  p.q.resize(std::size_t(s.batch) * s.mtp * s.num_q_heads * s.head_size);
  for (float &x : p.q) {
    x = draw(8.f);
  }
  const std::size_t cache = std::size_t(p.layout.num_blocks) * s.block_size * row;
  p.k_cache.assign(cache, NAN); // a slot no sequence owns poisons whatever reads it
  p.v_cache.assign(cache, NAN);
  for (int seq = 0; seq < s.batch; ++seq) {
    const int ctx = p.layout.context_lens[seq];
    p.k_logical.emplace_back(std::size_t(ctx) * row);
    p.v_logical.emplace_back(std::size_t(ctx) * row);
    for (int pos = 0; pos < ctx; ++pos) {
      const int page =
          p.layout
              .block_tables[std::size_t(seq) * p.layout.max_blocks_per_seq + pos / s.block_size];
      const std::size_t slot = (std::size_t(page) * s.block_size + pos % s.block_size) * row;
      for (int e = 0; e < row; ++e) {
        p.k_logical[seq][std::size_t(pos) * row + e] = p.k_cache[slot + e] = draw(1.f);
        p.v_logical[seq][std::size_t(pos) * row + e] = p.v_cache[slot + e] = draw(1.f);
      }
    }
  }
  return p;
}

// The naive attention of one row in double, from the logical keys and values: an explicit
// causal mask over every position of the sequence, `extra` keys past the query's own (0: right).
std::vector<double> naive_row(const Problem &p, int seq, int j, int hq, int extra) {
  const Shape &s = p.shape;
  const int D = s.head_size, ctx = p.layout.context_lens[seq], kvh = hq / s.group();
  const int query_pos = ctx - s.mtp + j;
  const float *q = p.q.data() + ((std::size_t(seq) * s.mtp + j) * s.num_q_heads + hq) * D;
  std::vector<double> w(ctx, 0.0), out(D, 0.0);
  double total = 0.0, top = -INFINITY;
  for (int pos = 0; pos < ctx; ++pos) {
    if (pos <= query_pos + extra) {
      const float *k = p.k_logical[seq].data() + (std::size_t(pos) * s.num_kv_heads + kvh) * D;
      double dot = 0.0;
      for (int d = 0; d < D; ++d) {
        dot += double(q[d]) * k[d];
      }
      w[pos] = dot * p.scale;
      top = std::max(top, w[pos]);
    }
  }
  for (int pos = 0; pos < ctx; ++pos) {
    w[pos] = pos <= query_pos + extra ? std::exp(w[pos] - top) : 0.0;
    total += w[pos];
  }
  for (int pos = 0; pos < ctx; ++pos) {
    const float *v = p.v_logical[seq].data() + (std::size_t(pos) * s.num_kv_heads + kvh) * D;
    for (int d = 0; d < D; ++d) {
      out[d] += w[pos] / total * v[d];
    }
  }
  return out;
}

// The largest |cpu_reference_row - naive_row(extra)| over every output element of `p`.
double largest_difference(const Problem &p, int extra) {
  const Shape &s = p.shape;
  const paged_ref::HostInputs in{s,        p.scale, p.q.data(), p.k_cache.data(), p.v_cache.data(),
                                 &p.layout};
  std::vector<float> got(s.head_size);
  double worst = 0.0;
  for (int seq = 0; seq < s.batch; ++seq) {
    for (int j = 0; j < s.mtp; ++j) {
      for (int h = 0; h < s.num_q_heads; ++h) {
        paged_ref::cpu_reference_row(in, seq, j, h, got.data());
        const std::vector<double> want = naive_row(p, seq, j, h, extra);
        for (int d = 0; d < s.head_size; ++d) {
          const double diff = std::fabs(got[d] - want[d]);
          worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
        }
      }
    }
  }
  return worst;
}

Shape tiny(int mtp) { // 5 sequences, 2 groups of 3 query heads, ragged 9..70 keys
  Shape s;
  s.batch = 5;
  s.ctx_min = 9;
  s.ctx_max = 70;
  s.block_size = 16;
  s.mtp = mtp;
  s.head_size = 64;
  s.num_q_heads = 6;
  s.num_kv_heads = 2;
  return s;
}

} // namespace

TEST_SUITE_BEGIN("example::cuda_paged_decode");

TEST_CASE("the family's configs parse, are shapes the kernel does, and form its classes") {
  const kopt::spec::Family f = kopt::spec::load_family(family_json()); // checks configs.csv too
  CHECK(f.classes.columns == std::vector<std::string>{"block_size", "mtp", "head_size"});
  const kopt::util::CsvTable t = kopt::util::read_csv(f.configs);
  REQUIRE(t.rows.size() >= 12);
  CHECK(t.rows.size() <= 20);
  std::set<std::string> classes;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    auto get = [&](const char *c) { return std::stoi(t.rows[i][t.column(c)]); };
    const Shape s{get("batch"), get("ctx_min"),   get("ctx_max"),     get("block_size"),
                  get("mtp"),   get("head_size"), get("num_q_heads"), get("num_kv_heads")};
    INFO(t.where(i));
    CHECK(s.problem() == "");
    CHECK(s.group() * s.mtp <= 32); // the kernel's rows per CTA
    CHECK(s.batch >= 1);
    CHECK(s.batch <= 256);
    CHECK(s.ctx_max <= 32768);
    classes.insert(kopt::spec::config_class(f.classes, t.header, t.rows[i]));
  }
  CHECK(classes == std::set<std::string>{
                       "block_size=16,mtp=1,head_size=128", "block_size=16,mtp=4,head_size=128",
                       "block_size=16,mtp=2,head_size=128", "block_size=32,mtp=1,head_size=128",
                       "block_size=16,mtp=1,head_size=64", "block_size=32,mtp=4,head_size=64",
                       "block_size=16,mtp=1,head_size=256", "block_size=32,mtp=2,head_size=256"});
}

TEST_CASE("a bad shape is named") {
  Shape s = tiny(2);
  s.num_kv_heads = 4;
  CHECK(s.problem() == "num_kv_heads must divide num_q_heads");
  s = tiny(3);
  CHECK(s.problem() == "mtp must be 1, 2 or 4");
  s = tiny(4);
  s.ctx_min = 3;
  CHECK(s.problem() == "contexts must satisfy mtp <= ctx_min <= ctx_max");
}

TEST_CASE("a run's layout: the config's contexts in a fresh order, every page once, scattered") {
  const Shape s = tiny(4);
  const std::vector<int> contexts = paged_ref::config_contexts(s);
  CHECK(contexts == paged_ref::config_contexts(s)); // drawn from the shape alone
  CHECK(contexts[0] == s.ctx_max);
  CHECK(contexts[1] == s.ctx_min);
  const paged_ref::Layout a = paged_ref::make_layout(s, contexts, 7);
  const paged_ref::Layout b = paged_ref::make_layout(s, contexts, 8);
  CHECK(a.block_tables != b.block_tables);
  CHECK(std::multiset<int>(a.context_lens.begin(), a.context_lens.end()) ==
        std::multiset<int>(contexts.begin(), contexts.end()));
  std::multiset<int> pages;
  int in_order = 0;
  for (int seq = 0; seq < s.batch; ++seq) {
    const int blocks = (a.context_lens[seq] + s.block_size - 1) / s.block_size;
    for (int blk = 0; blk < a.max_blocks_per_seq; ++blk) {
      const int page = a.block_tables[std::size_t(seq) * a.max_blocks_per_seq + blk];
      if (blk >= blocks) {
        CHECK(page == -1);
        continue;
      }
      pages.insert(page);
      in_order += blk > 0 && page == a.block_tables[seq * a.max_blocks_per_seq + blk - 1] + 1;
    }
  }
  CHECK(int(pages.size()) == a.num_blocks);
  CHECK(int(std::set<int>(pages.begin(), pages.end()).size()) == a.num_blocks); // each once
  CHECK(*pages.begin() == 0);
  CHECK(*pages.rbegin() == a.num_blocks - 1);
  CHECK(in_order < a.num_blocks / 2);
}

TEST_CASE("the CPU reference is the naive attention, and one key more is not") {
  for (int mtp : {1, 2, 4}) {
    const Problem p = make_problem(tiny(mtp), 1234 + mtp);
    INFO("mtp=" << mtp);
    // fp32 sums of at most 70 terms against double: about 1e-7 apart.
    CHECK(largest_difference(p, 0) < 1e-5);
    if (mtp > 1) { // the fixture causal_off_by_one's bug, caught at the kernel's tolerance
      CHECK(largest_difference(p, 1) > 4e-3 + 1e-2);
    }
  }
}
