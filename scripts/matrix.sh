#!/usr/bin/env bash
# matrix.sh runs a verdict matrix: every cell of a cells file for every seed,
# a few runs at a time, and prints one line per cell with the tally, ready
# for docs/verdicts.md. Long: `make acceptance-redis`, not part of make test.
#
#   scripts/matrix.sh CELLS [OUT.tsv]
#
# CELLS has one cell a line: ROW COLUMN EXPECT FLAGS... where EXPECT is S
# (valid wanted, exit 0), U (invalid wanted, exit 1) or L (stuck lock wanted,
# exit 1 with a stuck-lock anomaly) or D (depends: tallied, no
# expectation). Blank lines and # comments are skipped.
# Environment: SEEDS (default 1..10), TIME (default 15s; empty: no
# --time flag, the scenario's own), JOBS (parallel
# runs, default 2), BIN, STORE.
set -u
cd "$(dirname "$0")/.."
cells=${1:?usage: scripts/matrix.sh CELLS [OUT.tsv]}
out=${2:-$(mktemp /tmp/lockcheck-matrix-XXXXXX.tsv)}
BIN=${BIN:-bin/check}
STORE=${STORE:-store}
TIME=${TIME-15s}
JOBS=${JOBS:-2}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
[ -x "$BIN" ] || { echo "matrix: $BIN not built (make build)" >&2; exit 3; }
[ -r "$cells" ] || { echo "matrix: cannot read $cells" >&2; exit 3; }

# one ROW COLUMN EXPECT SEED FLAGS...: runs a cell once, prints a TSV line.
one() {
  local row=$1 col=$2 want=$3 seed=$4; shift 4
  local log code dir
  log=$("$BIN" run --quiet --store "$STORE" ${TIME:+--time "$TIME"} --seed "$seed" "$@" 2>&1); code=$?
  dir=$(echo "$log" | sed -n 's/.*run dir \([^ ]*\).*/\1/p' | head -n 1)
  local stuck=0
  [ -n "$dir" ] && grep -q '"stuck-lock"' "$dir/results.json" 2>/dev/null && stuck=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$col" "$want" "$seed" "$code" "$stuck" "$dir"
}
export -f one
export BIN STORE TIME

: >"$out"
grep -v '^[[:space:]]*\(#\|$\)' "$cells" | while read -r row col want flags; do
  for s in $SEEDS; do printf '%s\0%s\0%s\0%s\0%s\0' "$row" "$col" "$want" "$s" "$flags"; done
done | xargs -0 -n 5 -P "$JOBS" bash -c 'f=$5; set -- "$1" "$2" "$3" "$4"; one "$@" $f' _ >>"$out"

# Tally: a cell meets its expectation when every S run was valid and at
# least 9 of 10 U (or L) runs were invalid (L: with a stuck lock).
awk -F'\t' '
{ k=$1"\t"$2; want[k]=$3; n[k]++
  if ($5==0) v[k]++; else if ($5==1) { i[k]++; if ($6==1) st[k]++ } else e[k]++
  seeds[k]=seeds[k] (seeds[k]==""?"":",") $4 }
END { for (k in n) {
    split(k, p, "\t"); ok="no"
    if (want[k]=="S" && v[k]==n[k]) ok="yes"
    if (want[k]=="U" && i[k]>=0.9*n[k]) ok="yes"
    if (want[k]=="L" && st[k]>=0.9*n[k]) ok="yes"
    if (want[k]=="D") ok="n/a"
    printf "%s | %s | want %s | valid %d, invalid %d (stuck %d), error %d of %d | seeds %s | %s\n",
      p[1], p[2], want[k], v[k]+0, i[k]+0, st[k]+0, e[k]+0, n[k], seeds[k], ok } }' "$out" | sort
echo "matrix: runs in $out" >&2
