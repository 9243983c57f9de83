#!/usr/bin/env bash
# deps.sh — what make deps, check-deps, plot-deps, figure-deps, browser-deps,
# fuzz-deps and slurm-deps run: finds which of the Debian packages the
# suites need are missing and installs all of them with one apt-get run
# (as root), or names them (otherwise). Quick when nothing is missing.
# Runs one at a time (flock), so that two makes never race apt's locks.
#
#   tests/deps.sh GROUP...    check plots figures browser fuzz slurm, or all
#
# all: every group, slurm only as root (the Slurm suite skips itself when
# not root). Exit 0 when everything asked for is there, 1 when something is
# missing and cannot be installed, 2 for an unknown group.
set -u

# GROUP PACKAGE COMMAND...: PACKAGE of GROUP is there when COMMAND succeeds.
# Every package the suites need is named here, and only here.
PACKAGES='
check   check          pkg-config --exists check
check   pkg-config     command -v pkg-config
check   zlib1g-dev     pkg-config --exists zlib
plots   gnuplot-nox    command -v gnuplot
plots   libxml2-utils  command -v xmllint
figures pngquant       command -v pngquant
browser chromium       has_chromium
fuzz    clang          command -v ${CLANG:-clang}
slurm   slurm-wlm      command -v slurmctld slurmd sbatch squeue sinfo scontrol scancel
slurm   munge          command -v munged
'
GROUPS_ALL='check plots figures browser fuzz slurm'

has_chromium() { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }
# `command -v A B ...` succeeds when any is found; each one must be
present() {
    if [ "$1" = command ] && [ "${2:-}" = -v ]; then
        shift 2
        local c
        for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done
        return 0
    fi
    "$@" >/dev/null 2>&1
}

[ $# -gt 0 ] || { echo "usage: tests/deps.sh GROUP... ($GROUPS_ALL, or all)" >&2; exit 2; }
root=no
[ "$(id -u)" = 0 ] && root=yes
wanted=()
for g in "$@"; do
    case " $GROUPS_ALL all " in *" $g "*) ;; *) echo "tests/deps.sh: unknown group '$g' (known: $GROUPS_ALL, all)" >&2; exit 2 ;; esac
    if [ "$g" = all ]; then
        for a in $GROUPS_ALL; do [ "$a" != slurm ] || [ $root = yes ] && wanted+=("$a"); done
    else
        wanted+=("$g")
    fi
done

# one deps.sh at a time: a second one waits, then finds what the first installed
if command -v flock >/dev/null; then
    exec 9>"${TMPDIR:-/tmp}/attnbench-deps.lock" && flock 9
fi

missing=()
while read -r group package check; do
    [ -n "$group" ] || continue
    case " ${wanted[*]} " in *" $group "*) ;; *) continue ;; esac
    case " ${missing[*]} " in *" $package "*) continue ;; esac
    eval "present $check" || missing+=("$package")
done <<<"$PACKAGES"
[ ${#missing[@]} = 0 ] && exit 0

if [ $root = no ] || ! command -v apt-get >/dev/null; then
    echo "make: missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "make: installing ${missing[*]} with apt-get"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# the package lists are refreshed only when the install fails without
if apt-get install -y -qq "${missing[@]}" >"$log" 2>&1 ||
    { apt-get update -qq >>"$log" 2>&1 && apt-get install -y -qq "${missing[@]}" >>"$log" 2>&1; }; then
    exit 0
fi
tail -n 20 "$log" >&2
echo "make: apt-get could not install ${missing[*]} (above)" >&2
exit 1
