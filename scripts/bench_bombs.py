"""Issue 23's bomb criterion, measured as a whole ``evalkit`` process: a 68 kB ``.eval`` zip bomb
and a 4 MB gzip bomb must give exit 2 in <= 2 s with <= 300 MB peak RSS; so, fast, must a
``.eval`` whose zip header lies about a member's size.

Paired: each round runs the two bombs and, as the reference, ``evalkit summary`` on a tiny valid
file (the same interpreter start-up, plus the imports and work of a real run), in turn, so that
the machine's load moves all three alike. Prints the load before and after, the median and
maximum wall time and the maximum peak RSS (``ru_maxrss`` of the child from ``wait4``; it
includes this script's own RSS, inherited across exec, a few MB).

    python scripts/bench_bombs.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import hostile_inputs as h  # noqa: E402


def _run(argv: list[str], cwd: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MB) of one evalkit process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evalkit", *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    rounds = ap.parse_args().rounds
    print("load before:", os.getloadavg())
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        eval_bomb = h.eval_bomb(tmp / "bomb.eval")
        lies = h.eval_bomb(tmp / "lies.eval", n_blocks=4000, claimed=100, method=8)  # 500 MB inside, claims 100 B
        gz_bomb = h.gzip_bomb_members(tmp / "bomb.csv.gz", 4 << 30)
        h.small_eval(tmp / "ok.eval")
        (tmp / "tiny.csv").write_text("model_a,model_b,winner\n" + "a,b,model_a\nb,a,model_a\na,b,tie\n" * 4)
        cases = {
            f"compare ok.eval bomb.eval ({eval_bomb.stat().st_size / 1e3:.0f} kB zip bomb)":
                ["compare", "ok.eval", "bomb.eval", "-q", "--out", "o"],
            f"compare ok.eval lies.eval ({lies.stat().st_size / 1e3:.0f} kB, its zip header lies)":
                ["compare", "ok.eval", "lies.eval", "-q", "--out", "o"],
            f"summary bomb.csv.gz ({gz_bomb.stat().st_size / 1e6:.1f} MB gzip bomb)": ["summary", "bomb.csv.gz", "-q"],
            "summary tiny.csv (reference: a valid 12-row file)": ["summary", "tiny.csv", "-q"],
        }
        runs: dict[str, list[tuple[int, float, float]]] = {k: [] for k in cases}
        for _ in range(rounds):
            for name, argv in cases.items():
                runs[name].append(_run(argv, tmp))
    print("load after: ", os.getloadavg())
    print(f"{'case':62} {'exit':>5} {'median s':>9} {'max s':>7} {'peak MB':>8}")
    for name, rs in runs.items():
        codes = sorted({r[0] for r in rs})
        print(f"{name:62} {','.join(map(str, codes)):>5} {statistics.median(r[1] for r in rs):9.2f} "
              f"{max(r[1] for r in rs):7.2f} {max(r[2] for r in rs):8.0f}")


if __name__ == "__main__":
    main()
