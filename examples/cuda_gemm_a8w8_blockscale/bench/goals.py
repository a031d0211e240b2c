#!/usr/bin/env python3
"""The family's goals from one run's anchor and sweeps, no GPU needed.

  goals.py ANCHOR SWEEP...   ANCHOR: bench/anchor.cu's CSV (cuBLASLt FP8 time and the copy-rate
                             floor per shape); SWEEP: standalone --sweep CSVs of the same run

For each sweep, with the kernel family.json's heuristic picks per shape (and, in brackets, the
fastest instance per shape):
  M >= 2048: geomean of cuBLASLt time / ours (the goal: >= 0.60)
  M <= 16:   geomean of copy floor / ours (the goal: >= 0.70), cuBLASLt's the same way, and
             geomean of cuBLASLt time / ours with the shapes where ours is faster; with an
             anchor that has copy_same_us, also same-size copy time / ours (and cuBLASLt's)
Inputs may be gzipped (.gz).
"""
import csv, gzip, json, math, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        return list(csv.DictReader(f))


def heuristic(spec):
    """The rules of family.json as a function of (M, N, K): the first arm whose conditions hold."""
    ops = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
           ">": lambda a, b: a > b, "==": lambda a, b: a == b}

    def value(term, M, N, K):
        return {"M": M, "N": N, "K": K, "M*N": M * N, "N*K": N * K, "M*K": M * K}[term]

    def pick(M, N, K):
        for arm in spec["heuristic"]["rules"]:
            if all(ops[op](value(t, M, N, K), v) for t, op, v in arm.get("if", [])):
                return arm["kernel"]
        return spec["default"]
    return pick


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    anchor = {(int(r["M"]), int(r["N"]), int(r["K"])): r for r in rows(argv[1])}
    pick = heuristic(json.load(open(os.path.join(HERE, "..", "family.json"))))
    for path in argv[2:]:
        us = {}
        for r in rows(path):
            us[(int(r["M"]), int(r["N"]), int(r["K"]))] = us.get((int(r["M"]), int(r["N"]), int(r["K"])), {})
            us[(int(r["M"]), int(r["N"]), int(r["K"]))][r["kernel"]] = float(r["us"])
        large, large_best, copy, copy_best, copy_lt, vs_lt, faster = [], [], [], [], [], [], 0
        same, same_lt = [], []
        for shape, a in anchor.items():
            if shape not in us:
                continue
            M, N, K = shape
            ours, best = us[shape][pick(M, N, K)], min(us[shape].values())
            lt = float(a["us_lt"])
            if M >= 2048:
                large.append(lt / ours)
                large_best.append(lt / best)
            if M <= 16:
                floor = float(a["floor_copy_us"])
                copy.append(floor / ours)
                copy_best.append(floor / best)
                copy_lt.append(floor / lt)
                vs_lt.append(lt / ours)
                faster += ours < lt
                if a.get("copy_same_us"):
                    same.append(float(a["copy_same_us"]) / ours)
                    same_lt.append(float(a["copy_same_us"]) / lt)
        print(f"{os.path.basename(path)}: M>=2048 ({len(large)}) {geomean(large):.3f} of cuBLASLt "
              f"({geomean(large_best):.3f}); M<=16 ({len(copy)}) {geomean(copy):.3f} of the copy rate "
              f"({geomean(copy_best):.3f}), cuBLASLt {geomean(copy_lt):.3f}; {geomean(vs_lt):.3f} of "
              f"cuBLASLt, faster on {faster} of {len(vs_lt)}" +
              (f"; {geomean(same):.3f} of a same-size copy (cuBLASLt {geomean(same_lt):.3f})"
               if same else ""))


if __name__ == "__main__":
    main(sys.argv)
