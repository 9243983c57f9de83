#!/bin/bash
# peers.sh PEERS [attnbench options...] — make bench PEERS=torch,NAME: the C
# variants measured by attnbench, then each peer module named in PEERS
# (NAME: tools/peers/NAME_peers.py; torch: PyTorch's attention) in turn
# added to the same run with --extend RUN_ID: one RUN_ID, one CSV, the same
# grid, seed and rules. With --resume RUN_ID every part continues that run
# (the C part as --extend RUN_ID: the run holds the peers' rows beside its
# own, which a plain --resume would refuse as not of its sweep).
# --variants picks the C variants; PEER_VARIANTS=a,b picks peers, of any of
# the modules (each module gets those it has; one that has none is not run).
# Each module is asked first for its peers (NAME_peers.py --list); one that
# cannot run here (exit 3: no PyTorch, no GPU) is said so in one line and
# left out, and without any module left the C variants run alone.
#   ATTNBENCH, PYTHON  the programs (default build/attnbench, python3)
#   ATTN_PEER_DIR      where the modules are (default tools/peers)
# Exit: the highest of the parts' (0 ok, 1 a row failed, 2 bad input).
set -u
peers=${1:?usage: bench/peers.sh PEERS [attnbench options...]}
shift
attnbench=${ATTNBENCH:-build/attnbench}
python=${PYTHON:-python3}
dir=${ATTN_PEER_DIR:-tools/peers}
say() { echo "make bench PEERS=$peers: $*" >&2; }

# the modules there are, and those named
shopt -s nullglob
known=()
for f in "$dir"/*_peers.py; do f=${f##*/}; known+=("${f%_peers.py}"); done
shopt -u nullglob
IFS=, read -r -a names <<<"$peers"
[ ${#names[@]} -gt 0 ] || { say "names no peer module (known: ${known[*]:-none in $dir})"; exit 2; }
for n in "${names[@]}"; do
  case " ${known[*]} " in
  *" $n "*) ;;
  *) say "unknown peer module '$n': no $dir/${n}_peers.py (known: ${known[*]:-none})"; exit 2 ;;
  esac
done

# the C part's arguments, and the peers' (no --variants, --resume or --row-timeout:
# the peers pick their own, extend the run, and run in one process)
c_args=() p_args=() id=
while [ $# -gt 0 ]; do
  case $1 in
    --resume) id=${2:-}; c_args+=(--extend "${2:-}"); shift 2; continue ;;
    --variants|--row-timeout) c_args+=("$1" "${2:-}"); shift 2; continue ;;
    --run-id|--extend|--shard|--trace) say "$1 is set by make bench PEERS= itself, or not available with peers"; exit 2 ;;
  esac
  c_args+=("$1"); p_args+=("$1"); shift
done

# each module's peers (its --list: a header line, then one peer a line);
# PEER_VARIANTS split among the modules that have them
IFS=, read -r -a chosen <<<"${PEER_VARIANTS:-}"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run=() picks=() left=() unclaimed=" ${chosen[*]} "
for n in "${names[@]}"; do
  module=$dir/${n}_peers.py
  has=$("$python" "$module" --list 2>"$err")
  rc=$?
  why=$(tail -n 1 "$err")
  if [ $rc = 3 ]; then left+=("$module cannot run here ($why)"); continue; fi
  [ $rc = 0 ] || { say "$module --list exited $rc${why:+: $why}"; exit 2; }
  # its variants: the table up to the blank line (the modules' listing follows it)
  has=$(awk 'NF == 0 { exit } $1 != "variant" { print $1 }' <<<"$has")
  pick=
  for v in "${chosen[@]}"; do
    grep -qxF -- "$v" <<<"$has" && { pick=${pick:+$pick,}$v; unclaimed=${unclaimed/ $v / }; }
  done
  [ ${#chosen[@]} = 0 ] || [ -n "$pick" ] || continue
  run+=("$n") picks+=("$pick")
done
if [ ${#run[@]} = 0 ] && [ ${#left[@]} -gt 0 ]; then
  reasons=$(printf '%s; ' "${left[@]}")
  say "${reasons}the C variants run without peers"
  rm -f "$err"
  exec "$attnbench" "${c_args[@]}"
fi
[ -z "${unclaimed// /}" ] ||
  { say "PEER_VARIANTS: no peer module here has$unclaimed(each module's peers: $dir/NAME_peers.py --list)"; exit 2; }
for l in "${left[@]}"; do say "$l: left out"; done

[ -n "$id" ] || { id=$(date -u +%Y%m%dT%H%M%SZ); c_args+=(--run-id "$id"); }
"$attnbench" "${c_args[@]}"
rc=$?
[ $rc -le 1 ] || { say "attnbench exited $rc: the peers do not run"; exit $rc; }
for i in "${!run[@]}"; do
  "$python" "$dir/${run[$i]}_peers.py" "${p_args[@]}" ${picks[$i]:+--variants "${picks[$i]}"} --extend "$id"
  prc=$?
  [ $prc -gt $rc ] && rc=$prc
done
exit $rc
