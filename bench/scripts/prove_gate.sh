#!/usr/bin/env bash
# prove_gate.sh — shows on a GPU that the regression gate passes unchanged
# re-runs and catches injected slowdowns. On the quick grid (cold mode):
# one run becomes a fresh baseline; REPEATS unchanged re-runs are compared
# with it; then attnbench is rebuilt with SLOWDOWN=VARIANT:5 and :10 (that
# variant spins for 5% / 10% of its own call time after every timed call)
# and compared again. Writes $OUT/proof.txt (the table), $OUT/proof.tar
# (every CSV and gate report). Extra make arguments can follow (e.g. CHECK_*).
#   usage: bench/scripts/prove_gate.sh [VARIANT] [REPEATS]
set -u -o pipefail
OUT=${OUT:-$PWD/gate-proof}
VARIANT=${1:-naive}
REPEATS=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
work=$(mktemp -d)
mkdir -p "$OUT"
run_grid() { # run_grid NAME: one quick-grid run into $work/NAME/
    ./build/attnbench --quiet --no-trace --grid quick --mode cold --budget-ms 700 --out "$work/$1" >/dev/null 2>&1
    ls "$work/$1"/*[0-9]Z.csv
}
# gate NAME CSV: compare with the baseline; one table row: name, exit, summary,
# and how many of VARIANT's rows at S >= 1024 the gate called SLOWER
gate() {
    ./build/regress --baseline "$base" --results "$2" > "$work/$1.gate.txt" 2>&1
    local rc=$?
    local flagged total
    flagged=$(grep -E "^SLOWER +$VARIANT .* S=(1024|2048|[0-9]{5,}) " "$work/$1.gate.txt" | wc -l)
    total=$(grep -E "^[A-Za-z ]+ $VARIANT .* S=(1024|2048|[0-9]{5,}) " "$work/$1.gate.txt" | wc -l)
    printf '| %-10s | %d | %s/%s | %s |\n' "$1" "$rc" "$flagged" "$total" "$(tail -n 1 "$work/$1.gate.txt" | sed 's/^regress: //')" >> "$OUT/proof.txt"
}

make CUDA_ARCH=90 -j"$(nproc)" "$@" all >/dev/null || exit 1
base=$(run_grid baseline) || exit 1
printf '| run | gate exit | %s rows at S>=1024 flagged | gate summary |\n|---|---|---|---|\n' "$VARIANT" > "$OUT/proof.txt"
for i in $(seq 1 "$REPEATS"); do gate "rerun-$i" "$(run_grid "rerun-$i")"; done
for pct in 5 10; do
    make CUDA_ARCH=90 -j"$(nproc)" SLOWDOWN="$VARIANT:$pct" "$@" all >/dev/null || exit 1
    gate "slow-$pct%" "$(run_grid "slow-$pct")"
done
make CUDA_ARCH=90 -j"$(nproc)" "$@" all >/dev/null   # leave an uninjected build behind
tar -C "$work" -cf "$OUT/proof.tar" .
cat "$OUT/proof.txt"
