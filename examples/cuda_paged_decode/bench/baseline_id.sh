#!/usr/bin/env bash
# The family's baseline, as kopt defines it: each candidate whose candidate.json names no base
# (00 before a landing, the landed BEST after it), one id a line.
#   bash baseline_id.sh <candidates folder>
# A folder without candidate.json is no candidate.
set -euo pipefail
python3 - "${1:?usage: baseline_id.sh CANDIDATES_DIR}" <<'PY'
import json, os, sys
root = sys.argv[1]
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name, "candidate.json")
    if os.path.isfile(path) and not json.load(open(path)).get("base"):
        print(name)
PY
