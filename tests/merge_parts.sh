#!/bin/bash
# merge_parts.sh DIR [CASE] — the parts of a 2-shard sweep for build/merge's
# tests (check_shard.c, check_slurm.sh), cut from a committed H200 run
# (results/h200/power/20261201T020403Z: flash_hopper and cudnn_sdpa, cold):
# DIR/sweep.args (the sweep's attnbench options, one a line: the run's own
# points, from DIR/run.grid, so that a change to bench/grids/ leaves the
# fixture whole), DIR/plan.csv (attnbench --dry-run of both shards) and
# DIR/part-1.csv, DIR/part-2.csv, each with the samples of its own rows and
# a copy of the run's .env. The run predates the kv_heads, q_len, varlen, page, init,
# pass and regime columns: it is first put in this build's schema (kv_heads =
# heads, an empty varlen, page 0, init uniform, pass fwd and regime burst, as
# the reader takes them;
# its inputs were uniform, so its points say init=uniform). CASE spoils them on purpose:
#   missing        three rows of shard 2 left out (a shard that failed)
#   gpu            part 2 measured on an h100
#   revision       part 2 measured by another revision (0123456789ab)
#   twice          part 2 also holds a row of part 1
#   unplanned      the plan lacks a row part 1 holds
set -eu
dir=$1 case=${2:-}
run=results/h200/power/20261201T020403Z
bin=${ATTN_BUILD:-build}/attnbench
mkdir -p "$dir"
# the run's points, in its order: one grid line each
awk -F, 'NR > 1 { p = "batch=" $7 " heads=" $8 " seq=" $9 " dim=" $10 " causal=" $11 " dtype=" $6
                  if (!(p in seen)) { seen[p] = 1; print p " init=uniform" } }' "$run.csv" > "$dir/run.grid"
printf '%s\n' --grid "$dir/run.grid" --variants flash_hopper,cudnn_sdpa --mode cold --warm-ms 500 > "$dir/sweep.args"
mapfile -t sweep < "$dir/sweep.args"
{ "$bin" --dry-run --shard 1/2 "${sweep[@]}"; "$bin" --dry-run --shard 2/2 "${sweep[@]}" | tail -n +2; } > "$dir/plan.csv"
# the run in this build's schema, column by column by name (the names and
# their order from common/schema.h's RESULT_COLUMNS): kv_heads = heads, an
# empty varlen, page 0, init uniform, pass fwd, regime burst, every other column it lacks
# empty, as the reader takes them; its samples likewise over the key
columns=$(sed -n '/define RESULT_COLUMNS/,/^$/p' common/schema.h | grep -o 'X([A-Z_0-9]*, "[a-z_0-9]*")' |
  sed 's/.*"\(.*\)")/\1/' | paste -sd, -)
to_schema() { # to_schema COLUMNS FILE: FILE's rows with COLUMNS, in that order
  awk -F, -v OFS=, -v want="$1" 'BEGIN { n = split(want, w, ",") }
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; print want; next }
    { out = ""
      for (j = 1; j <= n; j++) {
        c = w[j]; v = (c in at) ? $(at[c]) : ""
        if (!(c in at) && c == "kv_heads") v = $(at["heads"])
        if (!(c in at) && c == "q_len") v = $(at["seq_len"])
        if (!(c in at) && c == "page") v = 0
        if (!(c in at) && c == "init") v = "uniform"
        if (!(c in at) && c == "pass") v = "fwd"
        if (!(c in at) && c == "regime") v = "burst"
        out = out (j > 1 ? OFS : "") v }
      print out }' "$2"
}
to_schema "${columns%,shard}" "$run.csv" > "$dir/run.csv"
key=$(echo "$columns" | sed 's/.*\(variant,.*,regime\).*/\1/')
nkey=$(echo "$key" | tr ',' '\n' | wc -l) # the key's columns: run.csv's 5th on (run_id .. gpu before them)
to_schema "$key,sample,ms" <(gzip -dcf "$run".samples.csv*) > "$dir/run.samples.csv"
for i in 1 2; do
  # the keys of shard i, then its rows and their samples
  awk -F, -v s="$i/2" -v n="$nkey" 'NR > 1 && $(n + 1) == s { k = $1; for (j = 2; j <= n; j++) k = k "," $j; print k }' "$dir/plan.csv" > "$dir/keys-$i"
  # the run predates the shard column: each row gets its shard, as a shard writes it
  awk -F, -v s="$i/2" -v n="$nkey" 'NR == FNR { k[$0] = 1; next } FNR == 1 { print $0 ",shard"; next }
           { key = $5; for (j = 6; j < 5 + n; j++) key = key "," $j; if (key in k) print $0 "," s }' "$dir/keys-$i" "$dir/run.csv" > "$dir/part-$i.csv"
  awk -F, -v n="$nkey" 'NR == FNR { k[$0] = 1; next } FNR == 1 { print; next }
           { key = $1; for (j = 2; j <= n; j++) key = key "," $j; if (key in k) print }' "$dir/keys-$i" "$dir/run.samples.csv" > "$dir/part-$i.samples.csv"
  cp "$run.env" "$dir/part-$i.env"
done
case $case in
  missing) { head -n 1 "$dir/part-2.csv"; tail -n +5 "$dir/part-2.csv"; } > "$dir/p" && mv "$dir/p" "$dir/part-2.csv" ;;
  gpu) sed -i '2,$ s/,h200,/,h100,/' "$dir/part-2.csv" ;;
  revision) awk -F, -v OFS=, 'NR > 1 { $3 = "0123456789ab" } { print }' "$dir/part-2.csv" > "$dir/p" && mv "$dir/p" "$dir/part-2.csv" ;;
  twice) # a row of part 1, with its samples, in part 2 too
    sed -n 2p "$dir/part-1.csv" | sed 's|,1/2$|,2/2|' >> "$dir/part-2.csv"
    key=$(sed -n 2p "$dir/part-1.csv" | cut -d, -f5-$((4 + nkey)))
    grep "^$key," "$dir/part-1.samples.csv" >> "$dir/part-2.samples.csv" ;;
  unplanned) first=$(sed -n 2p "$dir/part-1.csv" | cut -d, -f5-$((4 + nkey))); grep -v "^$first," "$dir/plan.csv" > "$dir/p" && mv "$dir/p" "$dir/plan.csv" ;;
  "") ;;
  *) echo "merge_parts.sh: no case '$case'" >&2; exit 2 ;;
esac
