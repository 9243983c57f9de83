#!/usr/bin/env bash
# check_make.sh — the Makefile's own behaviour, on no GPU and building
# nothing: hostile values (a results file named 'a;touch${IFS}X;.csv', a
# REASON of backquotes and $(...)) reach the programs byte for byte and run
# nothing; make test SUITES= picks suites and refuses an unknown one; make
# help works without nvcc and make test says in one line that it needs it;
# make deps installs with one apt-get run (a stub) and runs alone before
# make test builds; the clean-tree suite builds from HEAD, not from this
# checkout's build/; make bench PEERS=a,b runs each peer module with
# --extend and the same RUN_ID.
#
# The makes run in a scratch copy of the checkout (its files linked, its own
# build/ of stub programs that record their arguments, its own results/)
# with a fake nvidia-smi, in an environment of their own. Prints
# `make: N passed, N failed`. Run from the repository root after make all.
set -u
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "  ok    $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL  $*"; }
# expect WHAT COMMAND...: one check; COMMANDS; judge WHAT: one check of their status
expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
judge() { local status=$?; if [ $status = 0 ]; then ok "$1"; else bad "$1"; fi; return $status; }
finish() { echo "make: $pass passed, $fail failed"; [ $fail = 0 ]; exit; }
for p in build/regress; do
    [ -x "$p" ] || { echo "check_make: $p not found: run make all first" >&2; bad "$p built"; finish; }
done

# ------------------------------------------------------------ the scratch copy
w=$tmp/w bin=$tmp/bin log=$tmp/args.log
mkdir -p "$w/build" "$w/results/fake" "$bin" "$tmp/r"
for f in "$root"/*; do
    case ${f##*/} in build | results) ;; *) ln -s "$f" "$w/${f##*/}" ;; esac
done
ln -s "$root/build/regress" "$w/build/regress"
# a program that records how it was called: a line "--- NAME", then one
# line per argument
stub() {
    printf '#!/bin/sh\n{ echo "--- ${0##*/}"; printf "%%s\\n" "$@"; } >> %s\nexit %s\n' "$log" "${2:-0}" >"$1"
    chmod +x "$1"
}
for p in attnbench ab merge; do stub "$w/build/$p"; done
stub "$w/build/report" 2 # render.sh stops at the report's data
cat >"$bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*-L*) echo "GPU 0: Fake GPU (UUID: GPU-0)" ;;
*compute_cap*) echo "9.0" ;;
*name*) echo "NVIDIA Fake GPU" ;;
esac
EOF
chmod +x "$bin/nvidia-smi"
STUBS=(-o build/regress -o build/report -o build/attnbench -o build/ab -o build/merge -o plot-deps -o figure-deps)
# mk ARGS...: make in the scratch copy, in an environment of its own (none of
# the outer make's flags and variables); its output in $tmp/out, its exit
# status returned
mk() {
    (cd "$w" && env -i PATH="$bin:$PATH" HOME="$tmp" LC_ALL=C ${MK_ENV[@]+"${MK_ENV[@]}"} \
        make --no-print-directory "$@") >"$tmp/out" 2>&1
}
MK_ENV=()
# the arguments a stub was last called with (after its "--- NAME" line)
last_args() { awk -v n="--- $1" '$0 == n { delete a; k = 0; on = 1; next } /^--- / { on = 0 } on { a[k++] = $0 }
    END { for (i = 0; i < k; i++) print a[i] }' "$log"; }
no_x() { [ -z "$(find "$w/" "$tmp/r" -name X 2>/dev/null)" ] && [ ! -e "$root/X" ]; }
lines() { printf '%s\n' "$@"; }

# ------------------------------------------- values reach the programs as written
res=$w/results/fake
hostile_run="$res/a;touch\${IFS}X;.csv"
cp tests/fixtures/single.csv "$hostile_run"
reason='it'\''s "fine"; `touch X` $(touch X) $(shell touch X) ${IFS} $$HOME a\b & | > #'

: >"$log"
mk "${STUBS[@]}" baseline GPU=fake RESULTS="$hostile_run" REASON="$reason"
rc=$?
expect "make baseline REASON=<quotes, backquotes, \$(...)>: blessed (exit $rc)" [ $rc = 0 ]
entry=$(tail -n 1 "$res/baselines/LOG" 2>/dev/null | cut -f 5-)
expect "make baseline: REASON reaches baselines/LOG byte for byte" [ "$entry" = "$reason" ]
expect "make baseline: no command in RESULTS or REASON ran" no_x

mk "${STUBS[@]}" -n baseline GPU=fake RESULTS="$hostile_run" REASON="$reason"
expect "make -n baseline: no command in RESULTS or REASON ran" no_x

hostile_base="$res/b;touch X;'q.csv" hostile_cand="$res/c;\$(touch X).csv"
cp tests/fixtures/fused_base.csv "$hostile_base"
cp tests/fixtures/fused.csv "$hostile_cand"
mk "${STUBS[@]}" regress RESULTS="$hostile_cand" BASELINE="$hostile_base" MARKDOWN="$tmp/r/m;touch X.md" \
    THRESHOLDS="$root/bench/gate/thresholds.conf"
rc=$?
{ [ $rc = 0 ] || grep -q '^make regress: build/regress exited 1 ' "$tmp/out"; }
judge "make regress RESULTS=<c;\$(touch X).csv> BASELINE=<b;touch X;'q.csv> MARKDOWN=<m;touch X.md>: gated, not refused"
expect "make regress: the markdown lands at the path as written" [ -f "$tmp/r/m;touch X.md" ]
expect "make regress: no command in a path ran" no_x

: >"$log"
mk "${STUBS[@]}" plots RESULTS="$hostile_run" PLOT_DIR="$tmp/p;touch X"
expect "make plots RESULTS= PLOT_DIR=: the report gets both as written" \
    [ "$(last_args report)" = "$(lines data "$hostile_run" "$tmp/p;touch X/data")" ]
found="$res/20990101T000000Z;touch\${IFS}X;.csv"
cp tests/fixtures/single.csv "$found"
: >"$log"
mk "${STUBS[@]}" report GPU=fake
expect "make report: the run found by globbing results/ reaches the report as named" \
    [ "$(last_args report)" = "$(lines data "results/fake/${found##*/}" "build/plots/fake/20990101T000000Z;touch\${IFS}X;/data")" ]
rm -f "$found"
mk "${STUBS[@]}" figures GPU='x;touch X'
expect "make figures GPU=<;touch X>: refused (no plots/x;touch X/figures.conf)" grep -q "no plots/x;touch X/figures.conf" "$tmp/out"
expect "make plots, report, figures: no command in a value ran" no_x

: >"$log"
mk "${STUBS[@]}" MAKE=true bench OUT="$tmp/r/o;touch X" GRID='g;touch X' VARIANTS='$(touch X)' MODE='`touch X`' \
    ROW_TIMEOUT='${IFS}' PEAK=0
expect "make bench OUT= GRID= VARIANTS= MODE= ROW_TIMEOUT=: attnbench gets each as written" \
    [ "$(last_args attnbench)" = "$(lines --grid 'g;touch X' --mode '`touch X`' --warm-ms 500 --variants '$(touch X)' \
        --row-timeout '${IFS}' --out "$tmp/r/o;touch X")" ]
: >"$log"
mk "${STUBS[@]}" MAKE=true trace TRACE_DIR="$tmp/r/t;touch X" TRACE_GRID="s'q" VARIANTS='a;touch X'
expect "make trace TRACE_DIR= TRACE_GRID= VARIANTS=: attnbench gets each as written" \
    [ "$(last_args attnbench)" = "$(lines --grid "s'q" --mode cold,graph --variants 'a;touch X' \
        --trace "$tmp/r/t;touch X" --out "$tmp/r/t;touch X")" ]
mk "${STUBS[@]}" MAKE=true ab BASE='$(touch X)'
expect "make ab BASE=<\$(touch X)>: ab_build.sh gets it as written" grep -qF "make ab: '\$(touch X)' is not a git revision" "$tmp/out"
mk build/build_info.h SLOWDOWN='naive:1";touch X;"'
rc=$?
expect "make SLOWDOWN=<naive:1\";touch X;\">: refused (exit $rc)" [ $rc = 2 ]
expect "make bench, trace, ab, SLOWDOWN=: no command in a value ran" no_x

# ------------------------------------------------------------ make test SUITES=
out=$(tests/run_suites.sh --only b,a a 'echo "a: 2 passed, 0 failed"' b 'echo b' c 'exit 1' 2>&1)
rc=$?
[ $rc = 0 ] && grep -q '^== a' <<<"$out" && grep -q '^== b' <<<"$out" && ! grep -q '^== c' <<<"$out"
judge "run_suites.sh --only b,a: a and b run, c not (exit $rc)"
expect "run_suites.sh: each suite's summary line ends in its wall time" \
    grep -qE '^  a +2 passed +0 failed +0 skipped +[0-9]+\.[0-9] s$' <<<"$out"
mk -n test SUITES=cpu,nope
rc=$?
[ $rc = 2 ] && grep -qE "unknown suite 'nope' \(known: gpu .*cpu .*make .*\)" "$tmp/out"
judge "make test SUITES=cpu,nope: refused (exit $rc), naming the known suites"
mk -n test SUITES=make
expect "make -n test SUITES=make: runs the make suite alone" grep -qF "tests/run_suites.sh --only 'make' gpu " "$tmp/out"
mk help
expect "make help: SUITES= and PEERS= described" grep -q 'SUITES=cpu,report' "$tmp/out"

# --------------------------------------------------------------- without nvcc
nonvcc=
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/nvcc" ] || nonvcc=${nonvcc:+$nonvcc:}$d; done
( cd "$w" && env -i PATH="$bin:$nonvcc" HOME="$tmp" CUDA_HOME="$tmp/no-cuda" make --no-print-directory help ) >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^  make test ' "$tmp/out"
judge "make help without nvcc: works (exit $rc)"
# a dry run first: where nvcc is still found, make test itself would run
for dry in -n ''; do
    ( cd "$w" && env -i PATH="$bin:$nonvcc" HOME="$tmp" CUDA_HOME="$tmp/no-cuda" make --no-print-directory $dry test ) >"$tmp/out" 2>&1
    rc=$?
    [ $rc = 2 ] && [ "$(grep -c . "$tmp/out")" = 1 ] && grep -q 'needs the CUDA toolkit (nvcc).*NVCC=' "$tmp/out"
    judge "make $dry test without nvcc: stops (exit $rc) in one line naming nvcc and NVCC=" || break
done

# ------------------------------------------------- deps: one apt-get run, alone
# only the programs deps.sh and make need; the packages' commands appear
# once the fake apt-get has "installed" them
sys=$tmp/sys
mkdir -p "$sys"
for c in bash sh env make cat grep sed awk rm rmdir mkdir mktemp tail head sleep flock dirname basename tr ls find cmp mv touch wc sort chmod; do
    p=$(command -v "$c") && ln -s "$p" "$sys/$c"
done
printf '#!/bin/sh\necho 0\n' >"$sys/id"
cat >"$sys/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >> $tmp/apt.log
mkdir $tmp/apt.lock 2>/dev/null || echo OVERLAP >> $tmp/apt.log
sleep 1
case \$1 in install) for c in pkg-config gnuplot xmllint pngquant chromium clang slurmctld slurmd sbatch squeue sinfo scontrol scancel munged; do
    printf '#!/bin/sh\nexit 0\n' > $sys/\$c; chmod +x $sys/\$c; done ;; esac
rmdir $tmp/apt.lock
EOF
chmod +x "$sys/id" "$sys/apt-get"
: >"$tmp/apt.log"
( cd "$w" && env -i PATH="$sys" HOME="$tmp" TMPDIR="$tmp" make --no-print-directory -j2 deps ) >"$tmp/out" 2>&1
rc=$?
expect "make -j2 deps: one apt-get run for every missing package (exit $rc)" \
    [ "$(cat "$tmp/apt.log")" = "apt-get install -y -qq check pkg-config zlib1g-dev gnuplot-nox libxml2-utils pngquant chromium clang slurm-wlm munge" ]
( cd "$w" && env -i PATH="$sys" HOME="$tmp" TMPDIR="$tmp" make --no-print-directory -j2 deps ) >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -c . "$tmp/apt.log")" = 1 ]
judge "make -j2 deps again: nothing missing, no apt-get (exit $rc)"
mk -n -j2 test BUILD="$tmp/cold"
first_build=$(grep -nE '^(cc|gcc|clang|/[^ ]*nvcc) ' "$tmp/out" | head -n 1 | cut -d: -f1)
deps_line=$(grep -n 'tests/deps.sh' "$tmp/out" | head -n 1 | cut -d: -f1)
[ -n "$deps_line" ] && [ -n "$first_build" ] && [ "$deps_line" -lt "$first_build" ]
judge "make -n -j2 test: deps runs alone, before the first compile"

# ---------------------------------------------- the clean tree, from HEAD only
# a clone whose build/ holds a report that cannot run and an object that is
# not one: the suite, run there, builds its own from the clone's HEAD
git clone -q "$root" "$tmp/a" 2>/dev/null
mkdir -p "$tmp/a/build/bench/report"
printf '#!/bin/sh\nexit 1\n' >"$tmp/a/build/report"
chmod +x "$tmp/a/build/report"
echo 'not an object' >"$tmp/a/build/bench/report/report.o"
(cd "$tmp/a" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$root/tests/check_clean_tree.sh") >"$tmp/out" 2>&1
expect "check_clean_tree.sh: takes nothing from the checkout's build/" grep -q '^clean-tree: 1 passed, 0 failed$' "$tmp/out"
[ $fail = 0 ] || tail -n 5 "$tmp/out"

# --------------------------------------------------------------- PEERS=a,b
peers=$tmp/peers
mkdir -p "$peers"
for m in a b c; do echo "# a peer module the fake python runs" >"$peers/${m}_peers.py"; done
cat >"$bin/fake-python" <<EOF
#!/bin/bash
m=\${1##*/}; m=\${m%_peers.py}
{ echo "--- python"; printf '%s\n' "\$@"; } >> $log
[ \$m != c ] || { echo "c_peers: no such thing here: no peers run" >&2; exit 3; }
case " \$* " in *" --list "*) echo "variant summary"; echo "\${m}_one one"; echo "\${m}_two two" ;; esac
exit 0
EOF
chmod +x "$bin/fake-python"
MK_ENV=(PYTHON=fake-python ATTN_PEER_DIR="$peers")
# the calls of the peer modules (not their --list), one line each
peer_runs() { awk '$0 == "--- python" { if (line != "") print line; line = ""; on = 1; next }
    /^--- / { if (line != "") print line; line = ""; on = 0; next }
    on { line = line (line == "" ? "" : " ") $0 } END { if (line != "") print line }' "$log" | grep -v ' --list$'; }
: >"$log"
mk "${STUBS[@]}" MAKE=true bench PEERS=a,b GRID=seed VARIANTS=naive PEAK=0
rc=$?
id=$(last_args attnbench | sed -n '/^--run-id$/{n;p}')
[ $rc = 0 ] && [ -n "$id" ]
judge "make bench PEERS=a,b: attnbench runs with --run-id (exit $rc)"
expect "make bench PEERS=a,b: a then b run with --extend and that RUN_ID" \
    [ "$(peer_runs)" = "$(lines "$peers/a_peers.py --grid seed --mode cold,graph --warm-ms 500 --extend $id" \
        "$peers/b_peers.py --grid seed --mode cold,graph --warm-ms 500 --extend $id")" ]
: >"$log"
mk "${STUBS[@]}" MAKE=true bench PEERS=a,b PEER_VARIANTS=b_two GRID=seed PEAK=0
expect "make bench PEERS=a,b PEER_VARIANTS=b_two: b alone runs, with --variants b_two" \
    [ "$(peer_runs | sed 's/ --extend .*//')" = "$peers/b_peers.py --grid seed --mode cold,graph --warm-ms 500 --variants b_two" ]
mk "${STUBS[@]}" MAKE=true bench PEERS=a,b PEER_VARIANTS=z_one
rc=$?
[ $rc != 0 ] && grep -q "no peer module here has z_one" "$tmp/out"
judge "make bench PEER_VARIANTS=z_one: refused (exit $rc)"
: >"$log"
mk "${STUBS[@]}" MAKE=true bench PEERS=a,zz
rc=$?
[ $rc != 0 ] && grep -qF "unknown peer module 'zz': no $peers/zz_peers.py (known: a b c)" "$tmp/out" && ! grep -q attnbench "$log"
judge "make bench PEERS=a,zz: refused (exit $rc), naming the known modules, before attnbench runs"
: >"$log"
mk "${STUBS[@]}" MAKE=true bench PEERS=c,a GRID=seed PEAK=0
[ "$(grep -c 'c_peers.py cannot run here (c_peers: no such thing here: no peers run): left out' "$tmp/out")" = 1 ] &&
    [ "$(peer_runs | wc -l)" = 1 ] && peer_runs | grep -q "^$peers/a_peers.py "
judge "make bench PEERS=c,a: c, which cannot run here, left out in one line; a runs"
MK_ENV=()

finish
