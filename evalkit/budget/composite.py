"""Composite systems built from sessions: best of K sessions at B/K each, best of groups.

A composite session runs ``g`` member sessions side by side, each spending ``B / g`` of a
total budget ``B``, and keeps the best submission. Its session table is the union of the
members' submissions with every budget multiplied by ``g``: the prefix maximum of that
union at ``B`` is the best of the members' best-so-far at ``B / g``. This gives the seed's
pass@K (best of K independent sessions at a K-th of the budget) and, applied to swarm runs
("group@2" sessions), pass@2 group@2 (the better of two swarms at half the budget each).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from evalkit._rng import RNGLike, as_generator
from evalkit.io.traces import validate_traces

__all__ = ["best_of_groups", "best_of_sessions"]


def _select(tr: pd.DataFrame, system: str | None) -> pd.DataFrame:
    """Rows of one system (all rows when ``system`` is None)."""
    if system is None:
        return tr
    if system not in set(tr["system"]):
        raise ValueError(f"Unknown system {system!r}; the table has {sorted(set(tr['system']))}.")
    return tr.loc[tr["system"] == system].reset_index(drop=True)


def best_of_groups(
    traces: pd.DataFrame,
    groups: str | Mapping[str, str],
    *,
    name: str | None = None,
    system: str | None = None,
) -> pd.DataFrame:
    """Combine the sessions of each group into one composite session.

    Parameters
    ----------
    traces : pandas.DataFrame
        A session table.
    groups : str or mapping
        A column of ``traces`` giving each row's group, or a mapping session id -> group
        id. Groups are formed within each (system, task); a group of ``g`` sessions gives
        each member ``B / g``.
    name : str, optional
        System name of the composite (default: ``"<system> best-of-groups"``).
    system : str, optional
        Only combine this system's sessions (required when ``name`` is given and the table
        has several systems).

    Returns
    -------
    pandas.DataFrame
        Session table of the composite system only (``session`` = group id, ``budget``
        scaled by the group size, ``members`` = group size). Concatenate it with the
        original table to rate both.
    """
    tr = validate_traces(traces)
    tr = _select(tr, system)
    if name is not None and tr["system"].nunique() > 1:
        raise ValueError("Pass system=... when naming a composite of a table with several systems.")
    if isinstance(groups, str):
        if groups not in tr.columns:
            raise ValueError(f"No column {groups!r} in the session table; it has {list(tr.columns)}.")
        grp = tr[groups]
    else:
        grp = tr["session"].map(dict(groups))
    if grp.isna().any():
        bad = grp.isna().to_numpy()
        raise ValueError(f"Every session needs a group; {int(bad.sum())} rows have none (first session {tr['session'][bad].iat[0]!r}).")
    out = tr.copy()
    out["group"] = grp.astype(str).to_numpy()
    size = out.groupby(["system", "task", "group"])["session"].transform("nunique").to_numpy()
    out["budget"] = out["budget"].to_numpy() * size
    out["members"] = size
    out["system"] = out["system"] + " best-of-groups" if name is None else name
    out["session"] = out["group"]
    keep = ["system", "task", "session", "budget", "score", "members"]
    return validate_traces(out[keep], order="sort")


def best_of_sessions(
    traces: pd.DataFrame,
    k: int,
    *,
    system: str | None = None,
    name: str | None = None,
    rng: RNGLike | None = None,
) -> pd.DataFrame:
    """pass@K as a system: the best of ``k`` independent sessions at ``B / k`` each.

    Sessions of each (system, task) are split into disjoint groups of ``k`` in order of
    their id (or in a random order with ``rng``); leftover sessions (``n mod k``) are dropped
    with a warning that counts them.

    Parameters
    ----------
    traces : pandas.DataFrame
        A session table.
    k : int
        Sessions per composite (>= 1).
    system : str, optional
        Only this system (default: every system, each composed separately).
    name : str, optional
        Composite system name (default ``"<system> pass@<k>"``).
    rng : int or numpy.random.Generator, optional
        Shuffle sessions before grouping.

    Returns
    -------
    pandas.DataFrame
        The composite systems' session table.
    """
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    tr = validate_traces(traces)
    tr = _select(tr, system)
    if name is not None and tr["system"].nunique() > 1:
        raise ValueError("name=... needs a single system; pass system=... too.")
    sess = tr[["system", "task", "session"]].drop_duplicates().reset_index(drop=True)
    if rng is not None:
        sess = sess.iloc[as_generator(rng).permutation(len(sess))]
        sess = sess.sort_values(["system", "task"], kind="stable").reset_index(drop=True)
    pos = sess.groupby(["system", "task"]).cumcount().to_numpy()
    n_in = sess.groupby(["system", "task"])["session"].transform("size").to_numpy()
    full = pos < (n_in // k) * k
    if not full.all():
        warnings.warn(
            f"Dropped {int((~full).sum())} session(s) left over after forming groups of {k} "
            f"(in {sess.loc[~full, ['system', 'task']].drop_duplicates().shape[0]} (system, task) cells).",
            UserWarning,
            stacklevel=2,
        )
    if not full.any():
        raise ValueError(f"No (system, task) has {k} sessions; cannot form best-of-{k} composites.")
    sess = sess.loc[full].assign(group=(pos[full] // k).astype(str))
    merged = tr.merge(sess, on=["system", "task", "session"], how="inner")
    out = best_of_groups(merged, "group")
    out["system"] = out["system"].str.replace(" best-of-groups$", "", regex=True)
    out["system"] = name if name is not None else out["system"] + f" pass@{k}"
    return out
