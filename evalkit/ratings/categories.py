"""Per-category leaderboards (``evalkit rate --by category``), with the multiplicity correction named.

Rating every category separately makes ``K`` leaderboards; read together, ``K`` sets of 95 %
intervals hold jointly far less often than 95 %. Each category's intervals (and simultaneous
rank intervals) are therefore computed at the Bonferroni level ``1 - (1 - level) / K`` (or
Šidák's ``level ** (1 / K)``), so that all categories hold jointly at ``level`` or more.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from evalkit._deprecate import renamed_keywords
from evalkit.io.schema import validate_comparisons

__all__ = ["CORRECTIONS", "category_leaderboards", "adjusted_level"]

CORRECTIONS = ("bonferroni", "sidak", "none")


def adjusted_level(level: float, k: int, correction: str) -> float:
    """Per-category interval level for ``k`` categories under ``correction``."""
    if correction not in CORRECTIONS:
        raise ValueError(f"'correction' must be one of {CORRECTIONS}; got {correction!r}.")
    if correction == "bonferroni":
        return 1 - (1 - level) / k
    if correction == "sidak":
        return level ** (1 / k)
    return level


@renamed_keywords(level="confidence_level")
def category_leaderboards(
    frame: pd.DataFrame, by: str, *, confidence_level: float = 0.95,
    correction: Literal["bonferroni", "sidak", "none"] = "bonferroni", **options: Any,
) -> pd.DataFrame:
    """One leaderboard per value of column ``by``, stacked with ``by`` as the first column.

    Parameters
    ----------
    frame : pandas.DataFrame
        Canonical comparisons with the column ``by`` (e.g. ``category``, ``judge``, ``language``).
    by : str
    confidence_level : float
        Joint confidence level over all categories.
    correction : {"bonferroni", "sidak", "none"}
    **options
        Passed to :func:`evalkit.ratings.leaderboard` (``ties``, ``interval``, ``cluster``, ``rng``...).

    Returns
    -------
    pandas.DataFrame
        ``attrs["correction"]`` names the correction and the per-category level;
        ``attrs["skipped"]`` maps categories without ratings (e.g. a model that never loses
        there) to the reason.
    """
    from evalkit.ratings.leaderboard import leaderboard

    if by not in frame.columns:
        raise ValueError(f"--by column {by!r} is not in the comparisons; they have {list(frame.columns)}.")
    missing = frame[by].isna()
    if missing.any():
        raise ValueError(f"The {by!r} column has {int(missing.sum())} missing values (first at row "
                         f"{int(missing.to_numpy().nonzero()[0][0])}); fill or drop them first.")
    frame = validate_comparisons(frame)
    groups = frame.groupby(frame[by].astype(str), sort=True)
    k = groups.ngroups
    lvl = adjusted_level(confidence_level, k, correction)
    parts, skipped, interval = [], {}, ""
    for name, sub in groups:
        try:
            t = leaderboard(sub.reset_index(drop=True), confidence_level=lvl, **options)
        except ValueError as exc:
            skipped[name] = str(exc).split(": model")[0].split("\n")[0]
            continue
        interval = t.attrs.get("interval", "").replace(f"{lvl:.0%}", f"{lvl:.2%}")
        t.insert(0, by, name)
        parts.append(t)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    names = {"bonferroni": "Bonferroni", "sidak": "Šidák", "none": "no correction"}
    out.attrs.update(
        correction=(f"{names[correction]} across {k} categories of {by!r}: each interval at {lvl:.4%}, so that "
                    f"all categories hold jointly at >= {confidence_level:.0%}" if correction != "none" else
                    f"no correction across {k} categories of {by!r}: each interval at {confidence_level:.0%}, jointly less"),
        skipped=skipped, interval=interval, level=lvl, n_categories=k,
    )
    return out
