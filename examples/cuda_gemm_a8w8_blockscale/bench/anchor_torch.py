"""The same anchor as bench/anchor.cu through PyTorch: torch._scaled_mm, i.e. cuBLASLt's FP8 GEMM
(e4m3 A [M, K] row-major, B [N, K] row-major as the column-major K x N operand, one fp32 scale per
tensor, bf16 out), fp32 accumulation (use_fast_accum=False) and fast accumulation, per config of
configs.csv: the median of N runs, each after an L2 flush, timed with CUDA events. Also the copy
rate (2 GiB device to device, bytes read plus written). Shapes PyTorch refuses (M not a multiple of
16 on some versions) are padded to the next multiple of 16 and marked.

    python3 anchor_torch.py configs.csv [--repeat N] [--csv FILE]
"""
import argparse
import csv
import statistics
import sys

import torch


def median_us(fn, flush, repeat, flush_each=True):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(repeat):
        if flush_each:
            flush.fill_(i & 0xFF)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(1000.0 * start.elapsed_time(stop))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("configs")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--csv")
    a = p.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print("device: %s, %d SMs, torch %s" % (props.name, props.multi_processor_count, torch.__version__))
    flush = torch.empty(max(2 * props.L2_cache_size, 64 << 20), dtype=torch.uint8, device=dev)
    n = 2 << 30
    src = torch.ones(n, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    copy_us = median_us(lambda: dst.copy_(src), flush, 20, flush_each=False)
    copy_tbs = 2.0 * n / copy_us * 1e-6
    print("copy: %.3f GB in %.1f us: %.3f TB/s (read + written)" % (n * 1e-9, copy_us, copy_tbs))
    del src, dst
    sa = torch.tensor(0.75, device=dev)
    sb = torch.tensor(0.5, device=dev)
    rows = []
    with open(a.configs) as f:
        for r in csv.DictReader(f):
            M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
            out = {"M": M, "N": N, "K": K}
            B = (torch.rand(N, K, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
            for fast in (False, True):
                key = "fast" if fast else "lt"
                us, padded = -1.0, 0
                for m in (M, (M + 15) // 16 * 16):
                    A = (torch.rand(m, K, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
                    try:
                        fn = lambda: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb,
                                                      out_dtype=torch.bfloat16,
                                                      use_fast_accum=fast)
                        us = median_us(fn, flush, a.repeat)
                        padded = int(m != M)
                        break
                    except RuntimeError as e:
                        if m == (M + 15) // 16 * 16:
                            print("M=%d N=%d K=%d: %s" % (M, N, K, str(e).splitlines()[0]), file=sys.stderr)
                out["us_" + key] = round(us, 3)
                out["padded_" + key] = padded
            nbytes = M * K + N * K + 2 * M * N + 4 * M * (K // 128) + 4 * (N // 128) * (K // 128)
            out["tflops_lt"] = round(2.0 * M * N * K / out["us_lt"] * 1e-6, 1) if out["us_lt"] > 0 else 0
            out["bytes"] = nbytes
            out["floor_copy_us"] = round(nbytes / copy_tbs * 1e-6, 3)
            out["copy_tbs"] = round(copy_tbs, 4)
            rows.append(out)
            print("M=%d N=%d K=%d scaled_mm %.2f us (%.1f TFLOP/s)%s | fast-accum %.2f us | copy floor %.2f us"
                  % (M, N, K, out["us_lt"], out["tflops_lt"], " padded" if out["padded_lt"] else "",
                     out["us_fast"], out["floor_copy_us"]))
    if a.csv and rows:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
