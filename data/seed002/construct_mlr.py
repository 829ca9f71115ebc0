"""Construct the bundled seed-002 MLR-Bench submissions: who submitted, and the score of what was submitted.

A *constructed* table, not the paper's raw data (which is not public). Built so that its summaries
equal what seed 002 reports for MLR-Bench (12 tasks x 5 trials = 60 runs per system):

* ``base`` submits 31 of 60 papers with a mean score of 3.07 among them;
* ``mass_round2`` submits 50 of 60 with a mean score of 2.88;

so the overall means (a missing paper scores 0) are 1.586 and 2.400. Scores are on the 0-10 scale,
centred on the reported mean and rounded to 2 decimals, the last submitted score of each system absorbing
the rounding so that the sum is exact.
``output_tokens`` (also constructed) are drawn so that ``mass_round2``'s score per output token is
about 1.4x ``base``'s, the middle of the paper's "1.2-1.6x"; the paper reports no per-run counts.

Run ``python data/seed002/construct_mlr.py`` to rebuild ``mlr_submissions.csv`` (seeded, deterministic).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TASKS = [f"{domain}_{i}" for domain in ("finance", "robotics", "pharma") for i in range(1, 5)]
DESIGN = {"base": (31, 3.07, 60_000), "mass_round2": (50, 2.88, 66_000)}  # submitted, mean score, tokens/run


def build(seed: int = 20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for system, (k, mean, tokens) in DESIGN.items():
        cells = [(t, trial) for t in TASKS for trial in range(1, 6)]
        submitted = np.zeros(60, dtype=bool)
        submitted[rng.choice(60, size=k, replace=False)] = True
        raw = rng.normal(0, 1.1, size=k)
        scores = np.round(raw - raw.mean() + mean, 2)  # mean exactly `mean` up to rounding
        scores[-1] = round(mean * k - scores[:-1].sum(), 2)  # and the rounding residual on the last one
        if not 0 <= scores[-1] <= 10:
            raise RuntimeError("the balancing score left the 0-10 scale; change the seed")
        out_tokens = np.round(tokens * rng.lognormal(0, 0.35, size=60) / np.exp(0.35**2 / 2)).astype(int)
        it = iter(scores)
        for (task, trial), done, tok in zip(cells, submitted, out_tokens, strict=True):
            rows.append({"system": system, "task": task, "trial": trial, "submitted": int(done),
                         "score": next(it) if done else np.nan, "output_tokens": int(tok)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    table = build()
    for s, g in table.groupby("system"):
        done = g[g.submitted == 1]
        print(s, len(done), "/", len(g), "mean", round(done.score.mean(), 6), "overall", round(done.score.sum() / 60, 4))
    table.to_csv(Path(__file__).with_name("mlr_submissions.csv"), index=False)
