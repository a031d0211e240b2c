#!/usr/bin/env python3
"""Passes of one tuning sweep (full.csv files of kopt tune over the same configs), no GPU needed.

  passes.py merge OUT IN...   writes OUT: IN[0]'s rows, each row's median replaced by its lowest
                              over every IN (a transient slowdown lands in one pass only)
  passes.py agree A B         how well pass A predicts pass B: row-to-row ratios of the same
                              (M, N, K, kernel), and A's fastest kernel per shape scored on B
                              (within 2% of B's fastest, geomean, worst): the ceiling that any
                              heuristic scored on B from A's data can reach
Inputs may be gzipped (.gz). Writes atomically (OUT.tmp, then rename).
"""
import csv, gzip, math, os, sys


def rows(path):
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        return list(csv.DictReader(f))


def key(r):
    return (r["M"], r["N"], r["K"], r["kernel"])


def times(path):
    return {key(r): float(r["us"]) for r in rows(path) if r["us"]}


def merge(out, inputs):
    tables = [rows(p) for p in inputs]
    lowest = {}
    for table in tables:
        for r in table:
            if r["us"] and (key(r) not in lowest or float(r["us"]) < lowest[key(r)]):
                lowest[key(r)] = float(r["us"])
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(tables[0][0].keys()), lineterminator="\n")
        w.writeheader()
        for r in tables[0]:
            if key(r) in lowest:
                r["us"] = "%.3f" % lowest[key(r)]
            w.writerow(r)
    os.replace(out + ".tmp", out)
    print("merged %d passes: %d rows, each its lowest median" % (len(inputs), len(tables[0])))


def fastest(t):
    best = {}
    for (m, n, k, kernel), us in t.items():
        if (m, n, k) not in best or us < best[(m, n, k)][1]:
            best[(m, n, k)] = (kernel, us)
    return best


def agree(a_path, b_path):
    a, b = times(a_path), times(b_path)
    ratios = sorted(max(a[k], b[k]) / min(a[k], b[k]) for k in a if k in b)
    q = lambda p: ratios[min(len(ratios) - 1, int(p * len(ratios)))]
    fa, fb = fastest(a), fastest(b)
    picks = [b[s + (fa[s][0],)] / fb[s][1] for s in fa if s in fb and s + (fa[s][0],) in b]
    print("%s vs %s: %d rows, ratio p50 %.4f p90 %.4f p99 %.4f max %.3f; %d shapes, A's fastest "
          "on B: within 2%% %.1f%%, geomean %.4fx, worst %.3fx" % (
              os.path.basename(a_path), os.path.basename(b_path), len(ratios), q(0.5), q(0.9),
              q(0.99), ratios[-1], len(picks), 100 * sum(p <= 1.02 for p in picks) / len(picks),
              math.exp(sum(map(math.log, picks)) / len(picks)), max(picks)))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "agree":
        agree(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
