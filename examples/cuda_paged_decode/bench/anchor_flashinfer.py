#!/usr/bin/env python3
"""The anchor: FlashInfer's paged attention on the family's configs, timed as kopt times its
candidates (CUDA events around one call, the L2 flushed before each, median of --repeat).

    python3 anchor_flashinfer.py [--flashinfer DIR] [--configs configs.csv] [--repeat 50]
                                 [--kopt RESULTS_CSV] [--out anchor.csv]

DIR is a FlashInfer source snapshot (its folder holding the `flashinfer` package), put first on
sys.path; it must be usable where this runs (FlashInfer compiles its kernels on first use, which
needs nvcc and the snapshot's 3rdparty headers). Without it an installed flashinfer is imported.
mtp = 1 runs BatchDecodeWithPagedKVCacheWrapper (tensor cores); mtp > 1
BatchPrefillWithPagedKVCacheWrapper with causal=True, whose mask aligns the mtp queries to the
end of the context, as the family's definition does (NOTES.md). The contexts are the family's
(reference_host.hpp's config_contexts, ported below), the pages a fresh random permutation, the
values those of harness.cu (q of U(-8, 8), K and V of U(-1, 1), bf16). Every config's output is
first compared with an fp32 PyTorch reference on its longest and shortest sequence under the
family's tolerance (atol 4e-3, rtol 1e-2). With --kopt (a results CSV of the family's harness,
`us_kopt`), each row also gets kopt / FlashInfer.
"""
import argparse
import csv
import os
import statistics
import sys

MASK = (1 << 64) - 1


def mix(x):
    """reference_host.hpp's splitmix64 finaliser, on Python ints."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def config_contexts(batch, ctx_min, ctx_max):
    """reference_host.hpp's config_contexts: ctx_max, ctx_min, then uniform draws between."""
    state = mix(0x5EED) ^ mix((batch << 40) ^ (ctx_min << 20) ^ ctx_max)
    lens = []
    for i in range(batch):
        if i < 2:
            lens.append(ctx_max if i == 0 else ctx_min)
            continue
        draw = mix(state)
        state = (state + 1) & MASK
        lens.append(ctx_min + draw % (ctx_max - ctx_min + 1))
    return lens


def make_inputs(torch, row):
    """One config's tensors on the GPU: q [batch*mtp, Hq, D], the caches, the page tables."""
    batch, mtp, bs = int(row["batch"]), int(row["mtp"]), int(row["block_size"])
    hq, hkv, d = int(row["num_q_heads"]), int(row["num_kv_heads"]), int(row["head_size"])
    lens = config_contexts(batch, int(row["ctx_min"]), int(row["ctx_max"]))
    blocks = [(n + bs - 1) // bs for n in lens]
    pages = torch.randperm(sum(blocks), dtype=torch.int32, device="cuda")
    indptr = torch.tensor([0] + blocks, dtype=torch.int32, device="cuda").cumsum(0, dtype=torch.int32)
    last = torch.tensor([n - (b - 1) * bs for n, b in zip(lens, blocks)], dtype=torch.int32,
                        device="cuda")
    u = lambda *shape: torch.rand(*shape, device="cuda") * 2 - 1
    q = (8 * u(batch * mtp, hq, d)).to(torch.bfloat16)
    k = u(sum(blocks), bs, hkv, d).to(torch.bfloat16)
    v = u(sum(blocks), bs, hkv, d).to(torch.bfloat16)
    return dict(q=q, k=k, v=v, pages=pages, indptr=indptr, last=last, lens=lens, mtp=mtp, bs=bs,
                hq=hq, hkv=hkv, d=d, scale=d ** -0.5)


def make_wrapper(flashinfer, torch, x):
    """A planned FlashInfer wrapper for the inputs: decode for mtp = 1, causal prefill else."""
    ws = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    common = dict(q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16, sm_scale=x["scale"])
    if x["mtp"] == 1:
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", use_tensor_cores=True)
        w.plan(x["indptr"], x["pages"], x["last"], x["hq"], x["hkv"], x["d"], x["bs"], **common)
    else:
        w = flashinfer.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD")
        qo = torch.arange(0, len(x["lens"]) + 1, dtype=torch.int32, device="cuda") * x["mtp"]
        w.plan(qo, x["indptr"], x["pages"], x["last"], x["hq"], x["hkv"], x["d"], x["bs"],
               causal=True, **common)
    return ws, w


def reference_seq(torch, x, seq):
    """fp32 attention of one sequence's mtp rows: [mtp, Hq, D]."""
    bs, mtp, g = x["bs"], x["mtp"], x["hq"] // x["hkv"]
    n = x["lens"][seq]
    pages = x["pages"][x["indptr"][seq]:x["indptr"][seq + 1]].long()
    k = x["k"][pages].reshape(-1, x["hkv"], x["d"])[:n].float().repeat_interleave(g, dim=1)
    v = x["v"][pages].reshape(-1, x["hkv"], x["d"])[:n].float().repeat_interleave(g, dim=1)
    q = x["q"][seq * mtp:(seq + 1) * mtp].float()
    s = torch.einsum("jhd,thd->hjt", q, k) * x["scale"]
    pos = torch.arange(n, device="cuda")
    allowed = pos[None, :] <= (n - mtp + torch.arange(mtp, device="cuda"))[:, None]
    s = s.masked_fill(~allowed[None], float("-inf"))
    return torch.einsum("hjt,thd->jhd", torch.softmax(s, dim=-1), v)


def check(torch, x, out):
    """Raises where FlashInfer's output of the longest or shortest sequence is off the reference."""
    lens = x["lens"]
    for seq in {lens.index(max(lens)), lens.index(min(lens))}:
        got = out[seq * x["mtp"]:(seq + 1) * x["mtp"]].float()
        want = reference_seq(torch, x, seq)
        bad = ((got - want).abs() > 4e-3 + 1e-2 * want.abs()).sum().item()
        if bad:
            raise SystemExit(f"FlashInfer differs from the reference on sequence {seq}: {bad} outputs")


def time_us(torch, call, repeat, warmup=3):
    """Median of `repeat` event-timed calls, the L2 flushed (a 512 MiB write) before each."""
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeat):
        flush.fill_(1)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(times)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--flashinfer", help="a FlashInfer source snapshot (folder holding flashinfer/)")
    p.add_argument("--configs", default=os.path.join(here, "..", "configs.csv"))
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--kopt", help="a results CSV of the family's harness (us_kopt)")
    p.add_argument("--out", default="anchor_flashinfer.csv")
    a = p.parse_args()
    if a.flashinfer:
        if not os.path.isdir(os.path.join(a.flashinfer, "flashinfer")):
            raise SystemExit(f"{a.flashinfer}: no flashinfer/ package folder in it")
        sys.path.insert(0, os.path.abspath(a.flashinfer))
    import torch
    import flashinfer
    kopt = {}
    if a.kopt:
        for r in csv.DictReader(open(a.kopt)):
            kopt[tuple(r[c] for c in ("batch", "ctx_min", "ctx_max", "block_size", "mtp",
                                      "head_size", "num_q_heads", "num_kv_heads"))] = float(r["us_kopt"])
    rows = list(csv.DictReader(open(a.configs)))
    with open(a.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(list(rows[0].keys()) + ["us_flashinfer", "us_kopt", "kopt_over_flashinfer"])
        for row in rows:
            x = make_inputs(torch, row)
            _, w = make_wrapper(flashinfer, torch, x)
            call = lambda: w.run(x["q"], (x["k"], x["v"]))
            check(torch, x, call())
            us = time_us(torch, call, a.repeat)
            key = tuple(row[c] for c in ("batch", "ctx_min", "ctx_max", "block_size", "mtp",
                                         "head_size", "num_q_heads", "num_kv_heads"))
            mine = kopt.get(key)
            out.writerow(list(row.values()) + [f"{us:.1f}", mine or "",
                                               f"{mine / us:.3f}" if mine else ""])
            print(f"{row['model']} b{row['batch']} mtp{row['mtp']} d{row['head_size']}: "
                  f"FlashInfer {us:.1f} us" + (f", kopt {mine:.1f} us ({mine / us:.2f}x)" if mine else ""))


if __name__ == "__main__":
    main()
