#!/usr/bin/env python3
"""The family's goals in kernel time, as kopt's keep test measures it (ncu's gpu__time_duration).

  ncu_goals.py picks CONFIGS              M,N,K,kernel: the shapes of CONFIGS with M <= 16 or
                                          M >= 2048 and family.json's heuristic pick for each
  ncu_goals.py report ANCHOR PASS_DIR...  per pass (a folder of ncu CSVs written by ncu_goals.sh:
                                          lt_<M>_<N>_<K>.csv and k_<M>_<N>_<K>.csv), per shape
                                          cuBLASLt's time and ours, then the goals:
    M >= 2048: geomean of cuBLASLt time / ours (the goal: >= 0.60)
    M <= 16:   geomean of copy floor / ours (the goal: >= 0.70; the floor is ANCHOR's: the
               shape's bytes at the large copy's rate) and of cuBLASLt time / ours (> 1), with
               the shapes where ours is faster

cuBLASLt's time of a call is its GEMM kernel plus, where it splits K in a second kernel, that
kernel (splitKreduce); the anchor times fast accumulation off, then on: the first half of the
calls are the ones with it off, the ones taken. Ours: the median of the heuristic kernel's
launches.
"""
import csv, json, math, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goals  # noqa: E402  (the heuristic of family.json and the CSV reader)


def ncu_kernels(path):
    """[(name, ns)] in launch order from an `ncu --csv --metrics gpu__time_duration.sum` file."""
    lines = open(path).read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    launches = {}
    for r in csv.DictReader(lines[start:]):
        if r["Metric Name"] == "gpu__time_duration.sum":
            launches[int(r["ID"])] = (r["Kernel Name"], float(r["Metric Value"].replace(",", "")))
    return [launches[i] for i in sorted(launches)]


def cublaslt_us(path):
    """(median us of a call with fast accumulation off, whether cuBLASLt split K into a second kernel)."""
    calls, split = [], False
    for name, ns in ncu_kernels(path):
        if "splitKreduce" in name and calls:
            calls[-1] += ns / 1000
            split = True
        elif any(t in name for t in ("nvjet", "gemm", "xmma", "cutlass")):
            calls.append(ns / 1000)
    off = calls[: max(1, len(calls) // 2)]
    return (statistics.median(off) if off else None), split


def ours_us(path):
    times = [ns / 1000 for name, ns in ncu_kernels(path) if "gemm_a8w8" in name]
    return statistics.median(times) if times else None


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def picks(configs):
    pick = goals.heuristic(json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "family.json"))))
    for r in goals.rows(configs):
        M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
        if M <= 16 or M >= 2048:
            print(f"{M},{N},{K},{pick(M, N, K)}")


def report(anchor_path, passes):
    anchor = {(int(r["M"]), int(r["N"]), int(r["K"])): r for r in goals.rows(anchor_path)}
    for folder in passes:
        large, copy, copy_lt, vs, faster, lines = [], [], [], [], 0, []
        for shape in sorted(anchor):
            M, N, K = shape
            tag = f"{M}_{N}_{K}"
            if not os.path.exists(os.path.join(folder, f"lt_{tag}.csv")):
                continue
            lt, split = cublaslt_us(os.path.join(folder, f"lt_{tag}.csv"))
            ours = ours_us(os.path.join(folder, f"k_{tag}.csv"))
            if lt is None or ours is None:
                lines.append(f"  {shape}: no kernel time (cuBLASLt {lt}, ours {ours})")
                continue
            lines.append(f"  {shape}: cuBLASLt {lt:8.2f} us{' (split-K, 2 kernels)' if split else ''}, "
                         f"ours {ours:8.2f} us, cuBLASLt / ours {lt / ours:.3f}")
            if M >= 2048:
                large.append(lt / ours)
            if M <= 16:
                floor = float(anchor[shape]["floor_copy_us"])
                copy.append(floor / ours)
                copy_lt.append(floor / lt)
                vs.append(lt / ours)
                faster += ours < lt
        print(f"{folder}:")
        print("\n".join(lines))
        print(f"  M>=2048 ({len(large)}) {geomean(large):.3f} of cuBLASLt; M<=16 ({len(copy)}) "
              f"{geomean(copy):.3f} of the copy rate, cuBLASLt {geomean(copy_lt):.3f}; "
              f"{geomean(vs):.3f} of cuBLASLt, faster on {faster} of {len(vs)}"
              + (f", slowest shape {min(vs):.3f}" if vs else ""))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "picks":
        picks(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
