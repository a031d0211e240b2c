# The NVIDIA path's build, end to end with the real nvcc (sm_90a), cmake and ninja: every
# candidate of the CUDA calibration family and of the paged decode family (with its wrong
# fixture, and its application), and the blockscale GEMM's baseline (17, landed) compile and link
# through kopt's generated targets, each harness carries sm_90a code, and runs its host side. The
# cheat candidates of tests/fixtures/cheats/cuda_spin compile too, so they are ready for a GPU.
# Nothing runs on a GPU here; the device runs are in docs/PERFORMANCE.md.
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
PATH=$PATH:/usr/local/cuda/bin
need nvcc
need python3

build_family() { # family, targets... (sources: $FAMILY_DIR or examples/; build: $BUILD_DIR)
  local family=$1 b=${BUILD_DIR:-$WORK/$1} src=${FAMILY_DIR:-$KOPT_SOURCE_DIR/examples/$1}
  shift
  cmake -S "$src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$b.configure.log" 2>&1 ||
    { cat "$b.configure.log"; fail "configure $family with nvcc"; }
  cmake --build "$b" --target "$@" >"$b.build.log" 2>&1 ||
    { tail -40 "$b.build.log"; fail "building $family's $* with nvcc"; }
  for target in "$@"; do
    local bin=$b/kopt/$family/bin/$target
    [ -x "$bin" ] || fail "no harness binary $bin"
    grep -aq -- "-arch sm_90a" "$bin" || fail "$bin carries no sm_90a code" # the cubin's build line
    "$bin" --help >"$b.$target.help" 2>&1 || { cat "$b.$target.help"; fail "$target --help"; }
    grep -q -- "--configs FILE" "$b.$target.help" || fail "$target --help printed no usage"
  done
  echo "$family: built and checked $*"
}

spin_candidates=$(cd "$KOPT_SOURCE_DIR/examples/cuda_spin/candidates" && printf 'candidate_%s ' *)
# shellcheck disable=SC2086 # one target per candidate
build_family cuda_spin $spin_candidates
build_family cuda_gemm_a8w8_blockscale candidate_17

# The paged decode attention family: the baseline (the landed BEST: the candidate whose
# candidate.json names no base, bench/baseline_id.sh) built whole, and one instance TU of every other candidate and of the
# wrong fixture (causal_off_by_one, candidate 90 of a copy, with its own instance.cu.in: it is the
# first baseline with one change), so each is ready for the GPU run that measures it or must call it
# incorrect; whole builds of all of them would cost this test about 100 s on two shared cores.
cp -r "$KOPT_SOURCE_DIR/examples/cuda_paged_decode" "$WORK/pd_src"
wrong=$KOPT_SOURCE_DIR/tests/fixtures/wrong/cuda_paged_decode/causal_off_by_one
mkdir "$WORK/pd_src/candidates/90" || fail "cuda_paged_decode has a candidate 90 already"
cp "$wrong/candidate.json" "$wrong/paged_kernel.cuh" "$wrong/instance.cu.in" "$WORK/pd_src/candidates/90/"
base=$(bash "$KOPT_SOURCE_DIR/examples/cuda_paged_decode/bench/baseline_id.sh" "$WORK/pd_src/candidates") ||
  fail "cuda_paged_decode: bench/baseline_id.sh failed"
[ "$(echo "$base" | wc -w)" = 1 ] ||
  fail "cuda_paged_decode: expected one baseline (a candidate.json naming no base), found: '$base'"
start=$SECONDS
FAMILY_DIR=$WORK/pd_src BUILD_DIR=$WORK/pd build_family cuda_paged_decode "candidate_$base"
for id in $(cd "$WORK/pd_src/candidates" && ls | grep -v "^$base\$"); do
  object=CMakeFiles/candidate_$id.dir/kopt/cuda_paged_decode/gen/$id/instances/paged_w4_s1.cpp.o
  cmake --build "$WORK/pd" --target "$object" >"$WORK/pd.$id.log" 2>&1 ||
    { tail -30 "$WORK/pd.$id.log"; fail "compiling cuda_paged_decode candidate $id's instance"; }
  grep -aq -- "-arch sm_90a" "$WORK/pd/$object" || fail "candidate $id's instance carries no sm_90a code"
done
echo "cuda_paged_decode: $base built, the others' instances compiled, in $((SECONDS - start)) s"
# Its application (family.json "app": app/app.cu, the decode loop) with the baseline's kernels, in
# the same build: it links, carries sm_90a code, and its host side answers a bad command line.
start=$SECONDS
cmake --build "$WORK/pd" --target "candidate_${base}_application" >"$WORK/pd.app.log" 2>&1 ||
  { tail -30 "$WORK/pd.app.log"; fail "building cuda_paged_decode's candidate_${base}_application"; }
app=$WORK/pd/kopt/cuda_paged_decode/bin/app/candidate_$base
grep -aq -- "-arch sm_90a" "$app" || fail "$app carries no sm_90a code"
"$app" --steps 0 >"$WORK/pd.app.out" 2>&1 && fail "the paged application ran with --steps 0"
grep -q "^usage: app \[--steps N\]" "$WORK/pd.app.out" ||
  { cat "$WORK/pd.app.out"; fail "the paged application printed no usage"; }
echo "cuda_paged_decode: candidate_${base}_application built and checked in $((SECONDS - start)) s"

# The cheats, as candidates of a copy of cuda_spin: each folder's files but expect.txt.
cheats=$KOPT_SOURCE_DIR/tests/fixtures/cheats/cuda_spin
cp -r "$KOPT_SOURCE_DIR/examples/cuda_spin" "$WORK/cheat_src"
cheat_targets=
for cheat in "$cheats"/*/; do
  id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheat/candidate.json")
  [ -n "$id" ] && [ -s "$cheat/expect.txt" ] || fail "$cheat: no candidate id or no expect.txt"
  mkdir "$WORK/cheat_src/candidates/$id" || fail "$cheat: candidate $id exists already"
  (cd "$cheat" && cp $(ls | grep -v '^expect.txt$') "$WORK/cheat_src/candidates/$id/")
  cheat_targets+="candidate_$id "
done
# shellcheck disable=SC2086 # one target per cheat
FAMILY_DIR=$WORK/cheat_src BUILD_DIR=$WORK/cheats build_family cuda_spin candidate_00 $cheat_targets
# A cheat that stops the profiler (the timed range) itself: the bench's identity check refuses
# it before any GPU is asked for, naming the call (nm -u of the real nvcc object).
slug=profiler_stop
id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheats/$slug/candidate.json")
if "$KOPT" bench --spec "$WORK/cheat_src/family.json" --state-dir "$WORK/cheats/kopt/cuda_spin" \
  --candidate "$id" --identity-dir "$WORK/cheats" >"$WORK/cheats.$slug.bench" 2>&1; then
  cat "$WORK/cheats.$slug.bench"; fail "cheat $slug: the bench's identity check passed it"
fi
grep -q "identity: symbol cudaProfilerStop is called from candidates/$id" "$WORK/cheats.$slug.bench" ||
  { cat "$WORK/cheats.$slug.bench"; fail "cheat $slug: the refusal does not name cudaProfilerStop"; }
echo "cuda_spin's cheats: compiled; $slug refused: $(grep -o 'symbol cudaProfilerStop is called from [^ ]*' "$WORK/cheats.$slug.bench" | head -1)"

# The blockscale GEMM's cheats, as candidates of a copy of it. A whole build of each would cost
# minutes per cheat here, so the memo and skip cheats compile one instance TU each (the family's
# default kernel, with the cheat's launch code); the event-clock and rebind cheats are built
# whole, and the bench's identity check (no GPU needed) must refuse each, naming the symbol or
# the harness function its header rebinds.
cheats=$KOPT_SOURCE_DIR/tests/fixtures/cheats/cuda_gemm_a8w8_blockscale
family=cuda_gemm_a8w8_blockscale
cp -r "$KOPT_SOURCE_DIR/examples/$family" "$WORK/bs_src"
for cheat in "$cheats"/*/; do
  id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheat/candidate.json")
  [ -n "$id" ] && [ -s "$cheat/expect.txt" ] || fail "$cheat: no candidate id or no expect.txt"
  mkdir "$WORK/bs_src/candidates/$id" || fail "$cheat: candidate $id exists already"
  (cd "$cheat" && cp $(ls | grep -v '^expect.txt$') "$WORK/bs_src/candidates/$id/")
done
bs=$WORK/bs
cmake -S "$WORK/bs_src" -B "$bs" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DKOPT_USE_CCACHE=OFF >"$bs.configure.log" 2>&1 ||
  { cat "$bs.configure.log"; fail "configure $family with its cheats"; }
for slug in memo_address skip_unread; do
  id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheats/$slug/candidate.json")
  object=CMakeFiles/candidate_$id.dir/kopt/$family/gen/$id/instances/a8w8_bs_64x64_w2x2_s3.cpp.o
  cmake --build "$bs" --target "$object" >"$bs.$slug.log" 2>&1 ||
    { tail -30 "$bs.$slug.log"; fail "compiling cheat $slug's instance"; }
done
for slug in event_clock rebind_check; do
  id=$(sed -n 's/.*"id": *"\([0-9]*\)".*/\1/p' "$cheats/$slug/candidate.json")
  start=$SECONDS
  cmake --build "$bs" --target candidate_17 "candidate_$id" >"$bs.$slug.log" 2>&1 ||
    { tail -30 "$bs.$slug.log"; fail "building cheat $slug"; }
  built=$SECONDS
  if "$KOPT" bench --spec "$WORK/bs_src/family.json" --state-dir "$bs/kopt/$family" \
    --candidate "$id" --identity-dir "$bs" >"$bs.$slug.bench" 2>&1; then
    cat "$bs.$slug.bench"; fail "cheat $slug: the bench's identity check passed it"
  fi
  grep -qF "$(cat "$cheats/$slug/expect.txt")" "$bs.$slug.bench" ||
    { cat "$bs.$slug.bench"; fail "cheat $slug: the refusal does not say $(cat "$cheats/$slug/expect.txt")"; }
  grep -q '"status": "failed"' "$bs/kopt/$family/results/$id/measurement.json" ||
    fail "cheat $slug: no failed measurement recorded for the keep test"
  if [ "$slug" = rebind_check ] && grep -q "identity: symbol" "$bs.$slug.bench"; then
    cat "$bs.$slug.bench"; fail "cheat $slug: refused by the symbol rule, not the binding rule alone"
  fi
  echo "$family's cheats: $slug built in $((built - start)) s, refused in $((SECONDS - built)) s:" \
    "$(grep -F "$(cat "$cheats/$slug/expect.txt")" "$bs.$slug.bench" | head -1 | cut -c1-240)"
done
