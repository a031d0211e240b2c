"""One bench/compile step's record (a JSON line): the command's wall time and, from
`kopt build-report --json`, what the run compiled, its cache results and its efficiency."""
import argparse
import json
import statistics

p = argparse.ArgumentParser()
for a in ("--family", "--mode", "--step", "--log", "--report", "--candidate", "--changed"):
    p.add_argument(a, default="")
p.add_argument("--jobs", type=int, required=True)
p.add_argument("--wall", type=float, required=True)
a = p.parse_args()

log = open(a.log, errors="replace").read()
rec = {"family": a.family, "mode": a.mode, "step": a.step, "jobs": a.jobs, "cmd_wall_s": a.wall,
       "no_work": "no work to do" in log, "reconfigured": "Re-running CMake" in log}
report = json.load(open(a.report))
if report and not rec["no_work"]:  # with nothing run, the log's newest run is an older one
    tus = report["tus"]
    rec.update({"ninja_wall_s": report["wall_s"], "efficiency": report["efficiency"],
                "tu_sum_s": report["tu_sum_s"], "commands": report["commands"], "tus": len(tus),
                "misses": report["ccache"]["misses"], "hits": report["ccache"]["hits"],
                "direct_hits": report["ccache"]["direct_hits"],
                "max_tu_s": max((t["seconds"] for t in tus), default=0)})
    if a.candidate:
        mine = [t for t in tus if t["candidate"] == a.candidate]
        hits = [t["seconds"] for t in mine if t["ccache"].endswith("_hit")]
        rec.update({"candidate": a.candidate, "candidate_tus": len(mine),
                    "candidate_misses": sum(t["ccache"] == "miss" for t in mine),
                    "candidate_hits": len(hits),
                    "max_hit_s": max(hits, default=None),
                    "median_hit_s": statistics.median(hits) if hits else None,
                    "other_tus": len(tus) - len(mine)})
    if a.changed:
        own = [t["seconds"] for t in tus if t["candidate"] == a.candidate and t["instance"] == a.changed]
        rec["changed"] = a.changed
        rec["changed_tu_s"] = own[0] if own else None
        if own:
            rec["bound_s"] = 1.2 * own[0] + 2
            rec["within_bound"] = a.wall < rec["bound_s"]
print(json.dumps(rec))
