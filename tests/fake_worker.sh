#!/usr/bin/env bash
# fake_worker.sh — a stand-in for `attnbench --worker` (bench/gate/worker.c) in the
# CPU tests of build/ab (tests/check_ab.c): it speaks the A/B protocol of
# bench/gate/ab_proto.h on stdin/stdout without a GPU and writes plausible run
# files (RUN_ID.csv with the columns of common/results.c, RUN_ID.samples.csv,
# RUN_ID.env) that common/results_read.c and the gate accept.
#
# Arguments (--worker --warm-ms ...) are ignored but --sustain (its rows are
# then sustained, as the driver's load says). Behaviour comes from the
# environment; since build/ab gives both of its workers the same environment,
# each setting is looked up first with the worker's side appended
# (FAKE_FACTOR_cand), then plain (FAKE_FACTOR). The side is FAKE_SIDE, else
# the script's own name up to its first '_' (a link named cand_worker → cand).
#   FAKE_REV     git rev in the greeting and the rows (default: fake)
#   FAKE_GPU     GPU slug in the greeting and the rows (default: fakegpu)
#   FAKE_PROTO   protocol version in the greeting (default: 3); below 2 it
#                knows neither `reopen` nor `fail`, as such a build does not;
#                from 3 it knows `load`, `settled` and a compare run's `open`
#                (below 3 it stands for a build from before the init key);
#                from 7 its greeting says its cold flush: --flush's value,
#                else FAKE_FLUSH (default memset)
#   FAKE_MHZ FAKE_WATTS  what `load` reads (default: 1755 MHz, 690 W)
#   FAKE_MS      base time of a sample in ms (default: 1.0)
#   FAKE_FACTOR  multiplies FAKE_MS (default: 1)
#   FAKE_VFACTOR_NAME  multiplies it further while variant NAME is open (a
#                compare run's workers share one script and one environment)
#   FAKE_ABSENT  variants (comma-separated) this "build" lacks: `row` → absent
#   FAKE_SKIP    variants it skips: `row` → done, one skipped row per mode
#   FAKE_HANG    WHEN: stop answering (a hung kernel) at WHEN
#   FAKE_DIE     WHEN: exit without answering at WHEN (status FAKE_DIE_STATUS,
#                default 3; FAKE_DIE_SIGNAL=N: killed by signal N instead)
#   FAKE_LOG     file to which every command is appended as "SIDE COMMAND"
#                (FAKE_LOG_VARIANT=1: "VARIANT COMMAND", the open variant or -)
#   FAKE_ARGV    file to which the worker's arguments are appended, one line
#                "SIDE ARG ARG ..." a worker started
# WHEN is one of
#   start        before the greeting
#   reopen       at a `reopen` (a fresh worker that cannot take over)
#   block:K      at the K-th `block` this process is sent
#   row:N        at the first `block` of the N-th row of its run, counted
#                over the rows its CSV holds (a fresh worker that reopens
#                the run after that row was written does not stop there again)
#   setup        at every `row` (every variant's setup: a wedged GPU)
#   variant:NAME at `row NAME` (its setup), every time
# Samples cycle deterministically through ms · factor · (1, 1.001, 0.999).
set -u

SIDE=${FAKE_SIDE:-}
if [[ -z $SIDE ]]; then
    SIDE=$(basename -- "$0")
    SIDE=${SIDE%%_*}
    SIDE=${SIDE%%.*}
fi
[[ $SIDE =~ ^[A-Za-z0-9]+$ ]] || SIDE=fake

# setting NAME DEFAULT: NAME_SIDE if set, else NAME if set, else DEFAULT.
setting() {
    local per="$1_$SIDE" plain="$1"
    if [[ -n ${!per+x} ]]; then printf '%s' "${!per}"
    elif [[ -n ${!plain+x} ]]; then printf '%s' "${!plain}"
    else printf '%s' "$2"
    fi
}

REV=$(setting FAKE_REV fake)
PROTO=$(setting FAKE_PROTO 3)
MS=$(setting FAKE_MS 1.0)
FACTOR=$(setting FAKE_FACTOR 1)
ABSENT=$(setting FAKE_ABSENT "")
SKIP=$(setting FAKE_SKIP "")
HANG=$(setting FAKE_HANG "")
DIE=$(setting FAKE_DIE "")
DIE_STATUS=$(setting FAKE_DIE_STATUS 3)
DIE_SIGNAL=$(setting FAKE_DIE_SIGNAL "")
LOG=$(setting FAKE_LOG "")
MHZ=$(setting FAKE_MHZ 1755)
WATTS=$(setting FAKE_WATTS 690)
GPU=$(setting FAKE_GPU fakegpu)
REGIME=burst
for arg in "$@"; do [[ $arg == --sustain ]] && REGIME=sustained; done
# its cold flush, said in the greeting from protocol 7: --flush's, else FAKE_FLUSH's
FLUSH=$(setting FAKE_FLUSH memset)
prev=
for arg in "$@"; do [[ $prev == --flush ]] && FLUSH=$arg; prev=$arg; done
ARGV_LOG=$(setting FAKE_ARGV "")
[[ -z $ARGV_LOG ]] || printf '%s %s\n' "$SIDE" "$*" >>"$ARGV_LOG"

# The results columns, in file order, from common/schema.h (RESULT_COLUMNS);
# the samples file's: the key (variant .. regime), sample, ms.
HERE=$(dirname -- "$(readlink -f -- "$0")")
COLUMNS=$(sed -n '/define RESULT_COLUMNS/,/^$/p' "$HERE/../common/schema.h" | grep -o 'X([A-Z_0-9]*, "[a-z_0-9]*")' |
  sed 's/.*"\(.*\)")/\1/' | paste -sd, -)
[[ -n $COLUMNS ]] || { echo "fake_worker: no columns in $HERE/../common/schema.h" >&2; exit 2; }
KEY_COLUMNS=$(echo "$COLUMNS" | sed 's/.*\(variant,.*,regime\).*/\1/')

# The three sample values a block cycles through, at FACTOR times F.
set_cycle() {
    read -r -a CYCLE < <(awk -v ms="$MS" -v f="$FACTOR" -v g="${1:-1}" \
        'BEGIN { t = ms * f * g; if (!(t > 0)) t = 1; printf "%.9g %.9g %.9g\n", t, t * 1.001, t * 0.999 }')
}
set_cycle 1

# in_list NAME LIST: LIST holds NAME (comma- or space-separated).
in_list() {
    local item
    for item in ${2//,/ }; do [[ $item == "$1" ]] && return 0; done
    return 1
}

reply() { printf '%s\n' "$*"; }

fatal() {
    reply "fatal $*"
    echo "fake_worker ($SIDE): $*" >&2
    exit 2
}

now() { TZ=UTC printf '%(%Y-%m-%dT%H:%M:%SZ)T' -1; }

# stop_at WHEN: hang or die here when FAKE_HANG or FAKE_DIE names WHEN.
stop_at() {
    if [[ -n $HANG && $HANG == "$1" ]]; then
        echo "fake_worker ($SIDE): hanging at $1 (FAKE_HANG)" >&2
        exec sleep 3600
    fi
    if [[ -n $DIE && $DIE == "$1" ]]; then
        echo "fake_worker ($SIDE): dying at $1 (FAKE_DIE)" >&2
        [[ -n $DIE_SIGNAL ]] && kill -s "$DIE_SIGNAL" $$
        exit "$DIE_STATUS"
    fi
}

# One CSV field: quoted when it holds a comma or a quote.
field() {
    if [[ $1 == *[,\"]* ]]; then printf '"%s"' "${1//\"/\"\"}"; else printf '%s' "$1"; fi
}

CSV="" SAMPLES="" RUN_ID="" AB_RUN="" COMPARE_RUN=""
B="" H="" S="" D="" C="" DT="" INIT=""
SETTLED="" SETTLE_S="" SETTLED_MHZ="" SETTLED_WATTS=""
VARIANT="" MODE=""
BLOCKS=0 CYCLE_I=0
TAKEN=() # this mode's samples

# key MODE [VARIANT]: the row key, in the order both files give it.
key() { printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,,0,%s,%s,%s,%s' "${2:-$VARIANT}" "$DT" "$B" "$H" "$H" "$S" "$S" "$D" "$C" "$INIT" "$PASS" "$1" "$REGIME"; }

# Rows in the run's CSV.
rows_written() { echo $(($(wc -l <"$CSV") - 1)); }

# One line of the results CSV, its fields by column name in COLUMNS' order.
# row MODE STATUS REASON SAMPLES MEDIAN MIN P10 P90 MEAN NOISE CONVERGED CALLS [VARIANT]
row() {
    local mode=$1 variant=${13:-$VARIANT} c line=""
    local -A f=([run_id]=$RUN_ID [timestamp]=$(now) [git_rev]=$REV [gpu]=$GPU [status]=$2 [reason]=$3
        [samples]=$4 [ms_median]=$5 [ms_min]=$6 [ms_p10]=$7 [ms_p90]=$8 [ms_mean]=$9 [noise_rel]=${10}
        [converged]=${11} [calls_per_sample]=${12} [ab_run]=$AB_RUN [compare_run]=$COMPARE_RUN)
    [[ $2 == ok ]] && f[impl]="fake $variant"
    if [[ $2 == ok && $REGIME == sustained ]]; then
        f[settled]=$SETTLED f[settle_s]=$SETTLE_S f[settled_mhz]=$SETTLED_MHZ f[settled_watts]=$SETTLED_WATTS
    fi
    IFS=, read -r -a k <<<"$(key "$mode" "$variant")"
    IFS=, read -r -a names <<<"$KEY_COLUMNS"
    for c in "${!names[@]}"; do f[${names[c]}]=${k[c]}; done
    IFS=, read -r -a names <<<"$COLUMNS"
    local first=1
    for c in "${names[@]}"; do
        ((first)) || line+=,
        first=0
        line+=$(field "${f[$c]:-}")
    done
    printf '%s\n' "$line"
}

# open_as RUN KIND: the run this worker writes is an A/B side's (KIND "")
# or a compare run's (KIND compare, protocol 3).
open_as() {
    if [[ -z $2 ]]; then AB_RUN=$1; return; fi
    [[ $2 == compare ]] && ((PROTO >= 3)) || fatal "open: expected DIR RUN_ID AB_RUN, once"
    COMPARE_RUN=$1
}

cmd_open() {
    local dir=${1:-} run_id=${2:-} ab_run=${3:-}
    [[ -n $ab_run && -z $CSV ]] || fatal "open: expected DIR RUN_ID AB_RUN, once"
    mkdir -p -- "$dir" || fatal "open: unable to create '$dir'"
    RUN_ID=$run_id
    open_as "$ab_run" "${4:-}"
    CSV="$dir/$run_id.csv" SAMPLES="$dir/$run_id.samples.csv"
    [[ -e $CSV || -e $SAMPLES ]] && fatal "'$CSV' exists already"
    printf '%s\n' "$COLUMNS" >"$CSV" || fatal "unable to create '$CSV'"
    printf '%s\n' "$KEY_COLUMNS,sample,ms" >"$SAMPLES" || fatal "unable to create '$SAMPLES'"
    printf 'schema=1\nrun_id=%s\ntimestamp=%s\ngit_rev=%s\nhost=%s\ncommand=%s\ngpu_name=%s\nab_run=%s\n' \
        "$RUN_ID" "$(now)" "$REV" "$(hostname 2>/dev/null || echo fakehost)" "$0 --worker" "$GPU" "$AB_RUN" \
        >"$dir/$run_id.env"
    reply "ok $CSV"
}

cmd_reopen() {
    local dir=${1:-} run_id=${2:-} ab_run=${3:-}
    [[ -n $ab_run && -z $CSV ]] || fatal "reopen: expected DIR RUN_ID AB_RUN, once"
    stop_at reopen
    RUN_ID=$run_id
    open_as "$ab_run" "${4:-}"
    CSV="$dir/$run_id.csv" SAMPLES="$dir/$run_id.samples.csv"
    # a run the driver rewrote (a resumed compare run) has its samples gzipped, as attnbench writes them
    if [[ -f $SAMPLES.gz && ! -f $SAMPLES ]]; then gzip -dc "$SAMPLES.gz" > "$SAMPLES" && rm "$SAMPLES.gz"; fi
    [[ -f $CSV && -f $SAMPLES ]] || fatal "reopen: no run '$CSV'"
    reply "ok $CSV"
}

cmd_fail() {
    local variant=${1:-} mode=${2:-}
    shift 2
    local reason="$*"
    [[ -n $reason && -n $CSV && -n $B ]] || fatal "fail: expected VARIANT MODE REASON, after open and point"
    if [[ -n $MODE ]]; then
        [[ $variant == "$VARIANT" && $mode == "$MODE" ]] || fatal "fail: $variant $mode while $VARIANT $MODE is being timed"
        MODE="" TAKEN=()
    fi
    if ! grep -q -F ",$(key "$mode" "$variant")," "$CSV"; then
        row "$mode" error "$reason" "" "" "" "" "" "" "" "" "" "$variant" >>"$CSV"
    fi
    reply ok
}

cmd_point() {
    local seed=${1:-} kv
    [[ $seed =~ ^[0-9]+$ && -z $VARIANT ]] || fatal "point: expected SEED SPEC, outside a row"
    shift
    B=1 H=1 S=1 D=64 C=0 DT=bf16 INIT=uniform PASS=fwd
    for kv in "$@"; do
        case $kv in
        batch=*) B=${kv#*=} ;;
        heads=*) H=${kv#*=} ;;
        seq=*) S=${kv#*=} ;;
        dim=*) D=${kv#*=} ;;
        causal=*) C=${kv#*=} ;;
        dtype=*) DT=${kv#*=} ;;
        init=*) INIT=${kv#*=} ;;
        pass=*) PASS=${kv#*=} ;;
        esac
    done
    reply ok
}

cmd_row() {
    local variant=${1:-} modes=${2:-} m
    [[ -n $modes && -n $CSV && -n $B && -z $VARIANT ]] ||
        fatal "row: expected VARIANT MODES, after open and point, outside a row"
    if in_list "$variant" "$ABSENT"; then reply absent; return; fi
    stop_at setup
    stop_at "variant:$variant"
    VARIANT=$variant
    local vfactor="FAKE_VFACTOR_$variant"
    set_cycle "${!vfactor:-1}"
    if in_list "$variant" "$SKIP"; then
        for m in ${modes//,/ }; do
            row "$m" skipped "fake: $variant is in FAKE_SKIP" "" "" "" "" "" "" "" "" "" >>"$CSV"
        done
        VARIANT=""
        reply "done"
        return
    fi
    reply ok
}

cmd_mode() {
    [[ -n $VARIANT && -z $MODE ]] || fatal "mode: outside an open row"
    case ${1:-} in cold | hot | graph) ;; *) fatal "mode: unknown mode '${1:-}'" ;; esac
    MODE=$1 TAKEN=() MODE_BLOCKS=0
    SETTLED="" SETTLE_S="" SETTLED_MHZ="" SETTLED_WATTS=""
    reply "ok 1"
}

cmd_block() {
    local min_samples=${1:-} n i out
    [[ $min_samples =~ ^[0-9]+$ && -n ${2:-} && -n $MODE ]] ||
        fatal "block: expected MIN_SAMPLES MIN_MS in a timed mode"
    BLOCKS=$((BLOCKS + 1)) MODE_BLOCKS=$((MODE_BLOCKS + 1))
    stop_at "block:$BLOCKS"
    ((MODE_BLOCKS == 1)) && stop_at "row:$(($(rows_written) + 1))"
    n=$((min_samples > 3 ? min_samples : 3))
    out="ok $n"
    for ((i = 0; i < n; i++)); do
        TAKEN+=("${CYCLE[CYCLE_I]}")
        out+=" ${CYCLE[CYCLE_I]}"
        CYCLE_I=$(((CYCLE_I + 1) % 3))
    done
    reply "$out"
}

cmd_finish() {
    local conv=${1:-} k i stats
    [[ -n $MODE && ($conv == 0 || $conv == 1) ]] || fatal "finish: expected 0 or 1 in a timed mode"
    ((${#TAKEN[@]} > 0)) || fatal "finish: no samples taken"
    # samples first, so that a row in the CSV always has its samples whole
    k=$(key "$MODE")
    for i in "${!TAKEN[@]}"; do printf '%s,%d,%s\n' "$k" "$i" "${TAKEN[i]}"; done >>"$SAMPLES"
    # n median min p10 p90 mean noise_rel, as common/stats.c computes them
    stats=$(printf '%s\n' "${TAKEN[@]}" | sort -g | awk '
        { s[NR - 1] = $1; sum += $1 }
        function q(p,   pos, lo) {
            if (NR == 1) return s[0]
            pos = p * (NR - 1); lo = int(pos)
            if (lo >= NR - 1) return s[NR - 1]
            return s[lo] + (pos - lo) * (s[lo + 1] - s[lo])
        }
        END { m = q(0.5); printf "%d %.6g %.6g %.6g %.6g %.6g %.4g\n",
              NR, m, s[0], q(0.1), q(0.9), sum / NR, (q(0.75) - q(0.25)) / m }')
    read -r -a st <<<"$stats"
    row "$MODE" ok "" "${st[0]}" "${st[1]}" "${st[2]}" "${st[3]}" "${st[4]}" "${st[5]}" "${st[6]}" \
        "$conv" 1 >>"$CSV"
    MODE="" TAKEN=()
    reply ok
}

cmd_load() {
    [[ ${1:-} =~ ^[0-9.]+$ && -n $MODE ]] || fatal "load: expected MS in a timed mode"
    reply "ok $MHZ $WATTS"
}

cmd_settled() {
    [[ $# == 4 && ($1 == 0 || $1 == 1) && -n $MODE ]] || fatal "settled: expected FLAG SECONDS MHZ WATTS in a timed mode"
    SETTLED=$1 SETTLE_S=$2 SETTLED_MHZ=$3 SETTLED_WATTS=$4
    reply ok
}

cmd_close() {
    [[ -n $VARIANT && -z $MODE ]] || fatal "close: no open row, or a mode unfinished"
    VARIANT=""
    reply ok
}

stop_at start
if ((PROTO >= 7)); then reply "hello $PROTO $GPU $REV $FLUSH"; else reply "hello $PROTO $GPU $REV"; fi
while IFS= read -r line; do
    line=${line%$'\r'}
    if [[ -n $LOG ]]; then
        if [[ ${FAKE_LOG_VARIANT:-} == 1 ]]; then printf '%s %s\n' "${VARIANT:--}" "$line" >>"$LOG"
        else printf '%s %s\n' "$SIDE" "$line" >>"$LOG"
        fi
    fi
    read -r -a w <<<"$line"
    cmd=${w[0]:-}
    args=("${w[@]:1}")
    case $cmd in
    quit) exit 0 ;;
    open) cmd_open "${args[@]}" ;;
    point) cmd_point "${args[@]}" ;;
    row) cmd_row "${args[@]}" ;;
    mode) cmd_mode "${args[@]}" ;;
    block) cmd_block "${args[@]}" ;;
    finish) cmd_finish "${args[@]}" ;;
    close) cmd_close ;;
    reopen) ((PROTO >= 2)) || fatal "unknown command 'reopen'"; cmd_reopen "${args[@]}" ;;
    fail) ((PROTO >= 2)) || fatal "unknown command 'fail'"; cmd_fail "${args[@]}" ;;
    load) ((PROTO >= 3)) || fatal "unknown command 'load'"; cmd_load "${args[@]}" ;;
    settled) ((PROTO >= 3)) || fatal "unknown command 'settled'"; cmd_settled "${args[@]}" ;;
    *) fatal "unknown command '$cmd'" ;;
    esac
done
exit 0
