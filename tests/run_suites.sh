#!/usr/bin/env bash
# run_suites.sh — make test's runner: runs each suite, shows its output as it
# comes, and ends with one line per suite (passed / failed / skipped, and
# its wall time) and a total line, `total: N passed, N failed, N skipped`.
# Every suite runs even when an earlier one fails; the exit status is 1 when
# any failed.
#   usage: tests/run_suites.sh [--check | --list] [--only NAME,NAME] NAME 'COMMAND' [NAME 'COMMAND' ...]
# --only (make test SUITES=): only the suites named, in the order given
# here; an unknown name is refused (exit 2) with the list of known ones.
# --check: that check only, nothing run. --list: the suites' names, one line.
# A suite's counts come from its own closing line: Check's
# "NN%: Checks: C, Failures: F, Errors: E", or "[word:] P passed, F failed[, S skipped]";
# a suite that prints neither counts as one check, passed when it exits 0.
set -u -o pipefail
check_only=no list_only=no only=
while [ $# -gt 0 ]; do
    case $1 in
    --check) check_only=yes; shift ;;
    --list) list_only=yes; shift ;;
    --only) only=${2:-}; shift 2 || { echo "$0: --only needs NAME,NAME" >&2; exit 2; } ;;
    *) break ;;
    esac
done
[ $(($# % 2)) = 0 ] && [ $# -gt 0 ] || { echo "usage: $0 [--check | --list] [--only NAME,NAME] NAME COMMAND [NAME COMMAND ...]" >&2; exit 2; }
known=()
for ((i = 1; i <= $#; i += 2)); do known+=("${!i}"); done
[ $list_only = no ] || { echo "${known[*]}"; exit 0; }
if [ -n "$only" ]; then
    IFS=, read -r -a chosen <<<"$only"
    [ ${#chosen[@]} -gt 0 ] || { echo "make test: SUITES=$only names no suite (known: ${known[*]})" >&2; exit 2; }
    for c in "${chosen[@]}"; do
        case " ${known[*]} " in
        *" $c "*) ;;
        *) echo "make test: SUITES=$only: unknown suite '$c' (known: ${known[*]})" >&2; exit 2 ;;
        esac
    done
fi
[ $check_only = no ] || exit 0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
names=() passed=() failed=() skipped=() seconds=()
bad=0
while [ $# -gt 0 ]; do
    name=$1 cmd=$2
    shift 2
    if [ -n "$only" ]; then case ",$only," in *",$name,"*) ;; *) continue ;; esac; fi
    echo "== $name: $cmd"
    start=$(date +%s%N)
    bash -c "$cmd" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    seconds+=("$((($(date +%s%N) - start) / 1000000))")
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
    ms=${seconds[$i]}
    printf '  %-10s %5d passed %3d failed %4d skipped %5d.%d s\n' "${names[$i]}" "${passed[$i]}" "${failed[$i]}" \
        "${skipped[$i]}" $((ms / 1000)) $((ms % 1000 / 100))
    tp=$((tp + passed[i])) tf=$((tf + failed[i])) ts=$((ts + skipped[i]))
done
echo "total: $tp passed, $tf failed, $ts skipped"
exit $bad
