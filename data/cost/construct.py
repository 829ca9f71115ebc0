"""Construct the bundled cost example: runs of six agent configurations on 40 tasks, with tokens and status.

A *constructed* table (no third-party content): evalkit has no public log set with per-task tokens of
several systems on shared tasks, so this one is simulated, seeded and deterministic. Each task has a
difficulty shared by every system (so systems are paired on tasks); each system has an ability, a model
(``small``, ``medium``, ``large``, priced in ``prices.csv``, made-up dollars per million tokens) and a
token appetite; a run's tokens are lognormal around the appetite, a little more on harder tasks. Some
runs end with status ``error`` (no score): ``large-agent-retry`` completes only about 70 % of its runs.

Run ``python data/cost/construct.py`` to rebuild ``runs.csv`` (seeded, deterministic).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

# name: (model, ability (logit), input tokens per run, output tokens per run, cache-read share, error rate)
SYSTEMS = {
    "small-agent": ("small", -0.8, 18_000, 1_800, 0.0, 0.03),
    "small-agent-long": ("small", -0.35, 90_000, 6_000, 0.5, 0.05),
    "medium-agent": ("medium", 0.1, 25_000, 2_500, 0.3, 0.03),
    "medium-agent-long": ("medium", 0.45, 110_000, 9_000, 0.6, 0.05),
    "large-agent": ("large", 0.75, 30_000, 3_000, 0.3, 0.02),
    "large-agent-retry": ("large", 0.9, 160_000, 14_000, 0.6, 0.30),
}
N_TASKS = 40


def build(seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1.3, size=N_TASKS)
    rows = []
    for system, (model, ability, tin, tout, cache, err) in SYSTEMS.items():
        for t in range(N_TASKS):
            scale = np.exp(0.25 * difficulty[t]) * rng.lognormal(0, 0.5)
            inp = int(tin * scale)
            cached = int(inp * cache)
            out = int(tout * scale * rng.lognormal(0, 0.2))
            failed = rng.random() < err
            p = 1 / (1 + np.exp(-(ability - difficulty[t])))
            rows.append({"system": system, "model": model, "task": f"task_{t + 1:02d}",
                         "status": "error" if failed else "success",
                         "score": "" if failed else int(rng.random() < p),
                         "input_tokens": inp - cached, "cache_read_tokens": cached, "output_tokens": out,
                         "time": round(float(20 + out / 40 * rng.lognormal(0, 0.3)), 1)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    build().to_csv(Path(__file__).with_name("runs.csv"), index=False)
