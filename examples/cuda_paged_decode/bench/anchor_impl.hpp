#pragma once
// One implementation the anchor times (bench/anchor.cu): kopt's candidates, a same-bytes copy,
// and any other implementation a translation unit adds through add_external_impls.
//
// For each inputs set (a config's fresh values and page permutation) the anchor calls
// prepare() once, untimed (an implementation converts the cache into its own layout or plans
// its launch here), then run() once to check its output against the fp32 reference, then run()
// again for every timed repeat, each after an L2 flush. run() queues its launches on a.stream,
// reads only a's inputs (or what prepare() made from them) and writes a.out: bf16 [num_seqs,
// mtp, num_q_heads, head_size].
#include "../paged_args.cuh"
#include "../reference_host.hpp"

#include <memory>
#include <string>
#include <vector>

namespace paged_anchor {

class Impl {
public:
  virtual ~Impl() = default;
  /// The column name of its times: letters, digits and '_'.
  virtual std::string name() const = 0;
  /// "" when it does the shape, else why not (the row then reads "unsupported").
  virtual std::string unsupported(const PagedArgs &a) const {
    (void)a;
    return "";
  }
  /// Untimed work for one inputs set; `l` is that set's context_lens and block_tables (host).
  virtual void prepare(const PagedArgs &a, const paged_ref::Layout &l) = 0;
  /// The timed call.
  virtual void run(const PagedArgs &a) = 0;
  /// Whether its output is compared with the reference (false: a copy that writes no output).
  virtual bool checked() const { return true; }
};

using Impls = std::vector<std::unique_ptr<Impl>>;

/// Adds the implementations of translation units outside the family (anchor_none.cu adds none).
void add_external_impls(Impls &impls);

} // namespace paged_anchor
