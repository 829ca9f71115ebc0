"""Benchmark: ``evalkit.io.logs.read_logs`` on many Inspect logs against Inspect's own ``samples_df``.

Copies the shipped ``data/agent_runs`` logs (12 ``.eval`` files of 24 samples, written by
Inspect's writer) ``--copies`` times into a temporary folder, then reads the folder

* with ``read_logs`` (scores and budgets of every sample, one file at a time), and
* with Inspect's own reader, ``inspect_ai.log.read_eval_log`` on every file, collecting each
  sample's score and token total into a DataFrame (``samples_df`` is not used: it skips
  copies of a log that share its eval id, so it would not read the same samples),

in the same run, printing wall times, their ratio and evalkit's peak traced memory.

Usage: ``python scripts/bench_logs.py [--copies 100] [--skip-inspect]``
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

from evalkit.io.logs import read_logs

RUNS = Path(__file__).resolve().parents[1] / "data" / "agent_runs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--skip-inspect", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        logs = sorted(RUNS.rglob("*.eval"))
        for c in range(args.copies):
            for log in logs:
                dest = root / f"copy{c:04d}" / log.parent.name / log.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, dest)
        n_files = len(logs) * args.copies
        t0 = time.perf_counter()
        tracemalloc.start()
        frame = read_logs(root)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        t_evalkit = time.perf_counter() - t0
        t1 = time.perf_counter()
        frame = read_logs(root)
        t_evalkit = min(t_evalkit, time.perf_counter() - t1)  # the traced run is slower; keep the faster
        print(f"{n_files} logs, {len(frame)} samples: evalkit read_logs {t_evalkit:.2f} s "
              f"({n_files / t_evalkit:.0f} logs/s), peak traced memory {peak / 1e6:.1f} MB")
        if not args.skip_inspect:
            import pandas as pd
            from inspect_ai.log import read_eval_log

            t2 = time.perf_counter()
            rows = []
            for path in sorted(root.rglob("*.eval")):
                log = read_eval_log(str(path))
                for s in log.samples or []:
                    usage = sum(u.input_tokens + u.output_tokens for u in s.model_usage.values())
                    rows.append((log.eval.model, s.id, s.epoch, next(iter(s.scores.values())).value, usage))
            ref = pd.DataFrame(rows, columns=["model", "id", "epoch", "score", "tokens"])
            t_inspect = time.perf_counter() - t2
            print(f"inspect_ai read_eval_log: {t_inspect:.2f} s for {len(ref)} samples; ratio inspect / evalkit = "
                  f"{t_inspect / t_evalkit:.1f}x")


if __name__ == "__main__":
    main()
