#!/usr/bin/env python3
"""The lost-lock windows of a matrix, per cell: docs/verdicts.md's table.

  windows-table.py runs STORE/matrix/TIME/matrix.json > runs.jsonl
      one line per run of the matrix: its cell, seed and verdict, and what
      its windows checker found (server releases, each window's length,
      the count of each class and of each way the holder learned, the
      observer's median lag);
  windows-table.py table runs.jsonl [more.jsonl ...] > table.md
      the markdown table of docs/verdicts.md from one or more such files
      (for example seeds 1..5 and 6..10 run apart), one row per cell; a
      run of a cell and seed in a later file replaces one in an earlier
      file (a cell run again).

A window runs from the server's release of a holder's lock to when the
holder learned of it. Only the standard library; run with python3.
"""
import json
import os
import statistics
import sys


def runs(matrix_path):
    m = json.load(open(matrix_path))
    store = store_of(matrix_path)
    for c in m["cells"]:
        for r in c.get("runs") or []:
            if r["verdict"] == "interrupted":
                continue  # a matrix stopped by hand: its later run counts
            out = {"row": c["row"], "column": c["column"], "args": c["args"], "seed": r["seed"],
                   "verdict": r["verdict"]}
            out.update(windows_of(store, r))
            print(json.dumps(out, sort_keys=True))


def store_of(matrix_path):
    """The store a matrix was stored in (STORE/matrix/TIME/matrix.json),
    to which its run directories are relative."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(matrix_path))))


def windows_of(store, r):
    """What run r's windows checker found, from its results.json."""
    out = {"server_releases": 0, "lengths": [], "classes": {}, "learned": {}, "lag_median_s": None}
    res = os.path.join(store, r.get("dir", ""), "results.json")
    if not r.get("dir") or not os.path.exists(res):
        return out
    for sub in json.load(open(res)).get("results", []):
        if sub.get("checker") != "windows":
            continue
        st = sub.get("stats", {})
        out["server_releases"] = st.get("server_releases", 0)
        out["lag_median_s"] = (st.get("observer_lag") or {}).get("median_s")
        for w in st.get("windows") or []:
            out["lengths"].append(round(w.get("window_s", 0), 3))
            add(out["classes"], w.get("class", ""))
            add(out["learned"], how_learned(w.get("learned_by", "")))
    return out


def how_learned(by):
    """The way a holder learned, without its particulars: what its client
    said ("its lock client reported"), when it released ("never told")."""
    cut = len(by)
    for sep in (' "', " (", ":"):
        i = by.find(sep)
        if i >= 0:
            cut = min(cut, i)
    return by[:cut]


def add(counts, k, n=1):
    counts[k] = counts.get(k, 0) + n


def nearest_rank(xs, q):
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, -(-len(xs) * q // 100) - 1))
    return xs[int(k)]


def grouped(counts):
    return "; ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def fault_words(column, args):
    if column == "partition" and "--think" in args:
        return "partition, %s section" % args[args.index("--think") + 1].replace("ms", " ms").replace("2500 ms", "2.5 s")
    return column


def table(paths):
    cells, order = {}, []
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            k = (r["row"], r["column"])
            if k not in cells:
                cells[k] = {}
                order.append(k)
            cells[k][r["seed"]] = r
    cells = {k: [rs[seed] for seed in sorted(rs)] for k, rs in cells.items()}
    print("| design | fault | verdicts | server releases | windows | window median / p99 / max (s) "
          "| classes | how the holder learned | observer lag (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in order:
        rs = cells[k]
        verdicts = {}
        for r in rs:
            v = {"valid": "S", "invalid": "U"}.get(r["verdict"], r["verdict"])
            verdicts[v] = verdicts.get(v, 0) + 1
        lengths = [x for r in rs for x in r["lengths"]]
        classes, learned = {}, {}
        for r in rs:
            for name, n in r["classes"].items():
                add(classes, name, n)
            for name, n in r["learned"].items():
                add(learned, name, n)
        lags = [r["lag_median_s"] for r in rs if r["lag_median_s"] is not None]
        spread = "–"
        if lengths:
            spread = "%.2f / %.2f / %.2f" % (statistics.median(lengths), nearest_rank(lengths, 99), max(lengths))
        lag = "%.0f ms" % (statistics.median(lags) * 1000) if lags else "–"
        print("| `%s` | %s | %s | %d | %d | %s | %s | %s | %s |" % (
            k[0], fault_words(k[1], rs[0]["args"]), ", ".join(f"{v} {n}/{len(rs)}" for v, n in sorted(verdicts.items())),
            sum(r["server_releases"] for r in rs), len(lengths), spread, grouped(classes) or "–", grouped(learned) or "–", lag))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "runs":
        runs(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
