#!/usr/bin/env bash
# regime_table.sh BURST_DIR SUSTAINED_DIR — burst against sustained, per point
# and variant, as a Markdown table on stdout: the oldest plain run in
# BURST_DIR (rows after 500 ms of warm-up: the clock at the row's end, the
# warm-up's watts) beside the plain run in SUSTAINED_DIR (rows with --sustain:
# each loaded the board alone, so the settled clock and watts are its own).
# TFLOP/J is the row's TFLOP/s over its watts (the tflops_per_watt column).
# Exit 2 when either directory holds no run.
set -u -o pipefail
usage="usage: bench/scripts/regime_table.sh BURST_DIR SUSTAINED_DIR"
burst_dir=${1:?$usage}
sustained_dir=${2:?$usage}
oldest() { # the first plain run's CSV in $1 (samples files aside)
  local f
  for f in "$1"/*.csv; do [[ $f == *.samples.csv ]] || { echo "$f"; return 0; }; done
  return 1
}
burst=$(oldest "$burst_dir") || { echo "regime_table.sh: no run in $burst_dir" >&2; exit 2; }
sustained=$(oldest "$sustained_dir") || { echo "regime_table.sh: no run in $sustained_dir" >&2; exit 2; }

awk -F, -v burst="$burst" -v sustained="$sustained" '
  FNR == 1 { kind = (FILENAME == burst) ? "b" : "s"; delete col
             for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["status"] != "ok" { next }
  { point = "B=" $col["batch"] " H=" $col["heads"] (($col["kv_heads"] != $col["heads"]) ? " KV=" $col["kv_heads"] : "") \
            " S=" $col["seq_len"] " D=" $col["head_dim"] " " ($col["causal"] == 1 ? "causal" : "full") " " $col["mode"]
    key = point "\t" $col["variant"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    mhz = (kind == "b") ? $col["sm_clock_end_mhz"] : $col["settled_mhz"]
    settle = (kind == "s") ? sprintf("%s%.1f s", $col["settled"] == 1 ? "" : "not settled, ", $col["settle_s"]) : ""
    cell[key, kind] = sprintf("%s | %s | %.0f | %.3f", mhz == "" ? "-" : sprintf("%.0f", mhz),
                              $col["watts"] == "" ? "-" : sprintf("%.0f", $col["watts"]), $col["tflops"],
                              $col["tflops_per_watt"])
    if (kind == "s") load[key] = settle }
  END {
    print "Burst: " burst " (the clock at the row'"'"'s end, the warm-up'"'"'s watts). Sustained: " sustained
    print "(the clock and watts the load settled at; then sampled under that load). TFLOP/J = TFLOP/s / W.\n"
    print "| point | variant | burst MHz | W | TFLOP/s | TFLOP/J | sustained MHz | W | TFLOP/s | TFLOP/J | load |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, pv, "\t")
      printf "| %s | %s | %s | %s | %s |\n", pv[1], pv[2], ((k, "b") in cell) ? cell[k, "b"] : "- | - | - | -",
             ((k, "s") in cell) ? cell[k, "s"] : "- | - | - | -", (k in load) ? load[k] : "-"
    }
  }' "$burst" "$sustained"
