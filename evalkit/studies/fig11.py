"""Figure 11 of seed 000 on the simulator: Elo per agent-time for four systems.

Four systems spend the same agent-time budget ``B`` on each task:

* ``pass@1``: one single-agent session;
* ``pass@4``: the best of four independent single-agent sessions at ``B/4`` each;
* ``group@4``: one standard swarm of four agents sharing one DAG;
* ``pass@2 group@2``: the better of two standard swarms of two at ``B/2`` each.

Every session grows its own DAG from the calibrated generator (a group's agents share one).
The budget is agent-time (the seed's stand-in for tokens) and the score is the session's best
score so far, on one fixed scale for all DAGs (the 90th percentile of the best values of 64
DAGs, the original post's rule), so that sessions on different DAGs are comparable. The
session table then goes through :func:`evalkit.budget.elo_curves` like any user's traces:
self-Elo for the two single-session systems, joint Elo for all four.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit._rng import RNGLike, as_generator
from evalkit.budget import (
    CurveResult,
    InflectionResult,
    best_of_sessions,
    elo_curves,
    inflection_point,
)
from evalkit.sim.experiments import SimParams, load_params
from evalkit.sim.sessions import population_scale, session_traces

__all__ = [
    "SYSTEMS", "checkpoints", "Figure11Config", "Figure11Result", "simulate_systems", "figure11", "figure11_claims",
    "figure11_reproduction", "write_figure11_reproduction", "plot_figure11",
]

#: (name, agents per session, sessions combined by best-of)
SYSTEMS: tuple[tuple[str, int, int], ...] = (
    ("pass@1", 1, 1),
    ("pass@4", 1, 4),
    ("group@4", 4, 1),
    ("pass@2 group@2", 2, 2),
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Figure11Config:
    """The study design.

    Attributes
    ----------
    n_tasks : int
        Tasks (games are played within a task only).
    n_sessions : int
        Sessions of each system per task (a best-of-K system uses K times as many runs).
    budget : float, optional
        The budget ``B`` in agent-time units of the simulator; default: ``budget_factor``
        times the mean total work of the generator's DAGs.
    budget_factor : float
        See ``budget``.
    decades : float
        The checkpoint grid spans ``B / 10**decades`` to ``B``.
    grid : float
        Ratio of consecutive checkpoints.
    bootstrap : int
        Session-bootstrap replicates for the curves.
    params : SimParams, optional
        Simulator parameters (default: the calibrated set in ``data/sim``).
    """

    n_tasks: int = 14
    n_sessions: int = 5
    budget: float | None = None
    budget_factor: float = 1.0
    decades: float = 3.0
    grid: float = 1.5
    bootstrap: int = 200
    params: SimParams | None = None

    def __post_init__(self) -> None:
        for name, low in (("n_tasks", 1), ("n_sessions", 2)):
            v = getattr(self, name)
            if not (isinstance(v, (int, np.integer)) and v >= low):
                why = " (self-Elo rates games between different sessions)" if name == "n_sessions" else ""
                raise ValueError(f"{name} must be an integer >= {low}{why}; got {v!r}.")
        if self.budget is not None and not (np.isfinite(self.budget) and self.budget > 0):
            raise ValueError(f"budget must be a positive finite number; got {self.budget!r}.")
        if not (self.budget_factor > 0 and np.isfinite(self.budget_factor)):
            raise ValueError(f"budget_factor must be positive; got {self.budget_factor!r}.")
        if not (self.decades > 0):
            raise ValueError(f"decades must be positive; got {self.decades!r}.")
        if not (self.grid > 1):
            raise ValueError(f"grid must be a ratio > 1; got {self.grid!r}.")
        if self.bootstrap < 0:
            raise ValueError(f"bootstrap must be >= 0; got {self.bootstrap!r}.")


@dataclass(frozen=True)
class Figure11Result:
    """Everything figure 11 shows, and the session table behind it."""

    config: Figure11Config
    budget: float
    scale: float
    traces: pd.DataFrame = field(repr=False)
    self_elo: CurveResult = field(repr=False)
    joint_elo: CurveResult = field(repr=False)
    inflection: dict[str, InflectionResult] = field(repr=False)
    final: pd.DataFrame = field(repr=False)

    @property
    def order(self) -> tuple[str, ...]:
        """Systems from best to worst joint Elo at the budget."""
        return tuple(self.final.sort_values("elo", ascending=False)["system"])


def _mean_work(params: SimParams, rng: np.random.Generator, n: int = 32) -> float:
    from evalkit.sim.dag import generate_dag

    seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
    return float(np.mean([generate_dag(params.generator, rng=np.random.default_rng(s)).work for s in seeds]))


def checkpoints(budget: float, *, decades: float, grid: float) -> np.ndarray:
    """Geometric checkpoints ending exactly at ``budget``, ``grid`` apart, spanning at most
    ``decades`` decades."""
    n = int(np.floor(decades * np.log(10) / np.log(grid) + 1e-9))
    return budget * grid ** -np.arange(n, -1, -1, dtype=float)


def simulate_systems(
    config: Figure11Config = Figure11Config(), *, rng: RNGLike = 0, progress: Progress | None = None
) -> tuple[pd.DataFrame, float, float]:
    """Simulate the four systems' sessions and return their session table.

    Returns
    -------
    traces : pandas.DataFrame
        Session table (``system, task, session, budget, score``; budget = agent-time) with the
        best-of composites already built (their budget is the total over members).
    budget : float
        The budget ``B``.
    scale : float
        The best-score scale (a best value equal to it scores 1).
    """
    g = as_generator(rng)
    params = config.params if config.params is not None else load_params()
    scale = population_scale(params, rng=int(g.integers(2**63)))
    budget = config.budget if config.budget is not None else config.budget_factor * _mean_work(params, g)
    frames = []
    for name, agents, k in SYSTEMS:
        if progress:
            progress(f"simulating {name}: {config.n_tasks} tasks x {config.n_sessions * k} runs of {agents} agent(s)")
        for task in range(config.n_tasks):
            tr = session_traces(config.n_sessions * k, params, agents=agents, rng=int(g.integers(2**63)), scale=scale)
            tr = tr.loc[tr["agent_time"] <= budget / k]
            # a run's first step completes at its first step's cost; keep a start row at budget 0
            frame = pd.DataFrame({
                "system": name, "task": f"t{task:02d}", "session": tr["session"].astype(str).to_numpy(),
                "budget": tr["agent_time"].to_numpy(), "score": tr["best_score"].to_numpy(),
            })
            if k > 1:
                frame = best_of_sessions(frame, k, name=name)[["system", "task", "session", "budget", "score"]]
            frames.append(frame)
    return pd.concat(frames, ignore_index=True), float(budget), float(scale)


def figure11(
    config: Figure11Config = Figure11Config(), *, rng: RNGLike = 0, progress: Progress | None = None
) -> Figure11Result:
    """Simulate the study and fit the curves of figure 11.

    Self-Elo (left panel) for ``pass@1`` and ``group@4``; joint Elo (right panel) for all
    four systems; the scaling inflection point of each self-Elo curve; and each system's joint
    Elo at the budget with its bootstrap interval.
    """
    g = as_generator(rng)
    traces, budget, scale = simulate_systems(config, rng=g, progress=progress)
    kw = dict(budgets=checkpoints(budget, decades=config.decades, grid=config.grid), bootstrap=config.bootstrap)
    single = traces.loc[traces["system"].isin(["pass@1", "group@4"])]
    if progress:
        progress(f"fitting self-Elo (pass@1, group@4) with {config.bootstrap} bootstrap replicates")
    self_elo = elo_curves(single, mode="self", rng=int(g.integers(2**63)), **kw)
    if progress:
        progress(f"fitting joint Elo (4 systems) with {config.bootstrap} bootstrap replicates")
    joint_elo = elo_curves(traces, mode="joint", rng=int(g.integers(2**63)), **kw)
    infl = {s: inflection_point(self_elo, system=s) for s in ("pass@1", "group@4")}
    last = joint_elo.curve.loc[joint_elo.curve.groupby("system")["budget"].idxmax()]
    final = last[["system", "budget", "elo", "ci_low", "ci_high"]].sort_values("elo", ascending=False)
    return Figure11Result(config, budget, scale, traces, self_elo, joint_elo, infl, final.reset_index(drop=True))


def _elo_at_budget(result: Figure11Result, system: str) -> float:
    return float(result.final.set_index("system").loc[system, "elo"])


def figure11_claims(result: Figure11Result, *, seed: int | str = "") -> pd.DataFrame:
    """Check the seed's qualitative claims about figure 11 on one result.

    The thresholds are fixed here, from the seed's wording, not from any run:

    * ``F11.start`` "pass@1 starts on the reference": the local self-Elo slope at the first
      checkpoint with a full centred window lies within +/-25 % of 400 Elo per decade;
    * ``F11.bend`` "bends below it early": the slope falls below 400 and the inflection point
      ``b_inf`` lies in the first two of the three decades (``b_inf <= B / 10``);
    * ``F11.overtake`` "past the bend pass@4 overtakes it and leads at the budget": pass@4's
      joint Elo at ``B`` exceeds pass@1's, pass@1 led at some earlier checkpoint, and the last
      checkpoint at which it led is not before ``b_inf``;
    * ``F11.track`` "group@4 tracks pass@1": their joint Elo differ by at most 50 Elo at ``B``;
    * ``F11.between`` "pass@2 group@2 falls between group@4 and pass@4" at ``B`` (value: its
      position between them, 0 = group@4, 1 = pass@4).

    Returns
    -------
    pandas.DataFrame
        One row per claim in the simulator's tidy claim format (``claim, figure, text,
        seed_value, kind, tolerance, seed, value, holds``) plus ``detail`` (the numbers in words).
    """
    inf = result.inflection["pass@1"]
    slopes = inf.slopes.dropna(subset=["slope"])
    first = float(slopes["slope"].iloc[0]) if len(slopes) else float("nan")
    b, b_inf = result.budget, inf.b_inf
    rel_inf = b_inf / b if np.isfinite(b_inf) else float("nan")
    joint = result.joint_elo.curve.pivot(index="budget", columns="system", values="elo").sort_index()
    led = np.flatnonzero((joint["pass@4"] - joint["pass@1"]).to_numpy() <= 0)
    last_p1_lead = float(joint.index[led[-1]]) if led.size else float("nan")
    e = {s: _elo_at_budget(result, s) for s, _, _ in SYSTEMS}
    lead = e["pass@4"] - e["pass@1"]
    overtakes = lead > 0 and led.size > 0 and (not np.isfinite(b_inf) or last_p1_lead >= b_inf)
    span = e["pass@4"] - e["group@4"]
    pos = (e["pass@2 group@2"] - e["group@4"]) / span if span != 0 else float("nan")
    lo, hi = sorted((e["group@4"], e["pass@4"]))
    rows = [
        ("F11.start", "pass@1 self-Elo starts on the 400/decade reference (first local slope)", 400.0, "slope",
         "+-25%", first, bool(abs(first - 400) <= 100), f"{first:.0f} Elo/decade"),
        ("F11.bend", "pass@1 bends below the reference early (b_inf / B)", 0.1, "ordering", "<= 0.1",
         rel_inf, bool(inf.status == "crossed" and rel_inf <= 0.1 + 1e-12),
         f"b_inf = {b_inf:.4g} = {rel_inf:.3g} B ({inf.status})"),
        ("F11.overtake", "past the bend pass@4 overtakes pass@1 and leads at B (Elo lead)", None, "ordering", "exact",
         lead, bool(overtakes), f"pass@4 - pass@1 = {lead:+.0f} Elo at B; pass@1 last led at "
         + (f"{last_p1_lead / b:.3g} B" if led.size else "no checkpoint")),
        ("F11.track", "group@4 tracks pass@1 (joint Elo difference at B)", 0.0, "elo", "<= 50 Elo",
         e["group@4"] - e["pass@1"], bool(abs(e["group@4"] - e["pass@1"]) <= 50),
         f"group@4 - pass@1 = {e['group@4'] - e['pass@1']:+.0f} Elo at B"),
        ("F11.between", "pass@2 group@2 falls between group@4 and pass@4 at B (position 0..1)", None, "ordering",
         "exact", pos, bool(lo <= e["pass@2 group@2"] <= hi),
         f"{e['pass@2 group@2']:.0f} vs group@4 {e['group@4']:.0f}, pass@4 {e['pass@4']:.0f}"),
    ]
    out = pd.DataFrame(rows, columns=["claim", "text", "seed_value", "kind", "tolerance", "value", "holds", "detail"])
    out.insert(1, "figure", "11")
    out.insert(6, "seed", seed)
    return out[["claim", "figure", "text", "seed_value", "kind", "tolerance", "seed", "value", "holds", "detail"]]


def _one_seed(args: tuple[Figure11Config, int]) -> pd.DataFrame:
    config, seed = args
    return figure11_claims(figure11(config, rng=seed), seed=seed)


def figure11_reproduction(
    config: Figure11Config | None = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4), workers: int | None = None
) -> pd.DataFrame:
    """:func:`figure11_claims` on several seeds (run in parallel), in the tidy claim format.

    Summarise it with :func:`evalkit.sim.claims.summarise` (a claim holds when it holds on at
    least two thirds of the seeds: 4 of 5).
    """
    import warnings
    from concurrent.futures import ProcessPoolExecutor

    config = config if config is not None else Figure11Config()
    jobs = [(config, int(s)) for s in seeds]
    n = min(len(jobs), workers or os.cpu_count() or 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if n <= 1:
            frames = [_one_seed(j) for j in jobs]
        else:
            with ProcessPoolExecutor(n) as pool:
                frames = list(pool.map(_one_seed, jobs))
    return pd.concat(frames, ignore_index=True)


def plot_figure11(result: Figure11Result, *, axes: tuple | None = None) -> tuple:
    """Figure 11: self-Elo of pass@1 and group@4 against the reference (left), joint Elo of all
    four systems (right). Returns the two Axes."""
    import matplotlib.pyplot as plt

    from evalkit.plots.budget import plot_elo_curves

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    left, right = axes
    plot_elo_curves(result.self_elo, ax=left, inflection=result.inflection["pass@1"],
                    title="self-Elo (pass@1, group@4)")
    plot_elo_curves(result.joint_elo, ax=right, reference=False, title="joint Elo (all four systems)")
    for ax in axes:
        ax.set_xlabel("agent-time budget (log scale)")
    return left, right


def write_figure11_reproduction(
    out: str | os.PathLike, config: Figure11Config | None = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4),
    workers: int | None = None, figure: bool = True,
) -> pd.DataFrame:
    """Run :func:`figure11_reproduction`, write its tables to ``out`` and append them to the
    simulator's ``claims.md`` there (creating it if absent). Returns the per-claim summary.

    Files: ``figure11_claims_by_seed.csv`` (one row per claim and seed, with the numbers in
    words), ``figure11_claims.csv`` (per claim: value per seed, seeds held, holds on >= 2/3 of
    the seeds, i.e. 4 of 5) and, with ``figure``, ``fig11_elo_per_budget.png`` (first seed).
    """
    from pathlib import Path

    from evalkit.sim.claims import summarise
    from evalkit.sim.reproduce import to_markdown

    config = config if config is not None else Figure11Config()
    o = Path(out)
    o.mkdir(parents=True, exist_ok=True)
    by_seed = figure11_reproduction(config, seeds=seeds, workers=workers)
    summary = summarise(by_seed.drop(columns=["detail"]))
    summary["note"] = [
        "" if ok else "; ".join(f"seed {s}: {d}" for s, d, h in
                                by_seed.loc[by_seed["claim"] == c, ["seed", "detail", "holds"]].itertuples(index=False)
                                if not h)
        for c, ok in zip(summary["claim"], summary["holds"], strict=True)
    ]
    by_seed.to_csv(o / "figure11_claims_by_seed.csv", index=False)
    summary.to_csv(o / "figure11_claims.csv", index=False)
    md = o / "claims.md"
    head = md.read_text() if md.exists() else ""
    head = head.split("\n## Figure 11")[0].rstrip("\n")
    section = (f"\n\n## Figure 11: Elo per agent-time (seeds {', '.join(map(str, seeds))}; {config.n_tasks} tasks x "
               f"{config.n_sessions} sessions per system)\n\nThresholds are fixed in "
               "`evalkit.studies.figure11_claims`; a row holds when it holds on at least 2/3 of the seeds.\n\n")
    md.write_text((head + section if head else section.lstrip()) + to_markdown(summary))
    if figure:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        plot_figure11(figure11(config, rng=int(seeds[0])), axes=axes)
        fig.tight_layout()
        fig.savefig(o / "fig11_elo_per_budget.png", dpi=120, metadata={"Software": None})
        plt.close(fig)
    return summary
