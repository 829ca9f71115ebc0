"""The trial-and-error DAG generator of seed 000.

The generator follows the seed ("each new step is a variant of a parent in the layer above,
parents that improved on what they built on are drawn more often, a step's value is its
parent's value plus a random change, deeper steps take longer") with the knobs of
:class:`GeneratorParams`; their defaults are the second-hand report of the original post
(``shared/notes/swarm-post-model.md``) and the calibrated values live in
``data/sim/calibrated.json``, read through :mod:`evalkit.resources` (see :mod:`evalkit.sim.calibrate`).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit._rng import RNGLike, as_generator
from evalkit.resources import calibrated_params
from evalkit.sim.dag import Dag, _from_edges

__all__ = ["GeneratorParams", "generate_dag", "generate_dags", "calibrated_generator"]


@dataclass(frozen=True)
class GeneratorParams:
    """Knobs of the trial-and-error DAG generator (defaults: the original post as reported).

    Per task: ``n_steps * exp(n_steps_sigma z)`` steps, ``n_layers * exp(n_layers_sigma z)``
    layers, peak position ``peak + peak_sd z``, merge probability ``merge_p * exp(merge_sigma z)``.
    Layer ``d`` gets the increment over that layer of a logistic curve centred at the peak with
    steepness ``steepness / (D - 1)`` (``profile="bell"``; ``"uniform"``: equal layers), times
    ``exp(layer_noise z)``. ``tail`` adds a constant
    floor (a share of the mean layer size) to every layer below the peak, which makes the deep
    end heavier than a bell. Primary parent: layer above, weight ``exp(select_beta * delta)``
    (``delta`` = that parent's improvement). Merges: ``K`` extra parents with ``P(K) ~ K^-merge_alpha``,
    each a sibling of the primary parent with probability ``sibling_p``, else ``b`` layers further
    up with ``P(b) ~ skip_decay^b``. Value: best parent's value + N(mu_d + q, 1), ``mu_d`` linear
    from ``mu_top`` to ``mu_bottom``, ``q ~ N(0, fertility_sd^2)`` per DAG. Cost:
    ``cost_law="geometric"``: ``exp(cost_growth * (d / (D - 1)) ** cost_shape)``; ``"linear"``:
    ``1 + cost_growth * d / (D - 1)``; times ``exp(cost_sigma z)`` per step and a task clock
    ``exp(U(-clock_spread, clock_spread))``. ``cost_inherit`` (``rho``, default 0: independent
    noise) makes a step's cost noise a variant of its primary parent's, ``z = rho z_parent +
    sqrt(1 - rho^2) e``, so whole branches are cheap or expensive.
    """

    n_steps: float = 723.0
    n_steps_sigma: float = 0.4
    n_layers: float = 17.0
    n_layers_sigma: float = 0.2
    peak: float = 0.28
    peak_sd: float = 0.07
    steepness: float = 6.4
    layer_noise: float = 0.35
    tail: float = 0.0
    profile: str = "bell"
    merge_p: float = 0.46
    merge_sigma: float = 0.3
    merge_alpha: float = 2.3
    merge_kmax: int = 16
    sibling_p: float = 0.2
    skip_decay: float = 0.8
    select_beta: float = 1.4
    mu_top: float = 1.0
    mu_bottom: float = -0.5
    fertility_sd: float = 0.2
    cost_law: str = "linear"
    cost_growth: float = 9.0
    cost_shape: float = 1.0
    cost_sigma: float = 0.2
    cost_inherit: float = 0.0
    clock_spread: float = 0.3

    def __post_init__(self) -> None:
        if self.profile not in ("bell", "uniform"):
            raise ValueError(f"profile must be 'bell' or 'uniform'; got {self.profile!r}.")
        if self.cost_law not in ("linear", "geometric"):
            raise ValueError(f"cost_law must be 'linear' or 'geometric'; got {self.cost_law!r}.")
        for name in ("n_steps", "n_layers"):
            if not np.isfinite(getattr(self, name)) or getattr(self, name) < 2:
                raise ValueError(f"{name} must be a finite number >= 2; got {getattr(self, name)!r}.")
        if not 0 <= self.merge_p <= 1 or not 0 <= self.sibling_p <= 1:
            raise ValueError("merge_p and sibling_p must lie in [0, 1].")
        if not 0 <= self.cost_inherit < 1:
            raise ValueError(f"cost_inherit must lie in [0, 1); got {self.cost_inherit!r}.")

    def replace(self, **changes: Any) -> GeneratorParams:
        return dataclasses.replace(self, **changes)


@functools.lru_cache(maxsize=1)
def calibrated_generator() -> GeneratorParams:
    """The bundled calibrated generator knobs (read once; an error when the file is missing)."""
    return GeneratorParams(**calibrated_params()["generator"])


def _layer_sizes(p: GeneratorParams, n: int, n_layers: int, peak: float, g: np.random.Generator) -> np.ndarray:
    d = np.arange(1, n_layers, dtype=float)
    centre, s = peak * (n_layers - 1), p.steepness / max(n_layers - 1, 1)
    logistic = 1.0 / (1.0 + np.exp(-s * (np.arange(0.5, n_layers, 1.0) - centre)))
    bell = np.diff(logistic) if p.profile == "bell" else np.ones(n_layers - 1)
    w = bell * np.exp(p.layer_noise * g.standard_normal(n_layers - 1))
    w = w / w.sum() + p.tail * (d >= centre) / (n_layers - 1)
    raw = w / w.sum() * (n - 1)
    sizes = np.maximum(1, np.floor(raw).astype(np.int64))
    short = (n - 1) - sizes.sum()  # hand out the remainder by largest fractional part
    if short > 0:
        sizes[np.argsort(-(raw - np.floor(raw)), kind="stable")[:short]] += 1
    while sizes.sum() > n - 1:  # rounding up to 1 overshot: take from the largest layers
        sizes[np.argmax(sizes)] -= 1
    return np.concatenate([[1], sizes])


def _structure(p: GeneratorParams, g: np.random.Generator, n_steps: int | None,
               n_layers: int | None) -> tuple[np.ndarray, ...]:
    """Layers, parents and values of one DAG (every draw before the costs)."""
    z = g.standard_normal(5)
    n = int(n_steps) if n_steps is not None else max(8, round(p.n_steps * np.exp(p.n_steps_sigma * z[0])))
    D = int(n_layers) if n_layers is not None else max(3, round(p.n_layers * np.exp(p.n_layers_sigma * z[1])))
    if n < D:
        raise ValueError(f"n_steps ({n}) must be at least n_layers ({D}).")
    peak = float(np.clip(p.peak + p.peak_sd * z[2], 0.02, 0.98))
    merge_p = float(min(1.0, p.merge_p * np.exp(p.merge_sigma * z[3])))
    q = p.fertility_sd * z[4]
    sizes = _layer_sizes(p, n, D, peak, g)
    start = np.concatenate([[0], np.cumsum(sizes)])
    depth = np.repeat(np.arange(D), sizes)
    frac = depth / (D - 1)
    delta = g.normal(p.mu_top + (p.mu_bottom - p.mu_top) * frac + q, 1.0)
    delta[0] = 0.0
    # primary parents, one vectorised draw per layer
    primary = np.zeros(n, dtype=np.int64)
    weight = np.exp(p.select_beta * np.minimum(delta, 50.0))
    for d in range(1, D):
        lo, hi = start[d - 1], start[d]
        w = weight[lo:hi]
        cdf = np.cumsum(w)
        u = g.random(sizes[d]) * cdf[-1]
        primary[start[d] : start[d + 1]] = lo + np.minimum(np.searchsorted(cdf, u, side="right"), hi - lo - 1)
    # merges: K extra parents for a share merge_p of the steps
    ks = np.arange(1, p.merge_kmax + 1)
    pk = ks ** -p.merge_alpha
    has_merge = (g.random(n) < merge_p) & (depth >= 2)
    n_extra = np.where(has_merge, g.choice(ks, size=n, p=pk / pk.sum()), 0)
    parents: list[list[int]] = [[int(x)] for x in primary]
    parents[0] = []
    anc = [0] * n  # ancestor bitsets as Python ints
    layer_cw = [np.cumsum(weight[start[d] : start[d + 1]]).tolist() for d in range(D)]
    starts = start.tolist()
    ss = bisect.bisect_right  # on Python lists: the same index as np.searchsorted(side="right"), faster per call
    for v in range(1, n):
        ps = parents[v]
        k = int(n_extra[v])
        if k:
            dv = int(depth[v])
            sib = g.random(k) < p.sibling_p
            ups = g.geometric(1.0 - p.skip_decay, size=k)  # b >= 1, P(b) ~ skip_decay^b
            us = g.random(k).tolist()
            sib, ups = sib.tolist(), ups.tolist()
            for j in range(k):
                layer = dv - 1 if sib[j] else max(0, dv - 1 - int(ups[j]))
                lo, hi = starts[layer], starts[layer + 1]
                cw = layer_cw[layer]
                c = lo + min(ss(cw, us[j] * cw[-1]), hi - lo - 1)
                if c in ps or any((anc[x] >> c) & 1 for x in ps):
                    continue  # c is an ancestor of a chosen parent (or chosen already)
                ps = [x for x in ps if not (anc[c] >> x) & 1]
                ps.append(c)
            parents[v] = ps
        a = 0
        for x in ps:
            a |= anc[x] | (1 << x)
        anc[v] = a
    counts = np.fromiter((len(x) for x in parents), dtype=np.int64, count=n)
    pidx = np.fromiter((x for ps in parents for x in ps), dtype=np.int64, count=int(counts.sum()))
    child = np.repeat(np.arange(n), counts)
    # values: best parent's value + the step's own change, layer by layer
    value = delta.copy()
    ptr = np.concatenate([[0], np.cumsum(counts)])
    for d in range(1, D):
        lo, hi = start[d], start[d + 1]
        best = np.maximum.reduceat(value[pidx[ptr[lo] : ptr[hi]]], ptr[lo:hi] - ptr[lo])
        value[lo:hi] = best + delta[lo:hi]
    return depth, value, pidx, child, frac, primary


#: Costs are drawn last, so DAGs that differ only in the cost law (a broken simulator, a calibration
#: candidate) share their structure: a small LRU keyed by the structural knobs and the generator's state.
_COST_KNOBS = frozenset({"cost_law", "cost_growth", "cost_shape", "cost_sigma", "cost_inherit", "clock_spread"})
_STRUCTURES: OrderedDict = OrderedDict()
_CACHE_SIZE = 1024


def _cache_key(p: GeneratorParams, g: np.random.Generator, n_steps: int | None, n_layers: int | None) -> tuple | None:
    st = g.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        return None
    knobs = tuple((f.name, getattr(p, f.name)) for f in dataclasses.fields(p) if f.name not in _COST_KNOBS)
    return (knobs, n_steps, n_layers, st["state"]["state"], st["state"]["inc"], st["has_uint32"], st["uinteger"])


def generate_dag(
    params: GeneratorParams | None = None, *, rng: RNGLike, n_steps: int | None = None, n_layers: int | None = None
) -> Dag:
    """Grow one task DAG by trial and error.

    Parameters
    ----------
    params : GeneratorParams, optional
        Generator knobs (default: the calibrated set in ``data/sim/calibrated.json``;
        ``GeneratorParams()`` is the original post as reported).
    rng : int or numpy Generator
        Seed; the same seed gives the same DAG bit for bit.
    n_steps, n_layers : int, optional
        Fix the number of steps and/or layers (no per-task noise): the depth/width sweep keeps
        the step count and varies the depth, e.g. 136 layers x 5 steps to 4 layers x 184.

    Returns
    -------
    Dag
    """
    p = params if params is not None else calibrated_generator()
    g = as_generator(rng)
    key = _cache_key(p, g, n_steps, n_layers)
    hit = _STRUCTURES.get(key) if key is not None else None
    if hit is not None:
        _STRUCTURES.move_to_end(key)
        depth, value, pidx, child, frac, primary, state = hit
        g.bit_generator.state = state
    else:
        depth, value, pidx, child, frac, primary = _structure(p, g, n_steps, n_layers)
        if key is not None:
            _STRUCTURES[key] = (depth, value, pidx, child, frac, primary, g.bit_generator.state)
            if len(_STRUCTURES) > _CACHE_SIZE:
                _STRUCTURES.popitem(last=False)
    n = depth.size
    if p.cost_law == "geometric":
        base = np.exp(p.cost_growth * frac**p.cost_shape)
    else:
        base = 1.0 + p.cost_growth * frac
    clock = np.exp(g.uniform(-p.clock_spread, p.clock_spread))
    z = g.standard_normal(n)
    if p.cost_inherit > 0:  # layer by layer: a parent's noise is final before its children's
        rho, e = p.cost_inherit, z.copy()
        w = np.sqrt(1.0 - rho * rho)
        bounds = np.searchsorted(depth, np.arange(int(depth[-1]) + 2)).tolist()  # depth is sorted by layer
        for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):
            z[lo:hi] = rho * z[primary[lo:hi]] + w * e[lo:hi]
    cost = clock * base * np.exp(p.cost_sigma * z)
    return _from_edges(depth, cost, value, pidx, child)


def generate_dags(
    count: int, params: GeneratorParams | None = None, *, rng: RNGLike, n_steps: int | None = None,
    n_layers: int | None = None,
) -> list[Dag]:
    """Generate ``count`` independent DAGs (child seeds spawned from ``rng``)."""
    if count < 1:
        raise ValueError(f"count must be >= 1; got {count}.")
    seeds = np.random.SeedSequence(int(as_generator(rng).integers(2**63))).spawn(count)
    return [generate_dag(params, rng=np.random.default_rng(s), n_steps=n_steps, n_layers=n_layers) for s in seeds]
