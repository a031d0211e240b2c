"""The anchor of bench/compile: the naive build aiter and GEAK do today, all instances of a
candidate in one module (one TU), no ccache, rebuilt for every candidate. Compiles that TU with
the command compile_commands.json gives one of the candidate's instance TUs and prints the
record (a JSON line)."""
import argparse
import json
import os
import shlex
import subprocess
import time

p = argparse.ArgumentParser()
p.add_argument("--build", required=True)
p.add_argument("--state", required=True)
p.add_argument("--candidate", required=True)
p.add_argument("--family", required=True)
p.add_argument("--jobs", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()

gen = os.path.join(a.state, "gen", a.candidate, "instances") + os.sep
entries = json.load(open(os.path.join(a.build, "compile_commands.json")))
mine = [e for e in entries if os.path.join(e["directory"], e["file"]).startswith(gen)]
if not mine:
    raise SystemExit(f"naive.py: no compile command for a TU under {gen}")
entry = mine[0]
args = entry.get("arguments") or shlex.split(entry["command"])
if "launch-compile" in args:  # a launcher in the command: keep what follows `-- <ccache>`
    args = args[args.index("--") + 2:]
naive = os.path.join(a.build, "naive")
os.makedirs(naive, exist_ok=True)
src = os.path.join(naive, "all.cpp")
with open(src, "w") as f:
    f.write("// bench/compile: every instance TU of candidate %s in one module\n" % a.candidate)
    for e in sorted(mine, key=lambda e: e["file"]):
        f.write('#include "%s"\n' % os.path.join(e["directory"], e["file"]))
out, skip = [], 0
for i, arg in enumerate(args):
    if skip:
        skip -= 1
        continue
    if arg in ("-o", "-MF", "-MT", "-MQ"):
        skip = 1
        continue
    if arg in ("-MD", "-MMD"):
        continue
    if os.path.join(entry["directory"], arg) == os.path.join(entry["directory"], entry["file"]):
        out.append(src)
        continue
    out.append(arg)
out += ["-o", os.path.join(naive, "all.o")]
start = time.monotonic()
with open(a.out, "w") as log:
    log.write(" ".join(shlex.quote(x) for x in out) + "\n")
    log.flush()
    rc = subprocess.call(out, cwd=entry["directory"], stdout=log, stderr=subprocess.STDOUT)
wall = time.monotonic() - start
if rc != 0:
    raise SystemExit(f"naive.py: the one-module compile failed (rc {rc}), see {a.out}")
print(json.dumps({"family": a.family, "mode": "naive", "step": "naive", "jobs": 1,
                  "cmd_wall_s": round(wall, 3), "instances": len(mine)}))
