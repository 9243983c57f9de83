#!/usr/bin/env bash
# run_suites.sh — make test's runner: runs each suite, shows its output as it
# comes, and ends with one line per suite (passed / failed / skipped) and a
# total line, `total: N passed, N failed, N skipped`. Every suite runs even
# when an earlier one fails; the exit status is 1 when any failed.
#   usage: tests/run_suites.sh NAME 'COMMAND' [NAME 'COMMAND' ...]
# A suite's counts come from its own closing line: Check's
# "NN%: Checks: C, Failures: F, Errors: E", or "[word:] P passed, F failed[, S skipped]";
# a suite that prints neither counts as one check, passed when it exits 0.
set -u -o pipefail
[ $(($# % 2)) = 0 ] && [ $# -gt 0 ] || { echo "usage: $0 NAME COMMAND [NAME COMMAND ...]" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
names=() passed=() failed=() skipped=()
bad=0
while [ $# -gt 0 ]; do
    name=$1 cmd=$2
    shift 2
    echo "== $name: $cmd"
    bash -c "$cmd" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    p='' f='' s=0
    # the suite's last closing line of either kind (a nested run's total wins)
    check='Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+'
    plain='^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'
    line=$(grep -E "$check|$plain" "$log" | tail -n 1)
    if grep -qE "$check" <<<"$line"; then
        c=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
        fl=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
        er=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
        p=$((c - fl - er)) f=$((fl + er))
    elif [ -n "$line" ]; then
        p=$(sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
        f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
        grep -q skipped <<<"$line" && s=$(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"$line")
    else
        if [ "$rc" = 0 ]; then p=1 f=0; else p=0 f=1; fi
    fi
    [ "$rc" != 0 ] && [ "$f" = 0 ] && f=1 # a suite that died says so by its exit status
    [ "$f" != 0 ] && bad=1
    names+=("$name") passed+=("$p") failed+=("$f") skipped+=("$s")
done
echo "== test summary"
tp=0 tf=0 ts=0
for i in "${!names[@]}"; do
    printf '  %-10s %5d passed %3d failed %4d skipped\n' "${names[$i]}" "${passed[$i]}" "${failed[$i]}" "${skipped[$i]}"
    tp=$((tp + passed[i])) tf=$((tf + failed[i])) ts=$((ts + skipped[i]))
done
echo "total: $tp passed, $tf failed, $ts skipped"
exit $bad
