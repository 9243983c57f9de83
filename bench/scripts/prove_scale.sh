#!/usr/bin/env bash
# prove_scale.sh — shows on a box of N GPUs that one sweep spread over them
# (make bench GPUS=all) ends in about 1/N of one GPU's time and measures the
# same: the grid on GPU 0 alone, then on every GPU (bench/scale/multi_gpu.sh), back
# to back on the same machine, the same build, the same seed; then
#   - the merged run holds every planned row once (build/merge checked it);
#   - build/regress gates the N-GPU run against the 1-GPU run per row (the
#     same gate as any two runs of one session: it must pass);
#   - wall times and the speed-up into DIR/summary.txt.
#   usage: bench/scripts/prove_scale.sh [GRID=default]
#   env:   PROOF_DIR (default results/<gpu>/x<N>), MODE (cold,graph), WARM_MS (500)
# Exit: 0 when the merge is whole, the gate passes and the N-GPU wall time
# is at most SPEEDUP_LIMIT (default 0.55 for 2 GPUs: 1/N + 0.05) of one GPU's;
# 1 when a check fails (each named in summary.txt); 2 on a setup problem.
set -u -o pipefail
grid=${1:-default}
mode=${MODE:-cold,graph}
warm=${WARM_MS:-500}
say() { echo "prove_scale: $*" >&2; }
mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
n=${#gpus[@]}
[ "$n" -ge 2 ] || { say "needs at least 2 GPUs, nvidia-smi lists $n"; exit 2; }
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
dir=${PROOF_DIR:-results/$slug/x$n}
limit=${SPEEDUP_LIMIT:-$(awk -v n="$n" 'BEGIN { printf "%.3f", 1 / n + 0.05 }')}
mkdir -p "$dir/one" "$dir/all" || exit 2
make -j"$(nproc)" build/attnbench build/merge build/regress >/dev/null || { say "build failed"; exit 2; }
seed=$(( $(date +%s) * 7919 % 1000000007 ))
args=(--grid "$grid" --mode "$mode" --warm-ms "$warm" --peak --seed "$seed" --quiet)

# newest_run DIR: the run CSV a sweep just wrote there
newest_run() { ls -t "$1"/2*Z*.csv 2>/dev/null | grep -v '\.samples\.csv$' | head -n1; }

t0=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=${gpus[0]} build/attnbench "${args[@]}" --out "$dir/one" >"$dir/one.log" 2>&1
rc_one=$?
t1=$(date +%s.%N)
OUT=$dir/all ATTNBENCH=build/attnbench MERGE=build/merge bench/scale/multi_gpu.sh all "${args[@]}" >"$dir/all.log" 2>&1
rc_all=$?
t2=$(date +%s.%N)
one=$(newest_run "$dir/one") all=$(newest_run "$dir/all")
[ -n "$one" ] && [ -n "$all" ] || { say "a sweep wrote no run (logs in $dir)"; exit 2; }

build/regress --results "$all" --baseline "$one" >"$dir/gate.txt" 2>&1
rc_gate=$?
wall_one=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
wall_all=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }')
ratio=$(awk -v a="$wall_one" -v b="$wall_all" 'BEGIN { printf "%.3f", b / a }')
rows_one=$(($(wc -l <"$one") - 1)) rows_all=$(($(wc -l <"$all") - 1))
{
    echo "grid $grid, mode $mode, warm $warm ms, seed $seed, $n GPUs ($slug), revision $(git rev-parse --short=12 HEAD)"
    echo "one GPU:  $wall_one s, $rows_one rows, exit $rc_one ($one)"
    echo "$n GPUs:  $wall_all s, $rows_all rows, exit $rc_all ($all)"
    echo "wall time ratio $ratio (limit $limit), speed-up $(awk -v r="$ratio" 'BEGIN { printf "%.2f", 1 / r }')x"
    if [ "$rc_all" -ne 0 ] || [ "$rows_all" -ne "$rows_one" ]; then
        echo "FAIL: the merged run is not whole (multi_gpu.sh exit $rc_all, $rows_all rows against $rows_one)"
    fi
    if awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r > l) }'; then
        echo "FAIL: $n GPUs took $ratio of one GPU's time (limit $limit)"
    fi
    if [ "$rc_gate" -ne 0 ]; then
        echo "FAIL: the gate of the $n-GPU run against the 1-GPU run exited $rc_gate ($dir/gate.txt)"
    fi
    echo "gate: $(grep -E '^regress:' "$dir/gate.txt" | tail -n1)"
} | tee "$dir/summary.txt"
! grep -q '^FAIL' "$dir/summary.txt"
