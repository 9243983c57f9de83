#!/usr/bin/env bash
# check_committed.sh — the gate over the committed results: for each GPU with
# A/B runs (results/<gpu>/ab/), build/regress gates the newest pair (what
# `make regress` does); prints its first line (compare: …) and verdict. Each
# committed compare proof (results/<gpu>/compare/proof*/) agrees with its
# runs: bench/scripts/compare_spread.sh and regime_table.sh remake its
# spread.md and regime.md byte for byte, and refuse a folder without runs.
# Prints `gate: N passed, N failed`. Run from the repository root after
# make all.
set -u
pass=0 fail=0
for d in results/*/ab; do
    [ -d "$d" ] || continue
    g=$(basename "$(dirname "$d")")
    out=$(./build/regress --gpu "$g" 2>&1)
    rc=$?
    if [ $rc = 0 ]; then
        pass=$((pass + 1))
        printf '%s\n%s\n' "$(head -n 1 <<<"$out")" "$(tail -n 1 <<<"$out")"
    else
        fail=$((fail + 1))
        echo "$out"
        echo "FAIL: results/$g: the newest A/B pair does not pass the gate (exit $rc)"
    fi
done
for p in results/*/compare/proof*; do
    [ -d "$p" ] || continue
    ref=$(sed -n 's/^Each variant.s time \/ \([a-z0-9_]*\).s per run.*/\1/p' "$p/spread.md")
    if [ -n "$ref" ] && bench/scripts/compare_spread.sh "$p" "$ref" | cmp -s - "$p/spread.md"; then
        pass=$((pass + 1)); echo "$p/spread.md: remade from its runs"
    else
        fail=$((fail + 1)); echo "FAIL: $p/spread.md: compare_spread.sh $p ${ref:-?} does not remake it"
    fi
    if [ ! -f "$p/regime.md" ] ||
       (cd "$p" && "$OLDPWD/bench/scripts/regime_table.sh" rows regime | cmp -s - regime.md); then
        pass=$((pass + 1)); echo "$p/regime.md: remade from its runs"
    else
        fail=$((fail + 1)); echo "FAIL: $p/regime.md: regime_table.sh rows regime does not remake it"
    fi
done
empty=$(mktemp -d)
bench/scripts/compare_spread.sh "$empty" x >/dev/null 2>&1; rc1=$?
bench/scripts/regime_table.sh "$empty" "$empty" >/dev/null 2>&1; rc2=$?
rmdir "$empty"
if [ $rc1 = 2 ] && [ $rc2 = 2 ]; then
    pass=$((pass + 1)); echo "compare_spread.sh, regime_table.sh: a folder without runs refused (exit 2)"
else
    fail=$((fail + 1)); echo "FAIL: a folder without runs: compare_spread.sh exit $rc1, regime_table.sh exit $rc2 (want 2)"
fi
echo "gate: $pass passed, $fail failed"
[ $fail = 0 ]
