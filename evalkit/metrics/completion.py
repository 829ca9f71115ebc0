"""Completion x quality: how often a system finishes, how good what it finishes is, and which moved.

For a system's submissions ``i`` with completion indicator ``c_i`` (submitted, graded, status
"success") and score ``s_i`` (defined where ``c_i = 1``), the overall score counts an
uncompleted submission as 0:

    overall O = mean(c_i * s_i) = C * Q,   completion rate C = mean(c_i),
    quality Q = sum(c_i * s_i) / sum(c_i)  (the mean score among the completed).

**Intervals** (at ``confidence_level``) treat the units as independent: the tasks when a
``cluster`` column (default ``task``) groups submissions, else the submissions. Each is a
ratio of unit totals ``sum_u y_u / sum_u n_u``, with the jackknife standard error (leave one
unit out: ``sqrt((G - 1) / G * sum_g (R_(g) - mean R_(.))^2)`` over ``G`` units) and a
``t_{G-1}`` quantile; with one submission per unit this is the usual ``sd / sqrt(n)`` for O
and, for C, the Wald interval, so C uses the Wilson interval then. The coverage of all three
is measured in ``scripts/coverage_cells/metrics.py``.

**Between two systems** (baseline A, candidate B), the change ``O_B - O_A`` splits exactly into

    completion part = (C_B - C_A) * (Q_A + Q_B) / 2,   quality part = (Q_B - Q_A) * (C_A + C_B) / 2,

the Shapley value of each factor in the two-factor product (the average of its effect over both
orders of change). Intervals for the parts come from a bootstrap of the units (tasks shared by
both systems are resampled together). Seed 002's MLR-Bench example, 31/60 x 3.07 -> 50/60 x 2.88:
the +0.81 change is +0.94 completion and -0.13 quality (shares 116 % and -16 %).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._rng import RNGLike, as_generator

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["completed_mask", "completion_quality", "shapley_split", "completion_change", "CompletionChange",
           "DONE_STATUSES"]

DONE_STATUSES = frozenset({"success", "completed", "complete", "done", "submitted", "graded", "ok", "true", "1", "yes"})


def completed_mask(frame: pd.DataFrame, column: str | None = None) -> np.ndarray:
    """Which runs completed: ``column`` if given (booleans, 0/1, or statuses such as
    ``success``); else a ``completed`` column; else ``status`` (completed when ``success``,
    and scored); else the runs with a score (not NaN)."""
    import pandas as pd

    scored = frame["score"].astype(float).notna().to_numpy() if "score" in frame.columns else np.ones(len(frame), bool)
    col = column or next((c for c in ("completed", "status") if c in frame.columns), None)
    if col is None:
        return scored
    if col not in frame.columns:
        raise ValueError(f"The completion column {col!r} is not in the runs; they have {list(frame.columns)}.")
    v = frame[col]
    if pd.api.types.is_bool_dtype(v) or pd.api.types.is_numeric_dtype(v):
        done = v.fillna(0).astype(float).to_numpy() > 0
    else:
        done = v.astype(str).str.strip().str.lower().isin(DONE_STATUSES).to_numpy()
    return done & scored if col == "status" else done


def _t(level: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df)) if df > 0 else float("inf")


def _ratio_ci(y: np.ndarray, n: np.ndarray, level: float) -> tuple[float, float, float, float]:
    """(R, se, low, high) for R = sum y / sum n over units: jackknife (leave one unit out) SE, t_{G-1}.

    For a mean (``n`` all 1) the jackknife SE is exactly ``sd / sqrt(G)``; for a ratio it is the
    linearised SE inflated a little, which keeps 12 clusters at nominal coverage (the linearised
    SE alone covered 0.936-0.943 there)."""
    g = y.size
    tot = n.sum()
    if tot <= 0:
        return (float("nan"),) * 4
    r = float(y.sum() / tot)
    if g < 2:
        return r, float("nan"), float("nan"), float("nan")
    rest = tot - n
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (y.sum() - y) / rest
    loo = loo[rest > 0]
    if loo.size < 2:
        return r, float("nan"), float("nan"), float("nan")
    se = math.sqrt((g - 1) / g * float(((loo - loo.mean()) ** 2).sum()))
    tq = _t(level, g - 1)
    return r, se, r - tq * se, r + tq * se


def _wilson(k: float, n: float, level: float) -> tuple[float, float]:
    from scipy import stats

    z = float(stats.norm.ppf(0.5 + level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _units(frame: pd.DataFrame, cluster: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per unit: completed count, sum of completed scores, submissions; and whether units are clusters."""
    c = frame["_done"].to_numpy(float)
    cs = c * np.nan_to_num(frame["score"].to_numpy(float))
    if cluster is None or cluster not in frame.columns or frame[cluster].nunique() == len(frame):
        return c, cs, np.ones(len(frame)), False
    _, inv = np.unique(frame[cluster].astype(str).to_numpy(), return_inverse=True)
    return (np.bincount(inv, weights=c), np.bincount(inv, weights=cs), np.bincount(inv).astype(float), True)


def completion_quality(outcomes: pd.DataFrame, *, completed: str | None = None, cluster: str | None = "task",
                       confidence_level: float = 0.95) -> pd.DataFrame:
    """Completion rate, quality (mean score among completed) and overall mean per system, with intervals.

    Returns
    -------
    DataFrame
        ``system, n, n_completed, completion_rate, completion_low, completion_high, quality,
        quality_low, quality_high, overall, overall_low, overall_high, units, method``.
    """
    import pandas as pd

    from evalkit.stats._validate import check_confidence_level

    level = check_confidence_level(confidence_level)
    frame = outcomes.copy()
    frame["_done"] = completed_mask(frame, completed)
    rows = []
    for system, g in frame.groupby("system", sort=True):
        c, cs, n, clustered = _units(g, cluster)
        cr, _, clo, chi = _ratio_ci(c, n, level)
        if not clustered:
            clo, chi = _wilson(c.sum(), n.sum(), level)
        q, _, qlo, qhi = _ratio_ci(cs, c, level)
        o, _, olo, ohi = _ratio_ci(cs, n, level)
        rows.append({"system": system, "n": int(n.sum()), "n_completed": int(c.sum()),
                     "completion_rate": cr, "completion_low": clo, "completion_high": chi,
                     "quality": q, "quality_low": qlo, "quality_high": qhi,
                     "overall": o, "overall_low": olo, "overall_high": ohi,
                     "units": f"{len(n)} {cluster}s" if clustered else f"{len(n)} submissions",
                     "method": ("completion: Wilson; " if not clustered else "") +
                               f"jackknife SE over {'clusters' if clustered else 'submissions'}, t"})
    return pd.DataFrame(rows)


def shapley_split(c_a: Any, q_a: Any, c_b: Any, q_b: Any) -> tuple[Any, Any]:
    """The Shapley split of ``c_b * q_b - c_a * q_a`` into (completion part, quality part);
    numbers or arrays of equal shape."""
    return (c_b - c_a) * (q_a + q_b) / 2.0, (q_b - q_a) * (c_a + c_b) / 2.0


@dataclass(frozen=True)
class CompletionChange:
    """The change from ``baseline`` to ``candidate`` split into completion and quality (candidate - baseline).

    Attributes
    ----------
    completion_a, quality_a, completion_b, quality_b : float
    change : float
        ``overall_b - overall_a``.
    completion_part, quality_part : float
        The Shapley parts (they sum to ``change``).
    completion_share, quality_share : float
        The parts over ``change`` (NaN when the change is 0).
    ci : mapping name -> (low, high)
        Bootstrap percentile intervals of ``change``, ``completion_part``, ``quality_part``,
        ``completion_share`` and ``quality_share``.
    """

    baseline: str
    candidate: str
    completion_a: float
    quality_a: float
    completion_b: float
    quality_b: float
    change: float
    completion_part: float
    quality_part: float
    completion_share: float
    quality_share: float
    ci: dict[str, tuple[float, float]]
    confidence_level: float
    n_resamples: int

    @property
    def opposite(self) -> bool:
        """Completion and quality moved in opposite directions."""
        dc, dq = self.completion_b - self.completion_a, self.quality_b - self.quality_a
        return bool(dc * dq < 0)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: (getattr(self, k) if k in ("baseline", "candidate") else float(getattr(self, k)))
                               for k in (
            "baseline", "candidate", "completion_a", "quality_a", "completion_b", "quality_b", "change",
            "completion_part", "quality_part", "completion_share", "quality_share")}
        for k, (lo, hi) in self.ci.items():
            out[f"{k}_low"], out[f"{k}_high"] = lo, hi
        return out

    def sentence(self) -> str | None:
        """A plain sentence when completion and quality moved in opposite directions, else None."""
        if not self.opposite:
            return None
        up_c = self.completion_b > self.completion_a
        lvl = f"{100 * self.confidence_level:g}%"
        lo_c, hi_c = self.ci.get("completion_part", (float("nan"), float("nan")))
        lo_q, hi_q = self.ci.get("quality_part", (float("nan"), float("nan")))
        return (f"From {self.baseline} to {self.candidate} (candidate - baseline), completion "
                f"{'rose' if up_c else 'fell'} from {100 * self.completion_a:.0f}% to {100 * self.completion_b:.0f}% "
                f"while the mean score of completed work {'fell' if up_c else 'rose'} from {self.quality_a:.3g} to "
                f"{self.quality_b:.3g}: of the overall change {self.change:+.3g}, completion accounts for "
                f"{self.completion_part:+.3g} ({lvl} CI {lo_c:+.3g} to {hi_c:+.3g}) and quality for "
                f"{self.quality_part:+.3g} ({lo_q:+.3g} to {hi_q:+.3g}); shares {100 * self.completion_share:.0f}% and "
                f"{100 * self.quality_share:.0f}%.")


def _cq(c: np.ndarray, cs: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    tot_c = c.sum()
    return c.sum() / n.sum(), (cs.sum() / tot_c if tot_c > 0 else float("nan"))


def completion_change(outcomes: pd.DataFrame, baseline: str, candidate: str, *, completed: str | None = None,
                      cluster: str | None = "task", n_resamples: int = 2000, confidence_level: float = 0.95,
                      rng: RNGLike = 0) -> CompletionChange:
    """Split the change of the overall score between two systems into completion and quality (module docstring)."""
    from evalkit.stats._validate import check_confidence_level

    level = check_confidence_level(confidence_level)
    frame = outcomes.copy()
    frame["_done"] = completed_mask(frame, completed)
    parts = {}
    for name in (baseline, candidate):
        g = frame[frame["system"].astype(str) == name]
        if g.empty:
            raise ValueError(f"No runs of system {name!r}; the systems are {sorted(frame['system'].astype(str).unique())}.")
        parts[name] = g
    a, b = parts[baseline], parts[candidate]
    ca, qa = _cq(*_units(a, cluster)[:3])
    cb, qb = _cq(*_units(b, cluster)[:3])
    cp, qp = shapley_split(ca, qa, cb, qb)
    change = cb * qb - ca * qa
    gen = as_generator(rng)
    ci = _bootstrap_split(a, b, cluster, n_resamples, level, gen) if n_resamples else {}
    share = (lambda x: x / change) if change != 0 else (lambda x: float("nan"))
    return CompletionChange(baseline=baseline, candidate=candidate, completion_a=float(ca), quality_a=float(qa),
                            completion_b=float(cb), quality_b=float(qb), change=float(change),
                            completion_part=float(cp), quality_part=float(qp),
                            completion_share=float(share(cp)), quality_share=float(share(qp)), ci=ci, confidence_level=level,
                            n_resamples=n_resamples)


def _bootstrap_split(a: pd.DataFrame, b: pd.DataFrame, cluster: str | None, n_resamples: int, level: float,
                     gen: np.random.Generator) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the change and its parts; units shared by both systems are drawn together."""
    key = cluster if cluster is not None and cluster in a.columns and cluster in b.columns else None
    ua = _unit_arrays(a, key)
    ub = _unit_arrays(b, key)
    if key is not None:
        names = sorted(set(ua[0]) | set(ub[0]))
        pos = {u: i for i, u in enumerate(names)}
        ia = np.array([pos[u] for u in ua[0]])
        ib = np.array([pos[u] for u in ub[0]])
        n_units = len(names)
        w = _counts(gen, n_units, n_resamples)
        wa, wb = w[:, ia], w[:, ib]
    else:
        wa, wb = _counts(gen, ua[1].size, n_resamples), _counts(gen, ub[1].size, n_resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        ca, qa = (wa @ ua[1]) / (wa @ ua[3]), (wa @ ua[2]) / (wa @ ua[1])
        cb, qb = (wb @ ub[1]) / (wb @ ub[3]), (wb @ ub[2]) / (wb @ ub[1])
        cp, qp = shapley_split(ca, qa, cb, qb)
        ch = cp + qp
        out = np.column_stack([ch, cp, qp, cp / ch, qp / ch])
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    result = {}
    for k, name in enumerate(("change", "completion_part", "quality_part", "completion_share", "quality_share")):
        v = out[:, k]
        v = v[np.isfinite(v)]
        result[name] = (float(np.quantile(v, lo_q)), float(np.quantile(v, hi_q))) if v.size else (np.nan, np.nan)
    return result


def _counts(gen: np.random.Generator, n: int, n_resamples: int) -> np.ndarray:
    """(n_resamples, n) counts of each unit in a bootstrap resample of n units."""
    idx = gen.integers(0, n, size=(n_resamples, n))
    flat = (np.arange(n_resamples)[:, None] * n + idx).ravel()
    return np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(float)


def _unit_arrays(frame: pd.DataFrame, key: str | None) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    c = frame["_done"].to_numpy(float)
    cs = c * np.nan_to_num(frame["score"].to_numpy(float))
    if key is None:
        return [str(i) for i in range(len(frame))], c, cs, np.ones(len(frame))
    names, inv = np.unique(frame[key].astype(str).to_numpy(), return_inverse=True)
    return ([str(u) for u in names], np.bincount(inv, weights=c), np.bincount(inv, weights=cs),
            np.bincount(inv).astype(float))
