"""Construct the bundled seed-002 example: per-(task, trial) scores of two systems.

This is a *constructed* table, not the paper's raw data (which is not public). It is built
so that its summaries equal the numbers the paper reports:

* five trials per system whose trial means (mean over the 12 tasks) have mean and sample SD
  1.58 +- 0.38 (base) and 2.40 +- 0.28 (after two MASS rounds) -- the MLR-Bench totals;
* twelve task means (mean over the 5 trials) on which the second system wins 8, loses 3 and
  ties 1 (one task where neither system ever submits, scored 0 in every trial).

Construction: score[s, task, trial] = M[s, task] + (12/11) (T[s, trial] - mu[s]) + N[s, task, trial]
for the 11 non-tied tasks (0 for the tied task), where N is Gaussian noise centred within
every task and every trial. Then every trial mean is exactly T[s, trial] and every task
mean exactly M[s, task]; values are rounded to 3 decimals (so the summaries hold to ~1e-3).
Run ``python data/seed002/construct.py`` to rebuild ``scores.csv`` (seeded, deterministic).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SYSTEMS = ("base", "mass_round2")
MU = {"base": 1.58, "mass_round2": 2.40}
SD = {"base": 0.38, "mass_round2": 0.28}
TASKS = [f"{domain}_{i}" for domain in ("finance", "robotics", "pharma") for i in range(1, 5)]
TIED = "pharma_4"  # neither system submits: 0 in every trial
# per-task means of the base system (mean over 12 tasks, tied task included, = 1.58)
BASE_TASK = np.array([1.2, 3.3, 1.0, 0.9, 1.5, 2.3, 1.6, 1.3, 2.8, 1.46, 1.6, 0.0])
# round2 - base on each task: 8 wins, 3 losses, 1 tie; sum = 12 * (2.40 - 1.58) = 9.84
# Tasks differ a lot (large wins, three clear losses), as open-ended research tasks do.
DIFF = np.array([2.9, -2.4, 2.6, 3.2, 2.2, -1.46, 1.9, 1.5, -2.0, 0.9, 0.5, 0.0])


def build(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    assert np.isclose(BASE_TASK.mean(), MU["base"]) and np.isclose(DIFF.sum(), 9.84)
    tied = TASKS.index(TIED)
    others = [i for i in range(12) if i != tied]
    rows = []
    for s, task_means in (("base", BASE_TASK), ("mass_round2", BASE_TASK + DIFF)):
        z = rng.normal(size=5)
        z = (z - z.mean()) / z.std(ddof=1)
        trial_dev = SD[s] * z  # T - mu: mean 0, sample SD exactly SD[s]
        noise = rng.normal(scale=0.15, size=(11, 5))
        noise -= noise.mean(axis=1, keepdims=True)
        noise -= noise.mean(axis=0, keepdims=True)
        cells = np.zeros((12, 5))
        cells[others] = task_means[others, None] + 12 / 11 * trial_dev[None, :] + noise
        for ti, task in enumerate(TASKS):
            for trial in range(5):
                rows.append({"system": s, "task": task, "trial": trial + 1, "score": round(float(cells[ti, trial]), 3)})
    out = pd.DataFrame(rows)
    if (out["score"] < 0).any() or (out["score"] > 10).any():
        raise RuntimeError("constructed scores left the 0-10 scale; change the seed")
    return out


if __name__ == "__main__":
    build().to_csv(Path(__file__).with_name("scores.csv"), index=False)
