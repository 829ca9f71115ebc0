"""The agents' step rules: :class:`Policy` (the post's rules by default, every departure a named
knob), the rules and keys by which a step is picked, and their static priorities."""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.resources import calibrated_params
from evalkit.sim.dag import Dag

__all__ = ["RULES", "KEYS", "SWARMS", "Policy", "calibrated_policy"]

RULES: tuple[str, ...] = ("own-branch", "random", "shallowest", "shortest", "critical-path")
KEYS: tuple[str, ...] = (
    "deepest", "shallowest", "random", "shortest", "longest", "critical-path", "fifo", "biased-deep",
)
_RULE_KEY = {"random": "random", "shallowest": "shallowest", "shortest": "shortest", "critical-path": "critical-path"}
SWARMS: tuple[str, ...] = ("standard", "recursive")


@dataclass(frozen=True)
class Policy:
    """Step-choice rules. The defaults are the post's own rules; every other value is a named
    departure (``docs/simulator.md`` lists them).

    The post: "Each agent follows its branch to the end, then stops and frees its slot. The
    coordinator immediately starts another agent on the next ready step", and the own-branch rule
    is used "for all remaining experiments", so the single agent (the denominator of every
    speedup) follows the same rule: own branch to its end, then the next ready step.

    Attributes
    ----------
    own_key : str
        How an own-branch agent picks among the steps its last completion unlocked (one of
        :data:`KEYS`; default ``"deepest"``, random within a layer).
    branch_memory : {"last", "all"}
        ``"last"`` (the post): the agent follows one chain to its end, then stops.
        ``"all"`` (departure): its list holds everything it unlocked and nobody took yet, so it
        carries on with earlier branches instead of freeing its slot.
    dispatch_key : str
        Which ready step the coordinator gives a new agent ("the next ready step"; default
        ``"shallowest"``, the reading of the fidelity review and issue 13; ``"fifo"`` = the
        step that has been ready longest).
    baseline_own_key, baseline_memory, baseline_dispatch_key : str or None
        The same three choices for the single-agent baseline. ``None`` (the post): the same as
        the swarm's. Anything else is a departure (the v1 calibration used a random single agent).
    depth_bias : float
        Strength of the ``"biased-deep"`` key: a softmax choice with weight
        ``exp(depth_bias * depth / (D - 1))`` (Gumbel-max with one Gumbel draw per step and run;
        0 = random, large = deepest).
    recursive_refork : bool
        Departure: a recursive agent also forks children for steps held in its list whenever it
        finishes a step and fewer than the cap are active, not only for the steps that completion
        unlocked.
    shared_unlock : bool
        Departure: a step that becomes ready joins the own list of *every* agent that finished one
        of its parents (the notes' wording), not only of the agent that finished the last one.
    """

    own_key: str = "deepest"
    branch_memory: str = "last"
    dispatch_key: str = "shallowest"
    baseline_own_key: str | None = None
    baseline_memory: str | None = None
    baseline_dispatch_key: str | None = None
    depth_bias: float = 2.0
    recursive_refork: bool = False
    shared_unlock: bool = False

    def __post_init__(self) -> None:
        if not math.isfinite(self.depth_bias):
            raise ValueError(f"Policy.depth_bias must be finite; got {self.depth_bias!r}.")
        for name in ("own_key", "dispatch_key", "baseline_own_key", "baseline_dispatch_key"):
            v = getattr(self, name)
            if v not in KEYS and not (v is None and name.startswith("baseline")):
                raise ValueError(f"Policy.{name} must be one of {KEYS}; got {v!r}.")
        for name in ("branch_memory", "baseline_memory"):
            v = getattr(self, name)
            if v not in ("all", "last") and not (v is None and name.startswith("baseline")):
                raise ValueError(f"Policy.{name} must be 'all' or 'last'; got {v!r}.")

    def baseline(self) -> Policy:
        """The policy of the single-agent baseline as a swarm policy (``None`` = the swarm's own)."""
        return dataclasses.replace(
            self, own_key=self.baseline_own_key or self.own_key,
            branch_memory=self.baseline_memory or self.branch_memory,
            dispatch_key=self.baseline_dispatch_key or self.dispatch_key,
        )

    def departures(self) -> dict[str, object]:
        """The knobs set away from the post's rules (name -> value); empty for the post's rules."""
        post = Policy()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(post, f.name)}

    def replace(self, **changes: Any) -> Policy:
        return dataclasses.replace(self, **changes)


@functools.lru_cache(maxsize=1)
def calibrated_policy() -> Policy:
    """The bundled calibrated policy (the post's rules unless the file says otherwise; read once)."""
    return Policy(**calibrated_params().get("policy", {}))


def _ranks(key: str, dag: Dag, tb: np.ndarray, bias: float = 0.0) -> list[float] | None:
    """Static priority of every step under ``key`` (lower is picked first); None = FIFO."""
    if key == "fifo":
        return None
    if key == "deepest":
        r = -dag.depth + 0.5 * tb
    elif key == "shallowest":
        r = dag.depth + 0.5 * tb
    elif key == "random":
        r = tb
    elif key == "shortest":
        r = dag.cost + 1e-9 * tb
    elif key == "biased-deep":
        gumbel = -np.log(-np.log(np.clip(tb, 1e-300, 1 - 1e-16)))
        r = -(bias * dag.depth / max(dag.n_layers - 1, 1) + gumbel)
    elif key == "longest":
        r = -dag.cost + 1e-9 * tb
    else:  # critical-path
        r = -dag.bottom_level + 1e-9 * tb
    return r.tolist()


def _check(agents: int, swarm: str, rule: str, scheduling: float, communication: float) -> None:
    if isinstance(agents, bool) or not isinstance(agents, (int, np.integer)) or agents < 1:
        raise ValueError(f"agents (the concurrency cap) must be an integer >= 1; got {agents!r}.")
    if swarm not in SWARMS:
        raise ValueError(f"swarm must be one of {SWARMS}; got {swarm!r}.")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}.")
    if swarm == "recursive" and rule != "own-branch":
        raise ValueError("The recursive swarm forks along branches: it supports only rule='own-branch'.")
    for name, v in (("scheduling", scheduling), ("communication", communication)):
        if not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} overhead must be a finite number >= 0; got {v!r}.")
