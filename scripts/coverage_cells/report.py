"""The tests of ``evalkit report`` under their null: the unit-of-analysis comparison (Welch over trial
means, the exact sign test and the paired t-test over task means, Wilcoxon), the paired tests between
systems on shared items with Holm's correction, and the head-to-head tests of direct games (exact sign
test; CR1 t-test clustered by item). Plus the Welch and paired t intervals they print.

Scores: seed 002's design, 12 tasks x 5 trials, a task effect N(0, 1) and trial noise N(0, 0.5) (the
paper's MASS scores are continuous); under H0 both systems have the same task means.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from evalkit.stats import paired_ttest, sign_test, welch_ttest, wilcoxon_test
from evalkit.stats.headtohead import cluster_sign_pvalue
from evalkit.stats.judge_warnings import binom_half_pvalue


def _scores(gen: np.random.Generator, tasks: int = 12, trials: int = 5, effect: float = 0.0) -> np.ndarray:
    task = gen.normal(0.0, 1.0, tasks)
    out = task[None, :, None] + gen.normal(0.0, 0.5, (2, tasks, trials))
    out[0] += effect
    return out  # (system, task, trial)


def _unit_test(gen: np.random.Generator, *, test: str) -> tuple[bool, float]:
    s = _scores(gen)
    if test == "welch":  # trial as the unit: 5 vs 5 trial means over the same tasks
        res = welch_ttest(s[0].mean(axis=0), s[1].mean(axis=0))
    else:
        a, b = s[0].mean(axis=1), s[1].mean(axis=1)
        res = {"sign": sign_test, "paired_t": paired_ttest, "wilcoxon": wilcoxon_test}[test](a, b)
    return bool(res.pvalue < 0.05), float("nan")


def _interval(gen: np.random.Generator, *, test: str, effect: float = 0.3) -> tuple[bool, float]:
    s = _scores(gen, effect=effect)
    res = (welch_ttest(s[0].mean(axis=0), s[1].mean(axis=0)) if test == "welch"
           else paired_ttest(s[0].mean(axis=1), s[1].mean(axis=1)))
    lo, hi = res.confidence_interval()
    return bool(lo <= effect <= hi), hi - lo


def _holm(gen: np.random.Generator, *, systems: int = 4) -> tuple[bool, float]:
    """compare_systems' family: paired t-tests of every pair of ``systems`` equal systems, Holm at 0.05:
    is any pair rejected (the family-wise error)?"""
    from evalkit.stats.multiplicity import adjust_pvalues

    task = gen.normal(0.0, 1.0, 30)
    scores = task[None, :] + gen.normal(0.0, 0.7, (systems, 30))
    p = [paired_ttest(scores[i], scores[j]).pvalue for i in range(systems) for j in range(i + 1, systems)]
    return bool(np.any(adjust_pvalues(np.array(p), method="holm", alpha=0.05).reject)), float("nan")


def _head_to_head(gen: np.random.Generator, *, games: int, items: int | None) -> tuple[bool, float]:
    """Two equal players' direct games (ties dropped); with ``items``, the games fall on items and a game
    repeats its item's verdict with probability 0.6 (several judges, one prompt)."""
    if items is None:
        wins = int(gen.binomial(games, 0.5))
        return bool(binom_half_pvalue(wins, games) < 0.05), float("nan")
    item = gen.integers(0, items, games)
    latent = gen.random(items) < 0.5
    y = np.where(gen.random(games) < 0.6, latent[item], gen.random(games) < 0.5).astype(float)
    try:
        p, _ = cluster_sign_pvalue(y, item)
    except ValueError:
        return False, float("nan")
    return bool(p < 0.05), float("nan")


def _cell(method: str, setting: str, draw, *, kind: str = "test", reps: int = 4000, quick: int = 1000,
          hold: bool = True) -> dict:
    return {"family": "report", "method": method, "setting": setting, "kind": kind,
            "nominal": 0.05 if kind == "test" else 0.95, "draw": draw, "reps": reps, "quick_reps": quick,
            "assumptions_hold": hold}


CELLS = [
    _cell("Welch t-test over trial means (unit: trial)", "5 vs 5 trial means of 12 tasks, H0",
          partial(_unit_test, test="welch")),
    _cell("exact sign test over task means (unit: task)", "12 tasks, H0", partial(_unit_test, test="sign")),
    _cell("paired t-test over task means (unit: task)", "12 tasks, H0", partial(_unit_test, test="paired_t")),
    _cell("Wilcoxon signed-rank test over task means", "12 tasks, H0", partial(_unit_test, test="wilcoxon")),
    _cell("paired t-tests of every pair, Holm (family-wise error)", "4 equal systems on 30 shared items",
          _holm),
    _cell("head-to-head exact sign test of direct games", "30 decisive games of two equal players, H0",
          partial(_head_to_head, games=30, items=None)),
    _cell("head-to-head CR1 t-test clustered by item, t(G-1)", "60 games on 15 items, repeated verdicts, H0",
          partial(_head_to_head, games=60, items=15), hold=False),  # full run: 0.069; evalkit warns below 30 items
    _cell("Welch interval of the difference", "5 vs 5 trial means, effect 0.3", partial(_interval, test="welch"),
          kind="interval"),
    _cell("paired t interval of the difference", "12 task means, effect 0.3", partial(_interval, test="paired_t"),
          kind="interval"),
]
