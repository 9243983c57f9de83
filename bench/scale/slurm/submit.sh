#!/bin/bash
# submit.sh — one sweep on a Slurm cluster (make bench-slurm): a job array of
# SHARDS tasks, each `attnbench --shard I/N` on one GPU (shard.sbatch), and a
# merge job that runs after every task has ended (merge.sbatch) and joins
# their parts into DIR/RUN_ID.csv with build/merge, as bench/scale/multi_gpu.sh
# does on one box. Nothing of ours runs between the jobs: they meet on a
# shared filesystem, so every path handed to them is absolute.
#   bench/scale/slurm/submit.sh [attnbench sweep options...]     a new run
#   bench/scale/slurm/submit.sh --rerun PARTS_DIR [I,J,...]      shards of that run
#       again (default: every shard whose task did not exit 0), each resuming
#       its own part, and a new merge after them; FORCE=1 resumes parts that
#       another revision of attnbench began (attnbench --force)
# Environment (make bench-slurm passes them):
#   SHARDS        the number of shards, 1..1024 (required)
#   GPU           the GPU model the tasks run on, as results/<gpu>/ names it
#                 (h200; required: the submit host may have no GPU, or another
#                 one). A task on another model stops before measuring.
#   MAX_PARALLEL  at most this many tasks at once (--array=1-N%K; default N)
#   GRES          each task's --gres (default gpu:1; empty: no --gres)
#   PARTITION, ACCOUNT  sbatch's --partition, --account, when set
#   SBATCH_ARGS   more sbatch options for both jobs (split on blanks), e.g.
#                 '--time=04:00:00 --constraint=h200'
#   OUT           the results directory (default results/<GPU>)
#   ATTNBENCH, MERGE  the programs (default build/attnbench, build/merge of
#                 this checkout)
#   DRY_RUN=1     tests: tasks print their rows (--dry-run) and the merge
#                 checks that the parts hold every planned row once; no GPU
#   DRY_RUN_HANG=I  tests, with DRY_RUN=1 only: task I writes half its rows
#                 and waits to be cancelled (scancel)
# The run: DIR/RUN_ID.csv (+ .samples.csv, .env, .part-K.env); its parts,
# plan, settings (run.conf) and the jobs' logs in DIR/RUN_ID.parts/.
# Prints the job ids and the run's path. Exit 0 submitted, 2 refused.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
say() { echo "submit: $*" >&2; }
die() { say "$*"; exit 2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm submit host"

# sbatch_id ARGS...: submits, prints the job id (--parsable: ID or ID;CLUSTER)
sbatch_id() {
  local out
  out=$(sbatch --parsable "$@") || return 1
  out=${out%%;*}
  [[ $out =~ ^[0-9]+$ ]] || { say "sbatch printed '$out' where a job id was expected"; return 1; }
  echo "$out"
}

# submit_jobs ARRAY_SPEC [shard.sbatch args...]: the array, then the merge
# after it; sets array_id, merge_id. The merge's dependency is afterany, not
# afterok: with afterok a failed or cancelled task would leave the merge
# pending for ever (DependencyNeverSatisfied), and no job would say which
# shard failed. afterany runs it once every task has ended, however; the
# merge then fails itself (exit 1, job state FAILED) naming each shard whose
# rows are missing, and keeps the rows that were measured. So the merge job
# ends COMPLETED exactly when every task did and every row is there: what an
# afterok on the array promised, and a later job can hang afterok on it.
submit_jobs() {
  local spec=$1
  shift
  local common=(--chdir="$workdir" --open-mode=append)
  [ -n "$partition" ] && common+=(--partition="$partition")
  [ -n "$account" ] && common+=(--account="$account")
  common+=(${sbatch_args[@]+"${sbatch_args[@]}"}) # ${a[@]+...}: bash < 4.4 calls an empty array unbound (set -u)
  array_id=$(sbatch_id "${common[@]}" --job-name="attnbench-$run_id" --array="$spec" \
             ${gres:+--gres="$gres"} --output="$parts/logs/shard-%a.out" "$here/shard.sbatch" "$parts" "$@") ||
    die "sbatch refused the array job (above); nothing was submitted"
  merge_id=$(sbatch_id "${common[@]}" --job-name="attnbench-$run_id-merge" --dependency="afterany:$array_id" \
             --output="$parts/logs/merge.out" "$here/merge.sbatch" "$parts") || {
    scancel "$array_id"
    die "sbatch refused the merge job (above); the array job $array_id was cancelled"
  }
}

report() { # ARRAY_SPEC TASKS
  echo "array job:  $array_id (tasks: $2, --array=$1${gres:+, --gres=$gres}): shard I's log in $parts/logs/shard-I.out"
  echo "merge job:  $merge_id (afterany:$array_id): its log in $parts/logs/merge.out"
  echo "run:        $dir/$run_id.csv"
  echo "parts:      $parts/"
  echo "watch:      squeue -j $array_id,$merge_id"
}

if [ "${1:-}" = --rerun ]; then
  parts=${2:?usage: bench/scale/slurm/submit.sh --rerun PARTS_DIR [I,J,...]}
  parts=$(cd "$parts" 2>/dev/null && pwd) || die "--rerun $2: no such directory"
  [ -r "$parts/run.conf" ] || die "--rerun: $parts/run.conf missing (not a run's parts directory)"
  # shellcheck source=/dev/null
  source "$parts/run.conf"
  if [ -n "${3:-}" ]; then
    IFS=, read -r -a again <<< "$3"
  else
    again=()
    for i in $(seq 1 "$n"); do [ "$(cat "$parts/shard-$i.exit" 2>/dev/null)" = 0 ] || again+=("$i"); done
    [ ${#again[@]} -gt 0 ] || die "--rerun: every shard of $run_id exited 0 ($parts/shard-I.exit); name the shards to run again"
  fi
  for i in "${again[@]}"; do
    [[ $i =~ ^[0-9]+$ ]] && [ "$i" -ge 1 ] && [ "$i" -le "$n" ] || die "--rerun: '$i' is not a shard of 1..$n"
  done
  queued=$(squeue -h -t PENDING,RUNNING,SUSPENDED,CONFIGURING -n "attnbench-$run_id,attnbench-$run_id-merge" -o %i 2>/dev/null | tr '\n' ' ')
  [ -z "$queued" ] || die "--rerun: jobs of run $run_id are still queued or running ($queued): wait for them, or scancel them"
  [ "$dry_run" = 1 ] && dry_run_hang=  # a rerun is not cancelled on purpose
  declare -p dry_run_hang >> "$parts/run.conf"
  for i in "${again[@]}"; do rm -f "$parts/shard-$i.exit"; done
  spec=$(IFS=,; echo "${again[*]}")%$max_parallel
  force=()
  [ "${FORCE:-}" = 1 ] && force=(--force)
  submit_jobs "$spec" ${force[@]+"${force[@]}"}
  say "run $run_id: shards ${again[*]} of $n again, each resuming its part"
  report "$spec" ${#again[@]}
  exit 0
fi

n=${SHARDS:-}
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 1024 ] || die "SHARDS='$n': the number of array tasks, 1..1024, is required (make bench-slurm SHARDS=8)"
gpu=${GPU:-}
[[ $gpu =~ ^[a-z0-9][a-z0-9-]*$ ]] || die "GPU='$gpu': the GPU model of the cluster's nodes as results/<gpu>/ names it (e.g. GPU=h200) is required; the submit host's GPU, if any, need not be theirs"
max_parallel=${MAX_PARALLEL:-$n}
[[ $max_parallel =~ ^[0-9]+$ ]] && [ "$max_parallel" -ge 1 ] || die "MAX_PARALLEL='$max_parallel': at most this many tasks at once, 1 or more"
gres=${GRES-gpu:1}
partition=${PARTITION:-}
account=${ACCOUNT:-}
read -r -a sbatch_args <<< "${SBATCH_ARGS:-}"
dry_run=${DRY_RUN:-0}
dry_run_hang=${DRY_RUN_HANG:-}
[ "$dry_run" = 0 ] || [ "$dry_run" = 1 ] || die "DRY_RUN='$dry_run': 1 or unset"
[ -z "$dry_run_hang" ] || [ "$dry_run" = 1 ] || die "DRY_RUN_HANG goes with DRY_RUN=1 (a test's task made to hang)"
attnbench=$(abs "${ATTNBENCH:-$repo/build/attnbench}")
merge=$(abs "${MERGE:-$repo/build/merge}")
[ -x "$attnbench" ] || die "$attnbench: not built (make build/attnbench)"
[ -x "$merge" ] || die "$merge: not built (make build/merge)"
for a in "$@"; do
  case $a in
    --out) die "--out: OUT=DIR sets the results directory (the parts go to DIR/RUN_ID.parts/)" ;;
    --shard|--dry-run) die "$a: submit.sh gives each task its shard (SHARDS=N; DRY_RUN=1 for a dry run)" ;;
    --resume|--force) die "$a: a cluster run's shards resume with bench/scale/slurm/submit.sh --rerun PARTS_DIR (FORCE=1)" ;;
    --trace) die "--trace: the shards would share one ops.txt; trace on one GPU (make trace)" ;;
    --worker|--supervised-fd|--list|--help) die "$a: not an option of a sweep" ;;
  esac
done
sweep=("$@")
workdir=$PWD
dir=$(abs "${OUT:-results/$gpu}")

run_id=$(date -u +%Y%m%dT%H%M%SZ)
for k in $(seq 2 99); do
  [ -e "$dir/$run_id.csv" ] || [ -e "$dir/$run_id.parts" ] || break
  run_id=$(date -u +%Y%m%dT%H%M%SZ)-$k
done
parts=$dir/$run_id.parts
mkdir -p "$parts/logs" || die "unable to create $parts/logs"

# the plan every shard follows, for the merge (and a check of the options)
for i in $(seq 1 "$n"); do
  "$attnbench" --dry-run --shard "$i/$n" ${sweep[@]+"${sweep[@]}"} > "$parts/plan-$i.csv" ||
    { rm -rf "$parts"; die "$attnbench --dry-run --shard $i/$n ${sweep[*]} failed (above): bad sweep options?"; }
done
{ cat "$parts/plan-1.csv"; for i in $(seq 2 "$n"); do tail -n +2 "$parts/plan-$i.csv"; done; } > "$parts/plan.csv"
rm -f "$parts"/plan-[0-9]*.csv
rows=$(($(wc -l < "$parts/plan.csv") - 1))
empty=$(awk -F, -v n="$n" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "shard") sc = i; next } { c[$sc]++ } END { e = 0; for (i = 1; i <= n; i++) if (!c[i "/" n]) e++; print e }' "$parts/plan.csv")
[ "$empty" = 0 ] || { rm -rf "$parts"; die "$n shards for a sweep of $rows rows leave $empty of them empty: fewer SHARDS"; }

# what the jobs read: declare -p keeps the sweep's words as they are
{
  echo "# bench/scale/slurm/submit.sh's settings for run $run_id, read by shard.sbatch and merge.sbatch"
  declare -p run_id n gpu dir parts workdir attnbench merge dry_run dry_run_hang \
             max_parallel gres partition account sbatch_args sweep
} > "$parts/run.conf" || die "unable to write $parts/run.conf"

submit_jobs "1-$n%$max_parallel"
say "run $run_id: $rows rows in $n shards$( [ "$dry_run" = 1 ] && echo ' (DRY_RUN: the shards print their rows, no GPU)')"
report "1-$n%$max_parallel" "$n"
