#!/usr/bin/env bash
# A small agent loop over prepared patches: each patch becomes a candidate (kopt new; a patch
# kopt new refuses, e.g. one whose result equals another candidate's content, is reported and
# skipped), then each candidate gets one round (kopt round --json) and the driver reads the
# answer: the verdict, the repair attempt, the next allowed action. A real agent writes its
# patch between rounds; the protocol is docs/AGENTS.md.
#
#   run.sh --spec family.json --state-dir <build>/kopt/host_gemm --build-dir <build> \
#          [--patches DIR] [--first-id 11] [--out DIR]
set -euo pipefail
KOPT=${KOPT:-kopt}
here=$(cd "$(dirname "$0")" && pwd)
patches=$here/patches
first_id=11
out=.
while [ $# -gt 0 ]; do
  case $1 in
  --spec) spec=$2; shift 2 ;;
  --state-dir) state=$2; shift 2 ;;
  --build-dir) build=$2; shift 2 ;;
  --patches) patches=$2; shift 2 ;;
  --first-id) first_id=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
family=(--spec "${spec:?--spec}" --state-dir "${state:?--state-dir}")
mkdir -p "$out"

# BEST when the loop starts: every prepared patch was written against it.
base=$("$KOPT" status --json "${family[@]}" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["best"] if s else "00")')

ids=()
id=$first_id
for patch in "$patches"/*.patch; do
  name=$(basename "$patch" .patch)
  if "$KOPT" new "${family[@]}" --id "$id" --base "$base" --from-patch "$patch" \
    --hypothesis "$name" --replace >/dev/null 2>"$out/new-$id.log"; then
    ids+=("$id")
    id=$((id + 1))
  else
    echo "$name: not proposed: $(sed 's/^kopt: error: //' "$out/new-$id.log" | head -1)"
  fi
done

for id in "${ids[@]}"; do
  rc=0
  "$KOPT" round --json "${family[@]}" --id "$id" --build-dir "${build:?--build-dir}" \
    >"$out/round-$id.json" 2>"$out/round-$id.log" || rc=$?
  if [ "$rc" -eq 2 ] || [ ! -s "$out/round-$id.json" ]; then
    cat "$out/round-$id.log" >&2
    echo "run.sh: kopt round --id $id failed (exit $rc)" >&2
    exit 2
  fi
  python3 - "$out/round-$id.json" "$rc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
repair = r.get("repair")
extra = f" (repair {repair['attempt']} of {repair['of']})" if repair else ""
print(f"{r['candidate']} {r['hypothesis']}: {r['verdict']}{extra}, exit {sys.argv[2]}, "
      f"BEST {r['best']}, regressions {r['regressions']['consecutive']}, next {r['next']['action']}")
PY
  if [ "$rc" -eq 5 ]; then
    echo "the ledger stopped: the loop ends"
    break
  fi
done
