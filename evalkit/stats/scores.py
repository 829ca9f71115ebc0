"""Per-item score tables: scores from comparisons, and two systems aligned on shared items.

A paired test needs both systems scored on the same items; items scored for one system only
are reported (never silently dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.io.schema import validate_comparisons

__all__ = ["check_columns", "item_scores", "PairedScores", "paired_scores"]


def item_scores(comparisons: pd.DataFrame, *, item: str = "item") -> pd.DataFrame:
    """Per-(system, item) mean score from a canonical comparisons frame.

    Each comparison gives ``outcome`` to ``player_a`` and ``1 - outcome`` to ``player_b``;
    a system's score on an item is the weighted mean over its comparisons on that item.
    On AlpacaEval (every model judged against one baseline) this is the per-instruction
    preference of each model, so two models can be compared on shared instructions.

    Returns
    -------
    DataFrame
        Columns ``system``, ``item``, ``score``, ``n`` (comparisons), sorted.

    Raises
    ------
    ValueError
        If the frame has no ``item`` column (or it is all missing).
    """
    frame = validate_comparisons(comparisons)
    if item not in frame.columns or frame[item].isna().all():
        raise ValueError(
            f"Per-item scores need an {item!r} column naming the prompt/instruction of each comparison; "
            f"the frame has {list(frame.columns)}."
        )
    missing = frame[item].isna()
    if missing.any():
        raise ValueError(f"{int(missing.sum())} comparisons have no {item!r}; drop or label them first.")
    w = frame["weight"].to_numpy(float)
    o = frame["outcome"].to_numpy(float)
    long = pd.DataFrame({
        "system": np.concatenate([frame["player_a"].to_numpy(object), frame["player_b"].to_numpy(object)]),
        "item": np.concatenate([frame[item].to_numpy(object)] * 2).astype(str),
        "wscore": np.concatenate([w * o, w * (1 - o)]),
        "weight": np.concatenate([w, w]),
        "one": 1,
    })
    g = long.groupby(["system", "item"], sort=True).agg(wscore=("wscore", "sum"), weight=("weight", "sum"),
                                                        n=("one", "sum"))
    g = g[g["weight"] > 0]
    out = pd.DataFrame({"score": g["wscore"] / g["weight"], "n": g["n"]}).reset_index()
    return out[["system", "item", "score", "n"]]


@dataclass(frozen=True)
class PairedScores:
    """Scores of two systems aligned on shared items, and what could not be aligned.

    Attributes
    ----------
    frame : DataFrame
        Columns ``item``, ``a``, ``b`` (one row per shared item, sorted by item).
    a, b : str
        The two systems.
    only_a, only_b : tuple of str
        Items scored for one system only (or with a missing score for the other).
    """

    frame: pd.DataFrame
    a: str
    b: str
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    @property
    def report(self) -> str:
        """One line saying how many items were paired and how many were not, and why."""
        return (f"{len(self.frame)} shared items paired; {len(self.only_a)} items only scored for "
                f"{self.a!r} and {len(self.only_b)} only for {self.b!r} were left out of the paired test.")


def check_columns(frame: pd.DataFrame, cols: dict[str, str]) -> None:
    missing = [f"{role}={col!r}" for role, col in cols.items() if col not in frame.columns]
    if missing:
        raise ValueError(f"Missing column(s) {', '.join(missing)}; the table has {list(frame.columns)}.")


def paired_scores(
    frame: pd.DataFrame, a: str, b: str, *, system: str = "system", item: str = "item",
    score: str = "score", duplicates: str = "error",
) -> PairedScores:
    """Align two systems' scores on shared items of a long table (system, item, score).

    Parameters
    ----------
    frame : DataFrame
        One row per (system, item) score.
    a, b : str
        The systems to pair.
    system, item, score : str
        Column names.
    duplicates : {"error", "mean"}
        What to do when a system has several scores for one item.

    Returns
    -------
    PairedScores
        The aligned frame plus the unmatched items of each side (rows with a missing score
        count as unmatched): nothing is dropped silently.
    """
    check_columns(frame, {"system": system, "item": item, "score": score})
    if a == b:
        raise ValueError(f"a and b must be different systems; got {a!r} twice.")
    sys_col = frame[system].astype(str)
    present = set(sys_col.unique())
    for s in (a, b):
        if s not in present:
            raise ValueError(f"System {s!r} is not in column {system!r}; found {sorted(present)[:10]}.")
    sub = frame.loc[sys_col.isin([a, b]), [system, item, score]].copy()
    sub[system] = sub[system].astype(str)
    sub[item] = sub[item].astype(str)
    dup = sub.duplicated([system, item], keep=False)
    if dup.any() and duplicates == "error":
        first = sub.loc[dup].iloc[0]
        raise ValueError(
            f"{int(dup.sum())} rows repeat a (system, item) pair (first: {first[system]!r}, item "
            f"{first[item]!r}); pass duplicates='mean' to average them or deduplicate first."
        )
    if duplicates not in ("error", "mean"):
        raise ValueError(f"duplicates must be 'error' or 'mean'; got {duplicates!r}.")
    wide = sub.dropna(subset=[score]).pivot_table(index=item, columns=system, values=score, aggfunc="mean")
    wide = wide.reindex(columns=[a, b])
    all_a = set(sub.loc[sub[system] == a, item])
    all_b = set(sub.loc[sub[system] == b, item])
    both = wide.dropna()
    shared = set(both.index)
    only_a = tuple(sorted(all_a - shared))
    only_b = tuple(sorted(all_b - shared))
    out = pd.DataFrame({"item": both.index.to_numpy(), "a": both[a].to_numpy(float),
                        "b": both[b].to_numpy(float)})
    return PairedScores(frame=out.reset_index(drop=True), a=a, b=b, only_a=only_a, only_b=only_b)
