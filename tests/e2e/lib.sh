# Shared by the end-to-end scripts: fail loudly, skip with 77, a fresh folder per test.
set -euo pipefail
SKIP=77
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit $SKIP; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kopt-e2e-XXXXXX")
cleanup() { local rc=$?; if [ $rc -eq 0 ] && [ -z "${KOPT_KEEP_TEMP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
