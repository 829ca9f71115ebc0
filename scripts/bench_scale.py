"""Data at scale: evalkit against the DuckDB GROUP BY floor, polars, and itself on Dask.

Generates Arena-style files (``model_a, model_b, winner``; Bradley–Terry winners among
``--models`` models) of 1e6 and 1e7 rows (``--sizes``; add 1e8 with ``--sizes 1e6,1e7,1e8``),
streamed to disk in chunks (never held in memory): Parquet for every size, CSV and JSON
Lines up to 1e7. Each tool then runs in its own child process, which reports its wall time
and peak RSS (``os.wait4``); the table prints every time as a ratio to the floor, DuckDB's
bare ``GROUP BY model_a, model_b, winner`` count of the same file. Up to 1e7 rows, where a run
takes a fraction of a second and a busy machine moves single runs by 2x, each tool runs
``--repeat`` times in turn with the floor and the row gives the median of the paired ratios
(and their range). ``--keep`` keeps the files in ``--dir`` and reuses them next time.

Tools: ``floor`` (DuckDB GROUP BY), ``polars`` (scan + group_by), ``rate`` (``evalkit rate FILE``
end to end, sandwich intervals), ``aggregate`` (``aggregate_comparisons`` alone, DuckDB),
``read`` (``read_comparisons``, the pandas reader, up to ``--read-max`` rows), ``dask``
(``evalkit rate FILE --engine dask`` on a local 2-worker ``LocalCluster``; the peak RSS is the
client's, the workers are separate processes). Also: 10,000 models x 1e6 rows (fit vs
counting floor; ``evalkit rate`` with sandwich intervals) and a 1000-replicate cluster bootstrap
at 1e7 rows (``question_id`` with 100 items).

Run (files go under --dir, deleted afterwards unless --keep)::

    PYTHONPATH=. python scripts/bench_scale.py --sizes 1e6,1e7
    nice python scripts/bench_scale.py --rows 1e9 --engine dask --workers 1,2   # Dask scaling

``--engine dask`` writes one compact Parquet dataset of ``--rows`` rows (dictionary-encoded names,
files of 5e7 rows, row groups of 2.5e6 = one Dask partition each) and times ``evalkit rate DIR
--json`` on DuckDB, then on a local cluster of each ``--workers`` count (one thread per worker,
the cluster started before the clock): throughput per worker, the speed-up of the later worker
counts over the first, and whether the printed ratings are byte-identical to DuckDB's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CHUNK = 1_000_000


def generate(path: Path, n_rows: int, n_models: int, *, seed: int = 0, items: int = 0) -> None:
    """Stream an Arena-style Parquet file of ``n_rows`` rows to ``path``, ``CHUNK`` rows at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_models)
    names = np.array([f"model-{k:05d}" for k in range(n_models)], dtype=object)
    labels = np.array(["model_a", "model_b", "tie"], dtype=object)
    writer = None
    for start in range(0, n_rows, CHUNK):
        m = min(CHUNK, n_rows - start)
        a = rng.integers(0, n_models, m)
        b = (a + rng.integers(1, n_models, m)) % n_models
        p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
        u = rng.random(m)
        win = np.where(u < 0.1, 2, np.where(rng.random(m) < p, 0, 1))
        cols = {"model_a": pa.array(names[a], pa.string()), "model_b": pa.array(names[b], pa.string()),
                "winner": pa.array(labels[win], pa.string())}
        if items:
            cols["question_id"] = pa.array(rng.integers(0, items, m))
        table = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def generate_dataset(folder: Path, n_rows: int, n_models: int, *, seed: int = 0,
                     rows_per_file: int = 50_000_000, row_group: int = 2_500_000) -> None:
    """A Parquet dataset (a folder of files) of ``n_rows`` Arena rows, compact on disk: the names are
    written as dictionary arrays (a byte or two per row), ``row_group`` rows per row group (a Dask
    partition each)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_models)
    names = pa.array([f"model-{k:05d}" for k in range(n_models)], pa.string())
    labels = pa.array(["model_a", "model_b", "tie"], pa.string())
    folder.mkdir(parents=True, exist_ok=True)
    for f, start in enumerate(range(0, n_rows, rows_per_file)):
        with pq.ParquetWriter(folder / f"part-{f:04d}.parquet", pa.schema(
                [("model_a", pa.dictionary(pa.int32(), pa.string())), ("model_b", pa.dictionary(pa.int32(), pa.string())),
                 ("winner", pa.dictionary(pa.int32(), pa.string()))])) as writer:
            for lo in range(start, min(start + rows_per_file, n_rows), row_group):
                m = min(row_group, n_rows - lo, start + rows_per_file - lo)
                a = rng.integers(0, n_models, m, dtype=np.int32)
                b = ((a + rng.integers(1, n_models, m, dtype=np.int32)) % n_models).astype(np.int32)
                p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
                win = np.where(rng.random(m) < 0.1, 2, np.where(rng.random(m) < p, 0, 1)).astype(np.int32)
                writer.write_table(pa.table({
                    "model_a": pa.DictionaryArray.from_arrays(a, names),
                    "model_b": pa.DictionaryArray.from_arrays(b, names),
                    "winner": pa.DictionaryArray.from_arrays(win, labels)}), row_group_size=m)


def dask_scaling(args: argparse.Namespace) -> None:
    """``--engine dask``: one generated dataset of ``--rows`` rows; ``evalkit rate DIR`` on DuckDB, then on
    a local cluster of each ``--workers`` count (started before the clock, one thread per worker);
    ratings compared with DuckDB's, throughput per worker, speed-up against the first count."""
    from distributed import LocalCluster

    rows = int(float(args.rows))
    folder = Path(args.dir) / f"dataset-{rows:.0e}"
    print(f"load before: {os.getloadavg()}; {os.cpu_count()} CPUs", flush=True)
    t = time.perf_counter()
    if not (args.keep and folder.exists()):
        generate_dataset(folder, rows, args.models)
    size = sum(f.stat().st_size for f in folder.iterdir()) / 1e9
    print(f"generated {rows:.0e} rows, {args.models} models, in {time.perf_counter() - t:.0f} s: "
          f"{size:.2f} GB in {len(list(folder.iterdir()))} files", flush=True)
    ek = [str(Path(sys.executable).with_name("evalkit")), "rate", str(folder), "--json"]
    results: dict[str, tuple[float, str]] = {}
    try:
        def timed(label: str, cmd: list[str]) -> None:
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            wall = time.perf_counter() - t0
            if proc.returncode:
                print(f"{label}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}", flush=True)
                return
            results[label] = (wall, proc.stdout)
            print(f"{label}: {wall:.1f} s (load {os.getloadavg()[0]:.2f})", flush=True)

        timed("duckdb", ek)
        for w in (int(x) for x in args.workers.split(",")):
            with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, host="127.0.0.1",
                              dashboard_address=None) as cluster:
                timed(f"dask {w}", ek + ["--engine", "dask", "--scheduler", cluster.scheduler_address])
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {os.getloadavg()}\n")
    ref = results.get("duckdb")
    print("| engine | seconds | rows/s | rows/s per worker | speed-up vs first Dask row | vs DuckDB's ratings |")
    print("|---|---:|---:|---:|---:|---|")
    first = None
    for label, (wall, out) in results.items():
        w = int(label.split()[1]) if label.startswith("dask") else None
        first = first or (wall if w else None)
        same = "" if ref is None or label == "duckdb" else _same_ratings(ref[1], out)
        print(f"| {label} | {wall:.1f} | {rows / wall:.3g} | {'' if w is None else f'{rows / wall / w:.3g}'} | "
              f"{'' if w is None or first is None else f'{first / wall:.2f}x'} | {same} |")


def _same_ratings(ref: str, out: str) -> str:
    """Whether two ``evalkit rate --json`` tables have identical models, counts and Elo (and how far
    apart their interval bounds are)."""
    a, b = json.loads(ref), json.loads(out)
    a, b = (t if isinstance(t, list) else next(v for v in t.values() if isinstance(v, list)) for t in (a, b))
    keys = ("model", "elo", "n", "wins", "losses", "ties")
    same = len(a) == len(b) and all(x[k] == y[k] for x, y in zip(a, b, strict=True) for k in keys)
    gap = max(abs(x[k] - y[k]) for x, y in zip(a, b, strict=True) for k in ("ci_low", "ci_high"))
    return (f"{'identical' if same else 'DIFFERENT'} models, counts and Elo; interval bounds within {gap:.1e} Elo"
            if len(a) == len(b) else "DIFFERENT tables")


def convert(parquet: Path, dest: Path, fmt: str) -> None:
    """Parquet -> CSV / JSON Lines, streamed by DuckDB's COPY."""
    import duckdb

    opt = "FORMAT CSV, HEADER" if fmt == "csv" else "FORMAT JSON"
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{parquet}')) TO '{dest}' ({opt})")


CHILD = {
    "floor": """
import duckdb
rel = {rel!r}
n = duckdb.sql(f"SELECT model_a, model_b, winner, count(*) FROM {{rel}} GROUP BY ALL").fetchall()
out = {{"groups": len(n)}}
""",
    "polars": """
import polars as pl
scan = {{"parquet": pl.scan_parquet, "csv": pl.scan_csv, "jsonl": pl.scan_ndjson}}[{kind!r}]({path!r})
out = {{"groups": scan.group_by(["model_a", "model_b", "winner"]).len().collect().height}}
""",
    "rate": """
import contextlib, io
from evalkit.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(["rate", {path!r}] + {extra!r})
out = {{"exit": code}}
""",
    "aggregate": """
from evalkit.engine import aggregate_comparisons
counts, report = aggregate_comparisons({path!r})
out = {{"cells": len(counts), "rows": report.rows_read}}
""",
    "read": """
from evalkit.io import read_comparisons
frame, report = read_comparisons({path!r})
out = {{"rows": len(frame)}}
""",
    "dask": """
import contextlib, io
from distributed import Client, LocalCluster
from evalkit.cli import main
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                       dashboard_address=None)
client = Client(cluster)
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(["rate", {path!r}, "--engine", "dask", "--scheduler", cluster.scheduler_address])
out = {{"exit": code, "rate_s": time.perf_counter() - t}}
client.close(); cluster.close()
""",
    "fit": """
from evalkit.engine import aggregate_comparisons
from evalkit.ratings import aggregate, fit_bt
counts, _ = aggregate_comparisons({path!r})
t = time.perf_counter()
pc = aggregate(counts)
t_pairs = time.perf_counter() - t
t = time.perf_counter()
fit = fit_bt(pc)
out = {{"fit_s": time.perf_counter() - t, "pairs_s": t_pairs, "converged": fit.converged,
        "n_iter": fit.n_iter}}
""",
    "cluster_boot": """
from evalkit.engine import aggregate_comparisons
from evalkit.ratings import leaderboard
t = time.perf_counter()
counts, _ = aggregate_comparisons({path!r}, cluster="item")
t_agg = time.perf_counter() - t
t = time.perf_counter()
table = leaderboard(counts, interval="bootstrap", cluster="item", n_boot=1000, rng=0)
out = {{"aggregate_s": t_agg, "bootstrap_s": time.perf_counter() - t, "cells": len(counts.cells),
        "n_degenerate": table.attrs["n_degenerate"]}}
""",
}


# The child's own peak RSS: VmHWM of its address space (ru_maxrss would inherit the parent's
# high-water mark across fork + exec on Linux).
_HWM = """
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        out["peak_rss_mb"] = int(line.split()[1]) / 1024.0
print(json.dumps(out))
"""


def run_child(tool: str, timeout: float, **kw) -> dict:
    """Run one tool in a child process: wall time, peak RSS (MB) and what it printed."""
    code = "import json, time\n" + CHILD[tool].format(**kw) + _HWM
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"tool": tool, "error": f"timeout after {timeout:.0f} s"}
    wall = time.perf_counter() - t
    res = {"tool": tool, "seconds": wall}
    if proc.returncode != 0:
        res["error"] = (stderr.strip().splitlines() or ["?"])[-1][:200]
    else:
        res.update(json.loads(stdout.strip().splitlines()[-1]))
    return res


def paired(tool: str, timeout: float, repeat: int, **kw) -> dict:
    """``tool`` and the floor run in turn ``repeat`` times (floor, tool, floor, tool, ...); the
    row has the median seconds, the median of the pairwise ratios (pairing keeps the ratio
    meaningful when the machine's speed drifts) and the largest peak RSS."""
    runs = []
    for _ in range(repeat):
        base, res = run_child("floor", timeout, **kw), run_child(tool, timeout, **kw)
        if "error" in res or "error" in base:
            return res if "error" in res else base
        runs.append((base["seconds"], res))
    ratios = sorted(r["seconds"] / b for b, r in runs)
    out = dict(sorted((r for _, r in runs), key=lambda r: r["seconds"])[len(runs) // 2])
    out.update(ratio=ratios[len(ratios) // 2], peak_rss_mb=max(r.get("peak_rss_mb", 0) for _, r in runs))
    if repeat > 1:
        out["ratio_range"] = f"{ratios[0]:.2f}-{ratios[-1]:.2f}x over {repeat} pairs"
    return out


def table(rows: list[dict]) -> str:
    lines = ["| file | tool | seconds | ratio to floor | peak RSS MB | note |", "|---|---|---:|---:|---:|---|"]
    for r in rows:
        secs = f"{r['seconds']:.2f}" if "seconds" in r else ""
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else ""
        rss = f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else ""
        note = r.get("error") or ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in r.items() if k.endswith("_s") or k in ("cells", "n_iter",
                                                                                             "ratio_range"))
        lines.append(f"| {r['file']} | {r['tool']} | {secs} | {ratio} | {rss} | {note} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7", help="rows per Parquet file (comma list)")
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--dir", default="/tmp/evalkit-bench-scale")
    ap.add_argument("--text-max", type=float, default=1e7, help="largest size also written as CSV/JSONL")
    ap.add_argument("--read-max", type=float, default=1e7, help="largest size read by read_comparisons")
    ap.add_argument("--tools", default="floor,polars,rate,aggregate,read,dask")
    ap.add_argument("--extra", default="many,cluster", help="also: many (10,000 models), cluster (bootstrap)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--repeat", type=int, default=5,
                    help="pairs (floor, tool) per tool for files up to 1e7 rows; the median ratio is reported")
    ap.add_argument("--keep", action="store_true", help="keep the generated files in --dir")
    ap.add_argument("--json", default=None, help="also write the rows as JSON here")
    ap.add_argument("--engine", default=None, choices=["dask"],
                    help="dask: the scaling run (one --rows dataset; DuckDB, then Dask with each --workers count)")
    ap.add_argument("--rows", default="1e8", help="rows of the --engine dask dataset")
    ap.add_argument("--workers", default="1,2", help="Dask worker counts of the --engine dask run")
    args = ap.parse_args()
    if args.engine == "dask":
        dask_scaling(args)
        return
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    tools = args.tools.split(",")
    rows: list[dict] = []
    # byte-compile evalkit as `pip install` does (this sandbox sets PYTHONDONTWRITEBYTECODE, so an
    # editable checkout would otherwise compile ~40 modules from source in every child: ~30 ms)
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parents[1] / "evalkit", quiet=1)
    print(f"load before: {os.getloadavg()}", file=sys.stderr)
    try:
        for size in (int(float(s)) for s in args.sizes.split(",") if s):
            pq_path = root / f"arena-{size:.0e}.parquet"
            t = time.perf_counter()
            if not (args.keep and pq_path.exists()):
                generate(pq_path, size, args.models)
            print(f"generated {pq_path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
            files = [("parquet", pq_path)]
            if size <= args.text_max:
                for kind in ("csv", "jsonl"):
                    dest = root / f"arena-{size:.0e}.{kind}"
                    if not (args.keep and dest.exists()):
                        convert(pq_path, dest, kind)
                    files.append((kind, dest))
            for kind, path in files:
                reader = {"parquet": "read_parquet", "csv": "read_csv", "jsonl": "read_json"}[kind]
                rel = f"{reader}('{path}')"
                floor = None
                for tool in tools:
                    if tool == "read" and (size > args.read_max or kind == "jsonl" and size > 1e6):
                        continue  # the pandas reader parses JSON Lines line by line in Python
                    if tool == "dask" and kind == "jsonl":
                        continue
                    kw = dict(rel=rel, kind=kind, path=str(path), extra=[])
                    repeat = args.repeat if size <= 1e7 and tool != "floor" else 1
                    res = paired(tool, args.timeout, repeat, **kw) if repeat > 1 else run_child(tool, args.timeout, **kw)
                    res["file"] = f"{size:.0e} {kind}"
                    if tool == "floor":
                        floor = res.get("seconds")
                    if floor and res.get("seconds") and "error" not in res and "ratio" not in res:
                        res["ratio"] = res["seconds"] / floor
                    rows.append(res)
                    print(json.dumps(res), file=sys.stderr)
            if not args.keep:
                for _, path in files:
                    path.unlink()
        extras = args.extra.split(",") if args.extra else []
        if "many" in extras:
            path = root / "arena-10000-models-1e6.parquet"
            generate(path, 1_000_000, 10_000, seed=1)
            rel = f"read_parquet('{path}')"
            floor = run_child("floor", args.timeout, rel=rel)
            for tool, kw in (("floor", {}), ("fit", {}), ("rate", {"extra": []})):
                res = floor if tool == "floor" else run_child(tool, args.timeout, path=str(path), **kw)
                res["file"] = "1e6, 10,000 models"
                if tool == "fit" and "fit_s" in res:
                    res["ratio"] = res["fit_s"] / floor["seconds"]
                elif tool != "floor" and res.get("seconds"):
                    res["ratio"] = res["seconds"] / floor["seconds"]
                rows.append(res)
                print(json.dumps(res), file=sys.stderr)
            if not args.keep:
                path.unlink()
        if "cluster" in extras:
            path = root / "arena-items-1e7.parquet"
            generate(path, 10_000_000, args.models, seed=2, items=100)
            res = run_child("cluster_boot", args.timeout, path=str(path))
            res["file"] = "1e7, 100 items"
            rows.append(res)
            print(json.dumps(res), file=sys.stderr)
            if not args.keep:
                path.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
