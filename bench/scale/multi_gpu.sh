#!/bin/bash
# multi_gpu.sh GPUS [attnbench options...] — one sweep over several GPUs of
# this box (make bench GPUS=all | GPUS=0,2,3): one attnbench per GPU, each
# with CUDA_VISIBLE_DEVICES set to its GPU and --shard I/N (bench/scale/shard.c),
# all started together; when all have ended, build/merge joins their parts
# into results/<gpu>/RUN_ID.csv (+ its samples, .env, one .part-K.env per
# GPU). The parts stay in RUN_ID.parts/ beside it.
#   GPUS      all, or a comma list of device indices (nvidia-smi's)
#   OUT       the results directory (default results/<gpu>)
#   ATTNBENCH, MERGE, NVIDIA_SMI  the programs (default build/attnbench,
#             build/merge, nvidia-smi)
# Refuses (exit 2) GPUs of different models and unknown indices. Exit: the
# merge's when it refused or rows are missing (a shard failed: named, its
# finished rows kept), else the highest of the shards' (1: a row failed).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
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
for l in "${listed[@]}"; do name_of[${l%%,*}]=$(printf '%s\n' "${l#*,}" | sed 's/^ *//'); done
if [ "$gpus" = all ]; then
  devs=(); for l in "${listed[@]}"; do devs+=("${l%%,*}"); done
else
  IFS=, read -r -a devs <<< "$gpus"
fi
[ ${#devs[@]} -gt 0 ] || { say "GPUS='$gpus': no GPU named"; exit 2; }
model='' first=''
declare -A named=()
for d in "${devs[@]}"; do
  [[ $d =~ ^[0-9]+$ ]] && [ -n "${name_of[$d]+x}" ] || { say "GPUS=$gpus: no GPU '$d' here ($smi lists ${!name_of[*]})"; exit 2; }
  [ -z "${named[$d]:-}" ] || { say "GPUS=$gpus: GPU $d named twice (one shard per GPU: two would time each other)"; exit 2; }
  named[$d]=1
  [ -z "$model" ] && model=${name_of[$d]} && first=$d
  [ "${name_of[$d]}" = "$model" ] || { say "GPU $first is '$model', GPU $d is '${name_of[$d]}': one run is one GPU model"; exit 2; }
done
n=${#devs[@]}
dir=${OUT:-results/$(scale_slug "$model")}
id=$(scale_new_run_id "$dir") || { say "no free run id in $dir"; exit 2; }
parts=$dir/$id.parts
mkdir -p "$parts" || { say "unable to create $parts"; exit 2; }

# the plan every shard follows, for the merge
scale_plan "$attnbench" "$n" "$parts" "$@" || { say "attnbench --dry-run failed (bad options?)"; rm -rf "$parts"; exit 2; }
say "$id: $n shards on GPUs ${devs[*]} ($model), parts in $parts/"

pids=()
for i in $(seq 1 "$n"); do
  CUDA_VISIBLE_DEVICES=${devs[$((i - 1))]} "$attnbench" --shard "$i/$n" "$@" --out "$parts/shard-$i" &
  pids+=("$!")
done
worst=0 files=()
for i in $(seq 1 "$n"); do
  wait "${pids[$((i - 1))]}"; rc=$?
  [ "$rc" = 0 ] || say "shard $i/$n (GPU ${devs[$((i - 1))]}) exited $rc"
  [ "$rc" -gt "$worst" ] && worst=$rc
  scale_parts "$parts/shard-$i"
  if [ ${#part_csvs[@]} -gt 0 ]; then files+=("${part_csvs[0]}"); else say "shard $i/$n wrote no results"; fi
done
[ ${#files[@]} -gt 0 ] || { say "no shard wrote results"; exit 2; }
"$merge" --plan "$parts/plan.csv" --out "$dir/$id.csv" "${files[@]}"; mrc=$?
[ "$mrc" != 0 ] && exit "$mrc"
exit "$worst"
