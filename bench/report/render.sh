#!/usr/bin/env bash
# render.sh — what `make plots`, `make report` and `make figures` run: the
# choice of the run (said in one line), its data (build/report data), its
# figures (plots/*.gp, PNG and SVG, one figure per page of panels and per
# pass: NAME.png the forward, NAME-bwd.png, NAME-fwd_bwd.png the others; the
# committed sets PNG only, quantised by pngquant) and its page (build/report
# html).
#
#   bench/report/render.sh plots|report|figures
#
# The Makefile hands every value over in the environment, never through a
# shell's parser: ATTN_REPORT (build/report), ATTN_PLOT_SCRIPTS (the
# scripts' names), ATTN_PLOT_BUILD (the build directory), and the user's
# ATTN_PLOT_RESULTS, _BASELINE, _THRESHOLDS, _DIR, _GPU (RESULTS=,
# BASELINE=, THRESHOLDS=, PLOT_DIR=, GPU=). Each path goes to the programs
# as one argument, quoted; one that holds a newline, a control character or
# a single quote is refused (no path of ours has one).
#
# The run: RESULTS when given; else the run plots/<gpu>/figures.conf names
# (<gpu>: GPU, else the newest run's directory under results/): the run the
# committed figure set shows; else the newest run under results/ (results/
# <gpu>/ with GPU). `figures` renders the committed set plots/<GPU>/ (GPU
# default h200) from its figures.conf, into plots/<GPU>/.
#
# figures.conf is read as data: blank lines, # comments and KEY=VALUE lines
# of the keys RESULTS (required), BASELINE and THRESHOLDS, each value an
# existing file whose path is letters, digits and ._/+:@,- only; anything
# else is refused as FILE:LINE. Refusals: one line on stderr, exit 2.
set -u
export LC_ALL=C # globs sort as make's $(sort) does: by bytes

what=${1:-}
case $what in plots | report | figures) ;; *) echo "render.sh: plots, report or figures, not '$what'" >&2; exit 2 ;; esac
die() { echo "make $what: $*" >&2; exit 2; }

# check NAME VALUE: VALUE can be passed on as one argument.
check() {
    case $2 in
    *$'\n'* | *"'"* | *[[:cntrl:]]*)
        die "$1$(printf '%q' "$2"): holds a newline, a control character or a single quote: refused" ;;
    esac
}

report=${ATTN_REPORT:?ATTN_REPORT unset: run this through make}
results=${ATTN_PLOT_RESULTS:-} baseline=${ATTN_PLOT_BASELINE:-} thresholds=${ATTN_PLOT_THRESHOLDS:-}
outdir=${ATTN_PLOT_DIR:-} gpu=${ATTN_PLOT_GPU:-}
for v in RESULTS:"$results" BASELINE:"$baseline" THRESHOLDS:"$thresholds" PLOT_DIR:"$outdir" GPU:"$gpu"; do
    check "${v%%:*}=" "${v#*:}"
done
case /$gpu/ in */../* | //?*) die "GPU=$gpu: a name under results/ and plots/, not a path out of them" ;; esac

# read_conf FILE: its RESULTS, BASELINE and THRESHOLDS into conf_*.
conf_RESULTS= conf_BASELINE= conf_THRESHOLDS=
read_conf() {
    local n=0 line key value
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        line=${line%$'\r'}
        case $line in '' | '#'*) continue ;; esac
        [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] ||
            die "$1:$n: not a KEY=VALUE line: $(printf '%q' "$line")"
        key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
        case $key in RESULTS | BASELINE | THRESHOLDS) ;; *) die "$1:$n: unknown key '$key' (RESULTS, BASELINE, THRESHOLDS)" ;; esac
        [[ $value =~ ^[A-Za-z0-9._/+:@,-]+$ ]] ||
            die "$1:$n: $key=$(printf '%q' "$value"): a path of letters, digits and ._/+:@,- only"
        [ -f "$value" ] || die "$1:$n: $key=$value: no such file"
        local var=conf_$key
        [ -z "${!var}" ] || die "$1:$n: $key given twice"
        printf -v "$var" '%s' "$value"
    done <"$1" || die "$1: unable to read"
    [ -n "$conf_RESULTS" ] || die "$1: no RESULTS= line"
}

# The newest run under results/ (results/$gpu/ when GPU= is given).
newest() {
    local runs=() f
    shopt -s nullglob
    for f in results/${gpu:-*}/2*Z*.csv; do [[ $f == *.samples.csv ]] || runs+=("$f"); done
    shopt -u nullglob
    [ ${#runs[@]} -gt 0 ] && printf '%s\n' "${runs[${#runs[@]} - 1]}"
}

if [ "$what" = figures ]; then
    gpu=${gpu:-h200}
    conf=plots/$gpu/figures.conf
    [ -f "$conf" ] || die "no $conf"
    read_conf "$conf"
    results=$conf_RESULTS baseline=$conf_BASELINE thresholds=$conf_THRESHOLDS outdir=plots/$gpu
    echo "make $what: $results (named by $conf) into $outdir/"
elif [ -n "$results" ]; then
    echo "make $what: $results (RESULTS=)"
else
    found=$(newest)
    [ -n "$found" ] || [ -n "$gpu" ] || die "no results CSV under results/ (make bench, or RESULTS=FILE)"
    conf=plots/${gpu:-$(basename "$(dirname "$found")")}/figures.conf
    if [ -f "$conf" ]; then
        read_conf "$conf"
        results=$conf_RESULTS
        echo "make $what: $results (named by $conf, the committed figures' run; RESULTS=FILE draws another)"
    else
        [ -n "$found" ] || die "no results CSV under results/$gpu/ and no $conf (make bench, or RESULTS=FILE)"
        results=$found
        echo "make $what: $results (the newest run under results/${gpu:+$gpu/}; RESULTS=FILE draws another)"
    fi
fi
check RESULTS= "$results"
[ -f "$results" ] || die "RESULTS=$results: no such file"
if [ -z "$outdir" ]; then
    # a run under results/ keeps its place there (results/h200/decode/ID.csv:
    # build/plots/h200/decode/ID/); one elsewhere goes by its folder's name
    run_dir=$(dirname "$results")
    case $run_dir in
    results/?* | ./results/?*) place=${run_dir#./} place=${place#results/} ;;
    *) place=$(basename "$run_dir") ;;
    esac
    outdir=${ATTN_PLOT_BUILD:-build}/plots/$place/$(basename "$results" .csv)
fi
# gnuplot runs a file name that starts with '<' (load, plot) or '|' (set
# output) as a command: a relative directory that starts with anything but
# a letter, a digit, '_' or '.' is named from ./ instead
case $outdir in /* | [A-Za-z0-9_.]*) ;; *) outdir=./$outdir ;; esac

# the data and every script's figure, each page of panels its own figure
# (data/page-K/ → NAME-K.png), each pass other than the forward its own
# figures (data/bwd/ → NAME-bwd.png, data/bwd/page-K/ → NAME-bwd-K.png;
# fwd_bwd likewise); files of an earlier rendering removed first
mkdir -p -- "$outdir/data" || die "unable to create $outdir/data"
rm -rf -- "$outdir"/data/*.dat "$outdir"/data/meta.gp "$outdir"/data/page-* "$outdir"/data/bwd "$outdir"/data/fwd_bwd
# THRESHOLDS= gives the gate's confidence (a compare run's intervals; without
# it build/report takes bench/gate/thresholds.conf's, as the gate does) and
# the ratio figure's limits
args=(data "$results" "$outdir/data")
if [ -n "$baseline" ]; then
    args+=(--baseline "$baseline" --thresholds "${thresholds:-bench/gate/thresholds.conf}")
elif [ -n "$thresholds" ]; then
    args+=(--thresholds "$thresholds")
fi
"$report" "${args[@]}" || exit 2
rm -f -- "$outdir"/*.png "$outdir"/*.svg
# the figure pages: a directory with a meta.gp (a run without forward rows
# has none in data/), and the suffix of its figures' names
shopt -s nullglob
pages=() suffixes=()
for d in "$outdir/data" "$outdir"/data/page-* "$outdir"/data/bwd "$outdir"/data/bwd/page-* \
    "$outdir"/data/fwd_bwd "$outdir"/data/fwd_bwd/page-*; do
    [ -f "$d/meta.gp" ] || continue
    suffix=${d#"$outdir/data"}
    suffix=${suffix//\//-}
    pages+=("$d") suffixes+=("${suffix//-page-/-}")
done
shopt -u nullglob
# the committed sets (figures) are PNG only, in a palette of 256 colours
# (pngquant: a third of the size, the same to the eye), so that the tree
# stays small; plots and report write PNG and SVG in full colour
formats=(png svg)
[ "$what" != figures ] || formats=(png)
for s in ${ATTN_PLOT_SCRIPTS:-}; do
    for format in "${formats[@]}"; do
        for i in "${!pages[@]}"; do
            gnuplot -c "plots/$s.gp" "${pages[i]}" "$outdir/$s${suffixes[i]}.$format" "$format" || exit 1
        done
    done
done
figs=("$outdir"/*.png)
[ ${#formats[@]} = 1 ] || figs+=("$outdir"/*.svg)
if [ "$what" = figures ]; then
    command -v pngquant >/dev/null || die "pngquant not found (Debian: apt-get install pngquant; make figure-deps as root)"
    pngquant --speed 1 --strip --nofs --force --ext .png -- "$outdir"/*.png || die "pngquant failed on $outdir/*.png"
fi
ls -- "${figs[@]}"
[ "$what" = plots ] && exit 0

html=(html "$results" "$outdir")
[ -z "$thresholds" ] || html+=(--thresholds "$thresholds")
[ -z "$baseline" ] || html+=(--baseline "$baseline")
"$report" "${html[@]}" || exit 2
echo "make $what: open $outdir/report.html"
