"""Task DAGs: the array structure the simulator reads, and user DAGs from a file.

A DAG is stored as arrays (CSR adjacency in both directions), so the simulator reads it
without Python objects per step. Steps are numbered in topological order (layer by layer),
step 0 is the root. The trial-and-error generator of seed 000 lives in
:mod:`evalkit.sim.generator`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

__all__ = ["Dag", "dag_from_frames", "read_dag"]


@dataclass(frozen=True, eq=False)
class Dag:
    """A task DAG.

    Attributes
    ----------
    depth : ndarray of int, shape (n,)
        Layer of each step (root 0); steps are sorted by depth.
    cost : ndarray of float, shape (n,)
        Time one agent needs for the step without overheads (> 0).
    value : ndarray of float, shape (n,)
        Value of the step (the optimisation score before scaling).
    parent_ptr, parent_idx : ndarray of int
        CSR lists of prerequisites: the parents of step ``i`` are
        ``parent_idx[parent_ptr[i]:parent_ptr[i + 1]]``.
    child_ptr, child_idx : ndarray of int
        The same for the steps each step unlocks.
    """

    depth: np.ndarray
    cost: np.ndarray
    value: np.ndarray
    parent_ptr: np.ndarray
    parent_idx: np.ndarray
    child_ptr: np.ndarray = field(repr=False)
    child_idx: np.ndarray = field(repr=False)

    @property
    def n_steps(self) -> int:
        return int(self.depth.size)

    @property
    def n_layers(self) -> int:
        return int(self.depth.max()) + 1

    @property
    def work(self) -> float:
        """Total work W: the sum of step costs."""
        return float(self.cost.sum())

    @cached_property
    def bottom_level(self) -> np.ndarray:
        """Cost of the heaviest chain starting at each step (the step included)."""
        tail = np.zeros(self.n_steps)
        bl = self.cost.copy()
        child_of_edge = np.repeat(np.arange(self.n_steps), np.diff(self.parent_ptr))
        # steps are in topological order: sweep children from the last step backwards
        order = np.argsort(-child_of_edge, kind="stable")
        ce, pe = child_of_edge[order], self.parent_idx[order]
        bounds = np.flatnonzero(np.diff(self.depth[ce])) + 1
        for c, p in zip(np.split(ce, bounds), np.split(pe, bounds), strict=True):
            bl[c] = self.cost[c] + tail[c]
            np.maximum.at(tail, p, bl[c])
        return self.cost + tail

    @property
    def span(self) -> float:
        """Span S: the cost of the heaviest chain (the critical path)."""
        return float(self.bottom_level.max())

    @cached_property
    def lists(self) -> tuple[list, ...]:
        """Plain-list views used by the event loop (faster than numpy scalar access)."""
        cp, ci = self.child_ptr.tolist(), self.child_idx.tolist()
        children = [ci[cp[i] : cp[i + 1]] for i in range(self.n_steps)]
        return (children, np.diff(self.parent_ptr).tolist(), self.cost.tolist())

    def edges(self) -> pd.DataFrame:
        """The edges as a tidy frame ``parent, child``."""
        child = np.repeat(np.arange(self.n_steps), np.diff(self.parent_ptr))
        return pd.DataFrame({"parent": self.parent_idx, "child": child})

    def steps(self) -> pd.DataFrame:
        """The steps as a tidy frame ``step, depth, duration, value``."""
        return pd.DataFrame(
            {"step": np.arange(self.n_steps), "depth": self.depth, "duration": self.cost, "value": self.value}
        )


def _csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the lists ``dst`` grouped by ``src`` (sorted by src, then dst)."""
    order = np.lexsort((dst, src))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[order].astype(np.int64)


def _from_edges(depth: np.ndarray, cost: np.ndarray, value: np.ndarray, parent: np.ndarray, child: np.ndarray) -> Dag:
    n = depth.size
    pp, pi = _csr(n, child, parent)
    cp, ci = _csr(n, parent, child)
    return Dag(depth.astype(np.int64), cost.astype(float), value.astype(float), pp, pi, cp, ci)


def dag_from_frames(edges: pd.DataFrame, steps: pd.DataFrame) -> Dag:
    """Build and validate a user DAG.

    Parameters
    ----------
    edges : DataFrame
        Columns ``parent, child`` (step ids of any hashable type).
    steps : DataFrame
        Columns ``step, duration`` and optionally ``value`` (default 0).

    Raises
    ------
    ValueError
        Empty DAG, missing columns, duplicate steps, edges naming unknown steps, self-loops or
        cycles, non-positive or non-finite durations, non-finite values.
    """
    for name, frame, cols in (("steps", steps, ("step", "duration")), ("edges", edges, ("parent", "child"))):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise ValueError(f"The {name} table needs columns {list(cols)}; missing {missing}.")
    if len(steps) == 0:
        raise ValueError("The DAG is empty: the steps table has no rows.")
    ids = steps["step"].astype(str).to_numpy()
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        raise ValueError(f"The 'step' column must be unique; got duplicates {sorted(set(ids[dup]))[:3]}.")
    dur = pd.to_numeric(steps["duration"], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(dur) | (dur <= 0)
    if bad.any():
        raise ValueError(
            f"The 'duration' column must be a finite number > 0; got {dur[bad][:3].tolist()} in {int(bad.sum())} steps "
            f"(first: step {ids[bad][0]!r})."
        )
    val = pd.to_numeric(steps["value"], errors="coerce").to_numpy(float) if "value" in steps else np.zeros(len(ids))
    if not np.isfinite(val).all():
        raise ValueError(f"The 'value' column must be finite; got NaN/inf in {int((~np.isfinite(val)).sum())} steps.")
    index = {s: i for i, s in enumerate(ids)}
    src, dst = edges["parent"].astype(str).to_numpy(), edges["child"].astype(str).to_numpy()
    unknown = [s for s in np.concatenate([src, dst]) if s not in index]
    if unknown:
        raise ValueError(f"Edges name {len(unknown)} unknown steps (first {unknown[0]!r}); every step needs a row in steps.")
    s = np.array([index[x] for x in src], dtype=np.int64)
    t = np.array([index[x] for x in dst], dtype=np.int64)
    if (s == t).any():
        raise ValueError(f"Edges contain a self-loop (step {ids[s[s == t][0]]!r}); the graph must be acyclic.")
    n = len(ids)
    indeg = np.bincount(t, minlength=n)
    cp, ci = _csr(n, s, t)
    depth = np.zeros(n, dtype=np.int64)
    order, frontier, rem = [], [int(i) for i in np.flatnonzero(indeg == 0)], indeg.copy()
    while frontier:  # Kahn's algorithm; depth = longest edge count from a source
        v = frontier.pop()
        order.append(v)
        for c in ci[cp[v] : cp[v + 1]]:
            depth[c] = max(depth[c], depth[v] + 1)
            rem[c] -= 1
            if rem[c] == 0:
                frontier.append(int(c))
    if len(order) < n:
        raise ValueError(f"The edges contain a cycle through {n - len(order)} steps (e.g. {ids[rem > 0][0]!r}).")
    perm = np.lexsort((np.arange(n), depth))  # new id -> old id, topological by depth
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    return _from_edges(depth[perm], dur[perm], val[perm], inv[s], inv[t])


def read_dag(edges: str | os.PathLike, steps: str | os.PathLike) -> Dag:
    """Read a user DAG from two CSV files (``parent,child`` and ``step,duration[,value]``)."""
    return dag_from_frames(pd.read_csv(edges), pd.read_csv(steps))
