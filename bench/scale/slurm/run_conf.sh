# run_conf.sh — a cluster run's settings, PARTS/run.conf (PARTS is
# DIR/RUN_ID.parts): written by submit.sh, read by submit.sh --rerun,
# shard.sbatch and merge.sbatch as data, never run as code. Sourced by bash
# (after bench/scale/lib.sh); it defines functions and nothing else.
# shellcheck shell=bash disable=SC2034,SC2154 # it sets and reads the run's variables
#
# The file: one KEY=VALUE a line; '#' lines and blank lines are skipped. A
# value is the rest of its line as it stands: no quoting, no expansion.
# conf_scalars are each set once; sweep= (the sweep's attnbench options)
# and sbatch_args= (more sbatch options) are repeated, one word a line, in
# order. Every key must be known, every value pass conf_check and the sweep
# conf_check_sweep; anything else is refused with run.conf:LINE. The run's
# id and results directory are not in it: they are the parts directory's
# own name and place.
conf_scalars=(n gpu workdir build max_parallel gres partition account dry_run dry_run_hang mix_revisions)

# conf_check KEY VALUE: fails, with why on stdout, when VALUE is not a KEY.
conf_check() {
  local v=$2
  [[ $v != *[[:cntrl:]]* ]] || { echo "a control character in '$v'"; return 1; }
  case $1 in
    n) [[ $v =~ ^[1-9][0-9]{0,3}$ ]] && [ "$v" -le 1024 ] || { echo "'$v' is not a number of shards, 1..1024"; return 1; } ;;
    gpu) [[ $v =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "'$v' is not a GPU model as results/<gpu>/ names it (h200)"; return 1; } ;;
    workdir) [[ $v == /* ]] || { echo "'$v' is not an absolute path"; return 1; } ;;
    build) [[ $v =~ ^build-[1-9][0-9]*$ ]] || { echo "'$v' is not a build of the run (build-K)"; return 1; } ;;
    max_parallel) [[ $v =~ ^[1-9][0-9]{0,5}$ ]] || { echo "'$v' is not a number of tasks, 1 or more"; return 1; } ;;
    gres) [[ $v =~ ^[A-Za-z0-9_.:,=-]*$ ]] || { echo "'$v' is not a --gres (gpu:1, gpu:h200:1, or empty)"; return 1; } ;;
    partition|account) [[ $v =~ ^[A-Za-z0-9_.,-]*$ ]] || { echo "'$v' is not a Slurm $1 name"; return 1; } ;;
    dry_run|mix_revisions) [[ $v =~ ^[01]$ ]] || { echo "'$v' is not 0 or 1"; return 1; } ;;
    dry_run_hang) [[ $v =~ ^([1-9][0-9]{0,3})?$ ]] || { echo "'$v' is not a shard number or empty"; return 1; } ;;
    sbatch_args) [[ $v =~ ^[^[:space:]]+$ ]] || { echo "'$v' is not one word"; return 1; } ;;
    sweep) ;; # a word of the sweep: conf_check_sweep checks them together
    *) echo "unknown key '$1'"; return 1 ;;
  esac
}

# conf_check_sweep WORDS...: the sweep's attnbench options, checked as a
# cluster run takes them: what each task needs of attnbench's sweep options,
# none that submit.sh sets itself or that would contradict the shards. Fails
# at the first word it refuses, with conf_why set to one line and conf_bad
# to that word's index (from 0).
conf_check_sweep() {
  local k=0 why
  conf_why='' conf_bad=''
  while [ $# -gt 0 ]; do
    conf_bad=$k
    why=$(conf_check sweep "$1") || { conf_why="the sweep option $why"; return 1; }
    case $1 in
      --grid|--point|--variants|--mode|--grids-dir|--budget-ms|--noise|--min-samples|--warm-ms|--seed|--row-timeout)
        [ $# -ge 2 ] || { conf_why="$1: needs a value"; return 1; }
        conf_bad=$((k + 1))
        why=$(conf_check sweep "$2") || { conf_why="the value of $1: $why"; return 1; }
        shift; k=$((k + 1)) ;;
      --peak|--no-trace|--quiet) ;;
      --out) conf_why="--out: OUT=DIR sets the results directory (the parts go to DIR/RUN_ID.parts/)" ;;
      --shard|--dry-run) conf_why="$1: submit.sh gives each task its shard (SHARDS=N; DRY_RUN=1 for a dry run)" ;;
      --resume|--force) conf_why="$1: a cluster run's shards resume with bench/scale/slurm/submit.sh --rerun PARTS_DIR (FORCE=1)" ;;
      --run-id) conf_why="--run-id: a cluster run's id is its submission time (DIR/RUN_ID.parts/), and each shard's part is a run of its own" ;;
      --extend) conf_why="--extend: a cluster run is a new run; its shards run again with bench/scale/slurm/submit.sh --rerun PARTS_DIR" ;;
      --trace) conf_why="--trace: the shards would share one ops.txt; trace on one GPU (make trace)" ;;
      --worker|--supervised-fd|--list|--help|-h) conf_why="$1: not an option of a sweep" ;;
      -*) conf_why="$1: not an option a cluster run's sweep takes (bench/scale/slurm/README.md lists them)" ;;
      *) conf_why="'$1': not an option (a sweep's words are attnbench options and their values)" ;;
    esac
    [ -z "$conf_why" ] || return 1
    shift; k=$((k + 1))
  done
  conf_bad=''
}

# conf_read PARTS: PARTS/run.conf into the variables its keys name, and
# run_id and dir from PARTS's own path. Fails with conf_error set to one
# line, "FILE:LINE: why" where a line is at fault.
conf_read() {
  local parts=$1 file=$1/run.conf line key value why k lineno=0
  local -A seen=()
  local name=${parts##*/}
  run_id=${name%.parts} dir=${parts%/*}
  if [[ $name != *.parts ]] || ! scale_run_id_ok "$run_id"; then
    conf_error="$parts: not a run's parts directory (DIR/RUN_ID.parts)"; return 1
  fi
  [ -r "$file" ] || { conf_error="$file: not readable (not a run's parts directory, or a filesystem this host does not share)"; return 1; }
  sweep=() sbatch_args=()
  local sweep_lines=()
  while IFS= read -r line; do
    lineno=$((lineno + 1))
    [[ -z $line || $line == \#* ]] && continue
    [[ $line =~ ^([a-z_]+)=(.*)$ ]] || { conf_error="$file:$lineno: not a KEY=VALUE line"; return 1; }
    key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    why=$(conf_check "$key" "$value") || { conf_error="$file:$lineno: $key: $why"; return 1; }
    case $key in
      sweep) sweep+=("$value") sweep_lines+=("$lineno") ;;
      sbatch_args) sbatch_args+=("$value") ;;
      *) [ -z "${seen[$key]:-}" ] || { conf_error="$file:$lineno: $key set twice (also on line ${seen[$key]})"; return 1; }
         seen[$key]=$lineno
         printf -v "$key" '%s' "$value" ;;
    esac
  done < "$file"
  [ -z "$line" ] || { conf_error="$file:$((lineno + 1)): a torn last line (no line end)"; return 1; }
  for k in "${conf_scalars[@]}"; do
    [ -n "${seen[$k]:-}" ] || { conf_error="$file: no '$k=' line"; return 1; }
  done
  conf_check_sweep ${sweep[@]+"${sweep[@]}"} || { conf_error="$file:${sweep_lines[$conf_bad]:-$lineno}: sweep: $conf_why"; return 1; }
  if [ -n "$dry_run_hang" ] && { [ "$dry_run" != 1 ] || [ "$dry_run_hang" -gt "$n" ]; }; then
    conf_error="$file:${seen[dry_run_hang]}: dry_run_hang: '$dry_run_hang' is not a shard of 1..$n with dry_run=1"; return 1
  fi
  return 0
}

# conf_write PARTS: PARTS/run.conf from the variables, each checked as
# conf_read will check it; written whole or not at all. Fails with
# conf_error set.
conf_write() {
  local file=$1/run.conf k v why
  for k in "${conf_scalars[@]}"; do
    why=$(conf_check "$k" "${!k}") || { conf_error="run.conf: $k: $why"; return 1; }
  done
  conf_check_sweep ${sweep[@]+"${sweep[@]}"} || { conf_error="run.conf: $conf_why"; return 1; }
  for v in ${sbatch_args[@]+"${sbatch_args[@]}"}; do
    why=$(conf_check sbatch_args "$v") || { conf_error="run.conf: SBATCH_ARGS: $why"; return 1; }
  done
  {
    echo "# the settings of run $run_id, written by bench/scale/slurm/submit.sh: one KEY=VALUE a line, read as data"
    for k in "${conf_scalars[@]}"; do printf '%s=%s\n' "$k" "${!k}"; done
    for v in ${sweep[@]+"${sweep[@]}"}; do printf 'sweep=%s\n' "$v"; done
    for v in ${sbatch_args[@]+"${sbatch_args[@]}"}; do printf 'sbatch_args=%s\n' "$v"; done
  } > "$file.tmp" && mv -f "$file.tmp" "$file" || { rm -f "$file.tmp"; conf_error="unable to write $file"; return 1; }
}
