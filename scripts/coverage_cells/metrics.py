"""Agent metrics (``evalkit.metrics``): efficiency ratios, frontier probabilities, completion x quality.

Every cell draws a population whose true value is known exactly and calls the function evalkit's
tables print (``ratio_interval``, ``paired_ratio_interval``, the task bootstrap, the completion
intervals, ``completion_change``'s bootstrap, ``bootstrap_frontier``).

**Efficiency** (score per token): task ``t`` has difficulty ``d ~ N(0, 1)``; a run succeeds with
probability ``logistic(a - d)`` and spends ``u = exp(mu + 0.3 d + 0.7 e)`` tokens (harder tasks cost
more: score and usage are correlated, negatively). The true ratio is ``E[s] / E[u]``, with ``E[s]`` by
Gauss-Hermite quadrature and ``E[u] = exp(mu + (0.3^2 + 0.7^2) / 2)``. The paired ratio draws two
systems on the same tasks.

The task bootstrap-t (``method="bootstrap"``) is the alternative evalkit offers: on these
log-normal token counts it covers 0.918-0.932 at 20 tasks (a percentile bootstrap 0.91-0.92), below
the delta method's 0.939-0.967, and 0.950 at 80 (``python scripts/coverage_cells/metrics.py``); the 20-task cells are marked and evalkit warns when the
bootstrap is chosen with fewer than 40 tasks.

**Frontier probabilities.** What evalkit claims (``evalkit.metrics.frontier()``): the systems whose
frontier probability is at least 1 - level form a confidence set for the true frontier. So a
replicate *covers* when every system on the true frontier (of the population accuracies and mean
costs) has probability >= 0.05; the width is the size of the set. Five systems, one dominated
(the design in ``_FRONTIER``), 40 tasks with shared difficulty, lognormal per-task costs. This is the
sense in which the probabilities are calibrated: a "< 5 %" that evalkit reports as "off the frontier"
is wrong about a truly frontier system at most 5 % of the time. (It says nothing of a 60 % being
right 60 % of the time, which a bootstrap probability does not promise.)

**Completion x quality.** 60 submissions per system (seed 002's MLR-Bench size): completed with
probability C, score ``N(Q, 1.2)`` when completed. Clustered: 12 tasks x 5 trials with task effects
on completion (logit sd 0.8) and on the score (sd 0.6), so the true C is ``E[logistic(logit C0 + e)]``
and Q (effects independent) is Q0. The Shapley parts' true values are the population split.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from evalkit.metrics._frontier import bootstrap_frontier, on_frontier
from evalkit.metrics.completion import _bootstrap_split, _ratio_ci, _wilson, shapley_split
from evalkit.metrics.cost import _bootstrap_ratio, paired_ratio_interval, ratio_interval

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(80)
_GH_W = _GH_W / _GH_W.sum()
_B, _S = 0.3, 0.7  # usage: log u = mu + _B d + _S e


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _es(a: float) -> float:
    return float((_GH_W * _expit(a - _GH_X)).sum())


def _eu(mu: float) -> float:
    return float(np.exp(mu + (_B**2 + _S**2) / 2))


def _system(gen: np.random.Generator, d: np.ndarray, a: float, mu: float) -> tuple[np.ndarray, np.ndarray]:
    s = (gen.random(d.size) < _expit(a - d)).astype(float)
    u = np.exp(mu + _B * d + _S * gen.normal(size=d.size)) / 1e6  # in millions, as evalkit reports
    return s, u


def _ratio(gen: np.random.Generator, *, n: int, a: float, mu: float, method: str) -> tuple[bool, float]:
    d = gen.normal(size=n)
    s, u = _system(gen, d, a, mu)
    truth = _es(a) / (_eu(mu) / 1e6)
    if method == "delta":
        _, lo, hi, _ = ratio_interval(s, u)
    else:
        lo, hi = _bootstrap_ratio(np.vstack([s, u]), (1, -1), gen, 1000, 0.95)
    return bool(lo <= truth <= hi), hi - lo


def _paired(gen: np.random.Generator, *, n: int, method: str) -> tuple[bool, float]:
    d = gen.normal(size=n)
    (aa, ma), (ab, mb) = (0.0, 10.0), (0.6, 10.2)
    sa, ua = _system(gen, d, aa, ma)
    sb, ub = _system(gen, d, ab, mb)
    truth = (_es(ab) / _eu(mb)) / (_es(aa) / _eu(ma))
    if method == "delta":
        _, lo, hi, _ = paired_ratio_interval(sa, ua, sb, ub)
    else:
        cols = np.vstack([sb, ub, sa, ua])
        lo, hi = _bootstrap_ratio(cols, (1, -1, -1, 1), gen, 1000, 0.95)
    if not np.isfinite(lo):  # a system with no success at all: no interval, counted as a miss
        return False, float("nan")
    return bool(lo <= truth <= hi), hi - lo


# ---- frontier --------------------------------------------------------------------------------------
# (accuracy ability, mean cost per task): the true accuracies are E[logistic(a - d)], true costs the means
_FRONTIER = ((-1.0, 1.0), (0.0, 2.0), (0.7, 4.0), (-0.38, 3.0), (1.1, 8.0))  # accuracies .30 .50 .64 .42 .71
# the same with the third system near the chord of its hull neighbours (.55 against .547): its hull
# membership is a near-tie, which no bootstrap of a non-smooth rule resolves; evalkit warns there
_NEAR_TIE = ((-0.6, 1.0), (0.0, 2.0), (0.25, 4.0), (-0.3, 3.0), (0.7, 8.0))


def _frontier(gen: np.random.Generator, *, n: int, method: str, design: tuple = _FRONTIER) -> tuple[bool, float]:
    d = gen.normal(size=n)
    acc = np.array([(gen.random(n) < _expit(a - d)).astype(float) for a, _ in design])
    cost = np.array([c * np.exp(0.5 * gen.normal(size=n) - 0.125) for _, c in design])  # mean c per task
    true_acc = np.array([_es(a) for a, _ in design])
    true_cost = np.array([c * n for _, c in design])
    truth = on_frontier(true_cost, true_acc, method)
    _, _, p = bootstrap_frontier(acc, cost, method=method, n_resamples=300, rng=gen)
    kept = p >= 0.05
    return bool(kept[truth].all()), float(kept.sum())


# ---- completion x quality --------------------------------------------------------------------------
_C_SD, _Q_SD, _S_SD = 0.8, 0.6, 1.2


def _submissions(gen: np.random.Generator, c0: float, q0: float, clustered: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit (task, or submission): completed count, sum of completed scores, submissions."""
    if not clustered:
        c = (gen.random(60) < c0).astype(float)
        s = gen.normal(q0, _S_SD, size=60)
        return c, c * s, np.ones(60)
    e = gen.normal(0, _C_SD, size=12)
    f = gen.normal(0, _Q_SD, size=12)
    p = _expit(np.log(c0 / (1 - c0)) + e)
    c = (gen.random((12, 5)) < p[:, None]).astype(float)
    s = q0 + f[:, None] + gen.normal(0, _S_SD, size=(12, 5))
    return c.sum(axis=1), (c * s).sum(axis=1), np.full(12, 5.0)


def _true_c(c0: float, clustered: bool) -> float:
    if not clustered:
        return c0
    return float((_GH_W * _expit(np.log(c0 / (1 - c0)) + _C_SD * _GH_X)).sum())


def _completion(gen: np.random.Generator, *, what: str, clustered: bool) -> tuple[bool, float]:
    c0, q0 = 0.52, 3.07
    c, cs, n = _submissions(gen, c0, q0, clustered)
    tc = _true_c(c0, clustered)
    if what == "completion":
        lo, hi = _wilson(c.sum(), n.sum(), 0.95) if not clustered else _ratio_ci(c, n, 0.95)[2:]
        truth = tc
    elif what == "quality":
        _, _, lo, hi = _ratio_ci(cs, c, 0.95)
        truth = q0
    else:
        _, _, lo, hi = _ratio_ci(cs, n, 0.95)
        truth = tc * q0
    return bool(lo <= truth <= hi), hi - lo


def _shapley(gen: np.random.Generator, *, part: str) -> tuple[bool, float]:
    import pandas as pd

    (ca, qa), (cb, qb) = (0.52, 3.07), (0.83, 2.88)
    frames = []
    for name, c0, q0 in (("a", ca, qa), ("b", cb, qb)):
        done = gen.random(60) < c0
        frames.append(pd.DataFrame({"system": name, "_done": done.astype(float),
                                    "score": np.where(done, gen.normal(q0, _S_SD, size=60), np.nan)}))
    ci = _bootstrap_split(frames[0], frames[1], None, 1000, 0.95, gen)
    cp, qp = shapley_split(ca, qa, cb, qb)
    truth = {"completion_part": cp, "quality_part": qp}[part]
    lo, hi = ci[part]
    return bool(lo <= truth <= hi), hi - lo


def _cell(family: str, method: str, setting: str, draw: object, *, reps: int = 2000, quick: int = 200) -> dict:
    return {"family": family, "method": method, "setting": setting, "kind": "interval", "nominal": 0.95,
            "draw": draw, "reps": reps, "quick_reps": quick}


CELLS = [
    _cell("cost", "score per token: delta (log scale) ratio CI", "n=20 tasks, p~0.57",
          partial(_ratio, n=20, a=0.3, mu=10.0, method="delta"), quick=400),
    _cell("cost", "score per token: delta (log scale) ratio CI", "n=50 tasks, p~0.27",
          partial(_ratio, n=50, a=-1.2, mu=10.0, method="delta")),
    {**_cell("cost", "score per token: task bootstrap-t (log scale)", "n=20 tasks, p~0.57 (evalkit warns)",
             partial(_ratio, n=20, a=0.3, mu=10.0, method="bootstrap")), "assumptions_hold": False},
    _cell("cost", "paired efficiency ratio: delta (log scale)", "n=12 tasks (seed 002's size)",
          partial(_paired, n=12, method="delta"), quick=400),
    _cell("cost", "paired efficiency ratio: delta (log scale)", "n=40 tasks",
          partial(_paired, n=40, method="delta")),
    {**_cell("cost", "paired efficiency ratio: task bootstrap-t (log scale)", "n=20 tasks (evalkit warns)",
             partial(_paired, n=20, method="bootstrap")), "assumptions_hold": False},
    _cell("cost", "paired efficiency ratio: task bootstrap-t (log scale)", "n=80 tasks",
          partial(_paired, n=80, method="bootstrap"), reps=2000, quick=200),
    _cell("frontier", "frontier probability >= 0.05 as a confidence set (HAL hull rule)",
          "5 systems, 40 tasks", partial(_frontier, n=40, method="hal"), reps=1000, quick=150),
    _cell("frontier", "frontier probability >= 0.05 as a confidence set (Pareto rule)",
          "5 systems, 40 tasks", partial(_frontier, n=40, method="pareto"), reps=1000, quick=150),
    {**_cell("frontier", "frontier probability >= 0.05 as a confidence set (HAL hull rule)",
             "near-tie: a system 0.003 above its neighbours' chord", partial(_frontier, n=40, method="hal",
                                                                          design=_NEAR_TIE), reps=1000, quick=150),
     "assumptions_hold": False},
    _cell("completion", "completion rate: Wilson", "60 submissions, C=0.52",
          partial(_completion, what="completion", clustered=False), quick=400),
    _cell("completion", "quality (mean among completed): jackknife ratio SE, t", "60 submissions, C=0.52",
          partial(_completion, what="quality", clustered=False), quick=400),
    _cell("completion", "overall mean: t", "60 submissions", partial(_completion, what="overall", clustered=False),
          quick=400),
    _cell("completion", "completion rate: clustered jackknife, t(G-1)", "12 tasks x 5 trials",
          partial(_completion, what="completion", clustered=True), quick=400),
    _cell("completion", "quality: clustered jackknife ratio SE, t(G-1)", "12 tasks x 5 trials",
          partial(_completion, what="quality", clustered=True), quick=400),
    _cell("completion", "overall mean: clustered jackknife, t(G-1)", "12 tasks x 5 trials",
          partial(_completion, what="overall", clustered=True), quick=400),
    _cell("completion", "Shapley completion part: bootstrap percentile", "60 vs 60 submissions",
          partial(_shapley, part="completion_part")),
    _cell("completion", "Shapley quality part: bootstrap percentile", "60 vs 60 submissions",
          partial(_shapley, part="quality_part")),
]


if __name__ == "__main__":  # this module's cells alone, as scripts/coverage.py runs them (one child seed each)
    import argparse
    import os

    ap = argparse.ArgumentParser(description="Run the agent-metrics coverage cells alone.")
    ap.add_argument("--quick", action="store_true", help="quick_reps instead of reps")
    ap.add_argument("--seed", type=int, default=20261203)
    args = ap.parse_args()
    print(f"load {os.getloadavg()}; SeedSequence({args.seed}), one child per cell; {'quick' if args.quick else 'full'}")
    for cell, child in zip(CELLS, np.random.SeedSequence(args.seed).spawn(len(CELLS)), strict=True):
        g = np.random.default_rng(child)
        n = cell["quick_reps" if args.quick else "reps"]
        hits, widths = zip(*(cell["draw"](g) for _ in range(n)), strict=True)
        cov = float(np.mean(hits))
        w = np.asarray(widths, dtype=float)
        fin = np.isfinite(w)
        flag = "" if cell.get("assumptions_hold", True) else "  (assumptions fail; evalkit warns)"
        print(f"{cell['family']:10s} {cell['method']} | {cell['setting']}: coverage {cov:.3f} "
              f"± {np.sqrt(cov * (1 - cov) / n):.3f} (n={n}), mean finite width {np.mean(w[fin]):.4g}"
              f"{f' ({int((~fin).sum())} unbounded)' if (~fin).any() else ''}{flag}")
