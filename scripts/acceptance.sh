#!/usr/bin/env bash
# acceptance.sh runs the issue-2 acceptance matrix: seeds 1..10 of
# redis-set-px under pause (unfenced and fenced), and the no-fault control
# run of each lock. It prints one line per run and a tally. Long (about 15
# minutes): `make acceptance`, not part of `make test`.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/check}
STORE=${STORE:-store}
TIME=${TIME:-30s}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}

tally() { # name expected-code codes...
  local name=$1 want=$2; shift 2
  local hit=0 n=0
  for c in "$@"; do n=$((n+1)); [ "$c" = "$want" ] && hit=$((hit+1)); done
  echo "== $name: $hit of $n runs exited $want"
}

one() { # prints the exit code and the last line
  local out code
  out=$("$BIN" run --store "$STORE" --time "$TIME" "$@" 2>&1); code=$?
  echo "exit $code: $* -> $(echo "$out" | tail -n 1)" >&2
  echo "$code"
}

codes=(); for s in $SEEDS; do codes+=("$(one --lock redis-set-px --nemesis pause --seed "$s")"); done
tally "redis-set-px pause" 1 "${codes[@]}"
codes=(); for s in $SEEDS; do codes+=("$(one --lock redis-set-px --nemesis pause --fencing --seed "$s")"); done
tally "redis-set-px pause --fencing" 0 "${codes[@]}"
for lock in redis-set-px redis-set-px-del redis-setnx-expire; do
  codes=("$(one --lock "$lock" --nemesis none --seed 1)")
  tally "$lock none" 0 "${codes[@]}"
done
codes=("$(one --lock redis-set-px-del --nemesis pause --seed 1)")
tally "redis-set-px-del pause" 1 "${codes[@]}"
