#!/usr/bin/env python3
"""A matrix's runs kept as data, and the per-cell table of several of them.

  matrix-runs.py runs STORE/matrix/TIME/matrix.json > runs.jsonl
      one line per run that ended: its cell (row, column, expectation,
      flags, required conditions), seed, verdict, exit code, anomalies by
      kind, why it was not exercised or was an error, wall time and first
      anomaly, the danger conditions it reached (as its results.json has
      them now: check analyze --in-place brings them up to a newer
      checker), and what its windows checker found (the fields
      windows-table.py table reads, so one file serves both tables);
  matrix-runs.py table [--expect CELLS_FILE] runs.jsonl [more.jsonl ...] > table.md
      one row per cell over every file's runs (for example seed 1 and
      seeds 2..3, run on different days or machines), judged against the
      cell's expectation with `check matrix`'s rules (docs/matrix.md): any
      error misses; S wants every exercised run valid; U at least 90 % of
      them invalid; L at least 90 % invalid with a stuck lock; D has no
      expectation. A run of the same cell and seed in a later file
      replaces the earlier one (a cell run again after a fix). A cell's
      expectation is the one its runs recorded, unless CELLS_FILE (a
      cells file or matrix/catalog.txt) gives its row and column another
      one, with its reach= ("?" gives none): how runs measured before a cell's
      expectation was revised are judged by the one it has now;
  matrix-runs.py coverage [--expect CELLS_FILE] runs.jsonl [more.jsonl ...] > coverage.md
      the files' coverage by fault: for each column and danger condition
      its cells require (reach=, or CELLS_FILE's), how many cells and
      runs, how many of the runs reached it, and how many cells never
      did, named after the table;
  matrix-runs.py left CELLS_FILE SEEDS runs.jsonl [more.jsonl ...] > left.txt
      the lines of CELLS_FILE whose cell lacks a run at some seed of SEEDS
      (written as check matrix takes them: 1..10, 2,4 or 1..3,7) in the
      files: the cells file of what is left to run.

Only runs that ended are kept: an interrupted run (a matrix stopped by
hand) is left out, so a later shard can run it. Only the standard library;
run with python3.
"""
import importlib.util
import json
import os
import sys

UNSAFE_RATE = 0.9


def windows_table():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "windows-table.py")
    spec = importlib.util.spec_from_file_location("windows_table", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def runs(matrix_path):
    wt = windows_table()
    store = wt.store_of(matrix_path)
    m = json.load(open(matrix_path))
    for c in m["cells"]:
        for r in c.get("runs") or []:
            if r["verdict"] == "interrupted":
                continue
            out = {"row": c["row"], "column": c["column"], "expect": c.get("expect", ""), "args": c.get("args", []),
                   "seed": r["seed"], "verdict": r["verdict"], "exit": r["exit"],
                   "anomalies": r.get("anomalies", {}), "wall_s": r.get("wall_s")}
            if c.get("require"):
                out["require"] = c["require"]
            for k in ("first_anomaly_s", "not_exercised", "error", "reached", "aimed"):
                if r.get(k) is not None:
                    out[k] = r[k]
            reached = reached_of(store, r)
            if reached is not None:
                out.pop("reached", None)
                if reached:
                    out["reached"] = reached
            out.update(wt.windows_of(store, r))
            print(json.dumps(out, sort_keys=True))


def reached_of(store, r):
    """The danger conditions run r reached, by name, as its results.json
    has them now (check analyze --in-place with a newer checker rewrites
    them; the matrix copied them when the run ended); None when the run
    directory or its results.json is gone, or the results have no list of
    them (a run older than the conditions)."""
    res = os.path.join(store, r.get("dir", ""), "results.json")
    if not r.get("dir") or not os.path.exists(res):
        return None
    got = json.load(open(res)).get("reached")
    if not isinstance(got, list):
        return None
    return {c["name"]: c.get("count", 0) for c in got if c.get("count", 0) > 0}


def cell_key(r):
    return (r["row"], r["column"], " ".join(r["args"]))


def judge_cell(expect, require, rs):
    """check matrix's JudgeCell (matrix/tally.go): judge, and a cell that
    requires a danger condition (reach=) that none of its runs reached
    misses ("never reached NAME"), whatever it expects. It returns the
    status, why, and the required conditions no run reached."""
    status, why = judge(expect, rs)
    un = [n for n in require if not any((r.get("reached") or {}).get(n, 0) > 0 for r in rs)]
    if not un or not any(r["verdict"] in ("valid", "invalid", "unknown", "not-exercised") for r in rs):
        return status, why, un
    never = "never reached " + ", ".join(un)
    if status == "missed":
        return status, why + "; " + never, un
    return "missed", never, un


def coverage(require, rs):
    """check matrix's Coverage (matrix/matrix.go): each danger condition
    the runs reached, in how many of them, required ones first (those
    never reached as 0/N)."""
    counts = {}
    for r in rs:
        for name, k in (r.get("reached") or {}).items():
            if k > 0:
                counts[name] = counts.get(name, 0) + 1
    names = list(require) + sorted(n for n in counts if n not in require)
    return ", ".join(f"{n} {counts.get(n, 0)}/{len(rs)}" for n in names)


def judge(expect, rs):
    """check matrix's Judge (matrix/tally.go) over one cell's runs."""
    n = len(rs)
    errors = sum(r["verdict"] == "error" for r in rs)
    exercised = [r for r in rs if r["verdict"] in ("valid", "invalid", "unknown")]
    valid = sum(r["verdict"] == "valid" for r in exercised)
    invalid = sum(r["verdict"] == "invalid" for r in exercised)
    stuck = sum(r["verdict"] == "invalid" and r["anomalies"].get("stuck-lock", 0) > 0 for r in exercised)
    if errors:
        return "missed", f"{errors} of {n} runs ended in an error"
    if expect in ("D", "?", ""):
        return "none", ""
    if not exercised:
        return "missed", f"no exercised run ({n} not exercised)"
    if expect == "S":
        if valid == len(exercised):
            return "met", ""
        unknown = len(exercised) - valid - invalid
        return "missed", f"valid in {valid} of {len(exercised)} exercised runs ({invalid} invalid, {unknown} unknown), want all"
    hit, what = (invalid, "invalid") if expect == "U" else (stuck, "a stuck lock")
    if hit >= UNSAFE_RATE * len(exercised):
        return "met", ""
    return "missed", f"{what} in {hit} of {len(exercised)} exercised runs, want at least 90%"


def expectations(cells_path):
    """(row, column) -> (expectation, required conditions) of each line of
    a cells file that gives one."""
    out = {}
    for line in open(cells_path):
        f = line.split()
        if len(f) >= 3 and not f[0].startswith("#") and f[2] != "?":
            require = f[3][len("reach="):].split(",") if len(f) > 3 and f[3].startswith("reach=") else []
            out[(f[0], f[1])] = (f[2], require)
    return out


def load_cells(paths, expect=None):
    """The cells of the files' runs, in the order first seen: each its
    expectation and required conditions (the last file's, or CELLS_FILE's
    by way of expect) and its runs by seed, a later file's run of a seed
    replacing an earlier one."""
    cells, order = {}, []
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            k = cell_key(r)
            if k not in cells:
                cells[k] = {"expect": r["expect"], "require": [], "runs": {}}
                order.append(k)
            cells[k]["require"] = r.get("require", [])
            cells[k]["runs"][r["seed"]] = r
    for k in order:
        if expect and (k[0], k[1]) in expect:
            cells[k]["expect"], cells[k]["require"] = expect[(k[0], k[1])]
    return cells, order


def table(paths, expect=None):
    cells, order = load_cells(paths, expect)
    print("| design | fault | flags | expected | seeds | valid / invalid / unknown / not exercised / error | reached | status |")
    print("|---|---|---|---|---|---|---|---|")
    totals, required, unreached = {}, 0, 0
    for k in order:
        c = cells[k]
        rs = [c["runs"][s] for s in sorted(c["runs"])]
        status, why, un = judge_cell(c["expect"], c["require"], rs)
        totals[status] = totals.get(status, 0) + 1
        if c["require"]:
            required += 1
            unreached += bool(un)
        counts = [sum(r["verdict"] == v for r in rs) for v in ("valid", "invalid", "unknown", "not-exercised", "error")]
        flags = " ".join(extra_flags(k[2].split()))
        seeds = seed_ranges(sorted(c["runs"]))
        print(f"| `{k[0]}` | {k[1]} | {flags} | {c['expect']} | {seeds} | {' / '.join(map(str, counts))} | {coverage(c['require'], rs)} | {status}{': ' + why if why else ''} |")
    print()
    print("cells: " + ", ".join(f"{v} {k}" for k, v in sorted(totals.items())))
    if required:
        print(f"required danger conditions: {required} cells require one, {required - unreached} reached every one, {unreached} left one unreached")


def coverage_table(paths, expect=None):
    """Per fault (column) and required condition: how many cells require
    it, their runs, the runs that reached it, and the cells whose runs
    never did, named below the table."""
    cells, order = load_cells(paths, expect)
    rows, never = {}, []
    for k in order:
        rs = list(cells[k]["runs"].values())
        for name in cells[k]["require"]:
            row = rows.setdefault((k[1], name), [0, 0, 0, 0])
            hit = sum((r.get("reached") or {}).get(name, 0) > 0 for r in rs)
            row[0] += 1
            row[1] += len(rs)
            row[2] += hit
            if hit == 0:
                row[3] += 1
                never.append(f"`{k[0]}` {k[1]} ({name}, {len(rs)} runs)")
    print("| fault | condition required | cells | runs | runs that reached it | cells that never did |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    for (col, name), row in sorted(rows.items()):
        print(f"| {col} | {name} | {row[0]} | {row[1]} | {row[2]} | {row[3]} |")
        total = [a + b for a, b in zip(total, row)]
    print(f"| all | | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    if never:
        print()
        print("never reached: " + ", ".join(sorted(never)))


def extra_flags(args):
    """The cell's flags but --lock and --nemesis, which its row and column
    name."""
    out, i = [], 0
    while i < len(args):
        if args[i] in ("--lock", "--nemesis") and i + 1 < len(args):
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out


def seed_ranges(seeds):
    out, i = [], 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        out.append(str(seeds[i]) if i == j else f"{seeds[i]}..{seeds[j]}")
        i = j + 1
    return ",".join(out)


def parse_seeds(spec):
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("..")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def left(cells_path, spec, paths):
    want = set(parse_seeds(spec))
    done = {}
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            done.setdefault((r["row"], r["column"]), set()).add(r["seed"])
    for line in open(cells_path):
        f = line.split()
        if not f or f[0].startswith("#") or want <= done.get((f[0], f[1]), set()):
            continue
        sys.stdout.write(line)


def main(argv):
    if len(argv) >= 3 and argv[1] == "runs":
        for p in argv[2:]:
            runs(p)
    elif len(argv) >= 5 and argv[1] == "table" and argv[2] == "--expect":
        table(argv[4:], expectations(argv[3]))
    elif len(argv) >= 3 and argv[1] == "table" and argv[2] != "--expect":
        table(argv[2:])
    elif len(argv) >= 5 and argv[1] == "coverage" and argv[2] == "--expect":
        coverage_table(argv[4:], expectations(argv[3]))
    elif len(argv) >= 3 and argv[1] == "coverage" and argv[2] != "--expect":
        coverage_table(argv[2:])
    elif len(argv) >= 4 and argv[1] == "left":
        left(argv[2], argv[3], argv[4:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
