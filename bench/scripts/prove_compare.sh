#!/usr/bin/env bash
# prove_compare.sh DIR [RUNS] — the interleaved comparison against row after
# row, on the points where the board is power-bound (bench/grids/compare.grid):
#   DIR/burst/      RUNS compare runs (make compare: the variants in turns)
#   DIR/sustained/  RUNS compare runs with --sustain (sampled under load)
#   DIR/rows/       RUNS plain runs (make bench PEERS=...: one row after another,
#                   500 ms of warm-up each, as make bench runs them)
#   DIR/regime/     one plain run with --sustain: each variant's row loads the
#                   board itself, so its settled clock and watts are its own
# then bench/scripts/compare_spread.sh DIR: each variant's ratio to the
# reference in every run, and its spread over the runs (max - min); and
# bench/scripts/regime_table.sh: burst (the first rows run) against sustained
# (DIR/regime) per variant, with clock, watts, TFLOP/s and TFLOP/J.
# Run on the GPU box from the repository root after `make all`; the Python
# peers of VARIANTS need their framework there (fa4: flash-attn-4).
#   env: VARIANTS (default flash_hopper,fa4,cudnn_sdpa,torch_sdpa_cudnn; the
#        first is the reference), GRID (compare), SUSTAIN (10), BUDGET_MS
#        (1500; per variant and point), WARM_MS (100: in a compare run the
#        rotation itself warms every variant), BLOCK_MS (build/ab's),
#        ROWS_BUDGET_MS (BUDGET_MS), STAGES (burst,sustained,rows,regime),
#        PREHEAT_S (0: none; else the reference loads the board this long
#        at the grid's first point, unrecorded, before the first run: burst
#        ratios move with the board's temperature, and a session's first run
#        otherwise starts cooler than the rest)
set -u -o pipefail
dir=${1:?usage: bench/scripts/prove_compare.sh DIR [RUNS]}
runs=${2:-5}
variants=${VARIANTS:-flash_hopper,fa4,cudnn_sdpa,torch_sdpa_cudnn}
grid=${GRID:-compare}
stages=${STAGES:-burst,sustained,rows,regime}
compare=(--grid "$grid" --mode cold --warm-ms "${WARM_MS:-100}" --budget-ms "${BUDGET_MS:-1500}"
         ${BLOCK_MS:+--block-ms "$BLOCK_MS"})
rows=(--grid "$grid" --mode cold --warm-ms 500 --budget-ms "${ROWS_BUDGET_MS:-${BUDGET_MS:-1500}}")
status=0
note() { [ "$1" = 0 ] || [ "$status" != 0 ] || status=$1; }

# the C variants and the peers of VARIANTS, for the row-after-row runs
c_variants= peer_variants=
IFS=, read -r -a names <<<"$variants"
for v in "${names[@]}"; do
  # the C variants are --list's first table; the peers' table follows a blank line
  if build/attnbench --list | awk -v v="$v" 'NF == 0 { exit } NR > 1 && $1 == v { found = 1 } END { exit !found }'; then
    c_variants=${c_variants:+$c_variants,}$v
  else
    peer_variants=${peer_variants:+$peer_variants,}$v
  fi
done
modules=$(for f in tools/peers/*_peers.py; do
  m=${f##*/}; m=${m%_peers.py}
  for v in ${peer_variants//,/ }; do grep -qE "name(, [a-z_]+)* = \"$v\"" "$f" && echo "$m"; done
done | sort -u | paste -sd, -)

# plain_run OUT [OPTION...]: every variant's row at every point, one after
# the other (the C variants by build/attnbench, the peers by bench/peers.sh)
plain_run() {
  local out=$1; shift
  if [ -n "$modules" ]; then
    ATTNBENCH=build/attnbench PEER_VARIANTS=$peer_variants bench/peers.sh "$modules" "${rows[@]}" "$@" \
      --variants "$c_variants" --out "$out"
  else
    build/attnbench "${rows[@]}" "$@" --variants "$c_variants" --out "$out"
  fi
}

if [ "${PREHEAT_S:-0}" != 0 ]; then
  first=$(grep -v '^\s*#' "bench/grids/$grid.grid" 2>/dev/null | grep -m1 . || true)
  [ -f "$grid" ] && first=$(grep -v '^\s*#' "$grid" | grep -m1 .)
  heat=$(mktemp -d)
  build/attnbench --point "$first" --variants "${names[0]}" --mode cold --warm-ms "$((PREHEAT_S * 1000))" \
    --budget-ms 100 --no-trace --quiet --out "$heat" > /dev/null
  note $?
  rm -rf "$heat"
fi
for i in $(seq 1 "$runs"); do
  case ",$stages," in *,burst,*)
    build/ab --compare "$variants" "${compare[@]}" --out "$dir/burst" > "$dir/burst-$i.txt"; note $? ;;
  esac
  case ",$stages," in *,sustained,*)
    build/ab --compare "$variants" "${compare[@]}" --sustain "${SUSTAIN:-10}" --out "$dir/sustained" \
      > "$dir/sustained-$i.txt"; note $? ;;
  esac
  case ",$stages," in *,rows,*) plain_run "$dir/rows"; note $? ;; esac
done
case ",$stages," in *,regime,*) plain_run "$dir/regime" --sustain "${SUSTAIN:-10}"; note $? ;; esac
if [ -d "$dir/burst" ] || [ -d "$dir/sustained" ] || [ -d "$dir/rows" ]; then
  bench/scripts/compare_spread.sh "$dir" "${names[0]}" > "$dir/spread.md"
  note $?
  cat "$dir/spread.md"
fi
if [ -d "$dir/rows" ] && [ -d "$dir/regime" ]; then
  bench/scripts/regime_table.sh "$dir/rows" "$dir/regime" > "$dir/regime.md"
  note $?
  cat "$dir/regime.md"
fi
exit $status
