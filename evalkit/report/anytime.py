"""Report sections of ``evalkit compare --sequential`` (anytime-valid comparison) and of execution noise
(verdict flips between repeated runs of the same system, task and configuration).

Both read ``ctx.results["outcomes"]`` / ``ctx.params["outcomes"]`` (``system, task, session, score``) and
``ctx.params["anytime_pairs"]`` (``(a, b)`` = (baseline, candidate): differences are b - a).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain

__all__ = ["sequential_section", "flips_section", "paired_task_means", "ANYTIME_SECTIONS"]


def _outcomes(ctx: ReportContext) -> pd.DataFrame | None:
    o = ctx.results.get("outcomes", ctx.params.get("outcomes"))
    return o if isinstance(o, pd.DataFrame) else None


def _pairs(ctx: ReportContext, o: pd.DataFrame) -> list[tuple[str, str]]:
    """``(a, b)`` = (baseline, candidate): differences are b - a. From ``ctx.params["anytime_pairs"]``, else every
    pair in the order the systems first appear (later minus earlier)."""
    pairs = ctx.params.get("anytime_pairs")
    if pairs:
        return [(str(a), str(b)) for a, b in pairs]
    names = list(dict.fromkeys(o["system"].astype(str)))
    return [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]


def paired_task_means(o: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """``task, a, b``: each system's mean score over its runs of the tasks both ran, in file order."""
    m = o.assign(system=o["system"].astype(str)).groupby(["task", "system"], sort=False)["score"].mean().unstack()
    if a not in m or b not in m:
        return pd.DataFrame(columns=["task", "a", "b"])
    first_seen = {t: k for k, t in enumerate(dict.fromkeys(o["task"]))}
    m = m[[a, b]].dropna()
    m = m.loc[sorted(m.index, key=lambda t: first_seen[t])]
    return pd.DataFrame({"task": m.index, "a": m[a].to_numpy(), "b": m[b].to_numpy()})


def sequential_section(ctx: ReportContext) -> Section | None:
    """Per pair: the betting confidence sequence on the per-task difference b - a, when it settled, and what
    that saved against a fixed-n design of equal power."""
    from evalkit.stats.sequential import sequential_comparison

    spec = ctx.params.get("sequential")
    o = _outcomes(ctx)
    if not spec or o is None:
        return None
    level = float(ctx.params.get("confidence_level", 0.95))
    lo, hi = spec.get("bounds", (0.0, 1.0))
    order = spec.get("order", "random")
    blocks: list[Any] = [Text(
        "Anytime-valid comparison: a betting confidence sequence (Waudby-Smith & Ramdas 2024, hedged capital "
        "process; predictable plug-in empirical-Bernstein bets truncated at 1/2, hedge weight 1/2; tensorzero's "
        f"construction) on the per-task difference b - a of the scores (bounded in [{lo:g}, {hi:g}]), looked at "
        + (f"every {spec['look_every']} tasks" if spec.get("look_every") else "after every task")
        + f". At {level:.0%} it covers the true mean difference at every look simultaneously, so stopping at the "
        "first look that excludes 0 keeps the error rate; checking a fixed-n test at every look does not "
        "(scripts/sequential_null.py: 20 % instead of 5 %). "
        + (f"Tasks in a random order, seed {ctx.seed} (recorded in run.json)." if order == "random" else
           "Tasks in FILE ORDER (asked for): the sequence assumes an order independent of the outcomes."))]
    rows, lines = [], []
    for a, b in _pairs(ctx, o):
        pm = paired_task_means(o, a, b)
        if len(pm) < 2:
            lines.append(f"{plain(b)} - {plain(a)}: fewer than 2 shared tasks")
            continue
        res = sequential_comparison(pm["a"], pm["b"], bounds=(lo, hi), confidence_level=level, order=order,
                                    rng=ctx.seed if order == "random" else None, look_every=spec.get("look_every"),
                                    power_boot=int(spec.get("power_boot", 200)))
        final = res.sequence.at(res.n)
        rows.append({"a": a, "b": b, "tasks": res.n, "mean_diff": res.mean_diff, "cs_low": final.low,
                     "cs_high": final.high, "settled_at": res.settled_at, "direction": res.direction,
                     "power": res.plan.get("power"), "n_fixed_equal_power": res.plan.get("n_fixed"),
                     "tasks_saved": (res.plan["n_fixed"] - res.settled_at) if res.plan.get("n_fixed") and
                     res.settled_at else None, "trend_pvalue": res.trend_pvalue})
        text = res.statement().replace("b > a", f"{plain(b)} > {plain(a)}").replace("b < a", f"{plain(b)} < {plain(a)}")
        lines.append(f"{plain(b)} - {plain(a)}: {text}")
        if order == "file" and res.trend_pvalue < 0.05:
            lines.append(f"{plain(b)} - {plain(a)}: the differences drift along the file order (Spearman trend "
                         f"p = {res.trend_pvalue:.3g}); the file order is not a random order.")
        ctx.results.setdefault("sequential", []).append({"a": a, "b": b, "result": res})
        ctx.results.setdefault("headline", []).append(
            {"kind": "sequential", "text": f"{b} - {a}: " + (f"settled at task {res.settled_at} of {res.n}"
                                                             if res.settled_at else f"not settled after {res.n} tasks")})
        blocks.append(Table(res.table.assign(a=a, b=b)[["a", "b", "tasks", "mean_diff", "cs_low", "cs_high",
                                                         "excludes_0"]],
                            floatfmt=".4g", csv=f"tables/sequential_{len(rows)}.csv"))
    if rows:
        blocks.insert(1, Table(pd.DataFrame(rows), floatfmt=".4g", csv="tables/sequential.csv"))
    blocks.append(Bullets(tuple(lines)))
    return Section("When the answer settled (anytime-valid)", tuple(blocks))


def flips_section(ctx: ReportContext) -> Section | None:
    """Execution noise: how often the per-task verdict (b better, a better, equal) flips between repeats."""
    from evalkit.stats.flips import run_verdicts, verdict_flip_rate

    o = _outcomes(ctx)
    if o is None or "session" not in o:
        return None
    runs = o.groupby(["system", "task"])["session"].nunique()
    if runs.max() < 2:
        return None
    level = float(ctx.params.get("confidence_level", 0.95))
    rows, conclusions = [], []
    for a, b in _pairs(ctx, o):
        v = run_verdicts(o, a, b)
        if v.empty:
            continue
        try:
            fr = verdict_flip_rate(v, unit=["task"], verdict="verdict", confidence_level=level)
        except ValueError:
            continue
        lo, hi = fr.confidence_interval()
        rows.append({"a": a, "b": b, "tasks_repeated": fr.details["units"], "verdicts": fr.details["repeats"],
                     "flip_rate": fr.estimate, "ci_low": lo, "ci_high": hi,
                     "tasks_flipping": fr.details["units_flipping"]})
        per_run = v.groupby("repeat")["verdict"].agg(b_ahead=lambda s: int((s > 0).sum()),
                                                     a_ahead=lambda s: int((s < 0).sum()),
                                                     even=lambda s: int((s == 0).sum()), tasks="size").reset_index()
        signs = np.sign(per_run["b_ahead"] - per_run["a_ahead"])
        flipped = (signs > 0).any() and (signs < 0).any()
        text = "; ".join(f"run {r.repeat}: {plain(b)} ahead on {r.b_ahead} of {r.tasks} tasks, behind on {r.a_ahead}"
                         for r in per_run.itertuples())
        conclusions.append(f"{plain(b)} vs {plain(a)}: {text}" + (" — the conclusion FLIPS between repeats of the "
                                                                  "same configuration" if flipped else ""))
    if not rows:
        return None
    return Section("Execution noise: verdict flips between repeated runs", (
        Text("When the same system, task and configuration run more than once, the r-th run of each system is "
             "compared with the r-th run of the other (runs in the order of their session ids). A task's flip "
             "rate is the probability that two repeats give different verdicts (b better / a better / equal), "
             "1 - sum n_v (n_v - 1) / (n (n - 1)); averaged over the repeated tasks, t interval over tasks. Seed "
             "002: the same workflow and seed won 6/6 once and lost 6/6 the next time."),
        Table(pd.DataFrame(rows), floatfmt=".3g", csv="tables/verdict_flips.csv"),
        Bullets(tuple(conclusions)),
    ))


ANYTIME_SECTIONS = (sequential_section, flips_section)
