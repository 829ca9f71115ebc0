"""What it costs to make a failing claim row hold: the trade-offs across the calibration candidates.

Every candidate of a calibration history (:func:`evalkit.sim.calibrate.calibrate`) keeps each
claim row's mean over the calibration seeds (column ``values``). For a row that the chosen
parameter set does not reproduce, :func:`row_tradeoffs` asks the history: over all candidates
(the post's rules, only the generator, cost law and value noise varied), what range does the
row's mean span, how many candidates put it inside the tolerance, and what did the best of those
lose elsewhere? A row whose mean never enters its tolerance, or enters it only in candidates that
lose more rows than they gain, cannot be produced by the post's rules *within the searched
generator family* - measured, not proved.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit.sim.claims import CLAIMS, Claim
from evalkit.sim.margins import p_seed, p_triple

__all__ = ["candidate_means", "inside_matrix", "row_tradeoffs", "expected_counts"]


def candidate_means(history: pd.DataFrame) -> pd.DataFrame:
    """One row per candidate (history order), one column per claim: the claim's mean over the seeds."""
    if "values" not in history:
        raise ValueError("The calibration history has no 'values' column (each row's mean per candidate); it was "
                         "written before evalkit recorded them. Rerun the calibration to get one.")
    return pd.DataFrame([json.loads(v) for v in history["values"]], index=history.index)


def inside_matrix(means: pd.DataFrame, claims: Sequence[Claim] = CLAIMS) -> pd.DataFrame:
    """Whether each candidate's mean lies inside each row's tolerance (rows with a threshold only)."""
    cols = {}
    for c in claims:
        e = c.edges()
        if e is not None and c.id in means:
            lo, hi, _ = e
            cols[c.id] = (means[c.id] >= lo) & (means[c.id] <= hi)
    return pd.DataFrame(cols, index=means.index)


def _label(history: pd.DataFrame, i: Any) -> str:  # i: a label of history.index
    """``"#12 pass 1 generator.peak=0.35"`` (the knob changed on top of the candidates accepted before)."""
    h = history.loc[i]
    p = f" pass {h['pass']}" if "pass" in history else ""
    return f"#{history.index.get_loc(i)}{p} {h['knob']}={h['value']}"


def row_tradeoffs(history: pd.DataFrame, chosen: int = 0, claims: Sequence[Claim] = CLAIMS) -> pd.DataFrame:
    """Per claim row that the ``chosen`` candidate's mean misses: the range of its mean over the
    candidates, how many candidates put it inside its tolerance, and for the best of them (most
    rows inside) the rows gained and lost against the chosen candidate.

    Parameters
    ----------
    history : DataFrame
        A calibration history with ``values`` (see :func:`candidate_means`).
    chosen : int
        Row position in ``history`` of the reference candidate (default: the start).
    """
    if not 0 <= chosen < len(history):
        raise ValueError(f"chosen must be a row position of the history (0..{len(history) - 1}); got {chosen}.")
    means = candidate_means(history)
    inside = inside_matrix(means, claims)
    ref = inside.iloc[chosen]
    count = inside.sum(axis=1)
    rows = []
    for cid in inside.columns[~ref.to_numpy(bool)]:
        ok = inside[cid].to_numpy(bool)
        entry = {"claim": cid, "candidates": len(means), "mean_min": float(means[cid].min()),
                 "mean_max": float(means[cid].max()), "chosen_mean": float(means[cid].iloc[chosen]),
                 "inside": int(ok.sum()), "best_rows_inside": np.nan, "chosen_rows_inside": int(count.iloc[chosen]),
                 "best_knobs": "", "gains": "", "losses": ""}
        if ok.any():
            best = count[ok].idxmax()
            b = inside.loc[best]
            entry.update(best_rows_inside=int(count.loc[best]),
                         best_knobs=_label(history, best),
                         gains=", ".join(inside.columns[(b & ~ref).to_numpy(bool)]),
                         losses=", ".join(inside.columns[(~b & ref).to_numpy(bool)]))
        rows.append(entry)
    return pd.DataFrame(rows)


def expected_counts(history: pd.DataFrame, margins: pd.DataFrame, claims: Sequence[Claim] = CLAIMS, *,
                    kinds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Approximate number of rows each candidate should hold on a fresh seed triple.

    Each row's chance of holding on a seed is read from the candidate's mean (history ``values``,
    the arithmetic mean over the calibration seeds, put on the row's scale) and the seed-to-seed
    sd of a reference :func:`~evalkit.sim.margins.margin_table` (``margins``, one seed group:
    usually the chosen set's); rows without a threshold take the reference's ``p_seed``. Then
    ``p_triple`` summed over rows (and over the rows whose ``kinds`` is evidence). An approximation:
    the spread of a row is taken to be the reference's for every candidate.
    """
    if "seeds" in margins and margins["seeds"].nunique() > 1:
        raise ValueError(f"margins must hold one seed group; got {sorted(margins['seeds'].unique())}.")
    means = candidate_means(history)
    ref = margins.set_index("claim")
    ev = set() if kinds is None else set(kinds.loc[kinds["kind"] == "evidence", "claim"])
    rows = []
    for i in means.index:
        tot = evid = 0.0
        for c in claims:
            e = c.edges()
            if e is None:
                p = float(ref.loc[c.id, "p_seed"])
            else:
                x = float(means.loc[i, c.id])
                p = p_seed(c, np.log(max(x, 1e-300)) if e[2] else x, float(ref.loc[c.id, "sd"]))
            tot += p_triple(p)
            evid += p_triple(p) * (c.id in ev)
        rows.append({"candidate": _label(history, i), "expected_rows": tot,
                     **({"expected_evidence": evid} if kinds is not None else {})})
    return pd.DataFrame(rows)
