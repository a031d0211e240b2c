#pragma once

// The arguments of one paged decode attention call: what the harness fills in and every
// candidate's kernel reads. Not in family.json's "editable": a candidate changes the kernel,
// never the call it answers.
//
// Layouts (row-major, bf16 as __nv_bfloat16):
//   q            [num_seqs, mtp, num_q_heads, head_size]
//   k_cache      [num_blocks, block_size, num_kv_heads, head_size]   (a page: block_size tokens)
//   v_cache      [num_blocks, block_size, num_kv_heads, head_size]
//   block_tables [num_seqs, max_blocks_per_seq] int32: the page of each logical block of a
//                sequence; entries past a sequence's last block hold -1
//   context_lens [num_seqs] int32: tokens of each sequence, its mtp query tokens included
//   out          [num_seqs, mtp, num_q_heads, head_size]
// Query token j (0 <= j < mtp) of sequence s sits at position context_lens[s] - mtp + j and
// attends to every key position <= its own. Query head h reads KV head h / (num_q_heads /
// num_kv_heads) (grouped-query attention).

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

struct PagedArgs {
  int num_seqs = 0;
  int mtp = 0; ///< query tokens per sequence (1: plain decode; 2, 4: draft tokens)
  int num_q_heads = 0;
  int num_kv_heads = 0; ///< divides num_q_heads
  int head_size = 0;    ///< 64, 128 or 256
  int block_size = 0;   ///< tokens per page: 16 or 32
  int max_blocks_per_seq = 0;
  int max_context_len = 0; ///< no context_lens entry is larger
  float scale = 0.f;       ///< softmax scale, applied to q . k
  const __nv_bfloat16 *q = nullptr;
  const __nv_bfloat16 *k_cache = nullptr;
  const __nv_bfloat16 *v_cache = nullptr;
  const int *block_tables = nullptr;
  const int *context_lens = nullptr;
  __nv_bfloat16 *out = nullptr;
  float *workspace = nullptr; ///< scratch device memory the kernel may use as it likes
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};
