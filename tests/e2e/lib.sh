# Shared by the end-to-end scripts: fail loudly, skip with 77, a fresh folder per test.
set -euo pipefail
SKIP=77
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit $SKIP; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kopt-e2e-XXXXXX")
cleanup() { local rc=$?; if [ $rc -eq 0 ] && [ -z "${KOPT_KEEP_TEMP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT

# Copies examples/host_gemm to $WORK/src/host_gemm (family_src), for the script to add candidates.
copy_host_family() {
  family_src=$WORK/src/host_gemm
  mkdir -p "$WORK/src"
  cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$family_src"
}

# Configures family_src in $WORK/b (Release, no ccache), builds the named targets and records
# 00 as BEST; sets b, state and kopt_family (the --spec and --state-dir arguments).
host_family_with_baseline() { # targets...
  b=$WORK/b
  state=$b/kopt/host_gemm
  kopt_family=(--spec "$family_src/family.json" --state-dir "$state")
  cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DKOPT_USE_CCACHE=OFF >"$WORK/configure.log" ||
    { cat "$WORK/configure.log"; fail "configure"; }
  cmake --build "$b" --target "$@" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build"; }
  { "$KOPT" bench "${kopt_family[@]}" --best && "$KOPT" decide "${kopt_family[@]}" --candidate 00 &&
      "$KOPT" record "${kopt_family[@]}" --candidate 00; } >"$WORK/best.log" 2>&1 ||
    { cat "$WORK/best.log"; fail "recording the baseline"; }
}
