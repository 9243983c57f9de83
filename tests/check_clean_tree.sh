#!/usr/bin/env bash
# check_clean_tree.sh — `make plots` and `make report`, run as the README says
# in a fresh clone, leave the clone's tree clean (git status shows nothing):
# figures of a run go to build/plots/<gpu>/RUN_ID/, never over the committed
# ones. The clone is of the committed HEAD, in a temporary directory, and
# builds there what those two targets need (build/report: host code, no
# CUDA); nothing of this checkout's build/ or uncommitted files reaches it.
# Prints `clean-tree: N passed, N failed`. Run from the repository root;
# needs git and gnuplot.
set -u
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "clean-tree: 0 passed, 1 failed"; exit 1; }
git clone -q --no-hardlinks "$root" "$tmp/clone" || fail "git clone of $root"
cd "$tmp/clone" || fail "cd $tmp/clone"
[ ! -e build ] || fail "the clone of HEAD has a build/ of its own"
make --no-print-directory plots report > "$tmp/make.log" 2>&1 || { tail -n 20 "$tmp/make.log"; fail "make plots report"; }
dirty=$(git status --porcelain)
[ -z "$dirty" ] || fail "make plots report changed the tree: $dirty"
page=$(ls build/plots/*/*/report.html 2>/dev/null | head -n 1)
[ -n "$page" ] || fail "no build/plots/<gpu>/RUN_ID/report.html"
echo "ok: make plots report, in a clone of HEAD, built build/report, wrote $page and left the tree clean"
echo "clean-tree: 1 passed, 0 failed"
