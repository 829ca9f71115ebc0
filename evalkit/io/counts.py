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

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from evalkit._lazy import is_dataframe

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.io._common import Converted

__all__ = ["ComparisonCounts", "CELL_COLUMNS", "PAIR_COUNT_COLUMNS", "cells_from_frame",
           "convert_pair_counts", "encode_players"]

#: Columns of a cell table (plus the cluster column, when there is one).
CELL_COLUMNS: tuple[str, ...] = ("player_a", "player_b", "outcome", "weight", "n")
#: Columns of pre-aggregated pair counts (plus an optional cluster column).
PAIR_COUNT_COLUMNS: tuple[str, ...] = ("player_a", "player_b", "wins_a", "wins_b", "ties")


def _canonical_order(cells: pd.DataFrame, cluster: str | None) -> pd.DataFrame:
    keys = ["player_a", "player_b", "outcome"] + ([cluster] if cluster else [])
    return cells.sort_values(keys, kind="stable", ignore_index=True)


class ComparisonCounts:
    """Comparisons reduced to weighted cells (see the module docstring).

    Parameters
    ----------
    cells : pandas.DataFrame or mapping of column name to numpy array
        ``player_a, player_b, outcome, weight, n`` and the ``cluster`` column when given;
        one row per distinct key, sorted by key. Players and clusters are strings. A
        columnar engine passes numpy arrays; the DataFrame is then built on first use of
        :attr:`cells` (the fits read the arrays through :meth:`column` and never need it).
    cluster : str or None
        Name of the cluster column kept in ``cells`` (``None``: no cluster).

    Attributes
    ----------
    cells : pandas.DataFrame
    cluster : str or None
    """

    def __init__(self, cells: pd.DataFrame | Mapping[str, Any], cluster: str | None = None) -> None:
        if is_dataframe(cells):
            self._frame: pd.DataFrame | None = cells
            self._arrays: dict[str, np.ndarray] | None = None
            names = list(cells.columns)
        else:
            self._frame = None
            self._arrays = {str(k): np.asarray(v) for k, v in dict(cells).items()}
            lengths = {len(v) for v in self._arrays.values()}
            if len(lengths) > 1:
                raise ValueError(f"The columns of a counts table must have one length; got {sorted(lengths)}.")
            names = list(self._arrays)
        self._cluster = cluster
        self._codes: tuple[tuple[str, ...], np.ndarray, np.ndarray] | None = None
        missing = [c for c in CELL_COLUMNS if c not in names]
        if cluster is not None and cluster not in names:
            missing.append(cluster)
        if missing:
            raise ValueError(
                f"A counts table needs the columns {list(CELL_COLUMNS)}"
                f"{' and ' + repr(cluster) if cluster else ''}; it lacks {missing}."
            )

    def __repr__(self) -> str:
        return f"ComparisonCounts({len(self)} cells, {self.n_rows} rows, cluster={self._cluster!r})"

    def __len__(self) -> int:
        return len(self.column("n"))

    @property
    def cluster(self) -> str | None:
        """Name of the cluster column (``None``: no cluster)."""
        return self._cluster

    @property
    def cells(self) -> pd.DataFrame:
        """The cells as a DataFrame (built from the arrays on first use)."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame(self._arrays)
        return self._frame

    def codes(self) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
        """``(players, a, b)``: players sorted by name and the codes of ``player_a`` / ``player_b``
        (:func:`encode_players`), computed once and kept: the fit and the
        tallies of a leaderboard both need them."""
        if self._codes is None:
            self._codes = encode_players(self.column("player_a"), self.column("player_b"))
        return self._codes

    def column(self, name: str) -> np.ndarray:
        """One column of the cells as a numpy array (strings as an object array)."""
        if self._arrays is not None:
            return self._arrays[name]
        assert self._frame is not None  # one of the two always holds the cells
        return self._frame[name].to_numpy()

    @property
    def n_rows(self) -> int:
        """Number of comparison rows the cells stand for."""
        return int(np.sum(self.column("n")))

    @property
    def total_weight(self) -> float:
        """Sum of the weights (the number of comparisons, for unit weights)."""
        return float(np.sum(self.column("weight").astype(float)))

    @property
    def players(self) -> tuple[str, ...]:
        """Player names, sorted."""
        return self.codes()[0]

    @property
    def n_clusters(self) -> int | None:
        """Number of distinct clusters (``None`` without a cluster column)."""
        return None if self._cluster is None else len(set(self.column(self._cluster).tolist()))

    def discrete(self) -> bool:
        """Whether every outcome is 0, 0.5 or 1 (then per-pair win / loss / tie counts are
        sufficient for every statistic, including the sandwich)."""
        o = self.column("outcome").astype(float)
        return bool(np.all((o == 0.0) | (o == 0.5) | (o == 1.0)))

    def moments(self) -> pd.DataFrame:
        """Per ordered pair: ``weight = sum(w)``, ``sum_wo = sum(w*o)``, ``sum_woo = sum(w*o**2)``."""
        import pandas as pd

        c = self.cells
        o, w = c["outcome"].to_numpy(float), c["weight"].to_numpy(float)
        tmp = pd.DataFrame({"player_a": c["player_a"], "player_b": c["player_b"], "weight": w,
                            "sum_wo": w * o, "sum_woo": w * o * o})
        return tmp.groupby(["player_a", "player_b"], sort=True).sum().reset_index()

    def equals(self, other: ComparisonCounts, *, rtol: float = 1e-12) -> bool:
        """Same cells (keys identical, weights and row counts equal to ``rtol``; counts collapsed over
        their cluster by the DuckDB engine are compared by their per-cluster cells)."""
        for counts in (self, other):
            expand = getattr(counts, "expand", None)
            if expand is not None:
                expand()
        if self.cluster != other.cluster or len(self) != len(other):
            return False
        keys = ["player_a", "player_b"] + ([self.cluster] if self.cluster else [])
        if not all((self.column(k).astype(str) == other.column(k).astype(str)).all() for k in keys):
            return False
        return bool(np.array_equal(self.column("n"), other.column("n"))
                    and np.array_equal(self.column("outcome").astype(float), other.column("outcome").astype(float))
                    and np.allclose(self.column("weight").astype(float), other.column("weight").astype(float),
                                    rtol=rtol, atol=0))


def encode_players(
    player_a: ArrayLike, player_b: ArrayLike
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Integer codes for two columns of player names, players sorted by name.

    Each column is factorised on its own (fast for pandas' Arrow-backed strings), then the
    two small sets of names are merged.

    Parameters
    ----------
    player_a, player_b : array_like of str
        Names; no missing values (see :func:`~evalkit.io.schema.validate_comparisons`).

    Returns
    -------
    players : tuple of str
        Sorted unique names.
    a, b : numpy.ndarray of int64
        Codes of ``player_a`` and ``player_b`` into ``players`` (-1 for a missing name).
    """
    if "pandas" not in sys.modules:  # the DuckDB fast path: a few thousand cells, a dict
        return _encode_numpy(player_a, player_b)
    import pandas as pd

    code_a, names_a = pd.factorize(
        pd.Series(player_a) if not isinstance(player_a, pd.Series) else player_a
    )
    code_b, names_b = pd.factorize(
        pd.Series(player_b) if not isinstance(player_b, pd.Series) else player_b
    )
    labels_a = [str(x) for x in names_a]
    labels_b = [str(x) for x in names_b]
    players = tuple(sorted(set(labels_a) | set(labels_b)))
    pos = {p: k for k, p in enumerate(players)}
    map_a = np.array([pos[x] for x in labels_a] + [-1], dtype=np.int64)
    map_b = np.array([pos[x] for x in labels_b] + [-1], dtype=np.int64)
    return players, map_a[code_a], map_b[code_b]


def _encode_numpy(player_a: ArrayLike, player_b: ArrayLike) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """:func:`encode_players` without pandas (no missing names; sorted like ``sorted``).

    Cells come from the engines sorted by ``player_a``: its codes are then one per run of equal
    names (found by comparing neighbours), and only ``player_b`` is looked up name by name."""
    a_obj = np.asarray(player_a, dtype=object).ravel()
    b_obj = np.asarray(player_b, dtype=object).ravel()
    if len(a_obj) and len(a_obj) == len(b_obj):
        starts = np.concatenate([[0], np.flatnonzero(a_obj[1:] != a_obj[:-1]) + 1])
        heads = a_obj[starts].tolist()
        b_list = b_obj.tolist()
        names = set(heads)
        names.update(b_list)
        if len(set(heads)) == len(heads) and all(type(x) is str for x in names):
            players = tuple(sorted(names))
            get = {p: k for k, p in enumerate(players)}.__getitem__
            head_codes = np.fromiter(map(get, heads), dtype=np.int64, count=len(heads))
            runs = np.diff(np.append(starts, len(a_obj)))
            return (players, np.repeat(head_codes, runs),
                    np.fromiter(map(get, b_list), dtype=np.int64, count=len(b_list)))
    a = list(map(str, np.asarray(player_a, dtype=object).tolist()))
    b = list(map(str, np.asarray(player_b, dtype=object).tolist()))
    players = tuple(sorted(set(a) | set(b)))
    pos = {p: k for k, p in enumerate(players)}
    return (players, np.array(list(map(pos.__getitem__, a)), dtype=np.int64),
            np.array(list(map(pos.__getitem__, b)), dtype=np.int64))


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
            from evalkit._errors import where

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
    import pandas as pd

    from evalkit._errors import nonnegative_column
    from evalkit.io._common import Converted, base_frame, keep_all, require_columns
    from evalkit.io._files import LINE

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
