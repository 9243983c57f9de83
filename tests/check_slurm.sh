#!/bin/bash
# check_slurm.sh — make test's Slurm suite: bench/scale/slurm/ (submit.sh,
# shard.sbatch, merge.sbatch) on a real single-node Slurm that this script
# starts on localhost: munged, slurmctld and slurmd as root, with a MUNGE key,
# a slurm.conf, their state, spool, logs and pid files all under
# build/slurm-test/ (nothing in /etc is read or touched; SLURM_CONF points
# the commands at ours). No GPU, so GRES= (the node has no GPUs to give) and
# the tasks do not measure. It checks
#   - submit.sh's refusals (no GPU=, DRY_RUN_HANG without DRY_RUN, --out);
#   - DRY_RUN=1 (each task prints its shard's rows with attnbench --dry-run,
#     the merge job checks them against the plan): a run of 3 shards, at most
#     2 at once: the merge job completes and the tasks' rows are the
#     unsharded sweep's, each once, each in its shard;
#   - a run whose task 2 hangs and is cancelled (scancel): the merge waits for
#     it (afterany), then fails (exit 1) naming shard 2/3 and the rows it
#     lost, keeping the others; submit.sh --rerun: shard 2 again, whole;
#   - the measuring path, with tests/fake_shard.sh as attnbench (parts cut
#     from a committed H200 run) and the real build/merge: shard 2 dies after
#     two rows, the merge fails naming it and keeps 10 rows; --rerun resumes
#     shard 2's part and the merge is whole (the incomplete one moved aside);
#     a task given another GPU model (a made-up nvidia-smi) measures nothing;
#   - every daemon it started is gone at the end, also when a check failed
#     or the script was interrupted (trap on EXIT).
# Prints `slurm: N passed, N failed` (tests/run_suites.sh reads it), or
# `slurm: 0 passed, 0 failed, 1 skipped` with the reason when not root or
# Slurm/MUNGE are not installed (make slurm-deps installs them, as root).
#   usage: tests/check_slurm.sh    (from anywhere; about 45 s on 2 cores)
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
root=$PWD
t=$root/build/slurm-test
attnbench=$root/build/attnbench
submit=$root/bench/scale/slurm/submit.sh
sweep=(--grid tune --mode cold,graph)

skip() { echo "slurm: skipped: $*"; echo "slurm: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root: slurmd must run as root to start jobs (make test as root installs Slurm and runs this)"
missing=()
for p in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do command -v $p >/dev/null || missing+=("$p"); done
[ ${#missing[@]} = 0 ] || skip "not installed: ${missing[*]} (make slurm-deps, as root, installs slurm-wlm and munge)"

pass=0 fail=0 finished=
ok() { pass=$((pass + 1)); echo "  ok    $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL  $*"; }
# expect WHAT COMMAND...: one check
expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# wait_for SECONDS COMMAND...: polls every 0.3 s until COMMAND succeeds
wait_for() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.3; done
}
show_logs() { for f in "$t"/log/*.log; do echo "  --- last lines of $f"; tail -n 8 "$f" | sed 's/^/  | /'; done; }

# Nothing of Slurm's from our own environment (a CI job under Slurm, a
# user's SBATCH_PARTITION) may reach the test cluster's commands.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SINFO|SCANCEL)_')

for f in "$attnbench" "$root/build/merge"; do
  [ -x "$f" ] || { echo "check_slurm: $f is not built (make build/attnbench build/merge)"; echo "slurm: 0 passed, 1 failed"; exit 1; }
done

# -------------------------------------------------------------- the daemons
# pid_of FILE NAME: the pid in FILE when that process is alive and is NAME
pid_of() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$2" ] && echo "$pid"
}
daemons=(slurmd:"$t/slurmd.pid" slurmctld:"$t/slurmctld.pid" munged:"$t/munge/munged.pid")
stop_daemons() {
  local d name file pid left=()
  # the jobs first (a slurmstepd outlives its slurmd), when the controller answers
  if pid_of "$t/slurmctld.pid" slurmctld >/dev/null && timeout 5 scancel --quiet --partition=test 2>/dev/null; then
    wait_for 20 eval '[ -z "$(timeout 5 squeue -h -p test -o %i 2>&1)" ]' ||
      echo "  jobs left after 20 s: $(timeout 5 squeue -h -p test -o '%i %T' 2>&1 | tr '\n' ' ')"
  fi
  for d in "${daemons[@]}"; do
    name=${d%%:*} file=${d#*:}
    pid=$(pid_of "$file" "$name") || continue
    kill "$pid" 2>/dev/null
    wait_for 10 eval '! kill -0 '"$pid"' 2>/dev/null' || { kill -KILL "$pid" 2>/dev/null; left+=("${name}[$pid]"); }
  done
  [ ${#left[@]} = 0 ] || echo "  killed with SIGKILL after 10 s: ${left[*]}"
  for d in "${daemons[@]}"; do
    pid=$(pid_of "${d#*:}" "${d%%:*}") && left+=("${d%%:*}[$pid] still running")
  done
  # and no job script of this cluster's (they run from its spool directory)
  for pid in $(pgrep -f "$t/spool/"); do left+=("job process $pid: $(tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null)"); done
  [ ${#left[@]} = 0 ] || echo "  left: ${left[*]}"
  [ ${#left[@]} = 0 ]
}
finish() {
  local rc=$?
  trap - EXIT
  if [ -n "${started:-}" ]; then
    expect "every daemon this suite started (munged, slurmctld, slurmd) is stopped" stop_daemons
  fi
  [ -n "$finished" ] || bad "the suite ended early (exit $rc)"
  [ -n "$tmp_sock" ] && rm -rf "$tmp_sock"
  echo "slurm: $pass passed, $fail failed"
  [ "$fail" = 0 ] && exit 0
  [ "$rc" -gt 1 ] && exit "$rc" # interrupted: 130
  exit 1
}
# abort WHY: a check that the rest depends on failed
abort() { bad "$*"; show_logs; finished=1; exit 1; }
tmp_sock=
trap finish EXIT
trap 'echo "check_slurm: interrupted"; exit 130' INT TERM HUP

# a run of an earlier, interrupted suite: its daemons, by their pid files
export SLURM_CONF=$t/slurm.conf
started=1
stop_daemons >/dev/null 2>&1
rm -rf "$t"
mkdir -p "$t"/{munge,state,spool,log,results} || abort "unable to create $t"
chmod 755 "$t/munge" # munged: its socket's directory must be searchable by all

echo "== submit.sh's refusals"
out=$(SHARDS=2 GPU='' DRY_RUN=1 "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "no GPU=: refused, exit 2, saying GPU= is required" eval '[ $rc = 2 ] && grep -q "GPU=.*is required" <<<"$out"'
out=$(SHARDS=2 GPU=h200 DRY_RUN_HANG=1 "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "DRY_RUN_HANG without DRY_RUN=1: refused, exit 2" eval '[ $rc = 2 ] && grep -q "DRY_RUN_HANG goes with DRY_RUN=1" <<<"$out"'
out=$(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$t/results" "$submit" "${sweep[@]}" --out /tmp 2>&1); rc=$?
expect "an attnbench --out: refused, exit 2, pointing at OUT=" eval '[ $rc = 2 ] && grep -q "OUT=DIR" <<<"$out" && [ -z "$(ls "$t/results")" ]'

echo "== a single-node Slurm on localhost ($t)"
# two free ports for slurmctld and slurmd
port=
for p in $(seq 16817 2 16899); do
  (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && continue
  (exec 3<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null && continue
  port=$p; break
done
[ -n "$port" ] || abort "no two free ports in 16817..16900 for slurmctld and slurmd"
sock=$t/munge/munge.socket
if [ ${#sock} -gt 100 ]; then # a Unix socket's path has at most 107 bytes
  tmp_sock=$(mktemp -d /tmp/attnbench-munge.XXXXXX) && chmod 755 "$tmp_sock" && sock=$tmp_sock/munge.socket
fi
if command -v mungekey >/dev/null; then mungekey --create --keyfile="$t/munge/munge.key" || abort "mungekey could not create $t/munge/munge.key"
else dd if=/dev/urandom of="$t/munge/munge.key" bs=1024 count=1 status=none || abort "unable to write $t/munge/munge.key"; fi
chmod 600 "$t/munge/munge.key"
ncpu=$(($(nproc) >= 2 ? 2 : 1))
cat > "$t/slurm.conf" <<EOF
# written by tests/check_slurm.sh: a one-node cluster on localhost for its tests
ClusterName=attnbench-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/log/slurmctld.log
SlurmdLogFile=$t/log/slurmd.log
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=localhost CPUs=$ncpu State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=10 State=UP
EOF
munged --force --socket="$sock" --key-file="$t/munge/munge.key" --pid-file="$t/munge/munged.pid" \
  --log-file="$t/log/munged.log" --seed-file="$t/munge/munged.seed" || abort "munged did not start (log: $t/log/munged.log)"
slurmctld -i -f "$t/slurm.conf" || abort "slurmctld did not start (log: $t/log/slurmctld.log)"
slurmd -f "$t/slurm.conf" -N localhost || abort "slurmd did not start (log: $t/log/slurmd.log)"
node_idle() { [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; }
wait_for 30 node_idle || abort "the node did not become idle within 30 s (sinfo: $(sinfo -h -o '%T %E' 2>&1 | head -n 1))"
ok "munged, slurmctld and slurmd up; node localhost idle ($ncpu CPUs, ports $port and $((port + 1)))"

# ------------------------------------------------------------- job helpers
job_field() { scontrol -o show job "$1" 2>/dev/null | head -n 1 | grep -o " $2=[^ ]*" | cut -d= -f2-; }
job_ended() { case $(job_field "$1" JobState) in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) return 0 ;; esac; return 1; }
# submit_run NAME ENV... [-- SWEEP...]: submit.sh with those settings and
# that sweep (default: $sweep); sets array, merge, parts, run_csv
submit_run() {
  local log=$t/$1.submit.txt vars=() rc
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift || set -- "${sweep[@]}"
  env "${vars[@]}" "$submit" "$@" > "$log" 2>&1; rc=$?
  array=$(awk '/^array job:/ { print $3 }' "$log") merge=$(awk '/^merge job:/ { print $3 }' "$log")
  parts=$(awk '/^parts:/ { print $2 }' "$log") parts=${parts%/} run_csv=$(awk '/^run:/ { print $2 }' "$log")
  [ $rc = 0 ] && [[ $array =~ ^[0-9]+$ ]] && [[ $merge =~ ^[0-9]+$ ]] && [ -d "$parts" ] ||
    { sed 's/^/  | /' "$log"; return 1; }
}
# keys FILE...: the ten key columns of a plan-format file's rows, sorted
keys() { tail -q -n +2 "$@" | cut -d, -f1-10 | sort; }
all_keys=$t/sweep.keys
"$attnbench" --dry-run "${sweep[@]}" | keys /dev/stdin > "$all_keys"
rows=$(wc -l < "$all_keys")
# each_row_once UNION: the union's keys are the unsharded sweep's, each once
each_row_once() { [ -z "$(keys "$1" | uniq -d)" ] && diff <(keys "$1") "$all_keys" > /dev/null; }
each_in_its_shard() { # PARTS N: every row of shard-I/dry-run.csv says I/N, and no part is empty
  local i
  for i in $(seq 1 "$2"); do
    [ "$(tail -n +2 "$1/shard-$i/dry-run.csv" | wc -l)" -gt 0 ] || return 1
    [ -z "$(tail -n +2 "$1/shard-$i/dry-run.csv" | awk -F, -v s="$i/$2" '$11 != s')" ] || return 1
  done
}
merge_log_says() { grep -q -- "$1" "$parts/logs/merge.out"; }

echo "== a run of 3 shards, at most 2 at once (DRY_RUN=1, GRES=)"
base=(SHARDS=3 GPU=h200 GRES= DRY_RUN=1 PARTITION=test OUT="$t/results")
t0=$SECONDS
submit_run whole "${base[@]}" MAX_PARALLEL=2 || abort "submit.sh did not submit the run (above)"
ok "submit.sh: array job $array, merge job $merge, the run in $run_csv"
expect "the array is capped at 2 tasks at once (--array=1-3%2)" eval '[ "$(job_field "$array" ArrayTaskThrottle)" = 2 ]'
wait_for 60 job_ended "$merge" || abort "the merge job $merge had not ended after 60 s ($(job_field "$merge" JobState))"
expect "the merge job completed, exit 0 ($(job_field "$merge" JobState) $(job_field "$merge" ExitCode), $((SECONDS - t0)) s after submitting)" \
  eval '[ "$(job_field "$merge" JobState)" = COMPLETED ] && [ "$(job_field "$merge" ExitCode)" = 0:0 ]'
tasks_ok() {
  local i
  for i in 1 2 3; do
    [ "$(job_field "${array}_$i" JobState)" = COMPLETED ] && [ "$(cat "$parts/shard-$i.exit")" = 0 ] || return 1
  done
}
expect "each task completed and recorded exit 0" tasks_ok
expect "the merged rows are the unsharded sweep's ($rows rows), each once" each_row_once "${run_csv%.csv}.dry-run.csv"
expect "each task ran its own shard (rows I/3 in shard-I/), none empty" each_in_its_shard "$parts" 3
expect "the merge job's log says the run is whole" merge_log_says "whole: "

echo "== a run whose task 2 hangs and is cancelled (DRY_RUN_HANG=2)"
t0=$SECONDS
submit_run killed "${base[@]}" MAX_PARALLEL=3 DRY_RUN_HANG=2 || abort "submit.sh did not submit the run (above)"
ok "submit.sh: array job $array, merge job $merge"
half_written() { [ "$(job_field "${array}_2" JobState)" = RUNNING ] && [ "$(wc -l 2>/dev/null < "$parts/shard-2/dry-run.csv")" -gt 1 ] 2>/dev/null; }
wait_for 40 half_written || abort "task ${array}_2 was not running with its rows half written after 40 s"
others_done() { job_ended "${array}_1" && job_ended "${array}_3"; }
wait_for 40 others_done || abort "tasks 1 and 3 had not ended after 40 s"
expect "while task 2 runs, the merge job waits: PENDING (Dependency) on afterany:${array}_*" eval '
  [ "$(job_field "$merge" JobState)" = PENDING ] && [ "$(job_field "$merge" Reason)" = Dependency ] &&
  [[ "$(job_field "$merge" Dependency)" == "afterany:${array}_*"* ]]'
"$submit" --rerun "$parts" > "$t/early-rerun.txt" 2>&1; rc=$?
expect "submit.sh --rerun while the run's jobs are queued: refused, exit 2" eval '[ $rc = 2 ] && grep -q "still queued or running" "$t/early-rerun.txt"'
scancel "${array}_2" || bad "scancel ${array}_2 failed"
wait_for 40 job_ended "$merge" || abort "the merge job $merge had not ended 40 s after the cancel ($(job_field "$merge" JobState))"
expect "task 2 is CANCELLED, and recorded exit 143 (SIGTERM)" eval '[ "$(job_field "${array}_2" JobState)" = CANCELLED ] && [ "$(cat "$parts/shard-2.exit")" = 143 ]'
expect "the merge job ran anyway and FAILED, exit 1 ($(job_field "$merge" JobState) $(job_field "$merge" ExitCode), $((SECONDS - t0)) s)" \
  eval '[ "$(job_field "$merge" JobState)" = FAILED ] && [ "$(job_field "$merge" ExitCode)" = 1:0 ]'
planned2=$(awk -F, '$11 == "2/3"' "$parts/plan.csv" | wc -l)
lost=$((planned2 - planned2 / 2))
expect "the merge names shard 2/3: $lost of its $planned2 rows missing" merge_log_says "shard 2/3: $lost of its $planned2 rows missing"
expect "the merge names task 2's exit (143) and how to run it again (--rerun)" eval 'merge_log_says "shard 2/3: its task exited 143" && merge_log_says "submit.sh --rerun $parts"'
expect "the rows measured are kept: the other shards' and half of shard 2's ($((rows - lost)) rows)" \
  eval '[ "$(keys "${run_csv%.csv}.dry-run.csv" | wc -l)" = $((rows - lost)) ] && [ -z "$(keys "${run_csv%.csv}.dry-run.csv" | uniq -d)" ]'

echo "== submit.sh --rerun: the failed shard again, and a new merge"
t0=$SECONDS
"$submit" --rerun "$parts" > "$t/rerun.submit.txt" 2>&1; rc=$?
array=$(awk '/^array job:/ { print $3 }' "$t/rerun.submit.txt") merge=$(awk '/^merge job:/ { print $3 }' "$t/rerun.submit.txt")
[ $rc = 0 ] && [[ $merge =~ ^[0-9]+$ ]] || { sed 's/^/  | /' "$t/rerun.submit.txt"; abort "submit.sh --rerun did not submit"; }
expect "--rerun picks the shard that failed: 2 of 3, as array task ${array}_2" eval 'grep -q "shards 2 of 3 again" "$t/rerun.submit.txt" && [ -n "$(job_field "${array}_2" JobState)" ]'
wait_for 60 job_ended "$merge" || abort "the rerun's merge job $merge had not ended after 60 s"
expect "the new merge job completed, exit 0 ($((SECONDS - t0)) s)" eval '[ "$(job_field "$merge" JobState)" = COMPLETED ] && [ "$(job_field "$merge" ExitCode)" = 0:0 ]'
expect "the run is now whole: the sweep's $rows rows, each once" each_row_once "${run_csv%.csv}.dry-run.csv"

echo "== the measuring path with a stand-in attnbench (tests/fake_shard.sh) and build/merge"
# shard I's part is cut from a committed H200 run (tests/merge_parts.sh); a
# made-up nvidia-smi names the task's GPU; FAKE_FAIL=2: shard 2 dies after
# two rows, exit 2. The variables reach the tasks through sbatch's --export=ALL.
fake=$t/fake
mkdir -p "$fake" && printf '#!/bin/sh\necho "NVIDIA H200"\n' > "$fake/smi" && chmod +x "$fake/smi"
ATTN_BUILD=$root/build tests/merge_parts.sh "$fake/parts" || abort "tests/merge_parts.sh could not cut the parts"
fake_sweep=(--grid tune --variants flash_hopper,cudnn_sdpa --mode cold --warm-ms 500)
fake_env=(SHARDS=2 GPU=h200 GRES= PARTITION=test OUT="$t/results" ATTNBENCH="$root/tests/fake_shard.sh"
          REAL_ATTNBENCH="$attnbench" MERGE="$root/build/merge" FAKE_PARTS="$fake/parts" NVIDIA_SMI="$fake/smi")
t0=$SECONDS
submit_run fake "${fake_env[@]}" FAKE_FAIL=2 -- "${fake_sweep[@]}" || abort "submit.sh did not submit the run (above)"
wait_for 60 job_ended "$merge" || abort "the merge job $merge had not ended after 60 s ($(job_field "$merge" JobState))"
expect "shard 2 died: the merge FAILED, exit 1 ($((SECONDS - t0)) s), naming shard 2/2 (6 of its 8 rows missing, exit 2)" eval '
  [ "$(job_field "$merge" JobState)" = FAILED ] && [ "$(job_field "$merge" ExitCode)" = 1:0 ] &&
  merge_log_says "shard 2/2: 6 of its 8 rows missing" && merge_log_says "shard 2/2: its task exited 2"'
expect "build/merge kept the 10 rows measured in $run_csv" eval '[ "$(tail -n +2 "$run_csv" | wc -l)" = 10 ]'
t0=$SECONDS
env "${fake_env[@]}" "$submit" --rerun "$parts" > "$t/fake-rerun.submit.txt" 2>&1 # FAKE_FAIL unset now
merge=$(awk '/^merge job:/ { print $3 }' "$t/fake-rerun.submit.txt")
[[ $merge =~ ^[0-9]+$ ]] || { sed 's/^/  | /' "$t/fake-rerun.submit.txt"; abort "submit.sh --rerun did not submit"; }
wait_for 60 job_ended "$merge" || abort "the rerun's merge job $merge had not ended after 60 s"
expect "--rerun: shard 2 resumed its part (--resume), the merge completed ($((SECONDS - t0)) s): 16 rows" eval '
  [ "$(job_field "$merge" JobState)" = COMPLETED ] && grep -q "resuming $parts/shard-2/" "$parts/logs/shard-2.out" &&
  merge_log_says "merge: 16 rows from 2 parts" && [ "$(tail -n +2 "$run_csv" | wc -l)" = 16 ]'
expect "the earlier, incomplete merge was moved aside into the parts" eval '
  ls "$parts"/merge-*/"$(basename "$run_csv")" >/dev/null 2>&1 && merge_log_says "the earlier merge (6 rows missing) moved to"'
printf '#!/bin/sh\necho "NVIDIA H100 80GB HBM3"\n' > "$fake/smi"
submit_run wrong-gpu "${fake_env[@]}" -- "${fake_sweep[@]}" || abort "submit.sh did not submit the run (above)"
wait_for 60 job_ended "$merge" || abort "the merge job $merge had not ended after 60 s"
expect "a task on another GPU model (h100 for GPU=h200) measures nothing, exit 2; the merge fails (exit 2)" eval '
  grep -q "is .NVIDIA H100 80GB HBM3. (h100-80gb-hbm3), the run is results/h200/" "$parts/logs/shard-1.out" &&
  [ "$(cat "$parts/shard-1.exit")" = 2 ] && [ "$(job_field "$merge" ExitCode)" = 2:0 ] && merge_log_says "no shard wrote results"'

finished=1
