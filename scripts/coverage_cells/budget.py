"""The inflection-point test (``evalkit.budget.inflection_point``) at exactly 400 Elo per decade.

Each replicate is the audit's design: one system of 14 tasks x 5 sessions whose sessions are best-of-n
repeated sampling (i.i.d. uniform attempts of the first checkpoint's length, as
``evalkit.studies.fig11_claims.best_of_n_null`` builds them), so its self-Elo rises at exactly the
400-per-decade reference; checkpoints 1.5x apart over 3 decades, 200 session-bootstrap replicates.
"Rejected" = the status is anything but "indistinguishable" (the band test's error); the second cell
counts the "crossed" calls alone (the audit: 13 of 40 seeds under the old pointwise rule).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from evalkit.budget import elo_curves, inflection_point
from evalkit.studies.fig11 import checkpoints


def best_of_n_sessions(gen: np.random.Generator, n_tasks: int = 14, n_sessions: int = 5, decades: float = 3.0,
                       grid: float = 1.5) -> tuple[pd.DataFrame, np.ndarray]:
    cps = checkpoints(1.0, decades=decades, grid=grid)
    n_att = int(round(1.0 / cps[0]))
    frames = []
    for t in range(n_tasks):
        best = np.maximum.accumulate(gen.random((n_sessions, n_att)), axis=1)
        keep = np.concatenate([np.ones((n_sessions, 1), bool), np.diff(best, axis=1) > 0], axis=1)
        s, j = np.nonzero(keep)
        frames.append(pd.DataFrame({"system": "pass@1", "task": f"t{t:02d}", "session": s.astype(str),
                                    "budget": cps[0] * (j + 1), "score": best[s, j]}))
    return pd.concat(frames, ignore_index=True), cps


def _inflection(gen: np.random.Generator, *, what: str) -> tuple[bool, float]:
    traces, cps = best_of_n_sessions(gen)
    res = elo_curves(traces, mode="self", budgets=cps, n_resamples=200, rng=gen)
    status = inflection_point(res, system="pass@1").status
    return (status != "indistinguishable") if what == "any" else (status == "crossed"), float("nan")


CELLS = [
    {"family": "budget", "method": "inflection point: slope band vs 400/decade (status not 'indistinguishable')",
     "setting": "best-of-n at exactly 400/decade, 14 tasks x 5 sessions", "kind": "test", "nominal": 0.05,
     "draw": partial(_inflection, what="any"), "reps": 2000, "quick_reps": 0},
    {"family": "budget", "method": "inflection point: 'crossed' reported",
     "setting": "best-of-n at exactly 400/decade, 14 tasks x 5 sessions", "kind": "test", "nominal": 0.05,
     "draw": partial(_inflection, what="crossed"), "reps": 2000, "quick_reps": 40},
]
