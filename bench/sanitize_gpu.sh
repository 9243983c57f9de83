#!/bin/bash
# sanitize_gpu.sh ATTNBENCH OUTDIR — compute-sanitizer's four tools over
# every variant at the small odd shapes of bench/grids/sanitize.grid (make
# sanitize-gpu). Each tool checks one attnbench run (no watchdog, so that
# the sanitizer sees the one process; each row validated against the
# reference, then timed briefly in cold mode): memcheck (out-of-bounds and
# misaligned accesses, leaks), racecheck (shared-memory hazards), synccheck
# (barrier misuse), initcheck (reads of uninitialised device memory). The
# tools run at the same time, one process each, on the one GPU.
# Writes OUTDIR/TOOL.log (the sanitizer's report), OUTDIR/TOOL.csv (the
# run's rows) and OUTDIR/summary.txt (one line per tool). Exit 0 when every
# tool reports 0 errors and every row is ok, 1 otherwise, 2 on bad use.
set -u
bin=${1:?usage: sanitize_gpu.sh ATTNBENCH OUTDIR}
out=${2:?usage: sanitize_gpu.sh ATTNBENCH OUTDIR}
tools="memcheck racecheck synccheck initcheck"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
[ -n "$cs" ] || { echo "sanitize-gpu: compute-sanitizer not found (CUDA toolkit's bin/)" >&2; exit 2; }
[ -x "$bin" ] || { echo "sanitize-gpu: $bin is not built" >&2; exit 2; }
mkdir -p "$out" || exit 2
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT

declare -A extra=(
  [memcheck]="--leak-check full"
  [racecheck]="--racecheck-report all"
  [synccheck]=""
  [initcheck]=""
)
start=$(date +%s)
for t in $tools; do
  # shellcheck disable=SC2086
  "$cs" --tool "$t" ${extra[$t]} --error-exitcode 99 --print-limit 100 --log-file "$out/$t.log" \
    "$bin" --grid sanitize --mode cold --warm-ms 0 --budget-ms 1 --min-samples 3 --no-trace \
    --row-timeout 0 --seed 1 --quiet --out "$scratch/$t" > "$scratch/$t.stdout" 2>&1 &
  echo $! > "$scratch/$t.pid"
done
fail=0
: > "$out/summary.txt"
for t in $tools; do
  wait "$(cat "$scratch/$t.pid")"; rc=$?
  cp "$scratch/$t"/*Z.csv "$out/$t.csv" 2>/dev/null
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$out/$t.log" | tail -n 1)
  rows=$(awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="status") c=i; next} {n[$c]++} END{for(s in n) printf "%s %d ", s, n[s]}' "$out/$t.csv" 2>/dev/null)
  line="$t: ${errors:-?} errors, rows: ${rows:-none}, exit $rc"
  echo "$line" | tee -a "$out/summary.txt"
  if [ "${errors:-1}" != 0 ] || [ $rc != 0 ] || ! grep -q . "$out/$t.csv" 2>/dev/null; then
    fail=1
    tail -n 5 "$scratch/$t.stdout" >&2
  fi
done
{
  echo "grid: bench/grids/sanitize.grid; variants: $("$bin" --list | awk 'NR>1{printf "%s ", $1}')"
  echo "compute-sanitizer: $("$cs" --version | sed -n 's/.*Version \(.*\)/\1/p' | head -n 1)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
  echo "wall: $(( $(date +%s) - start )) s, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} | tee -a "$out/summary.txt"
exit $fail
