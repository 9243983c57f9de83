#!/bin/bash
# sanitize_gpu.sh ATTNBENCH OUTDIR — compute-sanitizer's four tools over
# every variant at the small odd shapes of bench/grids/sanitize.grid (make
# sanitize-gpu): memcheck (out-of-bounds and misaligned accesses, leaks),
# racecheck (shared-memory hazards), synccheck (barrier misuse), initcheck
# (reads of uninitialised device memory). Each tool checks each variant in
# an attnbench run of its own (no watchdog, so that the sanitizer sees the
# one process; every row validated against the reference, then timed
# briefly in cold mode): a kernel that faults under one tool leaves the
# context unusable, and must not take the other variants' checks with it.
# The four tools run at the same time on the one GPU, each going through
# the variants in turn.
# SANITIZE_VARIANTS=a,b checks those variants only (default: every one).
# Writes OUTDIR/TOOL-VARIANT.log (the sanitizer's report), OUTDIR/TOOL-VARIANT.csv
# (the rows it checked) and OUTDIR/summary.txt (one line per tool and
# variant). Exit 0 when every check reports 0 errors and every row is ok,
# 1 otherwise, 2 on bad use.
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

# racecheck and synccheck track 64 mbarriers per block (flash_hopper uses
# more than the default, and the tool then says its results may be wrong)
declare -A extra=(
  [memcheck]="--leak-check full"
  [racecheck]="--racecheck-report all --num-cuda-barriers 64"
  [synccheck]="--num-cuda-barriers 64"
  [initcheck]=""
)
# the C variants: --list's table up to its first blank line (the Python peers' modules follow)
variants=${SANITIZE_VARIANTS:-$("$bin" --list | awk 'NR>1 && NF==0{exit} NR>1{print $1}')}
variants=${variants//,/ }
start=$(date +%s)
one_tool() { # TOOL: every variant in turn, one sanitizer run each
  local t=$1 v
  for v in $variants; do
    # shellcheck disable=SC2086
    "$cs" --tool "$t" ${extra[$t]} --error-exitcode 99 --print-limit 100 --log-file "$out/$t-$v.log" \
      "$bin" --variants "$v" --grid sanitize --mode cold --warm-ms 0 --budget-ms 1 --min-samples 3 \
      --no-trace --row-timeout 0 --seed 1 --quiet --out "$scratch/$t-$v" > "$scratch/$t-$v.stdout" 2>&1
    echo $? > "$scratch/$t-$v.rc"
    cp "$scratch/$t-$v"/*Z.csv "$out/$t-$v.csv" 2>/dev/null
  done
}
for t in $tools; do one_tool "$t" & done
wait
fail=0
: > "$out/summary.txt"
for t in $tools; do
  for v in $variants; do
    rc=$(cat "$scratch/$t-$v.rc")
    log="$out/$t-$v.log" csv="$out/$t-$v.csv"
    errors=$(sed -n 's/.*\(ERROR\|RACECHECK\) SUMMARY: \([0-9]*\) .*/\2/p' "$log" | tail -n 1)
    rows=$(awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="status") c=i; next} {n[$c]++} END{for(s in n) printf "%s %d ", s, n[s]}' "$csv" 2>/dev/null)
    line=$(printf '%-9s %-12s %s errors  rows: %s exit %s' "$t" "$v" "${errors:-?}" "${rows:-none,}" "$rc")
    echo "$line" | tee -a "$out/summary.txt"
    # a row skipped by supports() is no finding; error, oom and mismatch are
    if [ "${errors:-1}" != 0 ] || [ "$rc" != 0 ] || [ -z "$rows" ] || \
       awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="status") c=i; next} $c!="ok"&&$c!="skipped"{bad=1} END{exit !bad}' "$csv"; then
      fail=1
    fi
  done
done
{
  echo "grid: bench/grids/sanitize.grid ($(grep -vc '^#' "$(dirname "$0")/../grids/sanitize.grid") specs); variants: $(echo $variants)"
  echo "compute-sanitizer: $("$cs" --version | sed -n 's/.*Version \(.*\)/\1/p' | head -n 1)"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
  echo "wall: $(( $(date +%s) - start )) s, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} | tee -a "$out/summary.txt"
exit $fail
