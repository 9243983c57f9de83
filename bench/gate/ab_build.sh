#!/usr/bin/env bash
# ab_build.sh — builds attnbench at a git revision for `make ab`: the
# revision's tree is exported (git archive) into build/ab-src/SHA/ once and
# built there by its own Makefile, with SLOWDOWN when given (gate proofs).
# Prints the path of that attnbench; progress and errors go to stderr.
#   usage: bench/gate/ab_build.sh REV [SLOWDOWN]
set -euo pipefail
rev=$1
slowdown=${2:-}
sha=$(git rev-parse --verify --quiet "$rev^{commit}") ||
    { echo "make ab: '$rev' is not a git revision of this repository" >&2; exit 2; }
short=$(git rev-parse --short=12 "$sha")
dir=build/ab-src/$sha
if [ ! -f "$dir/Makefile" ]; then
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    git archive "$sha" | tar -x -C "$dir.tmp"
    mv "$dir.tmp" "$dir"
fi
log=$dir/build.log
echo "make ab: building $rev ($short${slowdown:+, SLOWDOWN=$slowdown}) in $dir (a first build takes ~1 min per 2 cores; log: $log)" >&2
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$dir" -j"$(nproc)" GIT_REV="$short" \
        SLOWDOWN="$slowdown" all >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "make ab: building $rev failed (all of it in $log)" >&2
    exit 2
fi
[ -x "$dir/build/attnbench" ] || { echo "make ab: $dir/build/attnbench was not built" >&2; exit 2; }
echo "$dir/build/attnbench"
