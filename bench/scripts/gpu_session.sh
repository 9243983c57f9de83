#!/usr/bin/env bash
# gpu_session.sh — one GPU session in one command: build, GPU and CPU tests,
# then a benchmark run, every log and result copied to $OUT (default
# ./gpu-session). Meant for a GPU machine with no network: a Check library
# unpacked from Debian packages in DEBS (default .deps/) is used when the
# system has none. Each stage runs even if an earlier one failed; the exit
# status is the first failure's.
#   usage: bench/scripts/gpu_session.sh [GRID] [MODES] [extra attnbench args...]
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-session}
DEBS=${DEBS:-.deps}
GRID=${1:-default}
MODES=${2:-cold}
shift $(( $# < 2 ? $# : 2 ))
mkdir -p "$OUT"
status=0
stage() { # stage NAME CMD... : run, log to $OUT/NAME.log, remember the first failure
    local name=$1; shift
    echo "== $name: $*"
    "$@" 2>&1 | tee "$OUT/$name.log"
    local rc=${PIPESTATUS[0]}
    echo "== $name: exit $rc"
    [ "$rc" = 0 ] || [ "$status" != 0 ] || status=$rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv | tee "$OUT/gpu.txt"

make_args=(CUDA_ARCH=90 -k -j"$(nproc)")
if ! pkg-config --exists check 2>/dev/null && ls "$DEBS"/*.deb >/dev/null 2>&1; then
    prefix=/tmp/attnbench-check
    for deb in "$DEBS"/*.deb; do dpkg -x "$deb" "$prefix"; done
    lib=$prefix/usr/lib/x86_64-linux-gnu
    make_args+=("CHECK_CFLAGS=-I$prefix/usr/include -pthread"
                "CHECK_LIBS=-L$lib -lcheck_pic -lsubunit -lrt -lm -pthread")
    export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# From clean: the machine may keep build/ from an earlier session whose
# objects are newer than the sources copied in now.
make clean >/dev/null
stage build make "${make_args[@]}" all build/test_gpu build/test_cpu build/test_trace
stage test-gpu env CK_FORK=no ./build/test_gpu
stage test-cpu bash -c './build/test_trace && ./build/test_cpu'

# rows warmed as in `make bench` (WARM_MS, default 500); a later --warm-ms in "$@" wins
stage bench ./build/attnbench --peak --grid "$GRID" --mode "$MODES" --warm-ms "${WARM_MS:-500}" \
    --out "$OUT/results" "$@"
# bring the run's CSV and environment back beside the logs
for f in "$OUT"/results/*.csv "$OUT"/results/*.env; do [ -e "$f" ] && mv "$f" "$OUT/"; done
rmdir "$OUT/results" 2>/dev/null
exit $status
