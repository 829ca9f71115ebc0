"""Issue 23's many-small-files criterion: a folder of N small Inspect ``.eval`` logs is read at
<= 1 ms per file of overhead.

Paired: each round times ``evalkit.io.logs.read_logs(folder)`` and, as the floor, the loop a
user would write by hand (``zipfile`` + ``json.loads`` of every member of every file, no
checks, no table), in turn, so that the machine's load moves both alike. The overhead per file
is (evalkit − hand loop) / N. ``--commands score,summary`` also times those CLI commands on the
folder, each in a fresh interpreter (start-up, the progress bar, provenance and printing
included), against the same floor. Prints the load before and after.

    python scripts/bench_many_files.py [--n 20000] [--rounds 3] [--commands score,summary]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import hostile_inputs as h  # noqa: E402


def _hand(folder: Path) -> int:
    n = 0
    for p in sorted(folder.iterdir()):
        with zipfile.ZipFile(p) as z:
            for name in z.namelist():
                json.loads(z.read(name))
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--commands", default="", help="CLI commands to time on the folder too (e.g. score,summary)")
    args = ap.parse_args()
    commands = [c for c in args.commands.split(",") if c]
    cli: dict[str, list[float]] = {c: [] for c in commands}
    from evalkit.io.logs import read_logs

    print("load before:", os.getloadavg())
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "runs"
        folder.mkdir()
        for i in range(args.n):
            h.small_eval(folder / f"run{i:06d}.eval", model=f"m{i % 5}")
        ours, hand = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            table = read_logs(folder)
            ours.append(time.perf_counter() - t0)
            assert len(table) == 2 * args.n
            t0 = time.perf_counter()
            _hand(folder)
            hand.append(time.perf_counter() - t0)
            for c in commands:
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "evalkit", c, str(folder), "-q"], check=True,
                               stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
                cli[c].append(time.perf_counter() - t0)
    print("load after: ", os.getloadavg())
    o, b = statistics.median(ours), statistics.median(hand)
    print(f"{args.n} files: read_logs {o:.2f} s ({o / args.n * 1e3:.3f} ms/file), hand loop {b:.2f} s "
          f"({b / args.n * 1e3:.3f} ms/file); overhead {(o - b) / args.n * 1e3:.3f} ms/file, ratio {o / b:.2f}")
    for c, times in cli.items():
        t = statistics.median(times)
        print(f"  evalkit {c} FOLDER (fresh process): {t:.2f} s ({t / args.n * 1e3:.3f} ms/file); overhead "
              f"{(t - b) / args.n * 1e3:.3f} ms/file over the hand loop, ratio {t / b:.2f}")


if __name__ == "__main__":
    main()
