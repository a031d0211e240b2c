# kopt new turns a worktree's change or a patch into a candidate folder, with real git: a text
# edit of the editable header is kept, a binary file and a build/ file are dropped with warnings
# naming them; a patch leaving the family folder, one touching a file that is not editable and
# one that gives BEST's content back or another candidate's, or a non-canonical id, are refused,
# and a refused patch writes nothing anywhere. Refusals name what to change: 5000 files not
# editable are ten names and "and 4990 more"; a newline or a U+202E in a path is refused and
# shown escaped; a copy says copies are not supported, a file turned into a symbolic link says
# so; an id of 300 digits names the id rule (not the OS's "File name too long").
source "${KOPT_E2E_LIB:?the e2e scripts run from ctest, which sets KOPT_E2E_LIB}"
need git
need python3

copy_host_family
rm -rf "$family_src"/candidates/0[1-9] "$family_src/agent"
repo=$WORK/src
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=kopt -c user.email=kopt@example.com commit -qm "host family"
state=$WORK/state
fam=(--spec "$family_src/family.json" --state-dir "$state")
faster=$KOPT_SOURCE_DIR/examples/host_gemm/candidates/01/gemm_kernel.hpp

echo "--- a worktree with an edited header, a binary file and a build/ file"
git -C "$repo" worktree add -q --detach "$WORK/wt" HEAD
cp "$faster" "$WORK/wt/host_gemm/gemm_kernel.hpp"
printf 'table\0\1\2\3' >"$WORK/wt/host_gemm/table.bin"
mkdir -p "$WORK/wt/host_gemm/build"
echo "generated" >"$WORK/wt/host_gemm/build/out.txt"
"$KOPT" new "${fam[@]}" --id 11 --base 00 --from-worktree "$WORK/wt" --hypothesis "01's tiles" \
  >"$WORK/new11.log" 2>"$WORK/new11.err" || { cat "$WORK/new11.err"; fail "new --from-worktree"; }

# Both candidates hold candidate.json and the edited header only, and say what they dropped.
check_candidate() { # id err-file
  local dir=$family_src/candidates/$1
  [ "$(cd "$dir" && find . -type f | sort | tr '\n' ' ')" = "./candidate.json ./gemm_kernel.hpp " ] ||
    { find "$dir"; fail "candidate $1 holds other files"; }
  cmp -s "$dir/gemm_kernel.hpp" "$faster" || fail "candidate $1's header is not the edited one"
  grep -q "kopt: warning: dropped table.bin (a binary change)" "$2" || { cat "$2"; fail "$1: no warning for table.bin"; }
  grep -q "kopt: warning: dropped build/out.txt (a generated folder's file)" "$2" ||
    { cat "$2"; fail "$1: no warning for build/out.txt"; }
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["base"]=="00" and j["id"]==sys.argv[2], j' \
    "$dir/candidate.json" "$1" || fail "candidate $1's candidate.json"
}
check_candidate 11 "$WORK/new11.err"

echo "--- the same change as a patch (git diff --binary): refused while unrecorded 11 holds it"
git -C "$WORK/wt" add -A
git -C "$WORK/wt" diff --binary --cached HEAD >"$WORK/change.patch"
grep -q "GIT binary patch" "$WORK/change.patch" || fail "the patch has no binary hunk"
grep -q "host_gemm/build/out.txt" "$WORK/change.patch" || fail "the patch has no build/ file"
if "$KOPT" new "${fam[@]}" --id 12 --base 00 --from-patch "$WORK/change.patch" 2>"$WORK/same.err" >/dev/null; then
  fail "a change identical to candidate 11 was accepted"
fi
grep -q "no change: the result equals candidate 11's content (hash [0-9a-f]\{8\}); nothing written" "$WORK/same.err" ||
  { cat "$WORK/same.err"; fail "the identical candidate's message"; }
[ ! -e "$family_src/candidates/12" ] || fail "candidate 12 was written"
echo "--- a non-canonical id is refused"
if "$KOPT" new "${fam[@]}" --id 011 --base 00 --from-patch "$WORK/change.patch" 2>"$WORK/id.err" >/dev/null; then
  fail "id 011 was accepted"
fi
grep -q "\-\-id: expected two to 64 digits without a leading zero beyond two (07, 123), got '011'" "$WORK/id.err" ||
  { cat "$WORK/id.err"; fail "the id's message"; }
echo "--- with 11 away, the patch makes the same candidate"
mv "$family_src/candidates/11" "$WORK/c11"
"$KOPT" new "${fam[@]}" --id 12 --base 00 --from-patch "$WORK/change.patch" \
  >"$WORK/new12.log" 2>"$WORK/new12.err" || { cat "$WORK/new12.err"; fail "new --from-patch"; }
check_candidate 12 "$WORK/new12.err"
# Paths relative to the family folder work too (git diff run inside it); 12 steps aside.
mv "$family_src/candidates/12" "$WORK/c12"
git -C "$WORK/wt/host_gemm" diff --relative --cached HEAD -- gemm_kernel.hpp >"$WORK/relative.patch"
grep -q "^+++ b/gemm_kernel.hpp" "$WORK/relative.patch" || fail "the relative patch's paths"
"$KOPT" new "${fam[@]}" --id 13 --base 00 --from-patch "$WORK/relative.patch" >/dev/null ||
  fail "new from a family-relative patch"
cmp -s "$family_src/candidates/13/gemm_kernel.hpp" "$faster" || fail "candidate 13's header"
rm -rf "$family_src/candidates/13"
mv "$WORK/c12" "$family_src/candidates/12"

echo "--- an existing id is refused unless --replace"
if "$KOPT" new "${fam[@]}" --id 12 --base 00 --from-patch "$WORK/change.patch" 2>"$WORK/again.err"; then
  fail "an existing id was replaced"
fi
grep -q "candidate 12 exists (.*): choose another --id, or give --replace" "$WORK/again.err" ||
  { cat "$WORK/again.err"; fail "the existing id's message"; }
"$KOPT" new "${fam[@]}" --id 12 --base 00 --from-patch "$WORK/change.patch" --replace 2>"$WORK/replace.err" >/dev/null || { cat "$WORK/replace.err"; fail "--replace"; }
mv "$WORK/c11" "$family_src/candidates/11"

# Hashes every file under $WORK but the refusals' logs, and the temporary folders kopt uses.
mkdir -p "$WORK/logs"
tree_hash() { (cd "$WORK" && find . -path ./logs -prune -o -type f -print0 | sort -z | xargs -0 sha256sum;
  ls -d "${TMPDIR:-/tmp}"/kopt-new-* 2>/dev/null || true) | sha256sum; }
refused() { # name expected-message patch-file [base]
  refused_new "$1" "$2" --base "${4:-00}" --from-patch "$3"
}
refused_new() { # name expected-message kopt-new-arguments...
  local name=$1 message=$2
  shift 2
  local before after
  before=$(tree_hash)
  if "$KOPT" new "${fam[@]}" --id 20 "$@" >"$WORK/logs/$name.out" 2>"$WORK/logs/$name.err"; then
    fail "$name: the change was accepted"
  fi
  grep -qF -- "$message" "$WORK/logs/$name.err" || { cat "$WORK/logs/$name.err"; fail "$name: the message"; }
  after=$(tree_hash)
  [ "$before" = "$after" ] || fail "$name: something was written"
  [ ! -e "$family_src/candidates/20" ] || fail "$name: candidate 20 exists"
}

echo "--- a patch reaching ../../x, an absolute path or through a symlink: refused, nothing written"
{ cat "$WORK/relative.patch"; printf 'diff --git a/../../x b/../../x\nnew file mode 100644\n--- /dev/null\n+++ b/../../x\n@@ -0,0 +1 @@\n+escaped\n'; } >"$WORK/escape.patch"
refused escape "refused: the change reaches outside the family folder" "$WORK/escape.patch"
grep -qF "../../x (" "$WORK/logs/escape.err" || fail "the escape's message names ../../x"
[ ! -e "$WORK/x" ] && [ ! -e "$WORK/src/x" ] || fail "../../x was written"
printf -- '--- /dev/null\n+++ /tmp/kopt-absolute\n@@ -0,0 +1 @@\n+x\n' >"$WORK/absolute.patch"
refused absolute "/tmp/kopt-absolute (" "$WORK/absolute.patch"
mkdir -p "$WORK/outside"
ln -s "$WORK/outside" "$family_src/link"
printf -- '--- /dev/null\n+++ b/link/y\n@@ -0,0 +1 @@\n+x\n' >"$WORK/symlink.patch"
refused symlink "leaves the family folder through a symlink" "$WORK/symlink.patch"
rm "$family_src/link"

echo "--- a patch to a file that is not editable: refused with the family's editable list"
git -C "$WORK/wt" reset -q --hard HEAD
echo "// changed" >>"$WORK/wt/host_gemm/harness.cpp"
echo "// changed" >>"$WORK/wt/host_gemm/gemm_kernel.hpp"
git -C "$WORK/wt" diff >"$WORK/harness.patch"
refused harness "the change touches files that are not editable: harness.cpp (family host_gemm's editable files: gemm_kernel.hpp, instance.cpp.in, and instances/<instance>.in); nothing written" \
  "$WORK/harness.patch"

echo "--- a patch that gives BEST's content back: refused"
git -C "$WORK/wt" reset -q --hard HEAD
cp "$faster" "$WORK/wt/host_gemm/gemm_kernel.hpp"
git -C "$WORK/wt" diff -R >"$WORK/revert.patch"
refused revert "no change: the result equals BEST 00's content" "$WORK/revert.patch" 11
refused stale "the change does not apply to candidate 11's files" "$WORK/relative.patch" 11
echo "--- a symlink or a FIFO in a worktree or a checkout folder: refused, naming it, nothing written"
git -C "$WORK/wt" reset -q --hard HEAD
git -C "$WORK/wt" clean -qfdx
echo "// an edit" >>"$WORK/wt/host_gemm/gemm_kernel.hpp"
mkdir -p "$WORK/wt/host_gemm/instances"
ln -s /etc/passwd "$WORK/wt/host_gemm/instances/gemm_16x16x16.in"
refused_new worktree-link "--from-worktree $WORK/wt: refused: a candidate takes regular files inside the worktree only: host_gemm/instances/gemm_16x16x16.in is a symlink to /etc/passwd; nothing written" \
  --base 00 --from-worktree "$WORK/wt"
rm -rf "$WORK/wt/host_gemm/instances"
mkdir -p "$WORK/outside"
ln -s "$WORK/outside" "$WORK/wt/host_gemm/instances"
refused_new worktree-folder-link "host_gemm/instances is a symlink to $WORK/outside" --base 00 --from-worktree "$WORK/wt"
"$KOPT" checkout "${fam[@]}" --id 00 --dir "$WORK/co" >/dev/null || fail "checkout --dir"
echo "// an edit" >>"$WORK/co/gemm_kernel.hpp"
mkdir -p "$WORK/co/instances"
ln -s /etc/passwd "$WORK/co/instances/gemm_16x16x16.in"
mkfifo "$WORK/co/instances/gemm_16x64x32.in"
refused_new dir-link "--from-dir $WORK/co: refused: a candidate takes regular files inside the folder only: instances/gemm_16x16x16.in is a symlink to /etc/passwd; instances/gemm_16x64x32.in is a FIFO; nothing written" \
  --from-dir "$WORK/co"
rm -rf "$WORK/co/instances"
ln -s "$WORK/outside" "$WORK/co/instances"
echo "// outside" >"$WORK/outside/gemm_16x16x16.in"
refused_new dir-folder-link "instances is a symlink to $WORK/outside" --from-dir "$WORK/co"
rm -f "$WORK/outside/gemm_16x16x16.in" "$WORK/co/instances"

echo "--- messages that name what to change: a long list capped, hidden characters escaped, copies, links, ids"
python3 - "$WORK/many.patch" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    for i in range(5000):
        out.write(f"diff --git a/notes/f{i:04}.txt b/notes/f{i:04}.txt\nnew file mode 100644\n"
                  f"--- /dev/null\n+++ b/notes/f{i:04}.txt\n@@ -0,0 +1 @@\n+x\n")
PY
refused many "not editable: notes/f0000.txt, notes/f0001.txt, notes/f0002.txt, notes/f0003.txt, notes/f0004.txt, notes/f0005.txt, notes/f0006.txt, notes/f0007.txt, notes/f0008.txt, notes/f0009.txt, and 4990 more (family host_gemm's editable files" \
  "$WORK/many.patch"
[ "$(wc -c <"$WORK/logs/many.err")" -lt 1000 ] || fail "5000 files make a $(wc -c <"$WORK/logs/many.err")-byte message"
# git quotes a name with a newline ("\n"); a U+202E (right-to-left override) it writes as is.
printf 'diff --git "a/gemm\\nkernel.hpp" "b/gemm\\nkernel.hpp"\nnew file mode 100644\n--- /dev/null\n+++ "b/gemm\\nkernel.hpp"\n@@ -0,0 +1 @@\n+x\n' >"$WORK/newline.patch"
printf 'diff --git a/evil\xe2\x80\xaeppa.hpp b/evil\xe2\x80\xaeppa.hpp\nnew file mode 100644\n--- /dev/null\n+++ b/evil\xe2\x80\xaeppa.hpp\n@@ -0,0 +1 @@\n+x\n' >"$WORK/bidi.patch"
for kind in newline bidi; do
  refused $kind "refused: a path holds a control, bidirectional or invisible character (shown escaped)" "$WORK/$kind.patch"
done
grep -qF '"gemm\nkernel.hpp" (' "$WORK/logs/newline.err" || { cat "$WORK/logs/newline.err"; fail "the newline is not escaped"; }
grep -qF '"evil\u202eppa.hpp" (' "$WORK/logs/bidi.err" || { cat "$WORK/logs/bidi.err"; fail "the U+202E is not escaped"; }
! grep -q $'\xe2\x80\xae' "$WORK/logs/bidi.err" || fail "the U+202E is printed raw"
printf 'diff --git a/gemm_kernel.hpp b/instance.cpp.in\nsimilarity index 100%%\ncopy from gemm_kernel.hpp\ncopy to instance.cpp.in\n' >"$WORK/copy.patch"
refused copy "instance.cpp.in: copies are not supported: the change copies gemm_kernel.hpp to it (git diff -C)" "$WORK/copy.patch"
git -C "$WORK/wt" reset -q --hard HEAD
git -C "$WORK/wt" clean -qfdx
cp "$faster" "$WORK/faster.hpp"
ln -sf "$WORK/faster.hpp" "$WORK/wt/host_gemm/gemm_kernel.hpp"
refused_new worktree-tracked-link "gemm_kernel.hpp is a symbolic link: a candidate holds regular files only; refused" \
  --base 00 --from-worktree "$WORK/wt"
git -C "$WORK/wt" checkout -q -- host_gemm/gemm_kernel.hpp
long_id=$(printf '1%.0s' $(seq 300))
rc=0
"$KOPT" new "${fam[@]}" --id "$long_id" --base 00 --from-patch "$WORK/relative.patch" >/dev/null 2>"$WORK/logs/long-id.err" || rc=$?
[ $rc -eq 2 ] && grep -qF "... (300 bytes)'" "$WORK/logs/long-id.err" &&
  grep -qF -- "--id: expected two to 64 digits without a leading zero beyond two (07, 123), got '1111" "$WORK/logs/long-id.err" ||
  { cat "$WORK/logs/long-id.err"; fail "new --id <300 digits> exited $rc"; }
rc=0
"$KOPT" decide "${fam[@]}" --candidate "$long_id" >/dev/null 2>"$WORK/logs/long-decide.err" || rc=$?
[ $rc -eq 2 ] && grep -qF "... (300 bytes)' is not a candidate id: expected two to 64 digits" "$WORK/logs/long-decide.err" ||
  { cat "$WORK/logs/long-decide.err"; fail "decide --candidate <300 digits> exited $rc"; }

echo "--- checkout --replace writes no file through a symlinked folder of the worktree"
mkdir -p "$WORK/co/instances"
{ cat "$family_src/instance.cpp.in"; echo "// 21's own 16x16x16"; } >"$WORK/co/instances/gemm_16x16x16.in"
"$KOPT" new "${fam[@]}" --id 21 --from-dir "$WORK/co" >/dev/null 2>"$WORK/new21.err" || { cat "$WORK/new21.err"; fail "new 21"; }
"$KOPT" checkout "${fam[@]}" --id 00 --worktree "$WORK/cw" >/dev/null || fail "checkout --worktree"
ln -s "$WORK/outside" "$WORK/cw/host_gemm/instances"
if "$KOPT" checkout "${fam[@]}" --id 21 --worktree "$WORK/cw" --replace >/dev/null 2>"$WORK/logs/replace-link.err"; then
  fail "checkout --replace wrote through a symlinked folder"
fi
grep -qF "$WORK/cw/host_gemm/instances/gemm_16x16x16.in is under instances, which is a symlink to $WORK/outside: kopt writes regular files inside" \
  "$WORK/logs/replace-link.err" || { cat "$WORK/logs/replace-link.err"; fail "the checkout's message"; }
[ -z "$(ls -A "$WORK/outside")" ] || fail "checkout --replace wrote into $WORK/outside"
rm "$WORK/cw/host_gemm/instances"
echo "--- a checkout into the family's own folder: refused, nothing made there"
for kind in --dir --worktree; do
  rc=0
  "$KOPT" checkout "${fam[@]}" --id 00 $kind "$family_src/candidates/co" >/dev/null 2>"$WORK/logs/inside.err" || rc=$?
  [ $rc -eq 2 ] || { cat "$WORK/logs/inside.err"; fail "checkout $kind into candidates/ exited $rc, not 2"; }
  grep -qF "candidates/co: inside the family's folder" "$WORK/logs/inside.err" &&
    grep -qF "where a checkout would become part of the family: choose a folder outside it" "$WORK/logs/inside.err" ||
    { cat "$WORK/logs/inside.err"; fail "checkout $kind into candidates/: the message"; }
  [ ! -e "$family_src/candidates/co" ] || fail "checkout $kind made candidates/co"
done
[ -z "$(git -C "$repo" worktree list --porcelain | grep candidates/co)" ] || fail "a worktree was added"
echo "--- usage errors exit 2, the status of every kopt error (a verdict never is 2)"
rc=0
"$KOPT" round "${fam[@]}" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "kopt round without --id exited $rc, not 2"
rc=0
"$KOPT" new "${fam[@]}" --id 30 --base 00 >/dev/null 2>"$WORK/nosource.err" || rc=$?
[ $rc -eq 2 ] && grep -q "give --from-patch FILE, --from-worktree DIR, --from-git REV or --from-dir DIR" "$WORK/nosource.err" ||
  { cat "$WORK/nosource.err"; fail "kopt new without a source exited $rc"; }
echo "PASS"
