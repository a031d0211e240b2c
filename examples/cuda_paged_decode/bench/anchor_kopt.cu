// One kopt candidate as a function of its own for bench/anchor.cu, compiled once per candidate:
//   nvcc ... -DANCHOR_HEADER='"<candidate>/paged_kernel.cuh"' -DANCHOR_ENTRY=anchor_kopt_02 \
//     -Dpaged=paged_c02 -Dpaged_decode_attention=paged_decode_attention_c02 anchor_kopt.cu
// The renames keep each candidate's namespace and entry template apart: the candidates' headers
// define the same names, and two definitions of one inline or template symbol would be merged
// by the linker. Before 06 the instance is the old hand rule's: WARPS 8 at head 256, else 4 (02
// to 05 always run 4 warps); from 06 on, with -DANCHOR_DISPATCH, the family's heuristic's.
#include "../paged_args.cuh"

#include ANCHOR_HEADER

#ifdef ANCHOR_DISPATCH
// A candidate whose instances take SPLIT (06 on): the instance family.json's heuristic picks,
// through anchor_split() of the header anchor.sh generates from those rules.
#include ANCHOR_DISPATCH
cudaError_t ANCHOR_ENTRY(const PagedArgs &a) {
  switch (anchor_split(a)) {
  case 0:
    return paged_decode_attention<0>(a);
  case 256:
    return paged_decode_attention<256>(a);
  case 1024:
    return paged_decode_attention<1024>(a);
  case 4096:
    return paged_decode_attention<4096>(a);
  default:
    return paged_decode_attention<1>(a);
  }
}
#else
cudaError_t ANCHOR_ENTRY(const PagedArgs &a) {
  return a.head_size >= 256 ? paged_decode_attention<8>(a) : paged_decode_attention<4>(a);
}
#endif
