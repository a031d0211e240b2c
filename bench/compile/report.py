"""Prints bench/compile's records (compile.jsonl) as the tables of docs/PERFORMANCE.md, with each
of issue 7's targets checked and the ratios to the naive one-module build."""
import json
import sys

recs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]


def f(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


for fam in dict.fromkeys(r["family"] for r in recs):
    rows = [r for r in recs if r["family"] == fam]
    naive = next((r for r in rows if r["step"] == "naive"), None)
    print(f"\n### {fam}\n")
    print("| step | ccache | command wall s | TUs run | compiles (misses) | hits, max per hit s "
          "| efficiency | target |")
    print("|---|---|---:|---:|---:|---|---:|---|")
    for r in rows:
        if r["step"] in ("configure", "naive", "best"):
            continue
        cached = r["mode"] == "ccache"
        tus = r.get("candidate_tus", r.get("tus"))
        misses = r.get("candidate_misses", r.get("misses")) if cached else tus
        hits = r.get("candidate_hits", r.get("hits"))
        hit_text = f"{hits}, {f(r.get('max_hit_s'), 3)}" if cached and "max_hit_s" in r else (
            str(hits) if cached else "-")
        target = ""
        if r["step"] == "noop":
            ok = r["no_work"] and r["cmd_wall_s"] < 2
            target = f"no compile, < 2 s: {'met' if ok else 'MISSED'}"
            tus, misses, hit_text = 0, 0, "-"
        elif r["step"] == "one_tu":
            bound = r.get("bound_s")
            ok = misses == 1 and r.get("within_bound")
            target = (f"1 compile + link, < 1.2 x {f(r.get('changed_tu_s'))} + 2 = {f(bound)} s: "
                      f"{'met' if ok else 'MISSED'}")
        elif r["step"] == "identical":
            ok = misses == 0 and (r.get("max_hit_s") or 0) < 0.1
            target = f"0 compiles, hits < 0.1 s: {'met' if ok else 'MISSED'}"
        elif r["step"] in ("cold", "cold_all"):
            eff = r.get("efficiency") or 0
            target = f"efficiency >= 0.85: {'met' if eff >= 0.85 else 'missed'}"
            if naive:
                target += f"; naive one module {naive['cmd_wall_s']:.1f} s = {naive['cmd_wall_s'] / r['cmd_wall_s']:.2f}x this"
        print(f"| {r['step']} | {'yes' if cached else 'no'} | {f(r['cmd_wall_s'])} | {tus} | {misses} "
              f"| {hit_text} | {f(r.get('efficiency'))} | {target} |")
    if naive:
        one = [r for r in rows if r["step"] == "one_tu"]
        print(f"\nAnchor: all {naive['instances']} instances of 00 in one TU, no ccache: "
              f"{naive['cmd_wall_s']:.1f} s per candidate (jobs 1: one TU).")
        for r in one:
            print(f"- a candidate changing 1 TU, {'with' if r['mode'] == 'ccache' else 'without'} ccache: {r['cmd_wall_s']:.1f} s = "
                  f"{naive['cmd_wall_s'] / r['cmd_wall_s']:.1f}x faster than the naive rebuild")
