"""``evalkit rate --cluster item`` under an address-space cap, paired with plain ``rate`` and the floor.

Generates (or reuses, ``--keep``) an Arena-style Parquet file of ``--rows`` rows among ``--models``
models with ``--items`` item ids (``question_id``; :func:`bench_scale.generate`), then runs in turn,
``--repeat`` times, each under ``ulimit -v --cap-kb`` in its own process tree:

- ``floor``: DuckDB's bare ``GROUP BY model_a, model_b, winner`` count of the file;
- ``floor (item, player)``: DuckDB's bare ``GROUP BY question_id, player`` of each row's two players
  (the aggregation that the cluster-robust meat cannot avoid; DuckDB's default memory limit);
- ``rate``: ``evalkit rate FILE`` (sandwich intervals);
- ``rate --cluster item``: the cluster-robust (CR1, t(G - 1)) sandwich over the items.

Each row: median wall seconds, the median of the per-round ratios to ``rate`` and to the floor,
the exit code, and the peak RSS of the largest process of the tree (``os.wait4``'s ``ru_maxrss``,
which includes waited-for descendants).
The load (``os.getloadavg``) is printed before and after.

Run::

    nice python scripts/bench_cluster.py --rows 1e7 --items 50000 --models 200 --cap-kb 2097152
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate  # noqa: E402

FLOOR = ("import duckdb, sys; duckdb.sql(\"SELECT model_a, model_b, winner, count(*) FROM read_parquet('\" "
         "+ sys.argv[1] + \"') GROUP BY ALL\").fetchall()")
# the (item, player) aggregation alone: each row's two players, summed per item (a count of the groups)
ITEM_FLOOR = ("import duckdb, sys; duckdb.sql(\"SELECT count(*) FROM (SELECT question_id, p, sum(v) FROM (SELECT "
              "question_id, unnest([model_a, model_b]) AS p, unnest([1.0, -1.0]) AS v FROM read_parquet('\" "
              "+ sys.argv[1] + \"')) GROUP BY ALL)\").fetchall()")


def run(cmd: list[str], cap_kb: int) -> tuple[float, float, int]:
    """``(wall seconds, peak RSS MB of the tree, exit code)`` of ``cmd`` under ``ulimit -v cap_kb``."""
    line = f"ulimit -v {int(cap_kb)}; exec {shlex.join(cmd)} >/dev/null 2>&1"
    t = time.perf_counter()
    pid = os.spawnvp(os.P_NOWAIT, "bash", ["bash", "-c", line])
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - t, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--cap-kb", type=int, default=2_097_152, help="ulimit -v of every run (KiB; 0: none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/evalkit-bench-cluster")
    ap.add_argument("--keep", action="store_true", help="keep (and reuse) the generated file")
    args = ap.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"arena-{int(args.rows)}-{args.models}m-{args.items}items.parquet"
    if not path.exists():
        generate(path, int(args.rows), args.models, seed=3, items=args.items)
    ek = [sys.executable, "-m", "evalkit"]
    tools = {"floor": [sys.executable, "-c", FLOOR, str(path)],
             "floor (item, player)": [sys.executable, "-c", ITEM_FLOOR, str(path)], "rate": ek + ["rate", str(path)],
             "rate --cluster item": ek + ["rate", str(path), "--cluster", "item"]}
    cap = args.cap_kb if args.cap_kb > 0 else "unlimited"
    print(f"load before: {os.getloadavg()}; {int(args.rows):,} rows, {args.models} models, {args.items:,} items; "
          f"ulimit -v {cap} KiB; {args.repeat} rounds")
    runs: dict[str, list[tuple[float, float, int]]] = {k: [] for k in tools}
    for _ in range(args.repeat):
        for name, cmd in tools.items():
            runs[name].append(run(cmd, args.cap_kb or 0) if args.cap_kb else run(cmd, 2**40))
    print("| run | wall s (median) | x plain rate | x floor | peak RSS MB | exit codes |")
    print("|---|---:|---:|---:|---:|---|")
    for name, got in runs.items():
        walls = sorted(w for w, _, _ in got)
        to_rate = sorted(w / r[0] for (w, _, _), r in zip(got, runs["rate"], strict=True))
        to_floor = sorted(w / f[0] for (w, _, _), f in zip(got, runs["floor"], strict=True))
        mid = len(got) // 2
        print(f"| {name} | {walls[mid]:.2f} | {to_rate[mid]:.2f} | {to_floor[mid]:.2f} | "
              f"{max(m for _, m, _ in got):.0f} | {sorted({c for _, _, c in got})} |")
    print(f"load after: {os.getloadavg()}")
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
