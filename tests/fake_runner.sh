#!/bin/bash
# fake_runner.sh — stands in for attnbench's sweep child in the watchdog's
# tests (check_watchdog.c): it speaks the child's side of the protocol
# (bench/supervise.h) to the fd given by --supervised-fd, without a GPU.
# $FAKE_DIR holds what the test prepared:
#   csv        the run's path, announced with `run`
#   plan       one word per start: what this start does
#   arm        an `arm N` message and its N rows
#   row        a row this start writes itself (plan selfwrite)
#   samples    sample lines this start appends to the samples file (plan orphan)
# Each start appends its arguments to $FAKE_DIR/starts.
fd=
args="$*"
while [ $# -gt 0 ]; do
  case $1 in --supervised-fd) fd=$2; shift ;; esac
  shift
done
[ -n "$fd" ] || { echo "fake_runner: no --supervised-fd" >&2; exit 9; }
echo "$args" >> "$FAKE_DIR/starts"
csv=$(cat "$FAKE_DIR/csv")
echo "run $csv" >&"$fd"
plan=$(sed -n "$(wc -l < "$FAKE_DIR/starts")p" "$FAKE_DIR/plan")
case $plan in
  hang)      cat "$FAKE_DIR/arm" >&"$fd"; exec sleep 30 ;;
  crash)     cat "$FAKE_DIR/arm" >&"$fd"; kill -SEGV $$ ;;
  orphan)    cat "$FAKE_DIR/arm" >&"$fd"; cat "$FAKE_DIR/samples" >> "${csv%.csv}.samples.csv"; exec sleep 30 ;;
  selfwrite) cat "$FAKE_DIR/arm" >&"$fd"; cat "$FAKE_DIR/row" >> "$csv"; exec sleep 30 ;;
  torn)      printf 'RUN,2026' >> "$csv"; cat "$FAKE_DIR/arm" >&"$fd"; exec sleep 30 ;;
  disarmed)  cat "$FAKE_DIR/arm" >&"$fd"; echo disarm >&"$fd"; exec sleep 1 ;;
  outside)   kill -SEGV $$ ;;
  exit3)     exit 3 ;;
  ok)        exit 0 ;;
  *)         echo "fake_runner: no plan for start $(wc -l < "$FAKE_DIR/starts")" >&2; exit 9 ;;
esac
