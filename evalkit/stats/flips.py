"""Execution noise: how often the verdict of a comparison flips when the same thing is run again.

Seed 002: the same workflow with the same seed won 6/6 once and lost 6/6 the next time. When the
same system, task and configuration run more than once, each repeat gives its own verdict (which
system did better on the task, or which transcript the judge preferred), and

* :func:`verdict_flip_rate` estimates the probability that two repeats of the same unit disagree:
  per unit with ``n >= 2`` verdicts, ``1 - sum_v n_v (n_v - 1) / (n (n - 1))`` (the unbiased
  share of disagreeing pairs of repeats), averaged over units, with a t interval over units;
* :func:`run_verdicts` lines the runs of two systems up repeat by repeat (the r-th run of one with the
  r-th run of the other), for the per-run conclusions ("run 1: b won 6 of 6 tasks; run 2: b lost 6").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.stats._result import Estimate
from evalkit.stats._validate import check_confidence_level

__all__ = ["verdict_flip_rate", "run_verdicts", "unit_flip_rates"]


def unit_flip_rates(frame: pd.DataFrame, *, unit: Sequence[str], verdict: str = "verdict") -> pd.DataFrame:
    """Per unit: ``n`` verdicts, the count of each, and ``flip_rate`` (P(two repeats disagree)); units
    with fewer than 2 verdicts are left out."""
    cols = list(unit)
    counts = frame.groupby([*cols, verdict], sort=True, dropna=True).size().rename("k").reset_index()
    n = counts.groupby(cols, sort=True)["k"].transform("sum")
    counts = counts.assign(n=n, same=counts["k"] * (counts["k"] - 1))
    per = counts.groupby(cols, sort=True).agg(n=("n", "first"), same=("same", "sum"),
                                              verdicts=(verdict, lambda v: ", ".join(map(str, v)))).reset_index()
    per = per[per["n"] >= 2].copy()
    per["flip_rate"] = 1.0 - per["same"] / (per["n"] * (per["n"] - 1))
    return per.drop(columns="same").reset_index(drop=True)


def verdict_flip_rate(frame: pd.DataFrame, *, unit: Sequence[str], verdict: str = "verdict",
                      confidence_level: float = 0.95) -> Estimate:
    """The probability that two repeats of the same unit give different verdicts.

    Parameters
    ----------
    frame : DataFrame
        One row per repeat: the ``unit`` columns (e.g. system pair and task) and a ``verdict`` (any
        discrete label: -1 / 0 / 1, "a" / "b" / "tie" ...).
    unit : sequence of str
    verdict : str
    confidence_level : float

    Returns
    -------
    Estimate
        Mean over units of each unit's flip rate, with a t interval over units (clipped to [0, 1]; None
        for one unit). ``details``: ``units``, ``repeats`` (total verdicts), ``units_flipping``.

    Raises
    ------
    ValueError
        When no unit has two verdicts.
    """
    from scipy import stats

    level = check_confidence_level(confidence_level)
    per = unit_flip_rates(frame, unit=unit, verdict=verdict)
    if per.empty:
        raise ValueError("No unit has two or more verdicts: a flip rate needs repeated runs of the same system, "
                         "task and configuration.")
    r = per["flip_rate"].to_numpy(float)
    g = r.size
    est = float(r.mean())
    se = float(r.std(ddof=1) / np.sqrt(g)) if g > 1 else float("nan")

    def ci(lv: float) -> tuple[float, float]:
        if g < 2:
            return float("nan"), float("nan")
        if se == 0.0:
            return est, est
        q = float(stats.t.ppf(0.5 + lv / 2, g - 1))
        return max(0.0, est - q * se), min(1.0, est + q * se)

    return Estimate(method="verdict flip rate between repeats (unbiased per unit, t interval over units)",
                    estimate=est, se=se, n=int(g), df=float(g - 1) if g > 1 else None, confidence_level=level,
                    handling=f"{g} units with at least two repeats; {int(per['n'].sum())} verdicts",
                    details={"units": int(g), "repeats": int(per["n"].sum()),
                             "units_flipping": int((r > 0).sum())}, _ci=ci)


def run_verdicts(outcomes: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The r-th run of ``a`` against the r-th run of ``b`` on each task both ran at least r times.

    ``outcomes``: ``system, task, session, score`` (one row per run). Runs of a system on a task are
    taken in the order of their session ids (natural order: Inspect epochs ``x:1, x:2, ...``).

    Returns
    -------
    DataFrame
        ``task, repeat, score_a, score_b, verdict`` with verdict ``sign(score_b - score_a)``
        (1: b better, -1: a better, 0: equal).
    """
    def ranked(system: str) -> pd.DataFrame:
        s = outcomes[outcomes["system"] == system][["task", "session", "score"]].copy()
        s["_k"] = s["session"].map(_natural_key)
        s = s.sort_values(["task", "_k"], kind="stable")
        s["repeat"] = s.groupby("task").cumcount() + 1
        return s[["task", "repeat", "score"]]

    m = ranked(a).merge(ranked(b), on=["task", "repeat"], suffixes=("_a", "_b"))
    m["verdict"] = np.sign(m["score_b"] - m["score_a"]).astype(int)
    return m.reset_index(drop=True)


def _natural_key(value: object) -> tuple:
    import re

    parts = re.split(r"(\d+)", str(value))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)
