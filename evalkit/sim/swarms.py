"""Agents on one event engine: the single agent, the standard swarm and the recursive swarm.

Model (seed 000; every choice the seed leaves open is a knob of :class:`Policy`)
---------------------------------------------------------------------------------
* A step is *ready* when all its parents are done. A ready step is *unclaimed* until an agent
  starts it. When an agent finishes a step, the steps that this completion makes ready are
  *unlocked by* that agent and join its own list (its branch).
* ``rule="own-branch"``: an agent picks its next step among its own list by
  ``Policy.own_key`` (``branch_memory="last"``: only the steps its last step unlocked;
  ``"all"``: everything it unlocked and nobody took yet). An empty list ends the agent.
  The other four rules (``random``, ``shallowest``, ``shortest``, ``critical-path``) pick
  among *all* unclaimed ready steps by that key ("critical path" = the step heading the
  heaviest remaining chain, :attr:`Dag.bottom_level`).
* Standard swarm: at most ``agents`` concurrent agents. When an agent ends, the coordinator
  immediately starts a new agent on an unclaimed ready step chosen by ``Policy.dispatch_key``
  (own-branch) or by the rule's key (other rules); it never leaves a slot idle while a step
  is unclaimed, so the schedule is greedy.
* Recursive swarm: the coordinator starts one root agent. When a finished step unlocks
  several steps, the agent keeps the best one (``own_key``) and forks a child agent for each
  other one while fewer than ``agents`` agents are active (the cap counts concurrently active
  agents); steps it cannot fork stay in its own list. Children follow their own branch.
* Single agent: a standard swarm of one with the baseline policy (``Policy.baseline_*``; by
  default the swarm's own rules, as in the post).
* Scheduling overhead: ``scheduling`` x median step cost, added once to a step when its agent
  is new (started or dispatched by the coordinator, or forked) or when one of the step's
  parents was finished by another agent. Communication: a step takes ``1 + communication x
  (a - 1)`` times its cost, ``a`` = agents active when it starts (fixed for the step).
  Both are recorded per step, so agent-time = sum of busy intervals = work + communication +
  scheduling, exactly.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit._rng import RNGLike, as_generator
from evalkit.sim.dag import Dag
from evalkit.sim.engine import COMPLETE, DISPATCH
from evalkit.sim.policy import _RULE_KEY, KEYS, RULES, Policy, _check, _ranks, calibrated_policy

__all__ = ["RULES", "KEYS", "Policy", "SimRun", "simulate"]  # the rules are re-exported from policy


@dataclass(frozen=True, eq=False)
class SimRun:
    """One simulated run: per-step start, end, agent and overheads (index = step id).

    ``start`` includes the step's scheduling overhead: the agent is busy from ``start`` to
    ``end``. ``agents_started`` counts every agent ever started; ``cap`` the concurrency cap.
    ``stopped_at`` is the time at which a run with ``stop_after`` was cut (``inf``: it ran to the
    end); steps finished by then have ``end <= stopped_at``, steps never started ``start = end = inf``.
    """

    dag: Dag
    start: np.ndarray
    end: np.ndarray
    agent: np.ndarray
    scheduling: np.ndarray
    communication: np.ndarray
    agents_started: int
    cap: int
    swarm: str
    rule: str
    stopped_at: float = math.inf

    def __repr__(self) -> str:  # the arrays would print every step (the default repr was 82 kB)
        done = int(np.isfinite(self.end).sum())
        return (f"SimRun({self.swarm} swarm, rule {self.rule!r}, {self.agents_started} agents started (cap "
                f"{self.cap}), {done}/{len(self.end)} steps done, makespan {self.makespan:.4g}, agent-time "
                f"{self.agent_time:.4g})")

    @property
    def makespan(self) -> float:
        return float(self.end.max())

    @property
    def agent_time(self) -> float:
        """Total busy time summed over agents (work + communication + scheduling)."""
        return float((self.end - self.start).sum())

    def trace(self, run: int | str = 0) -> pd.DataFrame:
        """Tidy event trace, one row per step in completion order:
        ``run, agent, step, depth, start, end, value``."""
        order = np.argsort(self.end, kind="stable")
        return pd.DataFrame(
            {
                "run": run, "agent": self.agent[order], "step": order, "depth": self.dag.depth[order],
                "start": self.start[order], "end": self.end[order], "value": self.dag.value[order],
            }
        )


def simulate(
    dag: Dag, *, agents: int = 1, swarm: str = "standard", rule: str = "own-branch", policy: Policy | None = None,
    scheduling: float = 0.05, communication: float = 0.02, baseline: bool = False, rng: RNGLike,
    stop_after: float | None = None,
) -> SimRun:
    """Simulate one run of ``agents`` agents on ``dag``.

    Parameters
    ----------
    dag : Dag
    agents : int
        Cap on concurrently active agents (1 = a single agent).
    swarm : {"standard", "recursive"}
    rule : one of :data:`RULES`
    policy : Policy, optional
        Step-choice rules (default: the bundled parameter set's, which are the post's own rules,
        ``Policy()``).
    scheduling : float
        Scheduling overhead per handoff as a share of the median step cost (seed: 0.05).
    communication : float
        Extra step time per other active agent (seed: 0.02).
    baseline : bool
        Use the single-agent baseline policy (``Policy.baseline_*``) instead.
    rng : int or numpy Generator
        Random tie-breaks; the same seed gives the same run bit for bit.
    stop_after : float, optional
        Agent-time budget: stop once the busy time of the finished steps exceeds it (times a
        1e-6 margin against rounding), since every later completion is then past the budget.
        Everything up to :attr:`SimRun.stopped_at` is exactly as in the full run.

    Returns
    -------
    SimRun
    """
    _check(agents, swarm, rule, scheduling, communication)
    pol = policy if policy is not None else calibrated_policy()
    if baseline:
        pol = pol.baseline()
    g = as_generator(rng)
    n = dag.n_steps
    children, nparents, cost = dag.lists
    pp, pidx = dag.parent_ptr.tolist(), dag.parent_idx.tolist()
    tb = g.random(n)
    own_branch = rule == "own-branch"
    own_rank = _ranks(pol.own_key, dag, tb, pol.depth_bias) if own_branch else None
    pool_rank = _ranks(pol.dispatch_key if own_branch else _RULE_KEY[rule], dag, tb, pol.depth_bias)
    own_key: Callable[[int], Any]
    if own_rank is None:  # FIFO within a branch: in order of unlocking (a step unlocks once)
        unlock_order = [0] * n

        def own_key(c: int) -> int:
            return unlock_order[c]
    else:
        own_key = own_rank.__getitem__
    recursive = swarm == "recursive"
    last_only = pol.branch_memory == "last"
    refork = recursive and pol.recursive_refork
    shared_unlock = own_branch and pol.shared_unlock and not (last_only and not recursive)
    sched_unit = scheduling * float(np.median(dag.cost))
    cap = int(agents)

    rem = list(nparents)
    done_by = [-1] * n
    start = [0.0] * n
    end = [0.0] * n
    agent_of = [-1] * n
    sched_of = [0.0] * n
    comm_of = [0.0] * n
    claimed = bytearray(n)
    pool: list = []
    fifo = 0
    n_ready = 0  # unclaimed ready steps
    owned: list[list[tuple[Any, int]]] = []  # per agent: a heap of (own key, step)
    # the event queue of :mod:`evalkit.sim.engine` inlined: (time, priority, seq, agent, step)
    events: list = []
    seq = 0
    heappush, heappop = heapq.heappush, heapq.heappop
    active = 0
    dispatch_pending = False
    stop = math.inf if stop_after is None else float(stop_after) * (1.0 + 1e-6)
    busy_done = 0.0
    stopped_at = math.inf
    check_stop = stop_after is not None
    # with no overheads a step ends at t + cost exactly as t + cost + 0.0 + 0.0 would
    plain = not sched_unit and not communication
    # pool entries are popped in key order whatever else the heap holds, so a step its own agent
    # takes at once need not be pushed (claimed entries are skipped anyway)
    chain = own_branch and last_only and not recursive and not shared_unlock

    def begin(a: int, s: int, t: float, new: bool) -> None:
        nonlocal n_ready, seq
        claimed[s] = 1
        n_ready -= 1
        if plain:  # no overheads: the step takes its cost (sched_of, comm_of stay 0.0)
            start[s] = t
            end[s] = e = t + cost[s]
            agent_of[s] = a
            heappush(events, (e, COMPLETE, seq, a, s))
            seq += 1
            return
        ov = 0.0
        if sched_unit:
            if new:
                ov = sched_unit
            else:
                for j in range(pp[s], pp[s + 1]):
                    if done_by[pidx[j]] != a:
                        ov = sched_unit
                        break
        c = cost[s]
        cm = c * communication * (active - 1)
        start[s] = t
        end[s] = e = t + c + cm + ov
        agent_of[s] = a
        sched_of[s] = ov
        comm_of[s] = cm
        heappush(events, (e, COMPLETE, seq, a, s))
        seq += 1

    def pop_pool() -> int:
        while pool:
            s = heappop(pool)[1]
            if not claimed[s]:
                return s
        return -1

    sources = [i for i in range(n) if nparents[i] == 0]
    for s in sources:
        heappush(pool, (fifo if pool_rank is None else pool_rank[s], s))
        fifo += 1
    n_ready = len(sources)
    if recursive:
        first = min(sources, key=own_key)
        owned.append([(own_key(c), c) for c in sources if c != first])
        heapq.heapify(owned[0])
        active = 1
        begin(0, first, 0.0, True)
    else:
        heappush(events, (0.0, DISPATCH, seq, -1, -1))
        seq += 1
        dispatch_pending = True

    while events:
        t, kind, _, a, s = heappop(events)
        if kind == DISPATCH:
            dispatch_pending = False
            m = min(cap - active, n_ready)
            active += m
            for _ in range(m):
                s = pop_pool()
                owned.append([])
                begin(len(owned) - 1, s, t, True)
            continue
        if check_stop:
            busy_done += end[s] - start[s]
            if busy_done > stop:  # every later completion is past the agent-time budget
                stopped_at = t
                break
        done_by[s] = a
        new = []
        for c in children[s]:
            r = rem[c] - 1
            rem[c] = r
            if not r:
                new.append(c)
        if chain:  # the post's agent: own chain to its end; the step it takes never enters the pool
            nxt = -1
            if new:
                f0 = fifo
                fifo += len(new)
                n_ready += len(new)
                if own_rank is None:
                    for j, c in enumerate(new):
                        unlock_order[c] = f0 + j
                nxt = new[0] if len(new) == 1 else min(new, key=own_key)
                for j, c in enumerate(new):
                    if c != nxt:
                        heappush(pool, (f0 + j if pool_rank is None else pool_rank[c], c))
        else:
            for c in new:
                if own_rank is None:
                    unlock_order[c] = fifo
                heappush(pool, (fifo if pool_rank is None else pool_rank[c], c))
                fifo += 1
            n_ready += len(new)
            if shared_unlock:  # a ready step also joins the lists of the other agents that finished a parent
                for c in new:
                    seen = {a}
                    for j in range(pp[c], pp[c + 1]):
                        b = done_by[pidx[j]]
                        if b not in seen:
                            seen.add(b)
                            heappush(owned[b], (own_key(c), c))
            nxt = -1
            if own_branch:
                if recursive and len(new) > 1:
                    new.sort(key=own_key)
                    mine = owned[a]
                    for c in new[1:]:
                        if active < cap:
                            active += 1
                            owned.append([])
                            begin(len(owned) - 1, c, t, True)
                        else:
                            heappush(mine, (own_key(c), c))
                    new = new[:1]
                if last_only and not recursive:
                    if new:
                        nxt = new[0] if len(new) == 1 else min(new, key=own_key)
                else:
                    mine = owned[a]
                    for c in new:
                        heappush(mine, (own_key(c), c))
                    while mine:
                        c = heappop(mine)[1]
                        if not claimed[c]:
                            nxt = c
                            break
            elif n_ready:
                nxt = pop_pool()
        if nxt >= 0:
            if plain:  # begin() inlined for the common case: the agent carries on
                claimed[nxt] = 1
                n_ready -= 1
                start[nxt] = t
                end[nxt] = e = t + cost[nxt]
                agent_of[nxt] = a
                heappush(events, (e, COMPLETE, seq, a, nxt))
                seq += 1
            else:
                begin(a, nxt, t, False)
            if refork:  # fork children for steps still held in the agent's list
                mine = owned[a]
                while active < cap and mine:
                    c = heappop(mine)[1]
                    if not claimed[c]:
                        active += 1
                        owned.append([])
                        begin(len(owned) - 1, c, t, True)
        else:
            active -= 1
        if not recursive and active < cap and n_ready and not dispatch_pending:
            heappush(events, (t, DISPATCH, seq, -1, -1))
            seq += 1
            dispatch_pending = True

    if stopped_at == math.inf and claimed.count(0):  # pragma: no cover - a model bug, not a user error
        raise RuntimeError("simulation ended with unfinished steps")
    if stopped_at < math.inf:  # steps never started: no interval
        idle = [i for i in range(n) if not claimed[i]]
        for i in idle:
            start[i] = end[i] = math.inf
    return SimRun(
        dag=dag, start=np.array(start), end=np.array(end), agent=np.array(agent_of), scheduling=np.array(sched_of),
        communication=np.array(comm_of), agents_started=len(owned), cap=cap, swarm=swarm, rule=rule,
        stopped_at=stopped_at,
    )
