#!/bin/bash
# fake_shard.sh — stands in for attnbench in the scale-out's tests
# (check_shard.c: bench/scale/multi_gpu.sh; check_slurm.sh: the Slurm
# tasks): --dry-run goes to the real attnbench ($REAL_ATTNBENCH); a run with
# --shard I/N --out DIR copies $FAKE_PARTS/part-I.* (made by
# tests/merge_parts.sh) into DIR as a run of its own. When I is $FAKE_FAIL,
# only the header and the first two rows are copied and it exits 2, as a
# shard that died part-way would. FAKE_REV=REV: its rows say they were
# measured by revision REV (a build of another revision). It records its
# CUDA_VISIBLE_DEVICES.
for a in "$@"; do [ "$a" = --dry-run ] && exec "$REAL_ATTNBENCH" "$@"; done
shard= out=
while [ $# -gt 0 ]; do
  case $1 in --shard) shard=$2; shift ;; --out) out=$2; shift ;; esac
  shift
done
i=${shard%/*}
mkdir -p "$out"
echo "$i ${CUDA_VISIBLE_DEVICES-}" >> "$FAKE_PARTS/devices"
id=20261201T000000Z
cp "$FAKE_PARTS/part-$i.samples.csv" "$out/$id.samples.csv"
cp "$FAKE_PARTS/part-$i.env" "$out/$id.env"
rows() { awk -F, -v OFS=, -v rev="${FAKE_REV:-}" 'NR > 1 && rev != "" { $3 = rev } { print }' "$FAKE_PARTS/part-$i.csv"; }
if [ "$i" = "${FAKE_FAIL:-}" ]; then rows | head -n 3 > "$out/$id.csv"; exit 2; fi
rows > "$out/$id.csv"
