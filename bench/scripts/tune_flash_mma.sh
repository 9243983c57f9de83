#!/usr/bin/env bash
# tune_flash_mma.sh — run the lab's flash_mma_lab once per compiled tile
# shape (ATTN_FLASH_MMA_TILE) over a grid, cold mode, and print a table of
# TFLOP/s per shape and point. The CSVs go to OUT/tune/SHAPE/.
#   usage: bench/scripts/tune_flash_mma.sh [GRID] [SHAPE...]   (after make lab)
set -u -o pipefail
OUT=${OUT:-$PWD/tune-out}
GRID=${1:-tune}
shift $(( $# > 0 ? 1 : 0 ))
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(w4m2n64 w4m2n64u1 w4m2n64u2 w4m2n128 w4m2n128u1)
for s in "${SHAPES[@]}"; do
    mkdir -p "$OUT/tune/$s"
    echo "== tile $s"
    ATTN_FLASH_MMA_TILE=$s ./build/lab/attnbench --quiet --variants flash_mma_lab --grid "$GRID" --mode cold \
        --budget-ms 1500 --out "$OUT/tune/$s" || echo "   (exit $?)"
done
# one line per shape and point: shape D S causal status TFLOP/s ms
for csv in "$OUT"/tune/*/*[0-9]Z.csv; do
    awk -F, -v shape="$(basename "$(dirname "$csv")")" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { printf "%-9s D=%-3s S=%-5s causal=%s %-8s %7s TFLOP/s %9s ms  %s\n", shape, $col["head_dim"],
                 $col["seq_len"], $col["causal"], $col["status"], $col["tflops"], $col["ms_median"], $col["reason"] }' "$csv"
done | sort -k2,2 -k4,4 -k3,3V -k6,6nr
