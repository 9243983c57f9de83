#!/usr/bin/env bash
# prove_apart.sh — the same revision measured in two separate runs, hours (or
# machines) apart, gated as before the A/B runs existed: REV's attnbench runs
# GRID now (cold, the make bench protocol), and build/regress compares that run
# with the committed run OLD.csv of the same revision (summary rule, the
# `slowdown` limit). How many rows it flags is what a run-against-baseline
# gate cannot tell from the machine; the interleaved A/A pairs of
# prove_ab.sh are the contrast.
#   usage: bench/scripts/prove_apart.sh REV OLD.csv [GRID=tune] [VARIANTS=cudnn_sdpa,flash_hopper,flash_mma]
#   env:   PROOF_DIR (default results/<gpu>/ab-proof/apart)
set -u -o pipefail
rev=$1
old=$2
grid=${3:-tune}
variants=${4:-cudnn_sdpa,flash_hopper,flash_mma}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
dir=${PROOF_DIR:-results/$gpu/ab-proof/apart}
mkdir -p "$dir"
make -j"$(nproc)" all >/dev/null || exit 1
bin=$(bench/gate/ab_build.sh "$rev" "") || exit 1
"$bin" --quiet --grid "$grid" --variants "$variants" --mode cold --warm-ms 500 --out "$dir" || exit 1
new=$(ls "$dir"/2*Z.csv | grep -v samples | tail -n 1)
./build/regress --results "$new" --baseline "$old" --allow-missing > "$dir/gate.txt"
echo "regress exit $?" >> "$dir/gate.txt"
head -n 3 "$dir/gate.txt"; tail -n 2 "$dir/gate.txt"
