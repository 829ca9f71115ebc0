"""Deliberately broken simulators: which claim rows are evidence and which only restate inputs.

A claim row is **evidence** when it fails under at least one break (the simulator's mechanism
is needed to produce it) and a **restatement** when every break still passes it (any simulator
with the same inputs would). Issue 13 names three breaks:

* ``constcost`` - every step costs the task clock only: no growth with depth, no noise;
* ``randrule`` - every own-branch agent, the single agent and the coordinator pick at random
  (own list and pool), instead of the post's own-branch/shallowest rules;
* ``nocomm`` - no communication overhead (scheduling kept).

Each break changes only what it names. A break that cannot change a part of the sweep (the
communication overhead is off outside figure 7; the four non-own-branch rules do not use the
own-branch keys) reuses the unbroken results for that part, which is exact: every run is
seeded by (seed, DAG) whatever the parameter set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from evalkit.sim.experiments import ALL_PARTS, SimParams

__all__ = ["BREAKS", "Break", "break_params"]


@dataclasses.dataclass(frozen=True)
class Break:
    """One broken simulator: a description, the parameter change, and the sweep parts it affects."""

    name: str
    text: str
    apply: Callable[[SimParams], SimParams]
    parts: tuple[str, ...]


def _constcost(p: SimParams) -> SimParams:
    return dataclasses.replace(p, generator=p.generator.replace(cost_law="geometric", cost_growth=0.0, cost_sigma=0.0))


def _randrule(p: SimParams) -> SimParams:
    pol = p.policy.replace(own_key="random", dispatch_key="random", baseline_own_key="random",
                           baseline_dispatch_key="random")
    return dataclasses.replace(p, policy=pol)


def _nocomm(p: SimParams) -> SimParams:
    return dataclasses.replace(p, communication=0.0)


BREAKS: dict[str, Break] = {
    b.name: b for b in (
        Break("constcost", "constant step cost (task clock only, no depth growth, no noise)", _constcost, ALL_PARTS),
        Break("randrule", "random rule (agents and coordinator pick at random)", _randrule,
              ("swarms", "costs", "width")),
        Break("nocomm", "no communication overhead", _nocomm, ("costs",)),
    )
}


def break_params(params: SimParams, name: str) -> SimParams:
    """``params`` broken by the break ``name`` (one of :data:`BREAKS`)."""
    if name not in BREAKS:
        raise ValueError(f"break must be one of {sorted(BREAKS)}; got {name!r}.")
    return BREAKS[name].apply(params)
