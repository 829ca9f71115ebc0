"""How far each claim row sits inside (or outside) its tolerance, in seed-to-seed standard deviations.

A row that holds on the reporting seeds only because its 16-DAG estimate happened to land inside
the tolerance flips on fresh seeds. :func:`margin_table` measures that risk on a set of seeds:
per row the mean and the seed-to-seed standard deviation of its value (on the log scale for
speedups and sizes, whose tolerances are relative), and the distance from the mean to the nearer
tolerance edge in units of that standard deviation (``margin``; negative = the mean is outside).
A row is **robust** when its margin is at least ``k`` (default 1: it holds on about 84 % of seeds
if the values are normal). ``p_seed`` is the chance that the row holds on one fresh seed (normal
values with that mean and sd; for yes/no rows the share of seeds held) and ``p_triple`` the chance
that it holds on at least 2 of 3 fresh seeds, ``p^3 + 3 p^2 (1 - p)`` - the acceptance rule of a
reporting group; their sum over rows is the number of rows a fresh seed triple should hold. Rows whose check is not a threshold on their value (yes/no counts such
as "shift earlier at every size") have no margin; they count as robust when they hold on at least
5/6 of the seeds.

:func:`margin_score` turns the table into the margin objective of the calibration
(:mod:`evalkit.sim.calibrate`, ``objective="margin"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr

from evalkit._progress import ProgressFn
from evalkit.sim.claims import CLAIMS, Claim, claim_table, group_label
from evalkit.sim.experiments import SimParams, run_experiments

__all__ = ["margin_table", "margin_score", "margins_by_group", "p_seed", "p_triple", "MarginScore", "BINARY_SHARE"]

#: Share of the seeds a row without a margin must hold on to count as robust.
BINARY_SHARE = 5 / 6


def p_triple(p: float) -> float:
    """Chance of holding on at least 2 of 3 independent seeds when one seed holds with chance ``p``."""
    return p**3 + 3 * p**2 * (1 - p)


def _scale(c: Claim, v: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Values and tolerance edges on the scale margins are read on (log for speedups and sizes)."""
    e = c.edges()
    if e is None:
        raise ValueError(f"Claim {c.id} is not a threshold on its value: it has no margin.")
    lo, hi, log = e
    if not log:
        return v, lo, hi
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(v, 1e-300)), (np.log(lo) if lo > 0 else -np.inf), np.log(hi)


def p_seed(c: Claim, mean: float, sd: float) -> float:
    """Chance that row ``c`` holds on one seed when its value (on the row's scale, see
    :func:`margin_table`) is normal with ``mean`` and ``sd``."""
    _, flo, fhi = _scale(c, np.empty(0))
    if not sd > 0:
        return float(flo <= mean <= fhi)
    return float(ndtr((fhi - mean) / sd) - ndtr((flo - mean) / sd))


def _row(c: Claim, g: pd.DataFrame, k: float) -> dict:
    v = g["value"].to_numpy(float)
    held, n = int(g["holds"].sum()), len(g)
    out = {"claim": c.id, "measure": c.measure, "seed_value": c.seed, "n_seeds": n, "seeds_held": held}
    e = c.edges()
    if e is None:
        p = held / n
        return {**out, "lo": np.nan, "hi": np.nan, "scale": "-", "mean": np.nan, "sd": np.nan, "margin": np.nan,
                "robust": held >= BINARY_SHARE * n - 1e-9, "p_seed": p, "p_triple": p_triple(p)}
    lo, hi, log = e
    x, flo, fhi = _scale(c, v)
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else np.nan
    dist = min(mean - flo, fhi - mean)
    margin = dist / sd if sd > 0 else (np.inf if dist >= 0 else -np.inf)
    p = p_seed(c, mean, sd)
    return {**out, "lo": lo, "hi": hi, "scale": "log" if log else "linear",
            "mean": float(np.exp(mean)) if log else mean, "sd": sd, "margin": float(margin),
            "robust": bool(margin >= k), "p_seed": p, "p_triple": p_triple(p)}


def margin_table(table: pd.DataFrame, claims: Sequence[Claim] = CLAIMS, *, k: float = 1.0) -> pd.DataFrame:
    """Margin of every claim row over the seeds of a :func:`~evalkit.sim.claims.claim_table`.

    Parameters
    ----------
    table : DataFrame
        Tidy claim table (one row per claim and seed: ``claim, seed, value, holds``).
    claims : sequence of Claim
        The claims behind the table (their tolerance edges).
    k : float
        Margin (in seed-to-seed sd) a row needs to be **robust**.

    Returns
    -------
    DataFrame
        One row per claim: ``claim, measure, seed_value, n_seeds, seeds_held, lo, hi`` (the
        tolerance interval), ``scale`` (log / linear / - for yes/no rows), ``mean`` (on the
        value's scale; the geometric mean for log rows), ``sd`` (seed-to-seed, on ``scale``),
        ``margin`` (sd units to the nearer edge, negative when the mean is outside),
        ``robust``, ``p_seed`` and ``p_triple`` (see the module docstring).
    """
    by_id = {c.id: c for c in claims}
    missing = sorted(set(table["claim"]) - set(by_id))
    if missing:
        raise ValueError(f"The claim table has rows {missing} that are not among the claims given.")
    return pd.DataFrame([_row(by_id[str(cid)], g, k) for cid, g in table.groupby("claim", sort=False)])


@dataclass(frozen=True, order=True)
class MarginScore:
    """Lexicographic margin objective (higher is better): robust rows, rows holding on >= 2/3 of
    the seeds, then the mean margin clipped to [-3, 3] (rows with a margin)."""

    robust_rows: int
    rows_held: int
    mean_margin: float

    def __str__(self) -> str:
        return f"{self.robust_rows} robust rows, {self.rows_held} rows held, mean margin {self.mean_margin:.2f}"


def margin_score(table: pd.DataFrame, claims: Sequence[Claim] = CLAIMS, *, k: float = 1.0) -> MarginScore:
    """The margin objective of a claim table (see :class:`MarginScore`)."""
    m = margin_table(table, claims, k=k)
    held = int((m["seeds_held"] * 3 >= m["n_seeds"] * 2).sum())
    finite = m["margin"].dropna().clip(-3, 3)
    return MarginScore(int(m["robust"].sum()), held, float(finite.mean()) if len(finite) else 0.0)


def margins_by_group(
    params: SimParams, seed_groups: Sequence[Sequence[int]], *, n_dags: int = 16, k: float = 1.0,
    engine: str | None = None, workers: int | None = None, scheduler: object = None,
    progress: ProgressFn | None = None,
) -> pd.DataFrame:
    """Run the figure 2-10 experiments on every seed of ``seed_groups`` (one sweep) and stack the
    :func:`margin_table` of each group, with a ``seeds`` column (e.g. ``"100-105"``)."""
    if not seed_groups or any(len(g) < 2 for g in seed_groups):
        raise ValueError(f"Each seed group needs at least 2 seeds (a standard deviation). Got {list(seed_groups)}.")
    seeds = [int(s) for g in seed_groups for s in g]
    table = claim_table(run_experiments(params, seeds=seeds, n_dags=n_dags, engine=engine, workers=workers,
                                        scheduler=scheduler, progress=progress))
    parts = [margin_table(table.loc[table["seed"].isin([int(s) for s in g])], k=k).assign(seeds=group_label(g))
             for g in seed_groups]
    out = pd.concat(parts, ignore_index=True)
    return out[["seeds", *[c for c in out.columns if c != "seeds"]]]
