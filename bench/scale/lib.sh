# lib.sh — what the scale-out's shell scripts share (bench/scale/multi_gpu.sh
# and bench/scale/slurm/'s): run ids, a GPU model's name under results/, the
# plan of N shards, a shard's part. Sourced by bash; it defines functions
# and nothing else.
# shellcheck shell=bash

# scale_run_id_ok ID: ID is a run id as attnbench and these scripts make
# them: the run's start time, YYYYMMDDTHHMMSSZ, with -K when that was taken.
scale_run_id_ok() { [[ $1 =~ ^[0-9]{8}T[0-9]{6}Z(-[0-9]{1,2})?$ ]]; }

# scale_new_run_id DIR: prints a run id that DIR has no run (ID.csv) and no
# parts (ID.parts) of; fails when 99 are taken.
scale_new_run_id() {
  local stamp id k
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  id=$stamp
  for k in $(seq 2 100); do
    if [ ! -e "$1/$id.csv" ] && [ ! -e "$1/$id.parts" ]; then echo "$id"; return 0; fi
    id=$stamp-$k
  done
  return 1
}

# scale_slug NAME: a GPU's name (nvidia-smi's) as results/<gpu>/ names it:
# "NVIDIA H200" is h200, "NVIDIA H100 80GB HBM3" h100-80gb-hbm3.
scale_slug() { printf '%s\n' "$1" | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//'; }

# scale_plan ATTNBENCH N PARTS SWEEP...: PARTS/plan.csv, the rows every
# shard will run (`attnbench --dry-run --shard I/N SWEEP` for I = 1..N)
# under one header. Fails, with attnbench's message and no plan, when
# attnbench refuses the sweep.
scale_plan() {
  local bin=$1 n=$2 parts=$3 i
  shift 3
  for i in $(seq 1 "$n"); do
    "$bin" --dry-run --shard "$i/$n" "$@" > "$parts/plan-$i.csv" || { rm -f "$parts"/plan-*.csv; return 1; }
  done
  { cat "$parts/plan-1.csv"; for i in $(seq 2 "$n"); do tail -n +2 "$parts/plan-$i.csv"; done; } > "$parts/plan.csv"
  rm -f "$parts"/plan-*.csv
}

# scale_parts SHARD_DIR: sets the array part_csvs to the runs in a shard's
# directory (RUN_ID.csv, RUN_ID a run id; not their samples), in name order.
scale_parts() {
  local f name
  part_csvs=()
  for f in "$1"/*.csv; do
    name=${f##*/}
    [ -f "$f" ] && scale_run_id_ok "${name%.csv}" && part_csvs+=("$f")
  done
  return 0
}
