# kopt import reproduces a tree's compile line exactly: one tiny tree (configured once with
# Ninja, response files forced, and once with Ninja Multi-Config) holds a STATIC kernel library
# (CXX_STANDARD 20, extensions OFF) with a source of its own COMPILE_OPTIONS, an OBJECT library
# (gnu++20), a SHARED library that passes no -std, an EXECUTABLE benchmark linking the kernel
# library and, when nvcc is installed, a CUDA STATIC library with separable compilation and a host
# compiler of its own (-ccbin; a consumer without it is refused, naming the setting); and a
# Composable-Kernel-shaped OBJECT library whose options are --param pairs (a folder's SHELL:
# option, an INTERFACE target's SHELL: list, one source's own pair: two compile groups, which
# `--target` refuses to choose between, listing them). A
# consumer project (another build type, options and CUDA architectures of its own) adds one
# IMPORTED family per target; each family's instance TU line in the consumer's
# compile_commands.json must equal the tree's line for a source of that target item by item,
# paths aside. The family imported from the executable builds and passes `ctest -L correctness`.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need python3

has_cuda=0
if command -v nvcc >/dev/null 2>&1; then has_cuda=1; fi
# A CUDA tree with a host compiler of its own (-ccbin): the consumer must compile with it too.
host_cc=()
if [ $has_cuda = 1 ] && [ -x /usr/bin/g++-12 ]; then host_cc=(-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-12); fi
tree=$WORK/tree
mkdir -p "$tree"
cat >"$tree/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(tree LANGUAGES CXX)
option(WITH_CUDA "" OFF)
add_library(kernels STATIC kernels.cpp special.cpp)
set_target_properties(kernels PROPERTIES CXX_STANDARD 20 CXX_EXTENSIONS OFF)
target_compile_options(kernels PRIVATE -fno-math-errno -Wall)
target_compile_definitions(kernels PUBLIC KERNELS_LEVEL=3)
set_source_files_properties(special.cpp PROPERTIES COMPILE_OPTIONS "-fno-tree-vectorize;-DSPECIAL_ONLY")
add_library(gnu OBJECT gnu.cpp)
set_target_properties(gnu PROPERTIES CXX_STANDARD 20 CXX_EXTENSIONS ON)
add_library(plain SHARED plain.cpp)
add_executable(bench bench.cpp)
target_link_libraries(bench PRIVATE kernels)
target_compile_options(bench PRIVATE -fno-strict-aliasing)
add_subdirectory(ck)
if(WITH_CUDA)
  enable_language(CUDA)
  add_library(sep STATIC sep.cu)
  set_target_properties(sep PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_ARCHITECTURES 90a)
  # -fno-strict-aliasing reaches the host compiler through -forward-unknown-to-host-compiler.
  target_compile_options(sep PRIVATE -Xcompiler=-Wall -fno-strict-aliasing --use_fast_math)
  target_compile_features(sep PRIVATE cuda_std_17)
endif()
CMAKE
# Composable Kernel's shape: an instance OBJECT library whose options come in pairs (g++'s
# --param stands for CK's -mllvm): a folder's add_compile_options("SHELL: ..."), an INTERFACE
# target's SHELL: list of pairs, and one source's own pair, so its sources compile in two groups.
mkdir -p "$tree/ck"
cat >"$tree/ck/CMakeLists.txt" <<'CMAKE'
add_compile_options("SHELL: --param max-inline-insns-single=400")
add_library(ck_flags INTERFACE)
target_compile_options(ck_flags INTERFACE
  "SHELL: --param early-inlining-insns=20 --param inline-unit-growth=30")
add_library(ck_instances OBJECT ck_a.cpp ck_b.cpp)
target_link_libraries(ck_instances PRIVATE ck_flags)
set_source_files_properties(ck_b.cpp PROPERTIES COMPILE_OPTIONS "--param;max-unrolled-insns=300")
CMAKE
for f in ck_a ck_b; do echo "int $f() { return 1; }" >"$tree/ck/$f.cpp"; done
for f in kernels special gnu plain; do echo "int $f() { return 1; }" >"$tree/$f.cpp"; done
echo 'int kernels(); int main() { return kernels() - 1; }' >"$tree/bench.cpp"
echo '__global__ void sep(float* x) { x[0] = 1; }' >"$tree/sep.cu"

cases="kernels special gnu plain bench ck_a ck_b"
[ $has_cuda = 0 ] || cases="$cases sep"
# case -> kopt import arguments and the tree source whose line the instance TU must equal.
import_args() { # case
  case $1 in
    kernels | special) echo "--source $tree/$1.cpp" ;; # kernels: two compile groups
    ck_a | ck_b) echo "--source $tree/ck/$1.cpp" ;;
    plain) echo "--target plain --baseline compile" ;; # not built: 00 compiles
    *) echo "--target $1" ;;
  esac
}
tree_source() { # case
  case $1 in
    sep) echo "$tree/sep.cu" ;;
    ck_a | ck_b) echo "$tree/ck/$1.cpp" ;;
    *) echo "$tree/$1.cpp" ;;
  esac
}

# The consumer: its own build type, options and CUDA architectures, none of which may reach an
# instance TU; one family per case (host_gemm, or cuda_spin for the CUDA case).
fam=$WORK/families
mkdir -p "$fam"
cp -r "$KOPT_SOURCE_DIR/examples/host_gemm" "$KOPT_SOURCE_DIR/examples/cuda_spin" "$fam/"
rm -rf "$fam"/host_gemm/candidates/0[23] "$fam"/cuda_spin/candidates/0[2-5]
consumer=$WORK/consumer
mkdir -p "$consumer"
cat >"$consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES CXX)
add_compile_options(-Wshadow)
add_compile_definitions(CONSUMER_ONLY=1)
find_package(KernelOpt REQUIRED)
enable_testing()
foreach(case $cases)
  if(case STREQUAL "sep")
    set(CMAKE_CUDA_ARCHITECTURES 75)
    enable_language(CUDA)
    kopt_add_family(cuda_spin SPEC $fam/cuda_spin/family.json PREFIX \${case}_
                    STATE_DIR \${CMAKE_BINARY_DIR}/kopt/\${case} IMPORTED \${IMPORTS}/\${case}.cmake)
  else()
    kopt_add_family(host_gemm SPEC $fam/host_gemm/family.json PREFIX \${case}_
                    STATE_DIR \${CMAKE_BINARY_DIR}/kopt/\${case} IMPORTED \${IMPORTS}/\${case}.cmake)
  endif()
endforeach()
CMAKE

# Compares the consumer's line for candidate 01's first instance TU of a case with the tree's
# line for the case's source, item by item. Paths aside: the compiler (same file), the source,
# -o/-MD/-MT/-MF and kopt's own -I of the candidate folder. Response files are expanded. The
# -D items are compared as a sorted list: CMake sorts a target's definitions itself, and a
# multi-config generator appends CMAKE_INTDIR after them where a single-config consumer's CMake
# sorts it in; every other item is compared in order.
compare_lines() { # tree_build consumer_build case source config
  python3 - "$@" <<'PY'
import json, os, shlex, sys
tree_b, cons_b, case, src, config = sys.argv[1:6]
def expand(entry):
    out = []
    for a in shlex.split(entry["command"]):
        if a.startswith("@"):
            out += shlex.split(open(os.path.join(entry["directory"], a[1:])).read())
        else:
            out.append(a)
    return out
def output(args):
    return args[args.index("-o") + 1]
def items(args, src, own):
    out, i = [], 1
    while i < len(args):
        a = args[i]
        if a in ("-o", "-MT", "-MF"): i += 2; continue
        if a in ("-c", "-MD") or os.path.realpath(a) == os.path.realpath(src): i += 1; continue
        if a.startswith("-I") and own and os.path.realpath(a[2:]).startswith(own): i += 1; continue
        out.append(a); i += 1
    defines = sorted(a for a in out if a.startswith("-D"))
    return [defines.pop(0) if a.startswith("-D") else a for a in out]
tree = [e for e in json.load(open(f"{tree_b}/compile_commands.json"))
        if os.path.realpath(e["file"]) == os.path.realpath(src)
        and (not config or f"/{config}/" in output(expand(e)))]
assert len(tree) == 1, f"{len(tree)} tree entries for {src} {config}"
state = os.path.realpath(f"{cons_b}/kopt/{case}")
mine = sorted((e for e in json.load(open(f"{cons_b}/compile_commands.json"))
               if os.path.realpath(e["file"]).startswith(state + "/")
               and "/instances/" in e["file"] and "/01/" in e["file"]), key=lambda e: e["file"])
assert mine, f"no instance TU of candidate 01 in {cons_b}/compile_commands.json for {case}"
t, m = expand(tree[0]), expand(mine[0])
assert os.path.realpath(t[0]) == os.path.realpath(m[0]), ("compiler", t[0], m[0])
ti, mi = items(t, src, None), items(m, mine[0]["file"], state)
stds = [a for a in mi if a.startswith("-std=")]
assert len(stds) <= 1, f"{case}: more than one -std: {stds}"
diff = sum(a != b for a, b in zip(ti, mi)) + abs(len(ti) - len(mi))
if diff:
    print(f"{case}: tree    ", ti); print(f"{case}: instance", mi)
    sys.exit(f"{case}: {diff} differences between the instance TU line and the tree's line")
print(f"ok {case} ({config or 'single-config'}): {len(ti)} items, 0 differences: {' '.join(ti)}")
PY
}

for gen in "Ninja" "Ninja Multi-Config"; do
  g=${gen// /-}
  tb=$WORK/tree-$g
  extra=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_NINJA_FORCE_RESPONSE_FILE=ON)
  config=""
  if [ "$gen" != "Ninja" ]; then extra=(); config=Release; fi
  echo "--- $gen tree"
  cmake -S "$tree" -B "$tb" -G "$gen" "${extra[@]}" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DWITH_CUDA=$has_cuda "${host_cc[@]}" >"$WORK/tree-$g.log" 2>&1 || { cat "$WORK/tree-$g.log"; fail "configure the $gen tree"; }
  # A target whose sources compile in groups of different flags: kopt lists them, never guesses.
  for t in kernels ck_instances; do
    if "$KOPT" import --build-dir "$tb" --target $t ${config:+--config $config} --out "$WORK/guess.cmake" \
      >/dev/null 2>"$WORK/guess-$t.err"; then
      fail "import --target $t took one of its compile groups"
    fi
  done
  grep -q "target 'ck_instances' compiles its CXX sources in 2 groups with different flags: group 1 ($tree/ck/ck_a.cpp): .*group 2 ($tree/ck/ck_b.cpp): .*--param max-unrolled-insns=300.*; give --source" "$WORK/guess-ck_instances.err" ||
    { cat "$WORK/guess-ck_instances.err"; fail "import --target ck_instances does not list its groups"; }
  targets=(kernels)
  [ $has_cuda = 0 ] || targets+=(sep)
  cmake --build "$tb" ${config:+--config $config} --target "${targets[@]}" >>"$WORK/tree-$g.log" 2>&1 ||
    { cat "$WORK/tree-$g.log"; fail "build the $gen tree's libraries"; }
  imports=$WORK/imports-$g
  mkdir -p "$imports"
  for c in $cases; do
    # shellcheck disable=SC2046
    "$KOPT" import --json --build-dir "$tb" $(import_args "$c") ${config:+--config $config} \
      --out "$imports/$c.cmake" >"$imports/$c.json" 2>"$imports/$c.err" ||
      { cat "$imports/$c.err"; fail "import $c from the $gen tree"; }
  done
  # What kopt import says: the mode and why; separable compilation; the configuration.
  python3 - "$imports" "$cases" <<'PY' || fail "kopt import's modes ($gen)"
import json, sys
d, cases = sys.argv[1], sys.argv[2].split()
want = {"kernels": "library", "special": "library", "gnu": "compile", "plain": "compile",
        "bench": "compile", "sep": "library", "ck_a": "compile", "ck_b": "compile"}
for c in cases:
    j = json.load(open(f"{d}/{c}.json"))
    assert j["baseline"] == want[c], (c, j["baseline"], j["baseline_reason"])
    assert (c == "sep") == j["separable"], (c, j["separable"], j["rule_args"])
    assert f"kopt import: baseline mode {j['baseline']}: {j['baseline_reason']}" in open(f"{d}/{c}.err").read()
print("import modes ok:", ", ".join(f"{c}={json.load(open(f'{d}/{c}.json'))['baseline']}" for c in cases))
PY
  grep -q "bench is an EXECUTABLE, not a library of the kernels: baseline 00 compiles its own instances with the tree's flags" "$imports/bench.err" ||
    { cat "$imports/bench.err"; fail "import of an executable does not say its mode"; }
  if [ -n "$config" ]; then
    "$KOPT" import --build-dir "$tb" --target gnu --out "$WORK/default.cmake" >/dev/null 2>"$WORK/default.err" ||
      { cat "$WORK/default.err"; fail "import without --config"; }
    grep -q "kopt import: $tb is a multi-config tree (Ninja Multi-Config): configuration Debug (the first of the tree's configurations Debug, Release, RelWithDebInfo; --config chooses another)" "$WORK/default.err" ||
      { cat "$WORK/default.err"; fail "no configuration message for a multi-config tree"; }
  fi

  cb=$WORK/consumer-$g
  if [ ${#host_cc[@]} -gt 0 ] && [ "$gen" = Ninja ]; then
    # Another host compiler than the tree's is refused, naming the setting.
    if cmake -S "$consumer" -B "$WORK/consumer-nohost" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
      -DKOPT_USE_CCACHE=OFF -DIMPORTS="$imports" >"$WORK/consumer-nohost.log" 2>&1; then
      fail "a consumer without the tree's CUDA host compiler configured"
    fi
    # CMake wraps the message; the words are compared with the lines joined.
    tr -s ' \n' '  ' <"$WORK/consumer-nohost.log" | grep -qF "kopt import: the tree's CUDA host compiler is /usr/bin/g++-12 (-ccbin), this project's is nvcc's default: configure with -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-12" ||
      { cat "$WORK/consumer-nohost.log"; fail "no message for the CUDA host compiler"; }
  fi
  cmake -S "$consumer" -B "$cb" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DKOPT_USE_CCACHE=OFF -DIMPORTS="$imports" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${host_cc[@]}" \
    >"$WORK/consumer-$g.log" 2>&1 || { cat "$WORK/consumer-$g.log"; fail "configure the consumer of the $gen tree"; }
  # The configure step says each family's mode and why: the tree's kernel library defines no
  # kopt_instance_ symbol, so its 00 compiles too.
  grep -q "kopt_add_family(host_gemm): IMPORTED kernels (STATIC_LIBRARY) of $tb: baseline mode compile: .*libkernels.a defines no kopt_instance_ symbol" "$WORK/consumer-$g.log" ||
    { cat "$WORK/consumer-$g.log"; fail "configure does not say the kernels family's mode"; }
  grep -q "kopt_add_family(host_gemm): IMPORTED bench (EXECUTABLE) of $tb: baseline mode compile: bench is an EXECUTABLE" "$WORK/consumer-$g.log" ||
    { cat "$WORK/consumer-$g.log"; fail "configure does not say the bench family's mode"; }
  grep -q "kopt_add_family(host_gemm): IMPORTED gnu (OBJECT_LIBRARY) of $tb: baseline mode compile: gnu is an OBJECT_LIBRARY, not a library of the kernels" "$WORK/consumer-$g.log" ||
    { cat "$WORK/consumer-$g.log"; fail "configure does not say the OBJECT library family's mode"; }
  for c in $cases; do
    compare_lines "$tb" "$cb" "$c" "$(tree_source "$c")" "$config" || fail "$c: the instance TU line differs from the $gen tree's"
  done
done
[ $has_cuda = 1 ] || echo "nvcc is not installed: the CUDA case was skipped"

echo "--- the family imported from the executable builds and passes its correctness tests"
cb=$WORK/consumer-Ninja
cmake --build "$cb" --target bench_candidate_00 bench_candidate_01 -- -v >"$WORK/bench-build.log" 2>&1 ||
  { tail -30 "$WORK/bench-build.log"; fail "build the bench family"; }
n00=$(grep -cE " -c [^ ]*/kopt/bench/.*/00/.*instances/" "$WORK/bench-build.log" || true)
[ "$n00" = 10 ] || fail "baseline 00 of the bench family compiled $n00 instance TUs, expected 10"
ctest --test-dir "$cb" -L correctness -R '^bench_' --output-on-failure >"$WORK/bench-ctest.log" 2>&1 ||
  { cat "$WORK/bench-ctest.log"; fail "ctest -L correctness of the bench family"; }
for id in 00 01; do
  grep -qE "bench_candidate_$id\.correctness \.+ +Passed" "$WORK/bench-ctest.log" ||
    { cat "$WORK/bench-ctest.log"; fail "bench_candidate_$id.correctness did not pass"; }
done
# The CK-shaped family's instance TUs compile with the pairs as the tree passes them.
cmake --build "$cb" --target ck_a_candidate_01 ck_b_candidate_01 >"$WORK/ck-build.log" 2>&1 ||
  { tail -30 "$WORK/ck-build.log"; fail "build the CK-shaped families' candidate 01"; }
if [ $has_cuda = 1 ]; then
  # Relocatable device code compiles and device-links (nothing runs: no GPU needed).
  cmake --build "$cb" --target sep_candidate_01 >"$WORK/sep-build.log" 2>&1 ||
    { tail -30 "$WORK/sep-build.log"; fail "build the separable CUDA family's candidate 01"; }
fi

echo "--- without cmake on PATH: the tree's CMAKE_COMMAND answers the query"
tb=$WORK/tree-Ninja
rm -rf "$tb/.cmake/api/v1/reply"
env PATH=/nonexistent "$KOPT" import --build-dir "$tb" --target bench --out "$WORK/nopath.cmake" \
  >"$WORK/nopath.out" 2>"$WORK/nopath.err" || { cat "$WORK/nopath.err"; fail "import with PATH=/nonexistent"; }
cmake_command=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$tb/CMakeCache.txt")
grep -qF "kopt import: running \`$cmake_command $tb\` to answer kopt's File API query (the tree has no File API reply yet)" "$WORK/nopath.err" ||
  { cat "$WORK/nopath.err"; fail "import does not say it re-ran the tree's cmake"; }
cmp -s "$WORK/nopath.cmake" "$WORK/imports-Ninja/bench.cmake" || fail "import without PATH wrote another file"
echo "ok: imported with PATH=/nonexistent through $cmake_command"
