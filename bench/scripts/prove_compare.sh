#!/usr/bin/env bash
# prove_compare.sh DIR [RUNS] — the interleaved comparison against row after
# row, on the points where the board is power-bound (bench/grids/compare.grid):
#   DIR/burst/      RUNS compare runs (make compare: the variants in turns)
#   DIR/sustained/  RUNS compare runs with --sustain (sampled under load)
#   DIR/rows/       RUNS plain runs (make bench PEERS=...: one row after another)
# then bench/scripts/compare_spread.sh DIR: each variant's ratio to the
# reference in every run, and its spread over the runs (max - min).
# Run on the GPU box from the repository root after `make all`; the Python
# peers of VARIANTS need their framework there (fa4: flash-attn-4).
#   env: VARIANTS (default flash_hopper,fa4,cudnn_sdpa,torch_sdpa_cudnn; the
#        first is the reference), GRID (compare), SUSTAIN (10), BUDGET_MS
#        (1500), STAGES (burst,sustained,rows)
set -u -o pipefail
dir=${1:?usage: bench/scripts/prove_compare.sh DIR [RUNS]}
runs=${2:-5}
variants=${VARIANTS:-flash_hopper,fa4,cudnn_sdpa,torch_sdpa_cudnn}
grid=${GRID:-compare}
stages=${STAGES:-burst,sustained,rows}
common=(--grid "$grid" --mode cold --warm-ms 500 --budget-ms "${BUDGET_MS:-1500}")
status=0
note() { [ "$1" = 0 ] || [ "$status" != 0 ] || status=$1; }

# the C variants and the peers of VARIANTS, for the row-after-row runs
c_variants= peer_variants=
IFS=, read -r -a names <<<"$variants"
for v in "${names[@]}"; do
  if build/attnbench --list | awk 'NR > 1 && $1 == "'"$v"'" { found = 1 } END { exit !found }'; then
    c_variants=${c_variants:+$c_variants,}$v
  else
    peer_variants=${peer_variants:+$peer_variants,}$v
  fi
done
modules=$(for f in tools/peers/*_peers.py; do
  m=${f##*/}; m=${m%_peers.py}
  for v in ${peer_variants//,/ }; do grep -qE "name(, [a-z_]+)* = \"$v\"" "$f" && echo "$m"; done
done | sort -u | paste -sd, -)

for i in $(seq 1 "$runs"); do
  case ",$stages," in *,burst,*)
    build/ab --compare "$variants" "${common[@]}" --out "$dir/burst" > "$dir/burst-$i.txt"; note $? ;;
  esac
  case ",$stages," in *,sustained,*)
    build/ab --compare "$variants" "${common[@]}" --sustain "${SUSTAIN:-10}" --out "$dir/sustained" \
      > "$dir/sustained-$i.txt"; note $? ;;
  esac
  case ",$stages," in *,rows,*)
    if [ -n "$modules" ]; then
      ATTNBENCH=build/attnbench PEER_VARIANTS=$peer_variants bench/peers.sh "$modules" "${common[@]}" \
        --variants "$c_variants" --out "$dir/rows"
    else
      build/attnbench "${common[@]}" --variants "$c_variants" --out "$dir/rows"
    fi
    note $? ;;
  esac
done
bench/scripts/compare_spread.sh "$dir" "${names[0]}" > "$dir/spread.md"
note $?
cat "$dir/spread.md"
exit $status
