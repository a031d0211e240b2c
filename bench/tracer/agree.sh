#!/usr/bin/env bash
# Agreement of kopt's two NVIDIA timers on one GPU: the same harness binary and the same launches
# (one candidate's benchmark run, its configs, warm-ups and timed runs) timed alternately by the
# CUPTI tracer and by ncu (`--clock-control none`), RUNS times each, then per config the ratio of
# the tracer's median to ncu's median over every timed run. Prints the table and a summary line
# (configs of 20 us or more within 1%), and keeps each run's measurement under OUT.
#
#   KOPT_PREFIX=<kopt install> bash bench/tracer/agree.sh --spec F --state-dir D [--candidate ID]
#       [--runs N] [--out DIR]
#
# The family must be configured and the candidate (default: the ledger's BEST) built; ncu must
# be on PATH (its usual install folders are searched).
set -euo pipefail
prefix=${KOPT_PREFIX:-$(k=$(command -v kopt) && dirname "$(dirname "$k")")}
spec="" state="" candidate="" runs=2 out=${OUT:-/tmp/kopt-agree}
while [ $# -gt 0 ]; do
  case $1 in
  --spec) spec=$2; shift 2 ;;
  --state-dir) state=$2; shift 2 ;;
  --candidate) candidate=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  *) echo "usage: agree.sh --spec F --state-dir D [--candidate ID] [--runs N] [--out DIR]" >&2; exit 2 ;;
  esac
done
[ -n "$spec" ] && [ -n "$state" ] || { echo "agree.sh: --spec and --state-dir are required" >&2; exit 2; }
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH=$PATH:$d; done
export PATH=$PATH:/usr/local/cuda/bin
command -v ncu >/dev/null || { echo "agree.sh: ncu not found" >&2; exit 2; }
kopt=$prefix/bin/kopt
which=(--best)
[ -n "$candidate" ] && which=(--candidate "$candidate")
id=${candidate:-$("$kopt" status --spec "$spec" --state-dir "$state" --json | python3 -c 'import json,sys; b=json.load(sys.stdin)["best"]; print(b if isinstance(b, str) else b["id"])')}
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  for profiler in cupti ncu; do
    s=$(date +%s.%N)
    KOPT_PROFILER=$profiler "$kopt" bench --spec "$spec" --state-dir "$state" "${which[@]}" \
      >"$out/bench_${profiler}_$i.log" 2>&1 || { tail -5 "$out/bench_${profiler}_$i.log"; exit 1; }
    e=$(date +%s.%N)
    cp "$state/results/$id/measurement.json" "$out/${profiler}_$i.json"
    echo "run $i, $profiler: $(awk "BEGIN{printf \"%.1f\", $e - $s}") s"
  done
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
samples = {}
names = {}
for profiler in ("cupti", "ncu"):
    for i in range(1, runs + 1):
        m = json.load(open(f"{out}/{profiler}_{i}.json"))
        assert m["measured_by"] == profiler and m["profiled"], (profiler, i, m.get("reason"))
        for k, c in enumerate(m["configs"]):
            names[k] = ",".join(c["values"]) + " " + c["kernel"]
            samples.setdefault((k, profiler), []).extend(x for r in c["samples"] for x in r)
print("config,kernel,cupti_us,ncu_us,ratio")
within = big = 0
worst = (0, None)
for k in sorted(names):
    t, n = statistics.median(samples[(k, "cupti")]), statistics.median(samples[(k, "ncu")])
    r = t / n
    print(f"{k},{names[k]},{t:.3f},{n:.3f},{r:.4f}")
    if n >= 20:
        big += 1
        within += abs(r - 1) <= 0.01
        if abs(r - 1) > abs(worst[0]):
            worst = (r - 1, k)
ratios = [statistics.median(samples[(k, "cupti")]) / statistics.median(samples[(k, "ncu")]) for k in names]
print(f"# {len(names)} configs; of {big} at 20 us or more, {within} within 1%; worst {100*worst[0]:+.2f}% (config {worst[1]}); "
      f"all configs' ratios {min(ratios):.4f} to {max(ratios):.4f}, median {statistics.median(ratios):.4f}")
PY
