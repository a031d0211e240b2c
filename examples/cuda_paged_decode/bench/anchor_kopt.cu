// One kopt candidate as a function of its own for bench/anchor.cu, compiled once per candidate:
//   nvcc ... -DANCHOR_HEADER='"<candidate>/paged_kernel.cuh"' -DANCHOR_ENTRY=anchor_kopt_02 \
//     -Dpaged=paged_c02 -Dpaged_decode_attention=paged_decode_attention_c02 anchor_kopt.cu
// The renames keep each candidate's namespace and entry template apart: the candidates' headers
// define the same names, and two definitions of one inline or template symbol would be merged
// by the linker. The instance is the family's heuristic's (family.json): WARPS 8 at head 256,
// else 4 (02 and 03 always run 4 warps).
#include "../paged_args.cuh"

#include ANCHOR_HEADER

cudaError_t ANCHOR_ENTRY(const PagedArgs &a) {
  return a.head_size >= 256 ? paged_decode_attention<8>(a) : paged_decode_attention<4>(a);
}
