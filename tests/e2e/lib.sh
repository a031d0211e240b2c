# Shared by the end-to-end scripts: fail loudly, skip with 77, a fresh folder per test.
set -euo pipefail
SKIP=77
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit $SKIP; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
if [ -n "${KOPT_E2E_WORK:-}" ]; then
  # A script run in phases (one ctest test each) shares this folder; its first phase empties it.
  WORK=$KOPT_E2E_WORK
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/kopt-e2e-XXXXXX")
  cleanup() { local rc=$?; if [ $rc -eq 0 ] && [ -z "${KOPT_KEEP_TEMP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
  trap cleanup EXIT
fi

# Prints the value at a key path of a JSON file (`json_get f.json recent_regressions -1
# candidate`); strings bare, lists and objects as JSON. Fails naming the file and the path.
json_get() { # file key...
  python3 -c '
import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2:]:
    value = value[int(key)] if isinstance(value, list) else value[key]
print(value if isinstance(value, str) else json.dumps(value))' "$@" ||
    fail "$1: no value at '${*:2}'"
}

# Checks the verdict of a decision, as `kopt decide --json` prints it (results/<id>/decision.json
# holds the same document): one of the verdicts given, else fails showing verdict and reason.
expect_verdict() { # decision.json verdict...
  local file=$1 verdict
  shift
  verdict=$(json_get "$file" verdict)
  local want
  for want in "$@"; do [ "$verdict" = "$want" ] && return 0; done
  fail "$file: verdict $verdict ($(json_get "$file" reason)), expected: $*"
}

# Checks that a decision's reason contains `text`.
expect_reason() { # decision.json text
  local reason
  reason=$(json_get "$1" reason)
  [[ "$reason" == *"$2"* ]] || fail "$1: the reason '$reason' does not say '$2'"
}

# Checks who BEST is, as `kopt status --json` says (kopt_family holds --spec and --state-dir).
expect_best() { # id
  "$KOPT" status "${kopt_family[@]}" --json >"$WORK/status.json" || fail "kopt status --json"
  local best
  best=$(json_get "$WORK/status.json" best)
  [ "$best" = "$1" ] || fail "BEST is $best, expected $1"
}

# Copies examples/host_gemm to $WORK/src/host_gemm (family_src), for the script to add candidates.
copy_host_family() {
  family_src=$WORK/src/host_gemm
  mkdir -p "$WORK/src"
  cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
}

# Cuts family_src down for agent loops: one instance and small shapes (small_host_spec), no
# candidates but the baseline.
small_host_family() {
  rm -rf "$family_src"/candidates/0[1-9] "$family_src/agent"
  small_host_spec
}

# Cuts family_src's spec down: one instance and small shapes (two per class; K=200 is not whole
# TK slices, which 02's change gets wrong), so that candidates are cheap to build and to measure.
small_host_spec() {
  python3 - "$family_src" <<'PY'
import json, sys
root = sys.argv[1]
spec = json.load(open(f"{root}/family.json"))
spec["instances"] = [{"TM": 32, "TN": 32, "TK": 32}]
spec.pop("heuristic")
spec["configs"] = "small.csv"
spec["bench"] = {"warmup": 1, "repeat": 5, "rounds": 4}
json.dump(spec, open(f"{root}/family.json", "w"), indent=2)
open(f"{root}/small.csv", "w").write("M,N,K\n16,256,256\n33,512,200\n64,256,512\n100,512,256\n"
                                      "256,128,128\n300,64,96\n")
PY
}

# Configures family_src in $WORK/b (Release, no ccache), builds the named targets and records
# 00 as BEST; sets b, state and kopt_family (the --spec and --state-dir arguments).
host_family_with_baseline() { # targets...
  b=$WORK/b
  state=$b/kopt/$(json_get "$family_src/family.json" name)
  kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
  cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" ||
    { cat "$WORK/configure.log"; fail "configure"; }
  cmake --build "$b" --target "$@" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build"; }
  { "$KOPT" bench "${kopt_family[@]}" --best && "$KOPT" decide "${kopt_family[@]}" --candidate 00 &&
      "$KOPT" record "${kopt_family[@]}" --candidate 00; } >"$WORK/best.log" 2>&1 ||
    { cat "$WORK/best.log"; fail "recording the baseline"; }
}

# A host family (copy_host_family) with a state folder $WORK/state (state, kopt_family) whose
# results hold fixture measurements, as kopt bench writes them, and decisions, without compiling:
# 00 alone, 01 20% slower beside 00 (a regression), 02 20% faster beside 00 (a keep), every timed
# run checked.
host_ledger_fixtures() {
  copy_host_family
  state=$WORK/state
  mkdir -p "$state"
  kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
  "$KOPT" ls "${kopt_family[@]}" --json >"$WORK/ls.json" || fail "kopt ls"

  python3 - "$WORK/ls.json" "$family_src/configs.csv" "$state/results" <<'PY' || fail "fixtures"
import csv, json, os, sys
hashes = {c["id"]: c["hash"] for c in json.load(open(sys.argv[1]))}
rows = list(csv.reader(open(sys.argv[2])))[1:]
def config_class(m):
    m = int(m)
    return "M<64" if m < 64 else "64<=M<256" if m < 256 else "M>=256"
def measurement(cid, scale, paired=""):
    configs = []
    for r in rows:
        us = (float(r[0]) * 0.01 + 1) * scale
        configs.append({"values": r, "class": config_class(r[0]), "kernel": "gemm", "us": us,
                        "harness_us": us, "err": 0, "checked": 15,
                        "samples": [[us * (1 + 0.001 * (i - 2)) for i in range(5)] for _ in range(3)]})
    return {"family": "host_gemm", "candidate": cid, "hash": hashes[cid], "status": "ok",
            "reason": "", "measured_by": "chrono", "profiled": False, "device": "host",
            "driver": "", "clocks": "", "date": "2026-12-01T00:00:0%sZ" % cid[-1], "warmup": 1,
            "repeat": 5, "paired_best": paired, "paired_best_hash": hashes[paired] if paired else "",
            "config_columns": ["M", "N", "K"], "configs": configs}
def write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    json.dump(value, open(path, "w"))
write(f"{sys.argv[3]}/00/measurement.json", measurement("00", 1))
for cid, scale in (("01", 1.2), ("02", 0.8)):
    write(f"{sys.argv[3]}/{cid}/measurement.json", measurement(cid, scale, "00"))
    best = measurement("00", 1)
    best["paired_best"], best["paired_best_hash"] = "00", hashes["00"]
    write(f"{sys.argv[3]}/{cid}/best_measurement.json", best)
PY
  for id in 01 02; do
    "$KOPT" decide "${kopt_family[@]}" --candidate $id >"$WORK/decide.log" 2>&1 ||
      [ $id = 01 ] || { cat "$WORK/decide.log"; fail "deciding $id"; }
  done
  expect_verdict "$state/results/01/decision.json" regression
  expect_verdict "$state/results/02/decision.json" keep
}
