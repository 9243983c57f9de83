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
#       its own part, and a new merge after them. They run the build the run
#       was submitted with (PARTS/build-K/); NEW_BUILD=1 snapshots this
#       checkout's (or ATTNBENCH=, MERGE=) instead. FORCE=1 resumes parts
#       another revision began (attnbench --force) and lets the merge join
#       parts of different revisions (build/merge --mix-revisions); the run
#       records that (run.conf's mix_revisions=1, the merged .env's).
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
#                 this checkout); copied into PARTS/build-1/ at submission,
#                 and every task of the run runs that copy
#   DRY_RUN=1     tests: tasks print their rows (--dry-run) and the merge
#                 checks that the parts hold every planned row once; no GPU
#   DRY_RUN_HANG=I  tests, with DRY_RUN=1 only: task I writes half its rows
#                 and waits to be cancelled (scancel)
# The run: DIR/RUN_ID.csv (+ its samples, .env, .part-K.env); its parts,
# plan, settings (run.conf, bench/scale/slurm/run_conf.sh), builds and the
# jobs' logs in DIR/RUN_ID.parts/. Prints the job ids and the run's path.
# Exit 0 submitted; 2 refused, and then what this submission created is
# removed, what it changed put back, and any job it submitted cancelled.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"
# shellcheck source=run_conf.sh
source "$here/run_conf.sh"
say() { echo "submit: $*" >&2; }
die() { say "$*"; exit 2; }
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }

# What this submission did, undone when it is refused or interrupted: made
# (paths it created, removed; directories it had to create, removed when
# empty), saved (files it replaced or removed, kept as FILE.saved and put
# back) and jobs (cancelled).
made=() made_dirs=() saved=() jobs=()
undo() {
  local p i
  [ ${#jobs[@]} = 0 ] || scancel "${jobs[@]}" 2>/dev/null
  for p in ${saved[@]+"${saved[@]}"}; do mv -f "$p.saved" "$p"; done
  for p in ${made[@]+"${made[@]}"}; do rm -rf "$p"; done
  for ((i = ${#made_dirs[@]} - 1; i >= 0; i--)); do rmdir "${made_dirs[$i]}" 2>/dev/null; done
}
# keep: the submission stands; nothing is undone.
keep() {
  local p
  for p in ${saved[@]+"${saved[@]}"}; do rm -f "$p.saved"; done
  made=() made_dirs=() saved=() jobs=()
  trap - EXIT
}
trap undo EXIT
trap 'say "interrupted: nothing submitted"; exit 130' INT TERM HUP
# save FILE: FILE moved to FILE.saved (put back by undo)
save() { [ ! -e "$1" ] || { mv -f "$1" "$1.saved" && saved+=("$1"); }; }
# save_copy FILE: FILE copied to FILE.saved, for a change in place
save_copy() { cp -p "$1" "$1.saved" && saved+=("$1"); }
# make_dir DIR: mkdir -p, remembering each directory it created
make_dir() {
  local d=$1 new=()
  while [ ! -e "$d" ]; do new=("$d" ${new[@]+"${new[@]}"}); d=$(dirname "$d"); done
  mkdir -p "$1" && made_dirs+=(${new[@]+"${new[@]}"})
}

# snapshot: the programs the tasks run (attnbench, merge) and the scripts'
# shared code copied into PARTS/build-K/, the next K free: every task of a
# submission runs one build, whatever happens to the checkout meanwhile.
# Sets build.
snapshot() {
  local k=1
  while [ -e "$parts/build-$k" ]; do k=$((k + 1)); done
  build=build-$k
  mkdir "$parts/$build" && made+=("$parts/$build") &&
    cp "$attnbench" "$parts/$build/attnbench" && cp "$merge" "$parts/$build/merge" &&
    cp "$here/../lib.sh" "$here/run_conf.sh" "$parts/$build/" ||
    die "unable to copy the build into $parts/$build/"
}

# programs: attnbench and merge from ATTNBENCH, MERGE or this checkout's build
programs() {
  attnbench=$(abs "${ATTNBENCH:-$repo/build/attnbench}")
  merge=$(abs "${MERGE:-$repo/build/merge}")
  [ -x "$attnbench" ] || die "$attnbench: not built (make build/attnbench)"
  [ -x "$merge" ] || die "$merge: not built (make build/merge)"
}

# sbatch_id ARGS...: submits, prints the job id (--parsable: ID or ID;CLUSTER)
sbatch_id() {
  local out
  out=$(sbatch --parsable "$@") || return 1
  out=${out%%;*}
  [[ $out =~ ^[0-9]+$ ]] || { say "sbatch printed '$out' where a job id was expected"; return 1; }
  printf '%s\n' "$out"
}

# submit_jobs ARRAY_SPEC [shard.sbatch option]: the array, then the merge
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
  jobs+=("$array_id")
  merge_id=$(sbatch_id "${common[@]}" --job-name="attnbench-$run_id-merge" --dependency="afterany:$array_id" \
             --output="$parts/logs/merge.out" "$here/merge.sbatch" "$parts") ||
    die "sbatch refused the merge job (above); the array job $array_id is cancelled"
  jobs+=("$merge_id")
}

report() { # ARRAY_SPEC TASKS
  echo "array job:  $array_id (tasks: $2, --array=$1${gres:+, --gres=$gres}): shard I's log in $parts/logs/shard-I.out"
  echo "merge job:  $merge_id (afterany:$array_id): its log in $parts/logs/merge.out"
  echo "build:      $parts/$build/ (attnbench, merge: what every task of this submission runs)"
  echo "run:        $dir/$run_id.csv"
  echo "parts:      $parts/"
  echo "watch:      squeue -j $array_id,$merge_id"
}

command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm submit host"

if [ "${1:-}" = --rerun ]; then
  [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: bench/scale/slurm/submit.sh --rerun PARTS_DIR [I,J,...]"
  parts=$(cd "$2" 2>/dev/null && pwd) || die "--rerun $2: no such directory"
  conf_read "$parts" || die "--rerun: $conf_error"
  if [ -n "${3:-}" ]; then
    IFS=, read -r -a again <<< "$3"
  else
    again=()
    for i in $(seq 1 "$n"); do [ "$(cat "$parts/shard-$i.exit" 2>/dev/null)" = 0 ] || again+=("$i"); done
    [ ${#again[@]} -gt 0 ] || die "--rerun: every shard of $run_id exited 0 ($parts/shard-I.exit); name the shards to run again"
  fi
  declare -A named=()
  for i in "${again[@]}"; do
    [[ $i =~ ^[1-9][0-9]*$ ]] && [ "$i" -le "$n" ] || die "--rerun: '$i' is not a shard of 1..$n"
    [ -z "${named[$i]:-}" ] || die "--rerun: shard $i named twice"
    named[$i]=1
  done
  queued=$(squeue -h -t PENDING,RUNNING,SUSPENDED,CONFIGURING -n "attnbench-$run_id,attnbench-$run_id-merge" -o %i 2>/dev/null | tr '\n' ' ')
  [ -z "$queued" ] || die "--rerun: jobs of run $run_id are still queued or running ($queued): wait for them, or scancel them"
  [ "${NEW_BUILD:-0}" = 0 ] || [ "${NEW_BUILD:-}" = 1 ] || die "NEW_BUILD='${NEW_BUILD:-}': 1 or unset"
  [ "${FORCE:-0}" = 0 ] || [ "${FORCE:-}" = 1 ] || die "FORCE='${FORCE:-}': 1 or unset"
  earlier=$build
  if [ "${NEW_BUILD:-0}" = 1 ]; then
    programs
    snapshot
    say "NEW_BUILD=1: the shards run $attnbench, copied into $parts/$build/, not the run's $earlier/: a part another revision began is resumed only with FORCE=1, and the merge refuses parts of different revisions unless FORCE=1"
  elif [ "$build" = build-1 ]; then
    say "the shards run $parts/$build/attnbench, the build the run was submitted with (NEW_BUILD=1: this checkout's instead)"
  else
    say "the shards run $parts/$build/attnbench, the build an earlier --rerun took with NEW_BUILD=1 (NEW_BUILD=1: this checkout's instead)"
  fi
  force=() forced=
  if [ "${FORCE:-0}" = 1 ]; then
    force=(--force) forced=" (FORCE=1: attnbench --force, and the merge takes parts of different revisions)"
    mix_revisions=1
  fi
  dry_run_hang= # a rerun is not cancelled on purpose
  save_copy "$parts/run.conf" || die "unable to keep a copy of $parts/run.conf"
  conf_write "$parts" || die "$conf_error"
  for i in "${again[@]}"; do save "$parts/shard-$i.exit" || die "unable to move $parts/shard-$i.exit aside"; done
  spec=$(IFS=,; echo "${again[*]}")%$max_parallel
  submit_jobs "$spec" ${force[@]+"${force[@]}"}
  keep
  say "run $run_id: shards ${again[*]} of $n again, each resuming its part$forced"
  report "$spec" ${#again[@]}
  exit 0
fi

# A new run: everything checked before anything is created.
conf_check_sweep "$@" || die "$conf_why"
n=${SHARDS:-}
why=$(conf_check n "$n") || die "SHARDS='$n': the number of array tasks, 1..1024, is required (make bench-slurm SHARDS=8)"
gpu=${GPU:-}
why=$(conf_check gpu "$gpu") || die "GPU='$gpu': the GPU model of the cluster's nodes as results/<gpu>/ names it (e.g. GPU=h200) is required; the submit host's GPU, if any, need not be theirs"
max_parallel=${MAX_PARALLEL:-$n}
why=$(conf_check max_parallel "$max_parallel") || die "MAX_PARALLEL='$max_parallel': at most this many tasks at once, 1 or more"
gres=${GRES-gpu:1}
why=$(conf_check gres "$gres") || die "GRES: $why"
partition=${PARTITION:-}
why=$(conf_check partition "$partition") || die "PARTITION: $why"
account=${ACCOUNT:-}
why=$(conf_check account "$account") || die "ACCOUNT: $why"
read -r -a sbatch_args <<< "${SBATCH_ARGS:-}"
dry_run=${DRY_RUN:-0}
dry_run_hang=${DRY_RUN_HANG:-}
[ "$dry_run" = 0 ] || [ "$dry_run" = 1 ] || die "DRY_RUN='$dry_run': 1 or unset"
[ -z "$dry_run_hang" ] || [ "$dry_run" = 1 ] || die "DRY_RUN_HANG goes with DRY_RUN=1 (a test's task made to hang)"
why=$(conf_check dry_run_hang "$dry_run_hang") && { [ -z "$dry_run_hang" ] || [ "$dry_run_hang" -le "$n" ]; } ||
  die "DRY_RUN_HANG='$dry_run_hang': a shard of 1..$n"
mix_revisions=0
programs
sweep=("$@")
workdir=$PWD
why=$(conf_check workdir "$workdir") || die "the submit directory: $why"
dir=$(abs "${OUT:-results/$gpu}")
[[ $dir != *$'\n'* ]] || die "OUT: a line end in '$dir'"

run_id=$(scale_new_run_id "$dir") || die "no free run id in $dir"
parts=$dir/$run_id.parts
make_dir "$dir" || die "unable to create $dir"
mkdir "$parts" && made+=("$parts") && mkdir "$parts/logs" || die "unable to create $parts/logs"
snapshot

# the plan every shard follows, for the merge (and a check of the options)
scale_plan "$parts/$build/attnbench" "$n" "$parts" ${sweep[@]+"${sweep[@]}"} ||
  die "$attnbench --dry-run --shard I/$n ${sweep[*]} failed (above): bad sweep options?"
rows=$(($(wc -l < "$parts/plan.csv") - 1))
empty=$(awk -F, -v n="$n" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "shard") sc = i; next } { c[$sc]++ } END { e = 0; for (i = 1; i <= n; i++) if (!c[i "/" n]) e++; print e }' "$parts/plan.csv")
[ "$empty" = 0 ] || die "$n shards for a sweep of $rows rows leave $empty of them empty: fewer SHARDS"

conf_write "$parts" || die "$conf_error"
submit_jobs "1-$n%$max_parallel"
keep
say "run $run_id: $rows rows in $n shards$( [ "$dry_run" = 1 ] && echo ' (DRY_RUN: the shards print their rows, no GPU)')"
report "1-$n%$max_parallel" "$n"
