"""The numbers of README "Comparing two agent runs" (scoring one run, the per-task table) and of its
format table, recomputed from the shipped ``data/agent_runs`` logs and the real fixtures of
``tests/data/harness``.

Usage: ``python scripts/readme_runs.py`` (prints the commands it runs and what the README quotes).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import warnings
from pathlib import Path

import pandas as pd

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "agent_runs"
H = ROOT / "tests" / "data" / "harness"


def run(argv: list[str]) -> str:
    print("$ evalkit " + " ".join(str(a).replace(str(ROOT) + "/", "") for a in argv))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([str(a) for a in argv])
    assert code == 0, code
    return out.getvalue()


def main_() -> None:
    print(f"load average: {os.getloadavg()}")
    one = json.loads(run(["score", RUNS / "baseline" / "run-1.eval", "--json"]))[0]
    print({k: one[k] for k in ("system", "n_tasks", "mean", "se", "ci_low", "ci_high", "interval", "tokens")})
    both = json.loads(run(["score", RUNS / "baseline", RUNS / "candidate", "--json"]))
    for r in both["scores"]:
        print({k: r[k] for k in ("system", "n_tasks", "runs_per_task", "mean", "se", "ci_low", "ci_high", "tokens")})
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "c"
        run(["compare", RUNS / "baseline" / "run-1.eval", RUNS / "candidate" / "run-1.eval", "--out", out])
        per = pd.read_csv(out / "tables" / "per_task.csv", keep_default_na=False, na_values=[""])
        print(f"per-task table: {len(per)} tasks, {int((per['discordant'] == 'yes').sum())} discordant")
        print(per.head(4).to_string(index=False))
        pair = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
        print({k: pair[k] for k in ("baseline", "candidate", "diff (candidate − baseline)", "test", "pvalue",
                                    "candidate_only_pass", "baseline_only_pass")})
    inspect = json.loads(run(["score", H / "inspect" / "v0.3.58" /
                              "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval", "--json"]))[0]
    print({k: inspect[k] for k in ("mean", "se", "reported by the harness")})


if __name__ == "__main__":
    main_()
