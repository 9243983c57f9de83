#!/usr/bin/env bash
# check_clean_tree.sh — `make plots` and `make report`, run as the README says
# in a fresh clone, leave the clone's tree clean (git status shows nothing):
# figures of a run go to build/plots/<gpu>/RUN_ID/, never over the committed
# ones. The clone borrows this checkout's build/ (touched, so that nothing
# but the revision stamp rebuilds). Prints `clean-tree: N passed, N failed`.
# Run from the repository root after make all; needs gnuplot.
set -u
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "clean-tree: 0 passed, 1 failed"; exit 1; }
git clone -q "$root" "$tmp/clone" || fail "git clone of $root"
mkdir -p "$tmp/clone/build"
(cd build && tar -cf - --exclude=./ab-src --exclude=./plots --exclude=./fuzz --exclude=./asan .) | (cd "$tmp/clone/build" && tar -xf -) ||
    fail "copying build/"
find "$tmp/clone/build" -type f -exec touch {} +
cd "$tmp/clone" || fail "cd $tmp/clone"
make --no-print-directory plots report > "$tmp/make.log" 2>&1 || { tail -n 20 "$tmp/make.log"; fail "make plots report"; }
dirty=$(git status --porcelain)
[ -z "$dirty" ] || fail "make plots report changed the tree: $dirty"
page=$(ls build/plots/*/*/report.html 2>/dev/null | head -n 1)
[ -n "$page" ] || fail "no build/plots/<gpu>/RUN_ID/report.html"
echo "ok: make plots report wrote $page and left the tree clean"
echo "clean-tree: 1 passed, 0 failed"
