#!/usr/bin/env bash
# check_committed.sh — the gate over the committed results: for each GPU with
# A/B runs (results/<gpu>/ab/), build/regress gates the newest pair (what
# `make regress` does); prints its first line (compare: …) and verdict, and
# `gate: N passed, N failed`. Run from the repository root after make all.
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
echo "gate: $pass passed, $fail failed"
[ $fail = 0 ]
