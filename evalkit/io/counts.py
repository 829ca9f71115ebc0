"""The counts table: comparisons reduced to weighted cells, the only thing the statistics read.

A *cell* is one distinct ``(player_a, player_b, outcome[, cluster])``; its ``weight`` is the
total weight of the comparisons in it and ``n`` how many rows they were. Weights are
**frequency weights**: a row of weight ``w`` counts as ``w`` rows, so a cell of weight ``W``
is ``W`` identical comparisons. Bradley–Terry, its Hessian, sandwich and cluster-robust
covariances, the row and cluster bootstraps, :func:`~evalkit.summary.summarize` and the
win-rate matrix depend on the data only through these cells. Discrete outcomes (0, 0.5, 1)
give at most three cells per ordered pair; a continuous outcome keeps one cell per distinct
value, so the per-pair sums of ``w*o`` and ``w*o**2`` (see :meth:`ComparisonCounts.moments`)
are exact.

The cells are themselves a valid comparisons frame (``player_a, player_b, outcome, weight``)
with frequency weights, so every function that takes a frame also takes them.

Pre-aggregated counts from a warehouse (``player_a, player_b, wins_a, wins_b, ties[, cluster]``)
are the ``"counts"`` format of :func:`~evalkit.io.read_comparisons` (:func:`convert_pair_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit._errors import nonnegative_column, where
from evalkit.io._common import Converted, base_frame, keep_all, require_columns
from evalkit.io._files import LINE

__all__ = ["ComparisonCounts", "CELL_COLUMNS", "PAIR_COUNT_COLUMNS", "cells_from_frame",
           "convert_pair_counts"]

#: Columns of a cell table (plus the cluster column, when there is one).
CELL_COLUMNS: tuple[str, ...] = ("player_a", "player_b", "outcome", "weight", "n")
#: Columns of pre-aggregated pair counts (plus an optional cluster column).
PAIR_COUNT_COLUMNS: tuple[str, ...] = ("player_a", "player_b", "wins_a", "wins_b", "ties")


def _canonical_order(cells: pd.DataFrame, cluster: str | None) -> pd.DataFrame:
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    return cells.sort_values(keys, kind="stable", ignore_index=True)


@dataclass(frozen=True)
class ComparisonCounts:
    """Comparisons reduced to weighted cells (see the module docstring).

    Attributes
    ----------
    cells : pandas.DataFrame
        ``player_a, player_b, outcome, weight, n`` and the ``cluster`` column when given;
        one row per distinct key, sorted by key. Players and clusters are strings.
    cluster : str or None
        Name of the cluster column kept in ``cells`` (``None``: no cluster).
    """

    cells: pd.DataFrame = field(repr=False)
    cluster: str | None = None

    def __post_init__(self) -> None:
        missing = [c for c in CELL_COLUMNS if c not in self.cells.columns]
        if self.cluster is not None and self.cluster not in self.cells.columns:
            missing.append(self.cluster)
        if missing:
            raise ValueError(
                f"A counts table needs the columns {list(CELL_COLUMNS)}"
                f"{' and ' + repr(self.cluster) if self.cluster else ''}; it lacks {missing}."
            )

    @property
    def n_rows(self) -> int:
        """Number of comparison rows the cells stand for."""
        return int(self.cells["n"].sum())

    @property
    def total_weight(self) -> float:
        """Sum of the weights (the number of comparisons, for unit weights)."""
        return float(self.cells["weight"].sum())

    @property
    def players(self) -> tuple[str, ...]:
        """Player names, sorted."""
        return tuple(sorted(set(self.cells["player_a"]) | set(self.cells["player_b"])))

    @property
    def n_clusters(self) -> int | None:
        """Number of distinct clusters (``None`` without a cluster column)."""
        return None if self.cluster is None else int(self.cells[self.cluster].nunique())

    def moments(self) -> pd.DataFrame:
        """Per ordered pair: ``weight = sum(w)``, ``sum_wo = sum(w*o)``, ``sum_woo = sum(w*o**2)``."""
        c = self.cells
        o, w = c["outcome"].to_numpy(float), c["weight"].to_numpy(float)
        tmp = pd.DataFrame({"player_a": c["player_a"], "player_b": c["player_b"], "weight": w,
                            "sum_wo": w * o, "sum_woo": w * o * o})
        return tmp.groupby(["player_a", "player_b"], sort=True).sum().reset_index()

    def equals(self, other: ComparisonCounts, *, rtol: float = 1e-12) -> bool:
        """Same cells (keys identical, weights and row counts equal to ``rtol``)."""
        if self.cluster != other.cluster or len(self.cells) != len(other.cells):
            return False
        keys = ["player_a", "player_b"] + ([self.cluster] if self.cluster else [])
        a, b = self.cells, other.cells
        if not all((a[k].astype(str).to_numpy() == b[k].astype(str).to_numpy()).all() for k in keys):
            return False
        return bool(np.array_equal(a["n"].to_numpy(), b["n"].to_numpy())
                    and np.allclose(a["outcome"], b["outcome"], rtol=0, atol=0)
                    and np.allclose(a["weight"], b["weight"], rtol=rtol, atol=0))


def cells_from_frame(frame: pd.DataFrame, *, cluster: str | None = None) -> ComparisonCounts:
    """Reduce a validated canonical comparisons frame to cells (the pandas engine).

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`~evalkit.io.schema.validate_comparisons` (string players, float
        outcome and weight).
    cluster : str, optional
        Column to keep as the cluster key; it must have no missing value.

    Raises
    ------
    ValueError
        If ``cluster`` is not a column of ``frame`` or has missing values.
    """
    keys = ["player_a", "player_b", "outcome"]
    data = frame[keys + ["weight"]].copy()
    if cluster is not None:
        if cluster not in frame.columns:
            raise ValueError(
                f"The cluster column {cluster!r} is not in the frame of comparisons; it has "
                f"{[c for c in frame.columns if c not in ('line', 'source')]}."
            )
        col = frame[cluster]
        bad = col.isna().to_numpy()
        if bad.any():
            lines = frame["line"].to_numpy() if "line" in frame.columns else None
            raise ValueError(
                f"The cluster column {cluster!r} must name a cluster on every row. Got a missing "
                f"value {where(bad, lines)} instead."
            )
        data[cluster] = col.astype(str).to_numpy(dtype=object)
        keys.append(cluster)
    data["n"] = 1
    cells = data.groupby(keys, sort=True, observed=True)[["weight", "n"]].sum().reset_index()
    cells["n"] = cells["n"].astype(np.int64)
    return ComparisonCounts(_canonical_order(cells, cluster), cluster)


def convert_pair_counts(raw: pd.DataFrame, *, source: str) -> Converted:
    """Pre-aggregated ``player_a, player_b, wins_a, wins_b[, ties]`` rows -> weighted canonical rows.

    Each count becomes one row of that weight with outcome 1 (``wins_a``), 0 (``wins_b``) or
    0.5 (``ties``) (frequency weights: a row of weight ``w`` is ``w`` comparisons). Other
    canonical columns (``item``, ``judge``, ...) are kept, so they can be clusters.
    """
    require_columns(raw, ("player_a", "player_b", "wins_a", "wins_b"), fmt="counts", source=source)
    lines = raw[LINE].to_numpy()
    parts = []
    for col, outcome in (("wins_a", 1.0), ("wins_b", 0.0), ("ties", 0.5)):
        if col not in raw.columns:
            continue
        w = nonnegative_column(raw, col, allowed="a finite count >= 0", source=f" of {source}",
                               lines=lines)
        part = base_frame(raw, raw["player_a"], raw["player_b"], np.full(len(raw), outcome))
        part["weight"] = w
        for name in ("item", "task", "judge"):
            if name in raw.columns:
                part[name] = raw[name].to_numpy(dtype=object)
        parts.append(part)
    return Converted(pd.concat(parts, ignore_index=True), keep_all(len(raw) * len(parts)), [])
