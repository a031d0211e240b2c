"""The application A/Bs of bench/app_ab.sh in one table: each app.json's measured end-to-end
change and interval beside the prediction from the candidate's traffic rows, the kernel share
and the runs' seconds.
    python3 examples/cuda_paged_decode/bench/app_summary.py app_02.json app_91.json ...
"""
import json
import statistics
import sys


def pct(x):
    return "-" if x is None else "%+.1f%%" % (100 * x)


def interval(d):
    if d is None or d.get("change") is None:
        return "-"
    return "%s [%s, %s]" % (pct(d["change"]), pct(d.get("low")), pct(d.get("high")))


def row(path):
    a = json.load(open(path))
    p = a.get("prediction")
    walls = (a.get("best_wall_us") or []) + (a.get("candidate_wall_us") or [])
    return [a.get("candidate", "?"), a.get("best", "?"), a.get("status", "?"),
            str(a.get("state")), interval(a),
            "%.0f / %.0f" % (a.get("best_geomean_us") or 0, a.get("candidate_geomean_us") or 0),
            interval(p) if p else "none: %s" % a.get("no_prediction"),
            "-" if not p else "%.1f%%" % (100 * p["kernel_share"]),
            "-" if not p else "%.0f / %+.0f" % (p["kernel_us"], p["kernel_delta_us"]),
            "-" if not p else str(p.get("inside_interval")),
            str(len(a.get("best_us") or [])),
            "%.2f" % (statistics.median(walls) / 1e6) if walls else "-"]


def main(paths):
    head = ["candidate", "BEST", "status", "state", "measured change", "BEST / cand. us",
            "predicted change", "kernel share", "kernel us / delta", "inside", "rounds",
            "median run s"]
    rows = [row(p) for p in paths]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
