#!/usr/bin/env python3
"""The device run's table: per config the baseline's and each candidate's median time (every
timed run of every round the state folder holds), the rounds' verdicts, and whether the wrong
fixture (candidate 90) was called incorrect on exactly the mtp > 1 configs.
    python3 summary.py CONFIGS OUT_DIR STATE_DIR"""
import csv
import glob
import json
import os
import re
import statistics
import sys


def samples(state, cid):
    """{config key: [us...]} of candidate cid over every results.csv of the state's results: a
    side-by-side round's folder (<k>-best-<id>, <k>-candidate-<id>) names whose runs it holds,
    any other file belongs to the candidate whose results folder holds it."""
    got = {}
    root = os.path.join(state, "results")
    for path in glob.glob(os.path.join(root, "**", "results.csv"), recursive=True):
        parts = os.path.relpath(path, root).split(os.sep)
        side = re.match(r"^\d+-(best|candidate)-(\d+)$", parts[-2]) if len(parts) > 2 else None
        owner = side.group(2) if side else parts[0]
        if owner != cid:
            continue
        for row in csv.DictReader(open(path)):
            key = ",".join(f"{k}={row[k]}" for k in CONFIG_COLUMNS)
            got.setdefault(key, []).extend(
                float(x) for x in row.get("samples_kopt", "").split(";") if x)
    return got


def verdicts(out):
    rounds = {}
    for path in sorted(glob.glob(os.path.join(out, "round_*.json"))):
        cid = os.path.basename(path)[6:-5]
        try:
            rounds[cid] = json.load(open(path))
        except (ValueError, OSError) as e:
            rounds[cid] = {"verdict": f"no answer ({e})"}
    return rounds


def fixture_check(answer):
    named = [c["config"] for c in answer.get("incorrect", [])]
    mtp = [int(k.split("mtp=")[1].split(",")[0]) for k in named]
    ok = answer.get("verdict") == "incorrect" and named and all(m > 1 for m in mtp)
    return ok, named


def main():
    configs, out, state = sys.argv[1:4]
    global CONFIG_COLUMNS
    rows = list(csv.DictReader(open(configs)))
    CONFIG_COLUMNS = list(rows[0].keys())
    rounds = verdicts(out)
    ids = [c for c in sorted(rounds) if not c.startswith("9")]  # 90: the fixture, 91..: A/As
    times = {cid: samples(state, cid) for cid in ids}
    print("config," + ",".join(f"us_{c},n_{c}" for c in ids))
    for row in rows:
        key = ",".join(f"{k}={row[k]}" for k in CONFIG_COLUMNS)
        cells = []
        for cid in ids:
            s = times[cid].get(key, [])
            cells += [f"{statistics.median(s):.1f}" if s else "", str(len(s))]
        short = f"{row['model']} b{row['batch']} ctx{row['ctx_min']}-{row['ctx_max']} " \
                f"bs{row['block_size']} mtp{row['mtp']} d{row['head_size']}"
        print(short + "," + ",".join(cells))
    for cid, a in rounds.items():
        classes = " | ".join(f"{c['class']} {100 * c['change']:+.1f}% {c['state']}"
                             for c in a.get("classes") or [])
        print(f"round {cid}: {a.get('verdict')} {a.get('reason', '')[:200]} {classes}")
    if "90" in rounds:
        ok, named = fixture_check(rounds["90"])
        print(f"fixture causal_off_by_one: {'PASS' if ok else 'FAIL'}: named {len(named)}: {named}")
        keys = [",".join(f"{k}={r[k]}" for k in CONFIG_COLUMNS) for r in rows if int(r["mtp"]) > 1]
        print(f"  mtp > 1 configs not named: {[k for k in keys if k not in named]}")


if __name__ == "__main__":
    main()
