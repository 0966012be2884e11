#!/usr/bin/env bash
# Runs the whole test suite (scripts/test.sh, the container tests included
# where a Docker engine answers) while two busy loops keep both cores loaded, as
# on a machine shared with other work: the tests must assert what happened
# or wait for the event they need, never count on a rate.
#
# The busy loops are bounded in time (LOAD_SECONDS, default 1800) and are
# stopped by their pids when the tests end, whatever the exit.
set -u
cd "$(dirname "$0")/.."
limit=${LOAD_SECONDS:-1800}
loops=${LOAD_LOOPS:-2}
pids=()
stop() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap stop EXIT
trap 'stop; exit 130' INT TERM
for ((i = 0; i < loops; i++)); do
	# A builtin-only loop: no child processes, ends on its own at the limit.
	( end=$((SECONDS + limit)); while ((SECONDS < end)); do :; done ) &
	pids+=($!)
done
echo "test-under-load: $loops busy loops (pids ${pids[*]}), at most ${limit}s"
TIMEOUT=25m bash scripts/test.sh
code=$?
stop
echo "test-under-load: exit $code"
exit $code
