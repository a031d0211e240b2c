# The AMD path's build, end to end with the real hipcc (Debian's 5.2: gfx90a and gfx940, no
# gfx942), cmake, ninja and ccache on examples/hip_gemm_a8w8_blockscale: every candidate's
# instance TUs compile through kopt launch-compile + ccache for both targets, the harness links
# and runs its host side, and a fresh build folder is all ccache hits. Nothing runs on an AMD
# GPU here (there is none); see docs/AMD.md. CMake's HIP language is tried too and reported,
# and a tree of its own that uses it (with docs/AMD.md's settings; Composable Kernel's shape: -mllvm pairs from
# a folder, an INTERFACE target and one source, so two compile groups) is built and imported; a
# HIP-language consumer's instance TU line equals the tree's, item by item, and compiles.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need ccache
need hipcc

export CCACHE_DIR=$WORK/ccache # a cache of this test's own, so the counters are ours
family_src=$WORK/src/hip_gemm_a8w8_blockscale
mkdir -p "$WORK/src"
cp -r "$KOPT_SOURCE_DIR/examples/hip_gemm_a8w8_blockscale" "$family_src"
archs="gfx90a;gfx940"
candidates=(candidate_00 candidate_01 candidate_02)

configure() { # build folder, extra cmake arguments...
  local b=$1
  shift
  cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_CXX_COMPILER=hipcc -DKOPT_HIP_ARCHITECTURES="$archs" "$@" >"$b.configure.log" 2>&1
}
stat_of() { awk -v k="$1" '$1==k{print $2}' "$2"; }

echo "--- hipcc as the C++ compiler: every candidate's instances through ccache"
ccache -z >/dev/null
configure "$WORK/b1" || { cat "$WORK/b1.configure.log"; fail "configure with hipcc"; }
cmake --build "$WORK/b1" --target "${candidates[@]}" -- -v >"$WORK/build1.log" 2>&1 ||
  { tail -50 "$WORK/build1.log"; fail "building the HIP candidates"; }
state=$WORK/b1/kopt/hip_gemm_a8w8_blockscale
instances=$(find "$state/gen" -path '*/instances/*.cpp' | wc -l)
[ "$instances" -eq 27 ] || fail "expected 27 instance TUs (9 per candidate), found $instances"
# Each instance TU is compiled as HIP for both targets, through kopt's launcher and ccache.
tu_lines=$(grep -E 'launch-compile .*ccache .*hipcc .*/instances/a8w8_blockscale_1x128x128_' \
  "$WORK/build1.log" | grep -c -- '-x hip' || true)
[ "$tu_lines" -eq 27 ] || fail "$tu_lines of 27 instance compiles ran hipcc -x hip through ccache"
grep -E '/instances/a8w8_blockscale_1x128x128_256x16x128x256_1x8_intrawave_v1' "$WORK/build1.log" |
  grep -- '--offload-arch=gfx90a --offload-arch=gfx940' >/dev/null || fail "instances miss --offload-arch"
ccache --print-stats >"$WORK/stats1.txt"
[ "$(stat_of cache_miss "$WORK/stats1.txt")" -ge 27 ] || { cat "$WORK/stats1.txt"; fail "ccache saw no compiles"; }
for c in "${candidates[@]}"; do
  bin=$state/bin/$c
  [ -x "$bin" ] || fail "no harness binary $bin"
  for arch in gfx90a gfx940; do
    grep -aq "amdgcn-amd-amdhsa--$arch" "$bin" || fail "$c has no $arch code object"
  done
done
# The host side runs without a GPU: the HIP runtime loads, the harness prints its usage.
"$state/bin/candidate_00" --help >"$WORK/help.txt" 2>&1 || { cat "$WORK/help.txt"; fail "harness --help"; }
grep -q -- "--configs FILE" "$WORK/help.txt" || fail "harness --help printed no usage"

echo "--- a fresh build folder of the same candidates: every object from ccache"
ccache -z >/dev/null
configure "$WORK/b2" || { cat "$WORK/b2.configure.log"; fail "second configure"; }
cmake --build "$WORK/b2" --target "${candidates[@]}" >"$WORK/build2.log" 2>&1 ||
  { tail -50 "$WORK/build2.log"; fail "second build"; }
ccache --print-stats >"$WORK/stats2.txt"
misses=$(stat_of cache_miss "$WORK/stats2.txt")
hits=$(( $(stat_of direct_cache_hit "$WORK/stats2.txt") + $(stat_of preprocessed_cache_hit "$WORK/stats2.txt") ))
[ "$misses" -eq 0 ] || { cat "$WORK/stats2.txt"; fail "$misses ccache misses in a fresh folder"; }
[ "$hits" -ge 27 ] || { cat "$WORK/stats2.txt"; fail "only $hits ccache hits for 27+ TUs"; }
echo "fresh folder: $hits hits, 0 misses"

echo "--- CMake's HIP language (LANGUAGE HIP, HIP_ARCHITECTURES)"
if configure "$WORK/b3" -DKOPT_HIP_LANGUAGE=ON -DCMAKE_HIP_ARCHITECTURES="$archs"; then
  cmake --build "$WORK/b3" --target candidate_00 >"$WORK/build3.log" 2>&1 ||
    { tail -50 "$WORK/build3.log"; fail "building candidate_00 through the HIP language"; }
  echo "HIP language: candidate_00 built"
elif grep -q "hip-lang" "$WORK/b3.configure.log"; then
  # Debian ships hip-lang under lib/x86_64-linux-gnu/cmake, where CMake does not look.
  echo "HIP language: not available here (CMake finds no hip-lang package): not exercised"
else
  cat "$WORK/b3.configure.log"; fail "configure with the HIP language failed for another reason"
fi

echo "--- kopt import of a tree that uses CMake's HIP language (docs/AMD.md: how it configures)"
rocm=$WORK/rocm # CMake 3.25 wants <rocm>/lib/cmake/hip-lang; Debian has lib/x86_64-linux-gnu/cmake
hiplang=$(dirname "$(dirname "$(find /usr/lib /opt/rocm -path '*/cmake/hip-lang/hip-lang-config.cmake' 2>/dev/null | head -1)")")
clang=$(command -v clang++-15 || true)
if [ "$hiplang" = "." ] || [ -z "$clang" ]; then
  echo "HIP language tree: no hip-lang package or clang++-15: not exercised"
  exit 0
fi
mkdir -p "$rocm/lib" "$WORK/hiptree"
ln -s "$hiplang" "$rocm/lib/cmake"
# Composable Kernel's shape in CMake's HIP language: -mllvm pairs from a folder's SHELL: option,
# an INTERFACE target's SHELL: list (beside hip-lang's own pairs) and one source's own pair.
cat >"$WORK/hiptree/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.21)
project(hiptree LANGUAGES CXX HIP)
add_compile_options("SHELL: -mllvm -inline-threshold=500")
add_library(ck_flags INTERFACE)
target_compile_options(ck_flags INTERFACE "SHELL: -mllvm -unroll-threshold=150 -mllvm -unroll-count=2")
add_library(hipk STATIC k.hip k2.hip)
target_link_libraries(hipk PRIVATE ck_flags)
set_source_files_properties(k2.hip PROPERTIES COMPILE_OPTIONS "-mllvm;-unroll-max-count=4")
CMAKE
for k in k k2; do
  echo "#include <hip/hip_runtime.h>
__global__ void $k(float* x) { x[0] = 1; }" >"$WORK/hiptree/$k.hip"
done
hip_args=(-DCMAKE_HIP_COMPILER="$clang" -DCMAKE_HIP_COMPILER_ROCM_ROOT="$rocm"
  "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
CMAKE_PREFIX_PATH=$hiplang cmake -S "$WORK/hiptree" -B "$WORK/hipb" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_HIP_ARCHITECTURES=gfx90a -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${hip_args[@]}" \
  >"$WORK/hiptree.log" 2>&1 || { cat "$WORK/hiptree.log"; fail "configure a HIP-language tree"; }
cmake --build "$WORK/hipb" >>"$WORK/hiptree.log" 2>&1 || { cat "$WORK/hiptree.log"; fail "build the HIP-language tree"; }
if "$KOPT" import --build-dir "$WORK/hipb" --target hipk --out "$WORK/hipk.cmake" 2>"$WORK/hipk.err"; then
  fail "import --target hipk chose one of its two compile groups"
fi
grep -q "target 'hipk' compiles its HIP sources in 2 groups with different flags" "$WORK/hipk.err" ||
  { cat "$WORK/hipk.err"; fail "the groups of hipk are not listed"; }
"$KOPT" import --json --build-dir "$WORK/hipb" --source "$WORK/hiptree/k2.hip" --out "$WORK/hipk.cmake" >"$WORK/hipk.json" ||
  fail "import the HIP-language tree"
python3 - "$WORK/hipk.json" <<'PY' || fail "the HIP import"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["language"] == "HIP" and j["rule_args"] == ["-x", "hip"], (j["language"], j["rule_args"])
assert "--offload-arch=gfx90a" in j["flags"] and "-std=gnu++17" in j["flags"], j["flags"]
# Every -mllvm pair whole, in the tree's order: the folder's, hip-lang's, the INTERFACE's, k2's own.
pairs = [j["flags"][i + 1] for i, f in enumerate(j["flags"]) if f == "-mllvm"]
assert pairs == ["-inline-threshold=500", "-amdgpu-early-inline-all=true", "-amdgpu-function-calls=false",
                 "-unroll-threshold=150", "-unroll-count=2", "-unroll-max-count=4"], j["flags"]
print("HIP language tree imported:", " ".join(j["flags"]))
PY

echo "--- a HIP-language consumer: its instance TU line is the tree's line of k2.hip, pairs whole"
mkdir -p "$WORK/hipfam" "$WORK/hipconsumer"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$WORK/hipfam/host_gemm"
rm -rf "$WORK/hipfam/host_gemm/candidates/"0[23] "$WORK/hipfam/host_gemm/agent"
cat >"$WORK/hipconsumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(hipconsumer LANGUAGES CXX HIP)
find_package(KernelOpt REQUIRED)
kopt_add_family(host_gemm SPEC $WORK/hipfam/host_gemm/family.json IMPORTED $WORK/hipk.cmake)
CMAKE
CMAKE_PREFIX_PATH=$hiplang cmake -S "$WORK/hipconsumer" -B "$WORK/hipcb" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" -DKOPT_USE_CCACHE=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${hip_args[@]}" \
  >"$WORK/hipconsumer.log" 2>&1 || { cat "$WORK/hipconsumer.log"; fail "configure the HIP-language consumer"; }
python3 - "$WORK/hipb" "$WORK/hipcb" "$WORK/hiptree/k2.hip" <<'PY' || fail "the HIP instance TU line"
import json, os, shlex, sys
tree_b, cons_b, src = sys.argv[1:4]
def items(entry, src, own=None):
    args, out, i = shlex.split(entry["command"]), [], 1
    while i < len(args):
        a = args[i]
        if a in ("-o", "-MT", "-MF"): i += 2; continue
        if a in ("-c", "-MD") or os.path.realpath(a) == os.path.realpath(src): i += 1; continue
        if own and a.startswith("-I") and os.path.realpath(a[2:]).startswith(own): i += 1; continue
        out.append(a); i += 1
    return args[0], out
tree = [e for e in json.load(open(f"{tree_b}/compile_commands.json")) if e["file"].endswith("/k2.hip")]
mine = sorted((e for e in json.load(open(f"{cons_b}/compile_commands.json"))
               if "/instances/" in e["file"] and "/01/" in e["file"]), key=lambda e: e["file"])
assert len(tree) == 1 and mine, (len(tree), len(mine))
own = os.path.realpath(f"{cons_b}/kopt/host_gemm")
(tc, t), (mc, m) = items(tree[0], src), items(mine[0], mine[0]["file"], own)
assert os.path.realpath(tc) == os.path.realpath(mc), (tc, mc)
diff = sum(a != b for a, b in zip(t, m)) + abs(len(t) - len(m))
assert diff == 0, f"{diff} differences:\n tree     {t}\n instance {m}"
assert t.count("-mllvm") == 6, t
print(f"ok: the HIP instance TU line equals the tree's, {len(t)} items: {' '.join(t)}")
PY
cmake --build "$WORK/hipcb" --target candidate_01_instances >"$WORK/hipcb.log" 2>&1 ||
  { tail -30 "$WORK/hipcb.log"; fail "compile the HIP-language consumer's instance TUs"; }
echo "the HIP-language consumer's instance TUs of 01 compile"
