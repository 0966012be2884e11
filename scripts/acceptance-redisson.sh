#!/usr/bin/env bash
# acceptance-redisson.sh runs the issue-4 measurements of the Redisson-style
# locks and the crash failpoint (docs/verdicts.md, "Redisson-style locks"):
# the setnx-expire-crash and watchdog-pause scenarios over seeds 1..10, and
# redis-watchdog / redis-reentrant under none, pause and a partition with a
# critical section longer than the lease over seeds 1..3. One line per run
# and a tally. About 25 minutes; not part of `make test`.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/check}
STORE=${STORE:-store}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
FEW=${FEW:-"1 2 3"}

tally() { # name expected-code codes...
  local name=$1 want=$2; shift 2
  local hit=0 n=0
  for c in "$@"; do n=$((n+1)); [ "$c" = "$want" ] && hit=$((hit+1)); done
  echo "== $name: $hit of $n runs exited $want"
}

one() { # prints the exit code; the run's last line goes to stderr
  local out code
  out=$("$BIN" run --store "$STORE" --quiet "$@" 2>&1); code=$?
  echo "exit $code: $* -> $(echo "$out" | tail -n 1)" >&2
  echo "$code"
}

codes=(); for s in $SEEDS; do codes+=("$(one --scenario setnx-expire-crash --seed "$s")"); done
tally "setnx-expire-crash (stuck lock)" 1 "${codes[@]}"
codes=(); for s in $SEEDS; do codes+=("$(one --scenario watchdog-pause --seed "$s")"); done
tally "watchdog-pause" 1 "${codes[@]}"
for lock in redis-watchdog redis-reentrant; do
  codes=(); for s in $FEW; do codes+=("$(one --lock "$lock" --nemesis none --time 15s --seed "$s")"); done
  tally "$lock none" 0 "${codes[@]}"
  codes=(); for s in $FEW; do codes+=("$(one --lock "$lock" --nemesis pause --time 15s --seed "$s")"); done
  tally "$lock pause" 1 "${codes[@]}"
  codes=(); for s in $FEW; do codes+=("$(one --lock "$lock" --nemesis partition --think 3s --time 15s --seed "$s")"); done
  tally "$lock partition --think 3s" 1 "${codes[@]}"
done
