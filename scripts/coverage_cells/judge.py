"""Judge room (issue 26): the anytime-valid sequential comparison and the judge-corrected estimates.

**Sequential test** (``evalkit.stats.sequential.sequential_comparison``, what ``compare --sequential`` and
``judge --stop-when-settled`` print): two systems on the same tasks with equal pass rates (the null),
per-task scores 0/1 with a shared task effect, a look every 20 tasks up to 400; a replicate *rejects*
when the betting confidence sequence excludes 0 at any look. Its size must be at most alpha = 0.05 at
every stopping time, so this is the rejection rate of a user who stops at the first look that settles.
(``scripts/sequential_null.py`` runs the same null 1,000 times beside the naive repeated McNemar test.)

**PPI++ / Rogan-Gladen** (``evalkit.stats.ppi``, what ``--human`` prints): N items, n of them with human
labels; the true accuracy is 0.7; the judge has sensitivity 0.85 and specificity 0.75 (informative, and
biased: its positive rate is 0.67). A replicate covers when the interval contains 0.7. The human-only
CLT interval on the n labels is the width to beat.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from evalkit.stats.ppi import ppi_mean, rogan_gladen
from evalkit.stats.sequential import sequential_comparison

_TRUE_ACC, _SENS, _SPEC = 0.7, 0.85, 0.75


def _sequential_null(rng: np.random.Generator, *, n: int = 400, every: int = 20) -> tuple[bool, float]:
    p = 1.0 / (1.0 + np.exp(-rng.normal(0.0, 1.0, n)))  # a shared task difficulty: paired, same rate
    a = (rng.random(n) < p).astype(float)
    b = (rng.random(n) < p).astype(float)
    res = sequential_comparison(a, b, order="random", rng=rng, look_every=every, plan=False)
    return res.settled_at is not None, float("nan")


def _labels(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(size) < _TRUE_ACC).astype(float)
    yhat = np.where(y == 1, rng.random(size) < _SENS, rng.random(size) > _SPEC).astype(float)
    return y, yhat


def _corrected(rng: np.random.Generator, *, n: int, big_n: int, method: str) -> tuple[bool, float]:
    y, yhat = _labels(rng, n)
    _, yhat_u = _labels(rng, big_n)
    est = (ppi_mean(y, yhat, yhat_u) if method == "ppi" else rogan_gladen(y, yhat, yhat_u))
    lo, hi = est.confidence_interval()
    return bool(lo <= _TRUE_ACC <= hi), float(hi - lo)


def _human_only(rng: np.random.Generator, *, n: int) -> tuple[bool, float]:
    y, _ = _labels(rng, n)
    m, se = float(y.mean()), float(y.std(ddof=1) / np.sqrt(n))
    lo, hi = m - 1.959963984540054 * se, m + 1.959963984540054 * se
    return bool(lo <= _TRUE_ACC <= hi), float(hi - lo)


CELLS: list[dict] = [
    {"family": "judge", "method": "betting CS, paired difference (any look)", "setting": "null, look every 20, n<=400",
     "kind": "test", "nominal": 0.05, "draw": _sequential_null, "reps": 2000, "quick_reps": 20},
]
for _n, _N in ((100, 1000), (300, 3000)):
    CELLS += [
        {"family": "judge", "method": "PPI++ accuracy CI", "setting": f"n={_n} human, N={_N} judge",
         "kind": "interval", "nominal": 0.95, "draw": partial(_corrected, n=_n, big_n=_N, method="ppi"),
         "reps": 2000, "quick_reps": 100},
        {"family": "judge", "method": "Rogan-Gladen accuracy CI", "setting": f"n={_n} human, N={_N} judge",
         "kind": "interval", "nominal": 0.95, "draw": partial(_corrected, n=_n, big_n=_N, method="rg"),
         "reps": 2000, "quick_reps": 100},
        {"family": "judge", "method": "human-only accuracy CI (reference width)", "setting": f"n={_n} human",
         "kind": "interval", "nominal": 0.95, "draw": partial(_human_only, n=_n), "reps": 2000, "quick_reps": 100},
    ]


if __name__ == "__main__":
    import sys

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    seeds = np.random.SeedSequence(26).spawn(len(CELLS))
    for cell, ss in zip(CELLS, seeds, strict=True):
        g = np.random.default_rng(ss)
        r = cell["reps"] if reps <= 0 else min(reps, cell["reps"])
        hits, widths = zip(*(cell["draw"](g) for _ in range(r)), strict=True)
        rate = float(np.mean(hits))
        print(f"{cell['method']:45s} {cell['setting']:28s} {rate:.3f} +- {np.sqrt(rate * (1 - rate) / r):.3f}"
              f"  width {np.nanmean(widths) if cell['kind'] == 'interval' else float('nan'):.4f}  (reps {r})")
