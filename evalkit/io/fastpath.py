"""What a columnar engine needs to reduce a file to cells: one spec per format, as SQL or pandas.

The formats whose rows map one-to-one to comparisons without row-level judgement
(``arena``, ``left_right``, ``canonical``, ``columns`` with a dict ``outcome_map`` and
``counts``) are described by a :class:`CellSpec`: which column holds each player, the
outcome (a label map or a number), the weight and the cluster. :func:`cell_sql` turns the
spec into one ``GROUP BY`` query (DuckDB) and :func:`partition_cells` into the same reduction
of a pandas partition (Dask). Neither raises on bad rows: they keep unknown labels, missing
values, self-comparisons and bad weights as flagged cells, so the fast path pays nothing for
validation; :func:`first_problem` says whether the cells are clean, and when they are not the
caller reads the file again with the pandas reader, which raises the usual error with its
line number. AlpacaEval and MT-bench (drops, notes on the rows) always take the pandas path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from evalkit.io.formats import ARENA_WINNERS, LEFT_RIGHT_WINNERS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CellSpec", "cell_spec", "cell_sql", "partition_cells", "first_problem", "KEY_TYPES", "absent_cluster"]

#: Column types a player / cluster column may have on the fast path (their text is the id).
KEY_TYPES = ("VARCHAR", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER",
             "USMALLINT", "UTINYINT", "HUGEINT")

# canonical cluster name -> source column, per format (as the pandas converters rename them)
_ALIASES = {
    "arena": {"item": "question_id", "judge": "judge"},
    "left_right": {"item": "prompt", "judge": "worker"},
}


@dataclass(frozen=True)
class CellSpec:
    """Where each part of a comparison is in a file of one format.

    ``outcome`` is a column; ``labels`` maps its values to player_a's score (``None``: the
    column is numeric). For ``counts`` files, ``wins`` lists ``(column, outcome)`` pairs, each
    count a weight. ``cluster`` is the source column kept under the name ``cluster_name``.
    """

    player_a: str
    player_b: str
    outcome: str | None
    labels: Mapping[str, float] | None
    weight: str | None
    cluster: str | None
    cluster_name: str | None
    wins: tuple[tuple[str, float], ...] = ()

    @property
    def key_columns(self) -> list[str]:
        """Source columns holding ids (players, cluster)."""
        return [self.player_a, self.player_b] + ([self.cluster] if self.cluster else [])


def cell_spec(fmt: str, columns: Sequence[str], *, cluster: str | None = None,
              mapping: Mapping[str, str] | None = None,
              outcome_map: object = None) -> CellSpec | None:
    """The spec of a file in format ``fmt`` with these columns, or None (use the pandas path)."""
    cols = set(columns)
    if fmt in ("arena", "left_right"):
        a, b = ("model_a", "model_b") if fmt == "arena" else ("left", "right")
        labels = ARENA_WINNERS if fmt == "arena" else LEFT_RIGHT_WINNERS
        src = None
        if cluster is not None:
            src = _ALIASES[fmt].get(cluster)
            if src not in cols:
                return None
        weight = "weight" if fmt == "left_right" and "weight" in cols else None  # as convert_left_right
        return CellSpec(a, b, "winner", labels, weight, src, cluster)
    if fmt in ("canonical", "columns", "counts"):
        names: dict[str, str] = {c: c for c in ("player_a", "player_b", "outcome", "weight", "item", "task", "judge")
                                 if c in cols}
        names.update(mapping or {})
        if fmt == "columns" and outcome_map is not None and not (
            isinstance(outcome_map, Mapping) and all(isinstance(k, str) for k in outcome_map)
        ):
            return None
        if any(names.get(c) not in cols for c in ("player_a", "player_b")):
            return None
        src = None
        if cluster is not None:
            src = names.get(cluster) if cluster in ("item", "task", "judge") else None
            if src not in cols:
                return None
        if fmt == "counts":
            wins = tuple((c, o) for c, o in (("wins_a", 1.0), ("wins_b", 0.0), ("ties", 0.5)) if c in cols)
            return CellSpec(names["player_a"], names["player_b"], None, None, None, src, cluster, wins)
        if names.get("outcome") not in cols:
            return None
        omap = dict(cast(Mapping[str, float], outcome_map)) if outcome_map is not None else None
        return CellSpec(names["player_a"], names["player_b"], names["outcome"], omap,
                        names.get("weight"), src, cluster)
    return None


#: Cluster columns the converters of these formats keep (canonical name -> source column)
_KEPT = {"arena": {**_ALIASES["arena"], "turn": "turn"}, "left_right": _ALIASES["left_right"]}


def absent_cluster(fmt: str, columns: Sequence[str], cluster: str,
                   mapping: Mapping[str, str] | None = None, kept: Sequence[str] = ()) -> str | None:
    """Why a file in format ``fmt`` with these columns can have no cluster column ``cluster``
    after it is read, or None (it may have one, or the format is not one this module knows).

    Checked before any row is read: the pandas reader would otherwise read the whole file first
    (36 s and 6.9 GB at 1e7 Parquet rows) and then refuse the cluster. A read keeps the canonical
    columns its format carries (an Arena file's ``question_id`` as ``item``, its ``judge`` and
    ``turn``), ``source``, and the raw columns of ``keep_columns`` (``kept``). The message names
    the clusters the file has and, for a source column the reader renames, the name to pass."""
    cols = set(columns)
    if cluster == "source" or (cluster in kept and cluster in cols):  # every reader adds the file's name
        return None
    if fmt in _KEPT:
        have = {canon: src for canon, src in _KEPT[fmt].items() if src in cols}
    elif fmt in ("canonical", "columns", "counts"):
        have = {c: c for c in ("item", "task", "judge", "budget") if c in cols}
        have.update({c: src for c, src in (mapping or {}).items() if c in ("item", "task", "judge", "budget")})
    else:
        return None
    if cluster in have:
        return None
    renamed = [canon for canon, src in have.items() if src == cluster and canon != cluster]
    offer = ("the clusters " + ", ".join(f"{c!r} (its column {s!r})" if c != s else repr(c) for c, s in have.items())
             if have else "no cluster column but 'source'")
    hint = (f" Its column {cluster!r} is read as {renamed[0]!r}: pass --cluster {renamed[0]}." if renamed
            else f" In Python, keep_columns=[{cluster!r}] keeps a column of the file as it is." if cluster in cols
            else "")
    return f"has no cluster column {cluster!r}: read in the {fmt} format, its comparisons keep {offer}.{hint}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _outcome_sql(spec: CellSpec) -> str:
    assert spec.outcome is not None, "a counts spec has no outcome column"
    col = f"CAST({_q(spec.outcome)} AS VARCHAR)"
    if spec.labels is None:
        return f"TRY_CAST({_q(spec.outcome)} AS DOUBLE)"
    whens = " ".join(f"WHEN {_lit(k)} THEN CAST({float(v)!r} AS DOUBLE)" for k, v in spec.labels.items())
    return f"(CASE {col} {whens} ELSE NULL END)"


def cell_sql(spec: CellSpec, relation: str, *, order: bool = True) -> str:
    """One query: cells (``player_a, player_b, outcome[, cluster], weight, n``) and ``bad_w``
    (some weight in the cell is missing, negative or infinite) from ``relation``.

    The rows are grouped on their raw columns first (the scan does no per-row work beyond
    DuckDB's own ``GROUP BY``, and counts only when there is no weight column); labels are
    mapped to outcomes, ids cast to text and the groups merged on the few thousand groups.
    ``order=False`` leaves the cells unsorted (a subquery of another query).
    """
    keys = [f"CAST({_q(spec.player_a)} AS VARCHAR) AS player_a",
            f"CAST({_q(spec.player_b)} AS VARCHAR) AS player_b"]
    group = ["player_a", "player_b", "outcome"]
    if spec.cluster:
        assert spec.cluster_name is not None, "a cluster column is kept under its canonical name"
        keys.append(f"CAST({_q(spec.cluster)} AS VARCHAR) AS {_q(spec.cluster_name)}")
        group.append(_q(spec.cluster_name))
    by = f" ORDER BY {', '.join(group)}" if order else ""
    if spec.wins:
        parts = [f"SELECT {', '.join(keys)}, CAST({o!r} AS DOUBLE) AS outcome, "
                 f"TRY_CAST({_q(c)} AS DOUBLE) AS w FROM {relation}" for c, o in spec.wins]
        return (
            f"SELECT {', '.join(group)}, sum(w) AS weight, count(*) AS n, "
            "bool_or(w IS NULL OR isnan(w) OR isinf(w) OR w < 0) AS bad_w "
            f"FROM ({' UNION ALL '.join(parts)}) GROUP BY {', '.join(group)}{by}"
        )
    raw = [_q(c) for c in (spec.player_a, spec.player_b, spec.outcome, spec.cluster) if c]
    if spec.weight:
        w = f"TRY_CAST({_q(spec.weight)} AS DOUBLE)"
        inner_w = (f", sum({w}) AS w_sum, bool_or({w} IS NULL OR isnan({w}) OR isinf({w}) OR {w} < 0) AS w_bad")
        weight, bad = "sum(w_sum)", "bool_or(w_bad)"
    else:
        inner_w, weight, bad = "", "CAST(sum(n_raw) AS DOUBLE)", "false"
    inner = f"SELECT {', '.join(raw)}, count(*) AS n_raw{inner_w} FROM {relation} GROUP BY {', '.join(raw)}"
    return (
        f"SELECT {', '.join(keys)}, {_outcome_sql(spec)} AS outcome, {weight} AS weight, "
        f"CAST(sum(n_raw) AS BIGINT) AS n, {bad} AS bad_w "
        f"FROM ({inner}) GROUP BY {', '.join(group)}{by}"
    )


def _ids(values: pd.Series) -> pd.Series:
    """Id text of a column as the pandas reader makes it (integers -> '3'; missing stays missing)."""
    import pandas as pd

    if pd.api.types.is_integer_dtype(values):
        return values.astype(str)
    if isinstance(values.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(
            values.cat.categories, skipna=True) in ("string", "empty"):
        return values  # dictionary-encoded text (Parquet): factorised by its codes, no string per row
    if isinstance(values.dtype, pd.StringDtype) or (
        pd.api.types.is_string_dtype(values) and pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty")
    ):
        return values
    return values.map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)).astype(object)


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (-1 for missing) and the id text of each code."""
    import pandas as pd

    ids = _ids(values)
    if isinstance(ids.dtype, pd.CategoricalDtype):  # dictionary-encoded: its own codes (-1 missing)
        return ids.cat.codes.to_numpy().astype(np.int64), np.asarray(ids.cat.categories, dtype=object)
    codes, uniques = pd.factorize(ids, use_na_sentinel=True)
    return codes, np.asarray(uniques, dtype=object)


def partition_cells(raw: pd.DataFrame, spec: CellSpec) -> pd.DataFrame:
    """:func:`cell_sql` in pandas, for one partition (Dask's ``map_partitions``).

    Keys are grouped as integer codes (labels mapped through their distinct values), so a
    partition costs a few vectorised passes, not a string ``groupby``.
    """
    import pandas as pd

    names = ["player_a", "player_b"] + ([spec.cluster_name] if spec.cluster else [])
    coded = [_codes(raw[c]) for c in spec.key_columns]
    keys = {f"k{k}": c for k, (c, _) in enumerate(coded)}
    if spec.wins:
        parts = [pd.DataFrame({**keys, "outcome": o, "w": pd.to_numeric(raw[c], errors="coerce")})
                 for c, o in spec.wins]
        long = pd.concat(parts, ignore_index=True)
        w = long["w"].to_numpy(dtype=float)
        ocodes, outcomes = pd.factorize(long["outcome"].to_numpy(dtype=float), use_na_sentinel=True)
        key_codes = [long[k].to_numpy() for k in keys]
    else:  # numpy only: no frame of the partition's rows is built
        if spec.labels is None:
            ocodes, outcomes = pd.factorize(pd.to_numeric(raw[spec.outcome], errors="coerce").to_numpy(dtype=float),
                                            use_na_sentinel=True)
        else:  # the labels' outcomes factorised once, then looked up by the labels' codes
            col = raw[spec.outcome]
            if isinstance(col.dtype, pd.CategoricalDtype):
                codes, uniques = col.cat.codes.to_numpy().astype(np.int64), list(col.cat.categories)
            else:
                codes, found = pd.factorize(col, use_na_sentinel=True)
                uniques = list(found)
            table = np.array([spec.labels.get(u, np.nan) if isinstance(u, str) else np.nan
                              for u in uniques] + [np.nan], dtype=float)
            tcodes, outcomes = pd.factorize(table, use_na_sentinel=True)
            ocodes = tcodes[codes]  # code -1 (missing) -> the trailing NaN -> -1
        w = (pd.to_numeric(raw[spec.weight], errors="coerce").to_numpy(dtype=float) if spec.weight
             else np.ones(len(raw)))
        key_codes = [c for c, _ in coded]
    digits = [c + 1 for c in key_codes] + [ocodes + 1]  # 0 = missing
    dims = tuple(len(u) + 1 for _, u in coded) + (len(outcomes) + 1,)
    key = np.ravel_multi_index(digits, dims)
    if np.prod(dims, dtype=float) <= 4 * len(key) + 65536:  # small key space: count directly
        counts = np.bincount(key, minlength=int(np.prod(dims)))
        cell = np.flatnonzero(counts)
        lookup = np.zeros(len(counts), dtype=np.int64)
        lookup[cell] = np.arange(len(cell))
        first = lookup[key]
    else:
        first, cell = pd.factorize(key)
    bad = ~np.isfinite(w) | (w < 0)
    out = {}
    for k, (name, code) in enumerate(zip(names, np.unravel_index(cell, dims), strict=False)):
        out[name] = np.append(np.array([None], dtype=object), coded[k][1]).astype(object)[code] if k < len(names) else None
    out["outcome"] = np.append(np.nan, outcomes)[np.unravel_index(cell, dims)[-1]]
    frame = pd.DataFrame({name: out[name] for name in names[:2]})
    frame["outcome"] = out["outcome"]
    for name in names[2:]:
        frame[name] = out[name]
    frame["weight"] = np.bincount(first, weights=np.where(bad, 0.0, w), minlength=len(cell))
    frame["n"] = np.bincount(first, minlength=len(cell)).astype(np.int64)
    frame["bad_w"] = np.bincount(first, weights=bad, minlength=len(cell)) > 0
    return frame


def _missing(values: object) -> np.ndarray:
    """Where a column of ids is missing (None, NaN or pandas' NA)."""
    if hasattr(values, "isna"):  # a pandas column (the Dask path)
        return values.isna().to_numpy()
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind != "O":
        return np.zeros(arr.shape, dtype=bool)
    return (arr == None) | (arr != arr)  # noqa: E711 - elementwise on an object array: None, or NaN (the only value unequal to itself)


def first_problem(cells: Mapping[str, Any] | pd.DataFrame, cluster: str | None, *, self_ok: bool) -> str | None:
    """Why these cells cannot be used as they are (None: clean).

    ``cells``: columns ``player_a, player_b, outcome, bad_w[, cluster]`` (numpy arrays or a
    DataFrame). Missing players or clusters, an outcome that is missing or outside [0, 1]
    (unknown labels map to missing), bad weights, and self-comparisons unless ``self_ok``.
    """
    o = np.asarray(cells["outcome"], dtype=float)
    a, b = cells["player_a"], cells["player_b"]
    checks = {
        "missing player": lambda: _missing(a) | _missing(b),
        "bad outcome": lambda: ~(o >= 0) | ~(o <= 1),
        "bad weight": lambda: np.asarray(cells["bad_w"], dtype=bool),
    }
    if cluster:
        checks["missing cluster"] = lambda: _missing(cells[cluster])
    if not self_ok:
        checks["self-comparison"] = lambda: np.asarray(a, dtype=object) == np.asarray(b, dtype=object)
    for name, bad in checks.items():
        if bad().any():
            return name
    return None
