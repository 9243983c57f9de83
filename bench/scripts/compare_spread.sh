#!/usr/bin/env bash
# compare_spread.sh DIR REF — the summary of bench/scripts/prove_compare.sh's
# runs, as a Markdown table on stdout: for every point and variant, its time
# relative to REF's in each run and the spread of that ratio over the runs
# (max - min, in points of ratio: 0.010 = 1 %), then how many of each kind
# are within 1 % (of the unrounded spreads), for
#   DIR/burst/*.txt, DIR/sustained/*.txt  the compare runs' tables (build/ab
#       --compare: the Hodges-Lehmann ratio of the samples, measured in turns)
#   DIR/rows/*.csv                        plain runs (ratio of the two rows'
#       median ms, measured one after the other)
# Exit 2 when DIR holds none of them.
set -u -o pipefail
dir=${1:?usage: bench/scripts/compare_spread.sh DIR REF}
ref=${2:?usage: bench/scripts/compare_spread.sh DIR REF}
shopt -s nullglob
tables=("$dir"/burst/*.txt "$dir"/sustained/*.txt)
runs=()
for f in "$dir"/rows/*.csv; do [[ $f == *.samples.csv ]] || runs+=("$f"); done
[ ${#tables[@]} -gt 0 ] || [ ${#runs[@]} -gt 0 ] || { echo "compare_spread.sh: no runs in $dir" >&2; exit 2; }

# "KIND<TAB>POINT<TAB>VARIANT<TAB>RATIO" per run and row
{
  for t in "${tables[@]}"; do
    kind=$(basename "$(dirname "$t")")
    # the table's lines: fields split at 2 or more spaces; a point's first line names it
    awk -v kind="$kind" -F '  +' '
      /^point, mode, regime/ { body = 1; next }
      !body || NF < 4 { next }
      { if ($1 != "") { point = $1; sub(/ (burst|sustained)$/, "", point) }
        v = $2; r = $5
        if (r ~ /^1 \(reference\)/) r = 1
        else if (r ~ /^[0-9.]+ \[/) { split(r, a, " "); r = a[1] }
        else next
        print kind "\t" point "\t" v "\t" r }' "$t"
  done
  for c in "${runs[@]}"; do
    awk -v ref="$ref" -F, '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["status"] != "ok" { next }
      { point = "B=" $col["batch"] " H=" $col["heads"] (($col["kv_heads"] != $col["heads"]) ? " KV=" $col["kv_heads"] : "") \
                " S=" $col["seq_len"] " D=" $col["head_dim"] " " ($col["causal"] == 1 ? "causal" : "full") " " \
                $col["mode"]
        ms[point, $col["variant"]] = $col["ms_median"]; points[point] = 1; vars[$col["variant"]] = 1 }
      END { for (p in points) if ((p, ref) in ms) for (v in vars) if ((p, v) in ms)
              printf "rows\t%s\t%s\t%.4f\n", p, v, ms[p, v] / ms[p, ref] }' "$c"
  done
} | awk -F '\t' -v ref="$ref" '
  { key = $2 "\t" $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    k = $1; list[key, k] = list[key, k] (list[key, k] == "" ? "" : " ") sprintf("%.3f", $4)
    if (!((key, k) in lo) || $4 < lo[key, k]) lo[key, k] = $4
    if (!((key, k) in hi) || $4 > hi[key, k]) hi[key, k] = $4
    cnt[key, k]++ }
  END {
    print "Each variant'"'"'s time / " ref "'"'"'s per run, and its spread over the runs (max - min).\n"
    print "| point | variant | interleaved, burst | spread | interleaved, sustained | spread | row after row | spread |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
      split(order[i], pv, "\t")
      if (pv[2] == ref) continue
      line = "| " pv[1] " | " pv[2]
      split("burst sustained rows", kinds, " ")
      for (j = 1; j <= 3; j++) {
        k = kinds[j]
        if (cnt[order[i], k]) {
          d = hi[order[i], k] - lo[order[i], k]
          line = line sprintf(" | %s | %.3f", list[order[i], k], d)
          pairs[k]++; if (d <= 0.010 + 1e-9) within[k]++; if (d > worst[k]) worst[k] = d
        } else line = line " | - | -"
      }
      print line " |"
    }
    printf "\n"
    for (j = 1; j <= 3; j++) {
      k = kinds[j]
      if (pairs[k]) printf "%s: %d of %d spreads within 0.010 (1 %%), the widest %.3f.\n",
                           (k == "rows" ? "row after row" : "interleaved, " k), within[k] + 0, pairs[k], worst[k]
    }
  }'
