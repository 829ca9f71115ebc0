"""One evalkit command from several source trees (e.g. this commit and the one before), paired in one run.

Each case is a fresh process: ``python -c "from evalkit._entry import console; console()" ARGS`` with
``PYTHONPATH`` set to a tree (a ``git worktree`` of another commit, say), run from a neutral folder so
that the tree's ``evalkit`` is the one imported; ``floor`` is DuckDB's bare ``GROUP BY model_a, model_b,
winner`` of the same file (as ``scripts/bench_command.py``). The cases run in turn, A B C, then C B A,
... (one warm-up round first); the table gives each case's median wall time and the median of its
pair-by-pair ratios to the floor, with their range, and the 1-minute load average before and after.

Run::

    git worktree add /tmp/evalkit-before HEAD~1
    python scripts/bench_trees.py FILE.parquet --tree before=/tmp/evalkit-before --tree now=. \\
        --args "rate {file} --out {out} --force" -n 12
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = ("import duckdb, numpy, sys\n"
         "rows = duckdb.sql(\"SELECT model_a, model_b, winner, count(*) FROM read_parquet('\" + sys.argv[1] + \"') "
         "GROUP BY ALL\").fetchall()\nprint(len(rows))\n")


def _run(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, _ = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed (exit {os.waitstatus_to_exitcode(status)})")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="an Arena-style Parquet file (model_a, model_b, winner)")
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=PATH",
                    help="a source tree whose evalkit is timed (repeatable)")
    ap.add_argument("--args", default="rate {file} --out {out} --force",
                    help="the evalkit command line; {file} and {out} (a fresh folder per tree) are filled in")
    ap.add_argument("-n", type=int, default=10, help="rounds (default 10)")
    opts = ap.parse_args(argv)
    file = str(Path(opts.file).resolve())
    work = tempfile.mkdtemp(prefix="evalkit-trees-")
    cases: dict[str, tuple[list[str], dict[str, str]]] = {}
    for spec in opts.tree:
        name, _, path = spec.partition("=")
        out = os.path.join(work, f"out-{name}")
        args = shlex.split(opts.args.format(file=file, out=out))
        env = {**os.environ, "PYTHONPATH": str(Path(path).resolve())}
        cases[name] = ([sys.executable, "-c", "from evalkit._entry import console; console()", *args], env)
    cases["floor"] = ([sys.executable, "-c", FLOOR, file], dict(os.environ))
    names = list(cases)
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs; {opts.n} rounds "
          f"after a warm-up; `evalkit {opts.args}`")
    for name in names:
        _run(*cases[name], cwd=work)
    times: dict[str, list[float]] = {k: [] for k in names}
    for r in range(opts.n):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(_run(*cases[name], cwd=work))
    print("| case | median s | ÷ floor (median, range) |\n|---|---:|---:|")
    for name in names:
        ratios = [a / b for a, b in zip(times[name], times["floor"], strict=True)]
        print(f"| {name} | {statistics.median(times[name]):.3f} | **{statistics.median(ratios):.2f}×** "
              f"({min(ratios):.2f}–{max(ratios):.2f}) |")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
