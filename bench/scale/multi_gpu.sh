#!/bin/bash
# multi_gpu.sh GPUS [attnbench options...] — one sweep over several GPUs of
# this box (make bench GPUS=all | GPUS=0,2,3): one attnbench per GPU, each
# with CUDA_VISIBLE_DEVICES set to its GPU and --shard I/N (bench/scale/shard.c),
# all started together; when all have ended, build/merge joins their parts
# into results/<gpu>/RUN_ID.csv (+ .samples.csv, .env, one .part-K.env per
# GPU). The parts stay in RUN_ID.parts/ beside it.
#   GPUS      all, or a comma list of device indices (nvidia-smi's)
#   OUT       the results directory (default results/<gpu>)
#   ATTNBENCH, MERGE, NVIDIA_SMI  the programs (default build/attnbench,
#             build/merge, nvidia-smi)
# Refuses (exit 2) GPUs of different models and unknown indices. Exit: the
# merge's when it refused or rows are missing (a shard failed: named, its
# finished rows kept), else the highest of the shards' (1: a row failed).
set -u
gpus=${1:?usage: bench/scale/multi_gpu.sh GPUS [attnbench options...]}
shift
attnbench=${ATTNBENCH:-build/attnbench}
merge=${MERGE:-build/merge}
smi=${NVIDIA_SMI:-nvidia-smi}
say() { echo "multi_gpu: $*" >&2; }

# the box's GPUs: index, name
mapfile -t listed < <("$smi" --query-gpu=index,name --format=csv,noheader 2>/dev/null)
[ ${#listed[@]} -gt 0 ] || { say "no GPU listed by $smi"; exit 2; }
declare -A name_of
for l in "${listed[@]}"; do name_of[${l%%,*}]=$(echo "${l#*,}" | sed 's/^ *//'); done
if [ "$gpus" = all ]; then
  devs=(); for l in "${listed[@]}"; do devs+=("${l%%,*}"); done
else
  IFS=, read -r -a devs <<< "$gpus"
fi
model=
for d in "${devs[@]}"; do
  [ -n "${name_of[$d]+x}" ] || { say "GPUS=$gpus: no GPU $d here ($smi lists ${!name_of[*]})"; exit 2; }
  [ -z "$model" ] && model=${name_of[$d]} && first=$d
  [ "${name_of[$d]}" = "$model" ] || { say "GPU $first is '$model', GPU $d is '${name_of[$d]}': one run is one GPU model"; exit 2; }
done
n=${#devs[@]}
slug=$(echo "$model" | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
dir=${OUT:-results/$slug}
id=$(date -u +%Y%m%dT%H%M%SZ)
for k in $(seq 2 99); do [ -e "$dir/$id.csv" ] || [ -e "$dir/$id.parts" ] || break; id=$(date -u +%Y%m%dT%H%M%SZ)-$k; done
parts=$dir/$id.parts
mkdir -p "$parts" || { say "unable to create $parts"; exit 2; }

# the plan every shard follows, for the merge
for i in $(seq 1 "$n"); do
  "$attnbench" --dry-run --shard "$i/$n" "$@" > "$parts/plan-$i.csv" || { say "attnbench --dry-run failed (bad options?)"; exit 2; }
done
{ cat "$parts/plan-1.csv"; for i in $(seq 2 "$n"); do tail -n +2 "$parts/plan-$i.csv"; done; } > "$parts/plan.csv"
rm -f "$parts"/plan-[0-9]*.csv
say "$id: $n shards on GPUs ${devs[*]} ($model), parts in $parts/"

pids=()
for i in $(seq 1 "$n"); do
  CUDA_VISIBLE_DEVICES=${devs[$((i - 1))]} "$attnbench" --shard "$i/$n" "$@" --out "$parts/shard-$i" &
  pids+=($!)
done
worst=0 files=()
for i in $(seq 1 "$n"); do
  wait "${pids[$((i - 1))]}"; rc=$?
  [ $rc = 0 ] || say "shard $i/$n (GPU ${devs[$((i - 1))]}) exited $rc"
  [ $rc -gt $worst ] && worst=$rc
  part=$(ls "$parts/shard-$i"/*Z.csv "$parts/shard-$i"/*Z-[0-9]*.csv 2>/dev/null | grep -v '\.samples\.csv$' | head -n 1)
  if [ -n "$part" ]; then files+=("$part"); else say "shard $i/$n wrote no results"; fi
done
[ ${#files[@]} -gt 0 ] || { say "no shard wrote results"; exit 2; }
"$merge" --plan "$parts/plan.csv" --out "$dir/$id.csv" "${files[@]}"; mrc=$?
[ $mrc != 0 ] && exit $mrc
exit $worst
