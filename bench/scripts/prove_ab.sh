#!/usr/bin/env bash
# prove_ab.sh — shows on a GPU that the interleaved A/B gate passes a revision
# measured against itself and catches injected slowdowns of a fused kernel.
#   A/A:  TRIALS A/B runs of BASE against the working tree (the same revision
#         when the tree is clean at BASE), flash_hopper, flash_mma, cudnn_sdpa
#         on bench/grids/ab.grid (the three points the A/A trials of the
#         committed proof ran), cold mode;
#   slow: the same with the candidate built with SLOWDOWN=flash_hopper:N for
#         each N of SLOWDOWNS (extra work after each call, calibrated to N% of
#         the call's own time in the steady state).
# Writes DIR/summary.csv (one line per trial and variant:
#   trial,kind,variant,slowdown_pct,rows,rows_flagged,rows_s_ge_1024,flagged_s_ge_1024,verdict)
# and DIR/runs/AB_ID/ (each A/B run: both CSVs, .env, gate.txt, ab.log; the
# samples files the gate read are packed into DIR/samples-TIME.tar.xz).
#   usage: bench/scripts/prove_ab.sh [BASE=HEAD] [TRIALS=20] [SLOWDOWNS="1 2 5"]
#   env:   PROOF_DIR (default results/<gpu>/ab-proof), WARM_MS (500),
#          BUDGET_MS (500), KINDS ("aa slow")
set -u -o pipefail
base_rev=${1:-HEAD}
trials=${2:-20}
slowdowns=${3:-"1 2 5"}
kinds=${KINDS:-"aa slow"}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
dir=${PROOF_DIR:-results/$gpu/ab-proof}
variants=flash_hopper,flash_mma,cudnn_sdpa
mkdir -p "$dir/runs"
make -j"$(nproc)" all >/dev/null || exit 1
base=$(bench/gate/ab_build.sh "$base_rev" "") || exit 1
summary=$dir/summary.csv
[ -f "$summary" ] || echo "trial,kind,variant,slowdown_pct,rows,rows_flagged,rows_s_ge_1024,flagged_s_ge_1024,verdict" > "$summary"

# trial N KIND PCT: one A/B run, one summary line per variant from its gate.
trial() {
    local n=$1 kind=$2 pct=$3 log
    log=$(mktemp)
    ./build/ab --base "$base" --cand build/attnbench --grid ab --variants $variants \
        --mode cold --warm-ms "${WARM_MS:-500}" --budget-ms "${BUDGET_MS:-500}" --quiet \
        --out "$dir/runs" >"$log" 2>&1
    local rc=$? run verdict
    run=$(sed -n 's/^ab: \([0-9TZ-]*\): base.*/\1/p' "$log" | head -n1)
    [ -n "$run" ] && cp "$log" "$dir/runs/$run/ab.log"
    verdict=$(sed -n 's/^regress: \([A-Z]*\).*/\1/p' "$log" | tail -n1)
    [ -n "$verdict" ] || { echo "prove_ab: trial $n ($kind $pct) failed (exit $rc):"; tail -n 5 "$log"; rm -f "$log"; return 1; }
    # gate.txt lines: VERDICT VARIANT DTYPE B= H= S= D= causal|full MODE ...
    for v in ${variants//,/ }; do
        awk -v v="$v" -v n="$n" -v kind="$kind" -v pct="$pct" -v verdict="$verdict" '
            $2 == v || ($1 == "FAIL" && $3 == v) {
                s = 0; for (i = 1; i <= NF; i++) if ($i ~ /^S=/) s = substr($i, 3) + 0
                flagged = ($1 != "pass" && $1 != "faster" && $1 != "new")
                rows++; fl += flagged; if (s >= 1024) { big++; bigfl += flagged }
            }
            END { printf "%d,%s,%s,%s,%d,%d,%d,%d,%s\n", n, kind, v, pct, rows, fl, big, bigfl, verdict }
        ' "$dir/runs/$run/gate.txt" >> "$summary"
    done
    printf 'trial %2d  %-4s %s%%  %s  (%s)\n' "$n" "$kind" "$pct" "$verdict" "$run"
    rm -f "$log"
}

n=$((($(wc -l < "$summary") - 1) / 3)) # trials already in the summary
if [[ " $kinds " == *" aa "* ]]; then
    for i in $(seq 1 "$trials"); do n=$((n + 1)); trial $n aa 0; done
fi
if [[ " $kinds " == *" slow "* ]]; then
    for pct in $slowdowns; do
        make -j"$(nproc)" SLOWDOWN=flash_hopper:"$pct" all >/dev/null || exit 1
        n=$((n + 1)); trial $n slow "$pct"
    done
    make -j"$(nproc)" all >/dev/null # leave an uninjected build behind
fi
# the samples, packed: the CSVs and gate reports stay readable beside them
pack=samples-$(date -u +%Y%m%dT%H%M%SZ).tar.xz
(cd "$dir/runs" && find . -name '*.samples.csv' | sort | tar -cJf "../$pack" -T - && find . -name '*.samples.csv' -delete)
cat "$summary"
