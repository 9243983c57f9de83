#!/bin/bash
# peers.sh PEERS [attnbench options...] — make bench PEERS=torch: the C
# variants measured by attnbench, then the PyTorch peers
# (tools/peers/torch_peers.py) added to the same run with --extend RUN_ID:
# one RUN_ID, one CSV, the same grid, seed and rules. With --resume RUN_ID
# both parts continue that run. --variants picks the C variants;
# PEER_VARIANTS=a,b picks peers. Without a PyTorch that sees a GPU, it says
# so in one line and runs the C variants alone.
#   ATTNBENCH, PYTHON  the programs (default build/attnbench, python3)
# Exit: the higher of the two parts' (0 ok, 1 a row failed, 2 bad input).
set -u
peers=${1:?usage: bench/peers.sh PEERS [attnbench options...]}
shift
attnbench=${ATTNBENCH:-build/attnbench}
python=${PYTHON:-python3}
say() { echo "make bench PEERS=$peers: $*" >&2; }
[ "$peers" = torch ] || { say "unknown peers (known: torch)"; exit 2; }

# the C part's arguments, and the peers' (no --variants, --resume or --row-timeout:
# the peers pick their own, extend the run, and run in one process)
c_args=() p_args=() id=
while [ $# -gt 0 ]; do
  case $1 in
    --resume) id=${2:-}; c_args+=("$1" "${2:-}"); shift 2; continue ;;
    --variants|--row-timeout) c_args+=("$1" "${2:-}"); shift 2; continue ;;
    --run-id|--extend|--shard|--trace) say "$1 is set by make bench PEERS= itself, or not available with peers"; exit 2 ;;
  esac
  c_args+=("$1"); p_args+=("$1"); shift
done

if ! why=$("$python" -c 'import torch; assert torch.cuda.is_available(), "torch.cuda.is_available() is False"' 2>&1); then
  say "PyTorch is not usable by $python ($(echo "$why" | tail -n 1)); the C variants run without peers"
  exec "$attnbench" "${c_args[@]}"
fi
[ -n "$id" ] || { id=$(date -u +%Y%m%dT%H%M%SZ); c_args+=(--run-id "$id"); }
"$attnbench" "${c_args[@]}"
rc=$?
[ $rc -le 1 ] || { say "attnbench exited $rc: the peers do not run"; exit $rc; }
"$python" tools/peers/torch_peers.py "${p_args[@]}" ${PEER_VARIANTS:+--variants "$PEER_VARIANTS"} --extend "$id"
prc=$?
[ $prc -gt $rc ] && rc=$prc
exit $rc
