"""Start-up cost of the CLI: ``python -X importtime`` top costs and paired wall-time ratios.

Each case is a fresh process (the installed ``evalkit`` console script next to this Python, else
``python -m evalkit``), timed against the floor ``python -c "import duckdb"`` in turn
(floor, case, floor, case, ...); the median of the pair-by-pair ratios stays meaningful when a
shared machine's speed drifts. Cases:

- ``import evalkit``;
- ``evalkit --help`` (target: <= 0.25 s wall on a quiet machine);
- ``evalkit rate --help``;
- ``evalkit rate TEN.parquet``: a 10-row Arena file end to end (target <= 0.6 s);
- ``evalkit summary TEN.parquet`` (target <= 0.6 s).

Then, for ``evalkit --help`` and the 10-row ``rate``: which of pandas / scipy / matplotlib /
numpy / duckdb were imported, and the modules with the largest cumulative and self import time
(``-X importtime``, microseconds). The 1-minute load average is printed before and after.

Run::

    python scripts/bench_startup.py            # 15 pairs per case
    python scripts/bench_startup.py -n 31 --top 15
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = [sys.executable, "-c", "import duckdb"]
HEAVY = ("pandas", "scipy", "matplotlib", "numpy", "duckdb", "pyarrow")


def evalkit_command() -> list[str]:
    """The console script next to this interpreter (what a user runs), else ``python -m evalkit``."""
    script = Path(sys.executable).with_name("evalkit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalkit"]


def write_ten_rows(path: Path) -> None:
    """A 10-row Arena-style Parquet file (pyarrow only)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    a = ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a"]
    b = ["b", "c", "a", "c", "a", "b", "b", "c", "a", "c"]
    w = ["model_a", "model_b", "tie", "model_a", "model_b", "model_a", "model_b", "model_a", "model_b", "tie"]
    pq.write_table(pa.table({"model_a": a, "model_b": b, "winner": w}), path)


def wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return elapsed


def paired(cmd: list[str], n: int) -> dict[str, float]:
    """Median wall seconds of ``cmd`` and of the floor over ``n`` alternated pairs (after one warm-up
    each), and the median / range of the pair-by-pair ratios."""
    wall(FLOOR)
    wall(cmd)
    floors, times = [], []
    for _ in range(n):
        floors.append(wall(FLOOR))
        times.append(wall(cmd))
    ratios = sorted(t / f for t, f in zip(times, floors, strict=True))
    return {"seconds": statistics.median(times), "floor": statistics.median(floors),
            "ratio": statistics.median(ratios), "lo": ratios[0], "hi": ratios[-1]}


def importtime(cmd: list[str], top: int) -> tuple[list[str], list[tuple[int, int, str]]]:
    """Heavy packages imported by ``cmd`` and its ``-X importtime`` rows (self us, cumulative us, module)."""
    if cmd[0] != sys.executable:  # the console script: run its entry point under -X importtime
        cmd = [sys.executable, "-X", "importtime", "-c",
               "import sys; from evalkit.cli import main; sys.argv[0] = 'evalkit'; sys.exit(main())"] + cmd[1:]
    else:
        cmd = [sys.executable, "-X", "importtime"] + cmd[1:]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cum, name = line[len("import time:"):].split("|")
        rows.append((int(own), int(cum), name.rstrip()))
    loaded = [m for m in HEAVY if any(r[2].strip() == m for r in rows)]
    return loaded, rows


def show_importtime(label: str, cmd: list[str], top: int) -> None:
    loaded, rows = importtime(cmd, top)
    total = sum(r[0] for r in rows)
    print(f"\n{label}: {len(rows)} modules, {total / 1e6:.3f} s of imports (sum of self times); "
          f"heavy packages imported: {', '.join(loaded) or 'none'}")
    print(f"  top {top} by cumulative time (us)      | top {top} by self time (us)")
    by_cum = sorted(rows, key=lambda r: -r[1])[:top]
    by_own = sorted(rows, key=lambda r: -r[0])[:top]
    for (_, c, n1), (s, _, n2) in zip(by_cum, by_own, strict=False):
        print(f"  {c:>9} {n1.strip()[:28]:<28} | {s:>9} {n2.strip()[:40]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=15, help="pairs (floor, case) per case (default 15)")
    ap.add_argument("--top", type=int, default=10, help="rows of the import-time tables (default 10)")
    args = ap.parse_args(argv)
    compileall.compile_dir(ROOT / "evalkit", quiet=1)  # as pip install does (this sandbox sets PYTHONDONTWRITEBYTECODE)
    tmp = Path(tempfile.mkdtemp(prefix="evalkit-startup-"))
    try:
        ten = tmp / "ten.parquet"
        write_ten_rows(ten)
        ek = evalkit_command()
        cases = [
            ("import evalkit", [sys.executable, "-c", "import evalkit"], None),
            ("evalkit --help", ek + ["--help"], 0.25),
            ("evalkit rate --help", ek + ["rate", "--help"], None),
            ("evalkit rate TEN.parquet (10 rows)", ek + ["rate", str(ten)], 0.6),
            ("evalkit summary TEN.parquet", ek + ["summary", str(ten)], 0.6),
        ]
        print(f"evalkit: {' '.join(ek)}; floor: python -c 'import duckdb'; {args.n} pairs per case; "
              f"{os.cpu_count()} cores; load before {os.getloadavg()[0]:.2f}")
        print("\n| case | median s | floor median s | ratio to floor (median, range) | target |")
        print("|---|---:|---:|---:|---|")
        for label, cmd, target in cases:
            r = paired(cmd, args.n)
            goal = f"<= {target} s (quiet)" if target else ""
            print(f"| {label} | {r['seconds']:.3f} | {r['floor']:.3f} | {r['ratio']:.2f}x "
                  f"({r['lo']:.2f}-{r['hi']:.2f}) | {goal} |", flush=True)
        show_importtime("evalkit --help", ek + ["--help"], args.top)
        show_importtime("evalkit rate TEN.parquet", ek + ["rate", str(ten)], args.top)
        print(f"\nload after {os.getloadavg()[0]:.2f} (1-minute average, {os.cpu_count()} cores)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
