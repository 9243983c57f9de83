#!/bin/bash
# check_slurm.sh — make test's Slurm suite: bench/scale/slurm/ (submit.sh,
# run_conf.sh, shard.sbatch, merge.sbatch) on a real single-node Slurm that
# this script starts on localhost: munged, slurmctld and slurmd as root.
# Their config, MUNGE key, sockets, spool, state, pid files and logs live in
# a short temporary directory (mktemp -d /tmp/sl.XXXXXX): a Unix socket's
# path holds at most 107 bytes, slurmstepd's lies in the spool, and
# slurm.conf takes no blank in a path. The runs go to build/slurm-test/, and
# the logs are copied to build/slurm-test/log/ at the end (nothing in /etc
# is read or touched; SLURM_CONF points the commands at ours). Every path the scripts under test
# see reaches the checkout through a link of over 100 bytes in that
# directory, as a checkout at a long path would, with blanks and a quote in
# its name (every path and value is quoted on its way to the jobs). No GPU,
# so GRES= (the node has no GPUs to give) and the tasks do not measure. It
# checks
#   - submit.sh's refusals before anything is created (no GPU=, DRY_RUN_HANG
#     without DRY_RUN, --out, --run-id, --extend); and, with a stand-in
#     sbatch, that a submission sbatch refuses leaves nothing behind (its
#     parts, its results directory; a submitted array job is cancelled) and
#     that a refused --rerun puts run.conf and the exit files back;
#   - run.conf read as data: lines a shell would run, unknown keys, bad
#     values, repeats, gaps refused with run.conf:LINE by submit.sh --rerun,
#     shard.sbatch and merge.sbatch, and nothing of them run;
#   - DRY_RUN=1 (each task prints its shard's rows with attnbench --dry-run,
#     the merge job checks them against the plan): a run of 3 shards, at most
#     2 at once: the merge job completes and the tasks' rows are the
#     unsharded sweep's, each once, each in its shard;
#   - a run whose task 2 hangs and is cancelled (scancel): the merge waits for
#     it (afterany), then fails (exit 1) naming shard 2/3 and the rows it
#     lost, keeping the others; submit.sh --rerun: shard 2 again, whole, with
#     the build the run was submitted with;
#   - the measuring path, with tests/fake_shard.sh as attnbench (parts cut
#     from a committed H200 run) and the real build/merge: the build is
#     replaced while the jobs are held, and the tasks still run the one
#     submitted (PARTS/build-1/); shard 2 dies after two rows, the merge
#     fails naming it and keeps the rows measured; --rerun with NEW_BUILD=1
#     (another revision) is refused by the merge, the earlier merge kept as
#     it was; with FORCE=1 too the run is whole, its revisions recorded, the
#     incomplete merge moved aside; a task given another GPU model (a
#     made-up nvidia-smi) measures nothing;
#   - a job Slurm itself cannot start (slurmd's errors, a requeued job) is
#     reported as the cluster's failure, at once, not as a job that waits;
#   - every daemon it started is gone at the end, also when a check failed
#     or the script was interrupted (trap on EXIT), and no process of its
#     cluster is left (pgrep).
# Prints `slurm: N passed, N failed` (tests/run_suites.sh reads it), or
# `slurm: 0 passed, 0 failed, 1 skipped` with the reason when not root or
# Slurm/MUNGE are not installed (make slurm-deps installs them, as root).
#   usage: tests/check_slurm.sh    (from anywhere; about 60 s on 2 cores)
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
checkout=$PWD

skip() { echo "slurm: skipped: $*"; echo "slurm: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root: slurmd must run as root to start jobs (make test as root installs Slurm and runs this)"
missing=()
for p in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do command -v "$p" >/dev/null || missing+=("$p"); done
[ ${#missing[@]} = 0 ] || skip "not installed: ${missing[*]} (make slurm-deps, as root, installs slurm-wlm and munge)"

pass=0 fail=0 finished='' cluster_up=''
ok() { pass=$((pass + 1)); echo "  ok    $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL  $*"; }
# expect WHAT COMMAND...: one check
expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# Nothing of Slurm's from our own environment (a CI job under Slurm, a
# user's SBATCH_PARTITION) may reach the test cluster's commands.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SINFO|SCANCEL)_')

for f in build/attnbench build/merge; do
  [ -x "$f" ] || { echo "check_slurm: $checkout/$f is not built (make build/attnbench build/merge)"; echo "slurm: 0 passed, 1 failed"; exit 1; }
done

# ------------------------------------------------------ the cluster's place
# tmp: the cluster's own files; root: the checkout, through a long link
tmp=$(mktemp -d /tmp/sl.XXXXXX) || { echo "check_slurm: mktemp -d /tmp/sl.XXXXXX failed"; echo "slurm: 0 passed, 1 failed"; exit 1; }
chmod 755 "$tmp" # munged: its socket's directory must be searchable by all
root="$tmp/a checkout's path as long as deep checkouts are (the paths under it are longer still)"
ln -s "$checkout" "$root"
cd "$root" || exit 2
t=$root/build/slurm-test
attnbench=$root/build/attnbench
submit=$root/bench/scale/slurm/submit.sh
sweep=(--grid tune --mode cold,graph)
export SLURM_CONF=$tmp/slurm.conf

# ----------------------------------------------------------------- helpers
# cluster_failure: the first sign, in the cluster's logs, that Slurm itself
# could not start a job (slurmd or slurmstepd failing, a job requeued)
cluster_failure() {
  [ -n "$cluster_up" ] || return 1
  grep -h -E 'fatal:|_forkexec_slurmstepd|too long|launch failed|Requeuing JobId' \
    "$tmp/log/slurmd.log" "$tmp/log/slurmctld.log" 2>/dev/null | head -n 1 | grep .
}
# wait_for SECONDS COMMAND...: polls every 0.3 s until COMMAND succeeds;
# once the cluster is up, stops the suite at once when Slurm cannot start jobs
wait_for() {
  local end=$((SECONDS + $1)) why
  shift
  until "$@"; do
    why=$(cluster_failure) && abort "the test cluster cannot start jobs (Slurm's own failure, not the scripts under test): $why"
    [ $SECONDS -lt $end ] || return 1
    sleep 0.3
  done
}
show_logs() { for f in "$tmp"/log/*.log; do [ -f "$f" ] && { echo "  --- last lines of $f"; tail -n 8 "$f" | sed 's/^/  | /'; }; done; }

# -------------------------------------------------------------- the daemons
# pid_of FILE NAME: the pid in FILE when that process is alive and is NAME
pid_of() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$2" ] && echo "$pid"
}
# cluster_pids DIR: the processes of the cluster whose files are in DIR:
# every one whose command line names DIR (the daemons, the job scripts in
# its spool) and the job steps (slurmstepd) whose environment does
cluster_pids() {
  local pid
  pgrep -f "$1/"
  for pid in $(pgrep -x slurmstepd); do
    tr '\0' '\n' < /proc/"$pid"/environ 2>/dev/null | grep -q -F "$1/" && echo "$pid"
  done
  return 0
}
# stop_daemons DIR: the jobs, then slurmd, slurmctld and munged of the
# cluster in DIR; fails naming what is still running
stop_daemons() {
  local dir=$1 d name file pid left=()
  local daemons=(slurmd:"$dir/slurmd.pid" slurmctld:"$dir/slurmctld.pid" munged:"$dir/munged.pid")
  # the jobs first (a slurmstepd outlives its slurmd), when the controller answers
  if pid_of "$dir/slurmctld.pid" slurmctld >/dev/null && timeout 5 scancel --quiet --partition=test 2>/dev/null; then
    cluster_up='' wait_for 20 eval '[ -z "$(timeout 5 squeue -h -p test -o %i 2>&1)" ]' ||
      echo "  jobs left after 20 s: $(timeout 5 squeue -h -p test -o '%i %T' 2>&1 | tr '\n' ' ')"
  fi
  for d in "${daemons[@]}"; do
    name=${d%%:*} file=${d#*:}
    pid=$(pid_of "$file" "$name") || continue
    kill "$pid" 2>/dev/null
    cluster_up='' wait_for 10 eval '! kill -0 '"$pid"' 2>/dev/null' || { kill -KILL "$pid" 2>/dev/null; left+=("${name}[$pid] needed SIGKILL"); }
  done
  # and nothing else of this cluster: a job script, a step, a daemon whose pid file was lost
  for pid in $(cluster_pids "$dir"); do
    [ "$pid" = $$ ] && continue
    left+=("$pid: $(tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null)")
    kill -KILL "$pid" 2>/dev/null
  done
  [ ${#left[@]} = 0 ] || echo "  left running: ${left[*]}"
  [ ${#left[@]} = 0 ]
}
finish() {
  local rc=$?
  trap - EXIT
  if [ -n "${started:-}" ]; then
    expect "every daemon and job process this suite started is stopped (pgrep finds none of $tmp)" stop_daemons "$tmp"
  fi
  [ -n "$finished" ] || bad "the suite ended early (exit $rc)"
  cp "$tmp"/log/*.log "$t/log/" 2>/dev/null
  rm -rf "$tmp"
  rm -f "$t/cluster-dir"
  echo "slurm: $pass passed, $fail failed"
  [ "$fail" = 0 ] && exit 0
  [ "$rc" -gt 1 ] && exit "$rc" # interrupted: 130
  exit 1
}
# abort WHY: a check that the rest depends on failed
abort() { bad "$*"; show_logs; finished=1; exit 1; }
trap finish EXIT
trap 'echo "check_slurm: interrupted"; exit 130' INT TERM HUP

# an earlier suite's cluster that was killed outright (SIGKILL: no trap ran),
# by the directory it recorded
earlier=$(cat "$t/cluster-dir" 2>/dev/null)
if [[ $earlier =~ ^/tmp/sl\.[A-Za-z0-9]{6}$ ]] && [ -d "$earlier" ]; then
  SLURM_CONF=$earlier/slurm.conf stop_daemons "$earlier" >/dev/null 2>&1
  rm -rf "$earlier"
fi
rm -rf "$t"
mkdir -p "$t"/{log,results} "$tmp"/{state,spool,log} || abort "unable to create $t and $tmp"
echo "$tmp" > "$t/cluster-dir"
started=1

# ------------------------------------------------ refusals, no cluster needed
echo "== submit.sh's refusals, before anything is created"
refused() { # OUTPUT RC TEXT: exit 2, one line saying TEXT, nothing in $t/results
  [ "$2" = 2 ] && [ "$(printf '%s\n' "$1" | wc -l)" = 1 ] && grep -q -- "$3" <<<"$1" && [ -z "$(ls -A "$t/results")" ]
}
out=$(SHARDS=2 GPU='' DRY_RUN=1 OUT="$t/results" "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "no GPU=: refused, exit 2, saying GPU= is required" refused "$out" $rc "GPU=.*is required"
out=$(SHARDS=2 GPU=h200 DRY_RUN_HANG=1 OUT="$t/results" "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "DRY_RUN_HANG without DRY_RUN=1: refused, exit 2" refused "$out" $rc "DRY_RUN_HANG goes with DRY_RUN=1"
out=$(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$t/results" "$submit" "${sweep[@]}" --out /tmp 2>&1); rc=$?
expect "an attnbench --out: refused, exit 2, pointing at OUT=" refused "$out" $rc "OUT=DIR"
out=$(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$t/results" "$submit" "${sweep[@]}" --run-id 20261201T000000Z 2>&1); rc=$?
expect "--run-id: refused up front, exit 2, one line" refused "$out" $rc "^submit: --run-id: a cluster run's id is its submission time"
out=$(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$t/results" "$submit" --extend 20261201T000000Z "${sweep[@]}" 2>&1); rc=$?
expect "--extend: refused up front, exit 2, one line" refused "$out" $rc "^submit: --extend: a cluster run is a new run"
out=$(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$t/results" "$submit" "${sweep[@]}" --frobnicate 2>&1); rc=$?
expect "an option a cluster run does not know: refused, exit 2" refused "$out" $rc "^submit: --frobnicate: not an option a cluster run's sweep takes"

# A stand-in sbatch (it gives job ids until call STUB_FAIL_AT, then refuses),
# scancel (records what it cancels) and squeue (no job queued): what a
# submission refused part-way leaves behind, without a cluster.
stub=$tmp/stub
mkdir -p "$stub/bin"
cat > "$stub/bin/sbatch" <<'EOF'
#!/bin/bash
n=$(($(cat "$STUB/calls" 2>/dev/null || echo 0) + 1)); echo "$n" > "$STUB/calls"
[ "$n" -lt "${STUB_FAIL_AT:-1000}" ] && { echo $((900 + n)); exit 0; }
echo "sbatch: error: the stand-in sbatch refuses call $n" >&2; exit 1
EOF
printf '#!/bin/bash\necho "$*" >> "$STUB/cancelled"\n' > "$stub/bin/scancel"
printf '#!/bin/bash\nexit 0\n' > "$stub/bin/squeue"
chmod +x "$stub/bin"/*
stubbed() { # FAIL_AT COMMAND...: COMMAND with the stand-ins, their records fresh
  local at=$1; shift
  rm -f "$stub/calls" "$stub/cancelled"
  env PATH="$stub/bin:$PATH" STUB="$stub" STUB_FAIL_AT="$at" "$@"
}
fresh=$t/results/fresh/h200 # no such directory yet: the submission makes it
stub_env=(SHARDS=2 GPU=h200 DRY_RUN=1 OUT="$fresh")
out=$(stubbed 1 "${stub_env[@]}" "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "sbatch refuses the array: exit 2, and the parts and the results directory it made are gone" eval '
  [ $rc = 2 ] && grep -q "sbatch refused the array job" <<<"$out" && [ ! -e "$t/results/fresh" ] && [ ! -e "$stub/cancelled" ]'
out=$(stubbed 2 "${stub_env[@]}" "$submit" "${sweep[@]}" 2>&1); rc=$?
expect "sbatch refuses the merge job: exit 2, the array job it submitted cancelled, nothing left" eval '
  [ $rc = 2 ] && grep -q "sbatch refused the merge job" <<<"$out" && [ "$(cat "$stub/cancelled")" = 901 ] && [ ! -e "$t/results/fresh" ]'
stubbed 1000 "${stub_env[@]}" "$submit" "${sweep[@]}" > "$t/stub.submit.txt" 2>&1; rc=$?
sparts=$(sed -n 's/^parts: *//p' "$t/stub.submit.txt") sparts=${sparts%/}
[ $rc = 0 ] && [ -r "$sparts/run.conf" ] || { sed 's/^/  | /' "$t/stub.submit.txt"; abort "submit.sh with the stand-in sbatch did not submit"; }
echo 0 > "$sparts/shard-1.exit"; echo 1 > "$sparts/shard-2.exit"
cp -p "$sparts/run.conf" "$t/run.conf.before"
out=$(stubbed 1 NEW_BUILD=1 FORCE=1 "$submit" --rerun "$sparts" 1,2 2>&1); rc=$?
expect "sbatch refuses a --rerun: exit 2; run.conf, the exit files put back, the new build removed" eval '
  [ $rc = 2 ] && cmp -s "$sparts/run.conf" "$t/run.conf.before" && [ "$(cat "$sparts/shard-1.exit")$(cat "$sparts/shard-2.exit")" = 01 ] &&
  [ ! -e "$sparts/build-2" ] && [ -z "$(ls "$sparts" | grep -E "\.saved$|\.tmp$")" ]'

echo "== run.conf is data: refused line by line, never run"
# conf_case NAME EDIT: the stand-in run's parts as the jobs read them (its
# run.conf, plan and build's scripts), run.conf edited by the sed script
# EDIT, in $t/results/conf-NAME/; sets case_parts
conf_case() {
  case_parts=$t/results/conf-$1/${sparts##*/}
  mkdir -p "$case_parts/build-1" && cp "$sparts/run.conf" "$sparts/plan.csv" "$case_parts/" &&
    cp "$sparts"/build-1/*.sh "$case_parts/build-1/" && sed -i -e "$2" "$case_parts/run.conf" ||
    abort "unable to copy $sparts into $case_parts"
}
pwned=$tmp/pwned # what a run.conf line run as code would create
line_of() { grep -n "^$1=" "$sparts/run.conf" | cut -d: -f1; }
lines=$(wc -l < "$sparts/run.conf")
# conf_refused NAME EDIT LINE SAYS: submit.sh --rerun refuses the edited
# run.conf, exit 2, naming run.conf:LINE and saying SAYS; nothing of it ran
conf_refused() {
  conf_case "$1" "$2"
  out=$(stubbed 1000 "$submit" --rerun "$case_parts" 2>&1); rc=$?
  says="$case_parts/run.conf:$3: $4"
  expect "submit.sh --rerun, $1: refused, exit 2, at run.conf:$3 ($4)" eval '
    [ $rc = 2 ] && grep -q -F -- "$says" <<<"$out" && [ ! -e "$pwned" ] &&
    [ ! -e "$case_parts/build-2" ] && [ ! -e "$stub/calls" ]'
}
conf_refused code "\$a x=\$(touch $pwned)" $((lines + 1)) "x: unknown key 'x'"
conf_refused code-in-a-value "s#^n=.*#n=\$(touch $pwned)#" "$(line_of n)" "n: '\$(touch $pwned)' is not a number of shards"
conf_refused backticks "s#^gpu=.*#gpu=\`touch $pwned\`#" "$(line_of gpu)" "gpu: "
conf_refused not-a-line "\$a touch $pwned" $((lines + 1)) "not a KEY=VALUE line"
conf_refused relative "s#^workdir=.*#workdir=relative/dir#" "$(line_of workdir)" "workdir: 'relative/dir' is not an absolute path"
conf_refused build "s#^build=.*#build=../../tmp#" "$(line_of build)" "build: '../../tmp' is not a build of the run"
conf_refused twice "\$a n=2" $((lines + 1)) "n set twice (also on line $(line_of n))"
conf_refused sweep "s#^sweep=--mode\$#sweep=--run-id#" "$(grep -n -x -e 'sweep=--mode' "$sparts/run.conf" | cut -d: -f1)" \
  "sweep: --run-id: a cluster run's id is its submission time"
# the run's id is its parts directory's name, and only a run id is one
not_a_run=$t/results/conf-name/'x$(echo PWNED >&2).parts'
mkdir -p "$t/results/conf-name" && cp -a "$sparts" "$not_a_run" || abort "unable to copy $sparts to $not_a_run"
out=$(stubbed 1000 "$submit" --rerun "$not_a_run" 2>&1); rc=$?
expect "submit.sh --rerun of a directory not named RUN_ID.parts: refused, exit 2, nothing run or submitted" eval '
  [ $rc = 2 ] && grep -q -F "$not_a_run: not a run'\''s parts directory (DIR/RUN_ID.parts)" <<<"$out" && ! grep -q -x PWNED <<<"$out" &&
  [ ! -e "$stub/calls" ]'
conf_case missing '/^gpu=/d'
out=$(stubbed 1000 "$submit" --rerun "$case_parts" 2>&1); rc=$?
expect "submit.sh --rerun, a key missing: refused, exit 2, naming it" eval '[ $rc = 2 ] && grep -q -F "run.conf: no '\''gpu='\'' line" <<<"$out"'
conf_case sbatch "\$a x=\$(touch $pwned)"
for job in shard merge; do
  out=$(SLURM_ARRAY_TASK_ID=1 bash "$root/bench/scale/slurm/$job.sbatch" "$case_parts" 2>&1); rc=$?
  expect "$job.sbatch reads run.conf as data too: refused, exit 2, at run.conf:$((lines + 1))" eval '
    [ $rc = 2 ] && grep -q -F "$case_parts/run.conf:$((lines + 1)): x: unknown key" <<<"$out" && [ ! -e "$pwned" ] &&
    [ ! -e "$case_parts/shard-1" ] && [ ! -e "$case_parts/shard-1.exit" ]'
done
rm -rf "$t"/results/*

# --------------------------------------------------------------- the cluster
echo "== a single-node Slurm on localhost ($tmp; the checkout as $root, ${#root} bytes)"
# two free ports for slurmctld and slurmd, from a place of this process's own
# (another suite may be starting its cluster)
port=
for k in $(seq 0 41); do
  p=$((16817 + 2 * (($$ + k) % 42)))
  (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && continue
  (exec 3<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null && continue
  port=$p; break
done
[ -n "$port" ] || abort "no two free ports in 16817..16900 for slurmctld and slurmd"
if command -v mungekey >/dev/null; then mungekey --create --keyfile="$tmp/munge.key" || abort "mungekey could not create $tmp/munge.key"
else dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none || abort "unable to write $tmp/munge.key"; fi
chmod 600 "$tmp/munge.key"
ncpu=$(($(nproc) >= 2 ? 2 : 1))
cat > "$SLURM_CONF" <<EOF
# written by tests/check_slurm.sh: a one-node cluster on localhost for its tests
ClusterName=attnbench-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.socket
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
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=localhost CPUs=$ncpu State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=10 State=UP
EOF
munged --force --socket="$tmp/munge.socket" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/log/munged.log" --seed-file="$tmp/munged.seed" || abort "munged did not start (log: $t/log/munged.log)"
slurmctld -i -f "$SLURM_CONF" || abort "slurmctld did not start (log: $t/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" -N localhost || abort "slurmd did not start (log: $t/log/slurmd.log)"
cluster_up=1
node_idle() { [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; }
wait_for 30 node_idle || abort "the node did not become idle within 30 s (sinfo: $(sinfo -h -o '%T %E' 2>&1 | head -n 1))"
ok "munged, slurmctld and slurmd up; node localhost idle ($ncpu CPUs, ports $port and $((port + 1)))"

# ------------------------------------------------------------- job helpers
job_field() { scontrol -o show job "$1" 2>/dev/null | head -n 1 | grep -o " $2=[^ ]*" | cut -d= -f2-; }
job_ended() { case $(job_field "$1" JobState) in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED) return 0 ;; esac; return 1; }
# read_submit LOG: sets array, merge, parts, run_csv from submit.sh's report
read_submit() {
  array=$(awk '/^array job:/ { print $3 }' "$1") merge=$(awk '/^merge job:/ { print $3 }' "$1")
  parts=$(sed -n 's/^parts: *//p' "$1") parts=${parts%/} run_csv=$(sed -n 's/^run: *//p' "$1")
  [[ $array =~ ^[0-9]+$ ]] && [[ $merge =~ ^[0-9]+$ ]] && [ -d "$parts" ]
}
# submit_run NAME ENV... [-- SWEEP...]: submit.sh with those settings and
# that sweep (default: $sweep); sets array, merge, parts, run_csv
submit_run() {
  local log=$t/$1.submit.txt vars=() rc
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift || set -- "${sweep[@]}"
  env "${vars[@]}" "$submit" "$@" > "$log" 2>&1; rc=$?
  [ $rc = 0 ] && read_submit "$log" || { sed 's/^/  | /' "$log"; return 1; }
}
# rerun NAME ENV... -- ARGS...: submit.sh --rerun with those settings; sets
# array, merge (parts stays); its output in $t/NAME.submit.txt
rerun() {
  local log=$t/$1.submit.txt vars=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env ${vars[@]+"${vars[@]}"} "$submit" --rerun "$parts" "$@" > "$log" 2>&1 && read_submit "$log" ||
    { sed 's/^/  | /' "$log"; return 1; }
}
# keys FILE...: the key columns (those before shard) of a plan-format file's rows, sorted
keys() { awk -F, -v OFS=, 'FNR == 1 { for (c = 1; c <= NF; c++) if ($c == "shard") n = c - 1; next }
                            { NF = n; print }' "$@" | sort; }
all_keys=$t/sweep.keys
"$attnbench" --dry-run "${sweep[@]}" | keys /dev/stdin > "$all_keys"
rows=$(wc -l < "$all_keys")
# each_row_once UNION: the union's keys are the unsharded sweep's, each once
each_row_once() { [ -z "$(keys "$1" | uniq -d)" ] && diff <(keys "$1") "$all_keys" > /dev/null; }
each_in_its_shard() { # PARTS N: every row of shard-I/dry-run.csv says I/N, and no part is empty
  local i
  for i in $(seq 1 "$2"); do
    [ "$(tail -n +2 "$1/shard-$i/dry-run.csv" | wc -l)" -gt 0 ] || return 1
    [ -z "$(awk -F, -v s="$i/$2" 'NR == 1 { for (j = 1; j <= NF; j++) if ($j == "shard") c = j; next }
             $c != s' "$1/shard-$i/dry-run.csv")" ] || return 1
  done
}
merge_log_says() { grep -q -F -- "$1" "$parts/logs/merge.out"; }
# planned PLAN SHARD: the rows PLAN holds for SHARD ("" every shard)
planned() { awk -F, -v s="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "shard") c = i; next } s == "" || $c == s { n++ } END { print n + 0 }' "$1"; }

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
planned2=$(planned "$parts/plan.csv" 2/3)
lost=$((planned2 - planned2 / 2))
expect "the merge names shard 2/3: $lost of its $planned2 rows missing" merge_log_says "shard 2/3: $lost of its $planned2 rows missing"
expect "the merge names task 2's exit (143) and how to run it again (--rerun)" eval 'merge_log_says "shard 2/3: its task exited 143" && merge_log_says "submit.sh --rerun $parts"'
expect "the rows measured are kept: the other shards' and half of shard 2's ($((rows - lost)) rows)" \
  eval '[ "$(keys "${run_csv%.csv}.dry-run.csv" | wc -l)" = $((rows - lost)) ] && [ -z "$(keys "${run_csv%.csv}.dry-run.csv" | uniq -d)" ]'

echo "== submit.sh --rerun: the failed shard again, and a new merge"
t0=$SECONDS
rerun rerun -- || abort "submit.sh --rerun did not submit"
expect "--rerun picks the shard that failed: 2 of 3, as array task ${array}_2" eval 'grep -q "shards 2 of 3 again" "$t/rerun.submit.txt" && [ -n "$(job_field "${array}_2" JobState)" ]'
expect "--rerun says the shards run the build the run was submitted with ($parts/build-1/)" \
  grep -q -F "the shards run $parts/build-1/attnbench, the build the run was submitted with" "$t/rerun.submit.txt"
wait_for 60 job_ended "$merge" || abort "the rerun's merge job $merge had not ended after 60 s"
expect "the new merge job completed, exit 0 ($((SECONDS - t0)) s)" eval '[ "$(job_field "$merge" JobState)" = COMPLETED ] && [ "$(job_field "$merge" ExitCode)" = 0:0 ]'
expect "the run is now whole: the sweep's $rows rows, each once" each_row_once "${run_csv%.csv}.dry-run.csv"

echo "== the measuring path with a stand-in attnbench (tests/fake_shard.sh) and build/merge"
# shard I's part is cut from a committed H200 run (tests/merge_parts.sh), for
# its sweep (sweep.args); a made-up nvidia-smi names the task's GPU;
# FAKE_FAIL=2: shard 2 dies after two rows, exit 2. The variables reach the
# tasks through sbatch's --export=ALL. The run's attnbench is $fake/attnbench,
# replaced by a build of another revision (FAKE_REV) while the run's jobs are
# held (SBATCH_HOLD=1: sbatch --hold).
fake=$t/fake
mkdir -p "$fake" && printf '#!/bin/sh\necho "NVIDIA H200"\n' > "$fake/smi" && chmod +x "$fake/smi"
ATTN_BUILD=$root/build tests/merge_parts.sh "$fake/parts" || abort "tests/merge_parts.sh could not cut the parts"
mapfile -t fake_sweep < "$fake/parts/sweep.args"
fake_rows=$(planned "$fake/parts/plan.csv" "") fake_rows2=$(planned "$fake/parts/plan.csv" 2/2)
rev=$(awk -F, 'NR == 2 { print $3 }' "$fake/parts/part-1.csv")
cp tests/fake_shard.sh "$fake/attnbench"
fake_env=(SHARDS=2 GPU=h200 GRES= PARTITION=test OUT="$t/results" ATTNBENCH="$fake/attnbench"
          REAL_ATTNBENCH="$attnbench" MERGE="$root/build/merge" FAKE_PARTS="$fake/parts" NVIDIA_SMI="$fake/smi")
# revs CSV: the revisions of its rows, sorted, each once
revs() { tail -n +2 "$1" | cut -d, -f3 | sort -u | tr '\n' ' '; }
t0=$SECONDS
submit_run fake "${fake_env[@]}" FAKE_FAIL=2 SBATCH_HOLD=1 -- "${fake_sweep[@]}" || abort "submit.sh did not submit the run (above)"
printf '#!/bin/sh\nFAKE_REV=0123456789ab exec %q "$@"\n' "$root/tests/fake_shard.sh" > "$fake/attnbench.new" && chmod +x "$fake/attnbench.new" && mv "$fake/attnbench.new" "$fake/attnbench"
scontrol release "$array" "$merge" || bad "scontrol release $array $merge failed"
wait_for 60 job_ended "$merge" || abort "the merge job $merge had not ended after 60 s ($(job_field "$merge" JobState))"
expect "shard 2 died: the merge FAILED, exit 1 ($((SECONDS - t0)) s), naming shard 2/2 ($((fake_rows2 - 2)) of its $fake_rows2 rows missing, exit 2)" eval '
  [ "$(job_field "$merge" JobState)" = FAILED ] && [ "$(job_field "$merge" ExitCode)" = 1:0 ] &&
  merge_log_says "shard 2/2: $((fake_rows2 - 2)) of its $fake_rows2 rows missing" && merge_log_says "shard 2/2: its task exited 2"'
kept=$((fake_rows - fake_rows2 + 2))
expect "build/merge kept the $kept rows measured in $run_csv" eval '[ "$(tail -n +2 "$run_csv" | wc -l)" = $kept ]'
expect "the build replaced after submitting is not run: every task ran $parts/build-1/attnbench, every row is revision $rev" eval '
  grep -q -F "running $parts/build-1/attnbench" "$parts/logs/shard-1.out" && grep -q -F "running $parts/build-1/attnbench" "$parts/logs/shard-2.out" &&
  [ "$(revs "$run_csv")" = "$rev " ]'
cp -p "$run_csv" "$t/incomplete.csv"
t0=$SECONDS
rerun fake-new-build "${fake_env[@]}" NEW_BUILD=1 -- 2 || abort "submit.sh --rerun did not submit"
wait_for 60 job_ended "$merge" || abort "the rerun's merge job $merge had not ended after 60 s"
expect "--rerun NEW_BUILD=1: shard 2 runs the new build (build-2); the merge refuses parts of two revisions, exit 2 ($((SECONDS - t0)) s)" eval '
  grep -q -F "NEW_BUILD=1: the shards run $fake/attnbench, copied into $parts/build-2/" "$t/fake-new-build.submit.txt" &&
  [ "$(job_field "$merge" ExitCode)" = 2:0 ] && merge_log_says "revision '\''0123456789ab'\'' where " &&
  merge_log_says "has '\''$rev'\'': one run is one revision (--mix-revisions merges them anyway)"'
expect "the refused merge wrote nothing: the earlier run is as it was, nothing moved aside" eval '
  cmp -s "$run_csv" "$t/incomplete.csv" && grep -qx "missing_rows=$((fake_rows2 - 2))" "${run_csv%.csv}.env" && ! ls -d "$parts"/merge-* >/dev/null 2>&1'
t0=$SECONDS
rerun fake-force "${fake_env[@]}" FORCE=1 -- 2 || abort "submit.sh --rerun did not submit"
wait_for 60 job_ended "$merge" || abort "the rerun's merge job $merge had not ended after 60 s"
expect "--rerun FORCE=1: shard 2 resumed its part (--resume --force) with build-2, the merge completed ($((SECONDS - t0)) s): $fake_rows rows" eval '
  [ "$(job_field "$merge" JobState)" = COMPLETED ] && grep -q "resuming $parts/shard-2/" "$parts/logs/shard-2.out" &&
  grep -q -F "running $parts/build-2/attnbench" "$parts/logs/shard-2.out" &&
  merge_log_says "merge: $fake_rows rows from 2 parts" && [ "$(tail -n +2 "$run_csv" | wc -l)" = "$fake_rows" ]'
expect "the run records both revisions and that mixing them was allowed (run.conf, the merged .env)" eval '
  grep -qx "mix_revisions=1" "$parts/run.conf" && grep -qx "mix_revisions=1" "${run_csv%.csv}.env" &&
  grep -qx "git_revs=$rev,0123456789ab" "${run_csv%.csv}.env" && grep -qx "part_2_git_rev=0123456789ab" "${run_csv%.csv}.env"'
expect "the earlier, incomplete merge was moved aside into the parts" eval '
  ls "$parts"/merge-*/"$(basename "$run_csv")" >/dev/null 2>&1 && merge_log_says "the earlier merge ($((fake_rows2 - 2)) rows missing) moved to"'
printf '#!/bin/sh\necho "NVIDIA H100 80GB HBM3"\n' > "$fake/smi"
submit_run wrong-gpu "${fake_env[@]}" -- "${fake_sweep[@]}" || abort "submit.sh did not submit the run (above)"
wait_for 60 job_ended "$merge" || abort "the merge job $merge had not ended after 60 s"
expect "a task on another GPU model (h100 for GPU=h200) measures nothing, exit 2; the merge fails (exit 2)" eval '
  grep -q "is .NVIDIA H100 80GB HBM3. (h100-80gb-hbm3), the run is results/h200/" "$parts/logs/shard-1.out" &&
  [ "$(cat "$parts/shard-1.exit")" = 2 ] && [ "$(job_field "$merge" ExitCode)" = 2:0 ] && merge_log_says "no shard wrote results"'

finished=1
