#!/usr/bin/env bash
# scenarios.sh runs every named scenario of `check list` for seeds 1..10
# (SEEDS), each for its own --time, and tallies the verdicts with
# scripts/matrix.sh: invalid wanted (a stuck lock for setnx-expire-crash).
# Long: `make scenarios`, not part of make test.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/check}
cells=$(mktemp /tmp/lockcheck-scenarios-XXXXXX.txt)
trap 'rm -f "$cells"' EXIT
"$BIN" list | awk '/^scenarios/{on=1; next} /^[a-z]/{on=0} on && /^  [a-z]/{print $1}' |
while read -r name; do
  want=U
  [ "$name" = setnx-expire-crash ] && want=L
  echo "$name scenario $want --scenario $name"
done >"$cells"
TIME="" bash scripts/matrix.sh "$cells" "$@"
