#!/usr/bin/env bash
# acceptance-zk.sh runs the issue-3 acceptance matrix: the zk-session-expiry
# scenario (unfenced and fenced) over seeds 1..10, and zk-ephemeral and
# zk-sequential under none, kill (leader), pause and partition. Partition
# runs use a critical section (--think) longer than the session timeout: a
# holder cut off only while it is idle lets go before its session expires.
# Long (about 35 minutes): `make acceptance-zk`, not part of `make test`.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/check}
STORE=${STORE:-store}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}

tally() {
  local name=$1 want=$2; shift 2
  local hit=0 n=0
  for c in "$@"; do n=$((n+1)); [ "$c" = "$want" ] && hit=$((hit+1)); done
  echo "== $name: $hit of $n runs exited $want"
}
one() {
  local out code start=$SECONDS
  out=$("$BIN" run --store "$STORE" "$@" 2>&1); code=$?
  echo "exit $code ($((SECONDS-start))s): $* -> $(echo "$out" | tail -n 1)" >&2
  echo "$code"
}
matrix() { # name expected flags...
  local name=$1 want=$2; shift 2
  local codes=()
  for s in $SEEDS; do codes+=("$(one "$@" --seed "$s")"); done
  tally "$name" "$want" "${codes[@]}"
}

matrix "zk-session-expiry" 1 --scenario zk-session-expiry
matrix "zk-session-expiry --fencing" 0 --scenario zk-session-expiry --fencing
for lock in zk-ephemeral zk-sequential; do
  matrix "$lock none" 0 --lock "$lock" --nemesis none --time 15s
  matrix "$lock kill" 0 --lock "$lock" --nemesis kill --time 15s
  matrix "$lock pause" 1 --lock "$lock" --nemesis pause --time 15s
  matrix "$lock partition" 1 --lock "$lock" --nemesis partition --think 2500ms --time 20s
done
