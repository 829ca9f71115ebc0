"""Whole commands against the reference tools, paired in one run, at several sizes.

What a user runs is a process: start-up, reading the file, the fit, the printed table. Each case
here is a fresh child process timed against a second one in turn (A, B, A, B, ...; one warm-up
pair first), with the operating system's accounting of each finished child (``os.wait4``: wall,
user + sys CPU, peak RSS). The table gives the median of the pair-by-pair ratios A ÷ B and their
range, which stay meaningful when a shared machine's speed drifts. The 1-minute load average is
printed before and after.

Data: Arena-style Parquet files (``model_a, model_b, winner``; strengths ~ N(0, 1), 10 % ties),
written once per size by ``bench_scale.generate`` (in a child process), deleted afterwards. Sizes (``--sizes``,
``MODELSxROWS``): 20 × 1e5, 200 × 1e6 and 2,000 × 1e6 by default.

A is ``evalkit rate FILE`` (the console script next to this Python): the existence check, the fit,
sandwich intervals, rank intervals and the printed leaderboard. Each B reads the same file with
DuckDB's ``GROUP BY model_a, model_b, winner`` (the fastest reader on this machine, the floor
below) and then calls the peer's fastest path on counts, printing its scores:

- ``floor``: the ``GROUP BY`` alone (a process that imports only duckdb);
- ``choix``: the counts as a dense matrix, ``choix.ilsr_pairwise_dense`` (its fastest path on
  counts; its list APIs take one entry per comparison), point estimates only;
- ``evalica``: ``evalica.bradley_terry`` on the per-pair rows with the counts as ``weights`` (its
  public API), point estimates only.

The peers print no intervals and check no existence; evalkit does both, so a ratio ≤ 1 means the
whole evalkit command is at least as fast as the peer's bare fit.

``--out``: A is ``evalkit rate FILE --out DIR``, the whole command with its output folder
(leaderboard CSV/Markdown, ``leaderboard.png``, ``win_rates.png``, ``run.json``), against the
floor (issue 27: ≤ 2× the ``GROUP BY`` at 200 × 1e7, figures included; ≤ 10 s at 1,000 sparsely
compared models). DIR is removed between runs, outside the timing. It then times, in a child
process, drawing and saving a 200 x 200 win-rate heatmap and a 200-row leaderboard (issue 27:
well under a second each; the commands draw at most 60 models, ``evalkit.plots._layout``).

Run::

    python scripts/bench_command.py                       # 3 sizes x 3 peers, 7 pairs each
    python scripts/bench_command.py --sizes 200x1e7 --peers floor,choix -n 5
    python scripts/bench_command.py --out --sizes 200x1e7,1000x2e4 --peers floor -n 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

READ = ("import duckdb, numpy as np, sys\n"
        "rows = duckdb.sql(\"SELECT model_a, model_b, winner, count(*) FROM read_parquet('\" + sys.argv[1] + \"') "
        "GROUP BY ALL\").fetchall()\n")
FLOOR = READ + "print(len(rows))\n"
INDEX = ("names = sorted({r[0] for r in rows} | {r[1] for r in rows}); pos = {m: k for k, m in enumerate(names)}\n"
         "a = np.array([pos[r[0]] for r in rows]); b = np.array([pos[r[1]] for r in rows])\n"
         "w = np.array([r[3] for r in rows], dtype=float); lab = [r[2] for r in rows]\n")
CHOIX = (READ + INDEX + "import choix\n"
         "win_a = np.array([x == 'model_a' for x in lab]); win_b = np.array([x == 'model_b' for x in lab])\n"
         "tie = ~(win_a | win_b); n = len(names); mat = np.zeros((n, n))\n"
         "np.add.at(mat, (a, b), w * win_a + 0.5 * w * tie); np.add.at(mat, (b, a), w * win_b + 0.5 * w * tie)\n"
         "print(choix.ilsr_pairwise_dense(mat)[:5])\n")
EVALICA = (READ + INDEX + "import evalica, pandas as pd\n"
           "kind = {'model_a': evalica.Winner.X, 'model_b': evalica.Winner.Y, 'tie': evalica.Winner.Draw}\n"
           "res = evalica.bradley_terry(a.tolist(), b.tolist(), [kind[x] for x in lab], weights=w.tolist(), "
           "index=pd.Index(range(len(names))))\n"
           "print(res.scores.head())\n")
PEERS = {"floor": FLOOR, "choix": CHOIX, "evalica": EVALICA}


def generate(path: Path, rows: int, models: int) -> None:
    """:func:`bench_scale.generate` in a child process: this process stays small (stdlib only), so
    that a child's peak RSS, which Linux carries across ``exec``, is the child's own."""
    code = f"from bench_scale import generate; generate(__import__('pathlib').Path({str(path)!r}), {rows}, {models})"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=HERE)


def evalkit_command() -> list[str]:
    """The console script next to this interpreter (what a user runs), else ``python -m evalkit``."""
    script = Path(sys.executable).with_name("evalkit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalkit"]


def run(cmd: list[str]) -> dict[str, float]:
    """One child process, its output discarded: wall and CPU seconds, peak RSS (MB), exit code."""
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    return {"wall": time.perf_counter() - t, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024, "rc": float(os.waitstatus_to_exitcode(status))}


def paired(a: list[str], b: list[str], n: int, *, out: Path | None = None
           ) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """``n`` pairs A, B after one uncounted warm-up pair (``out``: A's output folder, removed
    before each A, untimed)."""
    def run_a() -> dict[str, float]:
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
        return run(a)

    run_a(), run(b)
    ra, rb = [], []
    for _ in range(n):
        ra.append(run_a())
        rb.append(run(b))
    return ra, rb


def med(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


FIGURES = """
import time, numpy as np, pandas as pd
from evalkit.plots._fonts import plot_fonts, save_png
from evalkit.plots.ratings import plot_leaderboard, plot_win_rate_heatmap
n = 200
gen = np.random.default_rng(0)
names = [f"model-{k:05d}" for k in range(n)]
m = gen.uniform(size=(n, n)); m[gen.uniform(size=(n, n)) < 0.5] = np.nan
mat = pd.DataFrame(m, index=names, columns=names)
elo = np.sort(gen.normal(1000, 100, n))[::-1]
table = pd.DataFrame({"model": names, "elo": elo, "ci_low": elo - 30, "ci_high": elo + 30, "n": 500})
opts = {"dpi": 100, "pil_kwargs": {"compress_level": 1}}
with plot_fonts():
    for what, draw in (("200 x 200 heatmap", lambda: plot_win_rate_heatmap(mat, max_models=n)),
                       ("200-row leaderboard", lambda: plot_leaderboard(table, max_rows=n))):
        for _ in range(2):  # the second: matplotlib warm (what the command's second figure sees)
            t, c = time.perf_counter(), time.process_time()
            ax = draw()
            save_png(ax.figure, "/dev/null", tight=True, format="png", **opts)
        print(f"| {what} | {time.perf_counter() - t:.3f} | {time.process_time() - c:.3f} |")
"""


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def parse_size(text: str) -> tuple[int, int]:
    models, rows = text.lower().split("x")
    return int(models), int(float(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20x1e5,200x1e6,2000x1e6", help="MODELSxROWS, comma-separated")
    ap.add_argument("--peers", default="floor,choix,evalica", help=f"of {', '.join(PEERS)}")
    ap.add_argument("-n", type=int, default=7, help="counted pairs per case (7)")
    ap.add_argument("--out", action="store_true",
                    help="A is `evalkit rate FILE --out DIR` (with its figures) instead of `evalkit rate FILE`")
    args = ap.parse_args(argv)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    print(f"load average (1 min) before: {load()}; {os.cpu_count()} CPUs; {args.n} pairs per case after a warm-up")
    command = "`evalkit rate FILE --out DIR`" if args.out else "`evalkit rate FILE`"
    print(f"| models × rows | B (reads with DuckDB `GROUP BY`) | {command} s | B s | "
          "A ÷ B (median, range) | CPU A ÷ B | peak RSS MB A / B |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="bench_command_") as tmp:
        for size in args.sizes.split(","):
            models, rows = parse_size(size)
            path = Path(tmp) / f"arena_{models}_{rows}.parquet"
            generate(path, rows, models)
            out = Path(tmp) / "out" if args.out else None
            a = [*evalkit_command(), "rate", str(path), *(["--out", str(out)] if out else [])]
            for peer in peers:
                b = [sys.executable, "-c", PEERS[peer], str(path)]
                ra, rb = paired(a, b, args.n, out=out)
                bad = [r["rc"] for r in ra + rb if r["rc"] != 0]
                ratios = [x["wall"] / y["wall"] for x, y in zip(ra, rb, strict=True)]
                cpu = statistics.median(x["cpu"] / y["cpu"] for x, y in zip(ra, rb, strict=True))
                print(f"| {models:,} × {rows:.0e} | {peer} | {med(ra, 'wall'):.3f} | {med(rb, 'wall'):.3f} | "
                      f"**{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f}) | {cpu:.2f}× | "
                      f"{med(ra, 'rss'):.0f} / {med(rb, 'rss'):.0f} |" + (f" exit codes {bad}" if bad else ""),
                      flush=True)
            path.unlink()
    if args.out:
        print(f"\nfigures drawn and saved as PNG (load {load()}):\n\n| figure | wall s | CPU s |\n|---|---:|---:|",
              flush=True)
        subprocess.run([sys.executable, "-c", FIGURES], check=True)
    print(f"load average (1 min) after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
