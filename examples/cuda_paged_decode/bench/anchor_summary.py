#!/usr/bin/env python3
"""The anchor's table: bench/anchor.cu's CSV (one row per config and implementation) as one
row per config (--wide FILE) and one per class (block_size x mtp x head_size) on stdout.

    python3 anchor_summary.py anchor.csv [--wide per_config.csv]

Per class: the geometric mean of each implementation's median us over the class's configs,
counted only where it ran and matched the reference; `fi` is FlashInfer's faster kernel per
config (decode where it does the shape, else its paged prefill); x / fi is the geomean of the
per-config ratios; `of limit` is the geomean of limit_us / us (the copy-rate limit: K and V
bytes over the measured device-to-device copy rate).
"""
import csv
import math
import sys
from collections import OrderedDict

SHAPE = ["model", "batch", "ctx_min", "ctx_max", "block_size", "mtp", "head_size",
         "num_q_heads", "num_kv_heads"]
TIMED = ["kopt_00", "kopt_02", "kopt_04", "kopt_07", "kopt_09", "kopt_10", "fi_decode",
         "fi_prefill", "fi", "vllm_v2", "copy_same"]
RATIOS = ["kopt_00", "kopt_02", "kopt_04", "kopt_07", "kopt_09", "kopt_10", "vllm_v2"]
OF_LIMIT = ["kopt_02", "kopt_04", "kopt_07", "kopt_09", "kopt_10", "fi", "vllm_v2", "copy_same"]


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def read(path):
    configs = OrderedDict()
    for r in csv.DictReader(open(path)):
        c = configs.setdefault(r["config"], {"shape": {k: r[k] for k in SHAPE}, "us": {},
                                             "status": {}, "limit": float(r["limit_us"])})
        c["status"][r["impl"]] = r["status"]
        if r["status"] == "ok" and float(r["us_median"]) > 0:
            c["us"][r["impl"]] = float(r["us_median"])
    for c in configs.values():
        fi = [c["us"][k] for k in ("fi_decode", "fi_prefill") if k in c["us"]]
        if fi:
            c["us"]["fi"] = min(fi)
    return configs


def fmt(x, spec="%.1f"):
    return spec % x if x is not None else "-"


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    configs = read(sys.argv[1])
    if "--wide" in sys.argv:
        with open(sys.argv[sys.argv.index("--wide") + 1], "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["config"] + SHAPE + ["limit_us"] + ["us_" + k for k in TIMED])
            for n, c in configs.items():
                w.writerow([n] + [c["shape"][k] for k in SHAPE] + ["%.2f" % c["limit"]] +
                           [fmt(c["us"].get(k), "%.2f") if k in c["us"]
                            else c["status"].get(k, "") for k in TIMED])
    classes = OrderedDict()
    for c in configs.values():
        s = c["shape"]
        classes.setdefault("bs%s mtp%s d%s" % (s["block_size"], s["mtp"], s["head_size"]),
                           []).append(c)
    classes["overall"] = list(configs.values())
    head = (["class", "n", "limit"] + TIMED + ["%s/fi" % k for k in RATIOS] +
            ["of limit: " + k for k in OF_LIMIT])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, cs in classes.items():
        row = [name, str(len(cs)), fmt(geomean([c["limit"] for c in cs]))]
        row += [fmt(geomean([c["us"].get(k) for c in cs])) for k in TIMED]
        row += [fmt(geomean([c["us"][k] / c["us"]["fi"] for c in cs
                             if k in c["us"] and "fi" in c["us"]]), "%.2f") for k in RATIOS]
        row += [fmt(geomean([c["limit"] / c["us"][k] for c in cs if k in c["us"]]), "%.3f")
                for k in OF_LIMIT]
        print("| " + " | ".join(row) + " |")
    bad = ["%s %s: %s" % (n, k, v) for n, c in configs.items() for k, v in c["status"].items()
           if v not in ("ok",)]
    if bad:
        print("\nnot counted: " + "; ".join(bad))


if __name__ == "__main__":
    main()
