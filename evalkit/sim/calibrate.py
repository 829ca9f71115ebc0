"""Calibration: fit what the post leaves open - the DAG generator, the cost law and the value noise.

The agents' rules are the post's and are never searched; neither is the speedup aggregator
(fixed to the mean curve, :mod:`evalkit.sim.experiments`).

Procedure (``evalkit simulate calibrate``)
------------------------------------------
1. Start from a parameter set (default: the bundled one).
2. Score a candidate by running every figure 2-10 experiment on the *calibration seeds*
   (default 100-105, disjoint from the reporting seeds 0-2 and 7-9) with common random
   numbers: DAG ``i`` of seed ``s`` and every tie-break are seeded by ``(s, i)`` whatever the
   candidate, so two candidates differ only by their knobs. The score is, in order,
   (rows holding on >= 2/3 of the seeds, seed-rows holding, -mean capped tolerance-normalised
   error) - the claim table of :mod:`evalkit.sim.claims`, never a single claim. The
   robustness-aware objective (``groups``, CLI ``--robust``) counts a row only if it holds on
   >= 2/3 of *each* seed triple (100-102 and 103-105), as the acceptance counts 0-2 and 7-9.
   The margin objective (``margin=k``, CLI ``--margin K``) counts the rows whose mean over the
   seeds lies inside the tolerance by at least ``k`` seed-to-seed sd (:mod:`evalkit.sim.margins`).
3. Sweep the knobs of :data:`SEARCH_SPACE` one at a time over their candidate values, keep a
   value when it improves the score (``max_passes`` sweeps). Every evaluation is logged.
4. Select: score the start and every accepted candidate on the *selection seeds* (default
   200-205, 16 DAGs each) and keep the best there (:func:`select`), so a gain that is noise of
   the calibration seeds is not kept.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.sim.claims import BEST_TOL, CLAIMS, TOLERANCE, claim_table, summarise
from evalkit.sim.experiments import SimParams, run_experiments
from evalkit.sim.margins import MarginScore, margin_score

__all__ = ["SEARCH_SPACE", "CALIBRATION_SEEDS", "SELECTION_SEEDS", "CALIBRATION_GROUPS", "SELECTION_GROUPS",
           "seed_triples", "Score", "score_params", "calibrate", "select"]

# (section, knob) -> candidate values: the generator (layer profile, merges, selection), the cost
# law and the value model only. "policy" knobs (the agents' rules) and the aggregator are fixed.
# v3 (the margin search) added cost growth 14 and 16, cost shape 0.7, cost noise 1.1, peak 0.45, tail 0.6 and
# the merge structure (sibling share, skip decay, merge-size exponent), the layer noise and the value noise.
SEARCH_SPACE: dict[tuple[str, str], tuple] = {
    ("generator", "cost_growth"): (6.0, 8.0, 10.0, 12.0, 14.0, 16.0),
    ("generator", "cost_shape"): (0.7, 1.0, 1.5, 2.0),
    ("generator", "cost_sigma"): (0.3, 0.5, 0.8, 1.1),
    ("generator", "peak"): (0.2, 0.28, 0.35, 0.45),
    ("generator", "steepness"): (4.0, 6.4, 9.0),
    ("generator", "tail"): (0.0, 0.3, 0.6),
    ("generator", "merge_p"): (0.46, 0.7, 0.9),
    ("generator", "sibling_p"): (0.0, 0.2, 0.5),
    ("generator", "skip_decay"): (0.5, 0.8, 0.9),
    ("generator", "merge_alpha"): (1.8, 2.3, 3.0),
    ("generator", "select_beta"): (0.7, 1.4, 2.8),
    ("generator", "mu_top"): (0.0, 0.5, 1.0),
    ("generator", "mu_bottom"): (-1.5, -1.0, -0.5),
    ("generator", "fertility_sd"): (0.0, 0.2, 0.4),
    ("generator", "layer_noise"): (0.2, 0.35, 0.5),
    ("generator", "n_layers"): (14.0, 17.0, 20.0),
}


def seed_triples(seeds: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Consecutive triples of ``seeds`` - the groups of the robustness-aware objective."""
    if len(seeds) < 3 or len(seeds) % 3:
        raise ValueError(f"The robust objective needs a multiple of 3 seeds (one group per triple). Got {len(seeds)} "
                         f"seeds ({list(seeds)}) instead.")
    return tuple(tuple(seeds[i:i + 3]) for i in range(0, len(seeds), 3))


CALIBRATION_SEEDS: tuple[int, ...] = (100, 101, 102, 103, 104, 105)
SELECTION_SEEDS: tuple[int, ...] = (200, 201, 202, 203, 204, 205)
# The robustness-aware objective's groups: a row must hold on >= 2/3 of each triple.
CALIBRATION_GROUPS: tuple[tuple[int, ...], ...] = seed_triples(CALIBRATION_SEEDS)
SELECTION_GROUPS: tuple[tuple[int, ...], ...] = seed_triples(SELECTION_SEEDS)


@dataclass(frozen=True, order=True)
class Score:
    """Lexicographic score of a candidate (higher is better)."""

    rows_held: int
    seed_rows_held: int
    closeness: float

    def __str__(self) -> str:
        return f"{self.rows_held} rows, {self.seed_rows_held} seed-rows, closeness {self.closeness:.3f}"


def _error(row: pd.Series) -> float:
    """Tolerance-normalised error of one (claim, seed) row: <= 1 means it holds."""
    if row["measure"] in ("ordering", "below"):
        return 0.0 if row["holds"] else 2.0
    how, tol = TOLERANCE[row["measure"]]
    if row["measure"] == "best":
        tol = BEST_TOL.get(row["claim"], tol)
    v, s = float(row["value"]), float(row["seed_value"])
    if how == "log":
        return abs(np.log(max(v, 1e-9) / s)) / tol
    if how == "rel":
        return abs(np.log(max(v, 1e-9) / s)) / np.log(1 + tol)
    return abs(v - s) / tol


def score_params(params: SimParams, *, seeds: Sequence[int] = CALIBRATION_SEEDS, n_dags: int = 16,
                 workers: int | None = None, engine: str | None = None, scheduler: object = None,
                 groups: Sequence[Sequence[int]] | None = None,
                 margin: float | None = None) -> tuple[Score | MarginScore, pd.DataFrame]:
    """Score one candidate on the claim table; returns the score and the claim table.

    With ``groups`` (e.g. the two triples of the calibration seeds) a row counts only if it
    holds on >= 2/3 of the seeds of *every* group - the robustness-aware objective, mirroring
    the acceptance rule of reporting on 0-2 and 7-9 separately. With ``margin`` (a number of
    seed-to-seed sd, e.g. 1) the score is the margin objective of :mod:`evalkit.sim.margins`:
    rows whose mean over the seeds lies inside the tolerance by at least ``margin`` sd.
    """
    table = claim_table(run_experiments(params, seeds=seeds, n_dags=n_dags, workers=workers, engine=engine,
                                        scheduler=scheduler), CLAIMS)
    if margin is not None:
        return margin_score(table, k=margin), table
    summary = summarise(table, groups)
    err = np.minimum(table.apply(_error, axis=1).to_numpy(), 3.0)
    return Score(int(summary["holds"].sum()), int(table["holds"].sum()), -float(err.mean())), table


def _better(a: Score | MarginScore, b: Score | MarginScore | None) -> bool:
    """``a > b`` for two scores of one kind (both from one ``margin`` setting); any score beats None."""
    if b is None:
        return True
    if type(a) is not type(b):
        raise TypeError(f"Cannot compare a {type(a).__name__} with a {type(b).__name__}.")
    return dataclasses.astuple(a) > dataclasses.astuple(b)  # what order=True compares


def _get(params: SimParams, section: str, knob: str) -> object:
    return getattr(params if section == "sim" else getattr(params, section), knob)


def _with(params: SimParams, section: str, knob: str, value: Any) -> SimParams:
    if section == "sim":
        return dataclasses.replace(params, **{knob: value})
    part = getattr(params, section)
    return dataclasses.replace(params, **{section: dataclasses.replace(part, **{knob: value})})


def _row_means(table: pd.DataFrame) -> str:
    """Each claim row's mean value over the seeds, as JSON (the history keeps it for every candidate)."""
    return json.dumps(table.groupby("claim", sort=False)["value"].mean().round(5).to_dict())


def calibrate(
    start: SimParams | None = None, *, space: dict[tuple[str, str], tuple] | None = None,
    seeds: Sequence[int] = CALIBRATION_SEEDS, n_dags: int = 16, max_passes: int = 1, workers: int | None = None,
    engine: str | None = None, scheduler: object = None, log: Callable[[str], None] | None = None,
    groups: Sequence[Sequence[int]] | None = None, margin: float | None = None,
) -> tuple[SimParams, Score | MarginScore, pd.DataFrame]:
    """Coordinate search over ``space`` scored by the claim table.

    Returns
    -------
    best : SimParams
    score : Score
    history : DataFrame
        One row per evaluation: ``pass, knob, value``, the score's fields, ``accepted``, ``values``
        (each claim row's mean over the seeds, JSON) and ``params`` (JSON).
    """
    space = space or SEARCH_SPACE
    for (section, knob) in space:
        target = SimParams() if section == "sim" else getattr(SimParams(), section, None)
        if section not in ("generator", "policy", "sim") or not hasattr(target, knob):
            raise ValueError(f"Unknown knob {section}.{knob} in the search space.")
    ex: dict[str, Any] = dict(seeds=seeds, n_dags=n_dags, workers=workers, engine=engine, scheduler=scheduler,
                              groups=groups, margin=margin)
    best = start or SimParams()
    best_score, table = score_params(best, **ex)
    rows = [{"pass": 0, "knob": "start", "value": "", **dataclasses.asdict(best_score), "accepted": True,
             "values": _row_means(table), "params": json.dumps(best.to_dict())}]
    if log:
        log(f"start: {best_score}")
    for p in range(1, max_passes + 1):
        improved = False
        for (section, knob), values in space.items():
            current = _get(best, section, knob)
            for v in values:
                if v == current:
                    continue
                cand = _with(best, section, knob, v)
                s, table = score_params(cand, **ex)
                ok = _better(s, best_score)
                rows.append({"pass": p, "knob": f"{section}.{knob}", "value": repr(v), **dataclasses.asdict(s),
                             "accepted": ok, "values": _row_means(table), "params": json.dumps(cand.to_dict())})
                if log:
                    log(f"pass {p} {section}.{knob}={v!r}: {s}{'  <- accepted' if ok else ''}")
                if ok:
                    best, best_score, current = cand, s, v
                    improved = True
        if not improved:
            break
    return best, best_score, pd.DataFrame(rows)


def select(
    history: pd.DataFrame, *, seeds: Sequence[int] = SELECTION_SEEDS, n_dags: int = 16, workers: int | None = None,
    engine: str | None = None, scheduler: object = None, groups: Sequence[Sequence[int]] | None = None,
    margin: float | None = None,
) -> tuple[SimParams, pd.DataFrame]:
    """Score every accepted candidate of a :func:`calibrate` history on the selection seeds.

    Returns the best of them there (by the same lexicographic score) and a table
    ``knob, value, rows_held, seed_rows_held, closeness`` with one row per accepted candidate.
    """
    acc = history.loc[history["accepted"].astype(bool)]
    if acc.empty:
        raise ValueError("The calibration history has no accepted candidate to select from.")
    rows: list[dict[str, Any]] = []
    best: SimParams | None = None
    best_s: Score | MarginScore | None = None
    for _, h in acc.iterrows():
        cand = SimParams.from_dict(json.loads(h["params"]))
        s, _ = score_params(cand, seeds=seeds, n_dags=n_dags, workers=workers, engine=engine, scheduler=scheduler,
                            groups=groups, margin=margin)
        rows.append({"knob": h["knob"], "value": h["value"], **dataclasses.asdict(s)})
        if _better(s, best_s):
            best, best_s = cand, s
    assert best is not None  # acc is not empty
    return best, pd.DataFrame(rows)
