# Cheat candidates against the identity check, with the real g++, nm, ldd, ninja and ctest on the
# host example: each folder of tests/fixtures/cheats/host_gemm/<slug>/ (gemm_kernel.hpp,
# candidate.json, expect.txt) becomes candidate <id> of a copy of the example; its correctness
# test (the user's `ctest -L correctness`) must fail with expect.txt's line, while 00 and 01 pass.
#   clock_gettime, steady_clock_now, harness_function   symbols the harness or its libraries define
#   macro_poison, macro_size                             macros that change the harness's own code
#   rebind_overload, rebind_specialise, rebind_adl       declarations harness code binds to instead
#   weak_body                                            a weak function with another body
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need cmake
need ninja
need nm
need ldd

cheats=$KOPT_SOURCE_DIR/tests/fixtures/cheats/host_gemm
copy_host_family
slugs=()
for dir in "$cheats"/*/; do
  # The cheats the identity check refuses (the others are e2e.cheats', through the keep test).
  grep -qE '^(identity:|expands differently)' "$dir/expect.txt" || continue
  slug=$(basename "$dir")
  id=$(json_get "$dir/candidate.json" id)
  mkdir -p "$family_src/candidates/$id"
  cp -r "$dir". "$family_src/candidates/$id/" # its editable files and candidate.json
  rm -f "$family_src/candidates/$id/expect.txt"
  slugs+=("$slug")
done
[ ${#slugs[@]} -ge 4 ] || fail "expected at least 4 cheats in $cheats, found ${#slugs[@]}"

b=$WORK/b
cmake -S "$family_src" -B "$b" -G Ninja -DKernelOpt_DIR="$KOPT_PACKAGE_DIR" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }
# Every cheat compiles and links: the check, not the build, must refuse it.
cmake --build "$b" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build"; }

ctest --test-dir "$b" -L correctness -R '^candidate_0[01]\.' --output-on-failure \
  >"$WORK/honest.log" 2>&1 || { cat "$WORK/honest.log"; fail "00/01 correctness"; }

for slug in "${slugs[@]}"; do
  id=$(json_get "$cheats/$slug/candidate.json" id)
  expect=$(head -n 1 "$cheats/$slug/expect.txt")
  if ctest --test-dir "$b" -L correctness -R "^candidate_$id\." --output-on-failure \
    >"$WORK/$slug.log" 2>&1; then
    cat "$WORK/$slug.log"
    fail "$slug (candidate $id) passed its correctness test"
  fi
  grep -qF -- "$expect" "$WORK/$slug.log" ||
    { cat "$WORK/$slug.log"; fail "$slug (candidate $id): the refusal does not say: $expect"; }
  echo "refused $slug (candidate $id): $expect"
done
