"""Report sections about single tasks and single systems: the per-task table (outcome of every system,
discordant or not, budget spent), each system scored alone, and what each system spent.

The sections read one outcome per (system, task, run): ``ctx.results["outcomes"]`` (``evalkit
compare``) or, for ``evalkit report``, the per-item or per-(task, trial) score table
(``ctx.scores``). The pair tables of ``compare`` and ``report`` share one sign convention:
**candidate − baseline**, the baseline being the system given (or appearing) first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.report.document import Block, ReportContext, Section, Table, Text, plain

__all__ = ["DIFF_LABEL", "labelled_pairs", "oriented_pairs", "per_task_table", "per_task_section", "score_section",
           "TASK_SECTIONS"]

DIFF_LABEL = "diff (candidate − baseline)"
_SPEND = ("tokens", "cost", "time")
_SHOWN_TASKS = 60


def labelled_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """A pair table whose ``a`` is the candidate and ``b`` the baseline, with columns named so, the
    baseline first and the difference's header naming its sign."""
    ren = {"a": "candidate", "b": "baseline", "mean_a": "mean_candidate", "mean_b": "mean_baseline",
           "runs_a": "runs_candidate", "runs_b": "runs_baseline", "only_a": "only_candidate",
           "only_b": "only_baseline", "a_only_pass": "candidate_only_pass", "b_only_pass": "baseline_only_pass",
           "diff": DIFF_LABEL}
    out = table.rename(columns=ren)
    front = [c for c in ("baseline", "candidate") if c in out.columns]
    return out[front + [c for c in out.columns if c not in front]]


def oriented_pairs(order: list[str], pairs: str, means: pd.Series | None = None) -> list[tuple[str, str]]:
    """``(candidate, baseline)`` pairs: every pair ("all"), or neighbours by mean ("adjacent"); the baseline
    is always the system that comes first in ``order`` (as given / as it appears in the data)."""
    rank = {s: i for i, s in enumerate(order)}
    if pairs == "adjacent" and means is not None:
        by_mean = means.sort_values(ascending=False).index.tolist()
        raw = list(zip(by_mean[:-1], by_mean[1:], strict=True))
    else:
        raw = [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    return [(b, a) if rank[a] < rank[b] else (a, b) for a, b in raw]


def _outcomes(ctx: ReportContext) -> tuple[pd.DataFrame | None, str]:
    """One row per (system, task, run) and what the task column is called, from compare or report inputs."""
    if "outcomes" not in ctx.results and isinstance(ctx.params.get("outcomes"), pd.DataFrame):
        ctx.results["outcomes"] = ctx.params["outcomes"]
    if ctx.results.get("outcomes") is not None:
        return ctx.results["outcomes"], "task"
    s = ctx.scores
    if s is None:
        return None, ""
    if {"task", "trial"} <= set(s.columns):
        return s.rename(columns={"trial": "session"}), "task"
    if "item" in s.columns:
        return s.rename(columns={"item": "task"}).assign(session="1"), "item"
    return None, ""


def _order(ctx: ReportContext, o: pd.DataFrame) -> list[str]:
    order = ctx.params.get("system_order")
    seen = list(dict.fromkeys(o["system"].astype(str)))
    return [s for s in order if s in seen] + [s for s in seen if s not in order] if order else seen


def per_task_table(outcomes: pd.DataFrame, order: list[str] | None = None) -> pd.DataFrame:
    """One row per task: each system's outcome (mean over its runs; NaN when it did not run the task),
    ``discordant`` (whether the systems' outcomes differ), and each system's budget on the task
    (its ``tokens``, ``cost`` and ``time`` summed over runs, where recorded).

    Discordant tasks come first (they are the evidence of a paired test), then tasks in name order.
    """
    o = outcomes.copy()
    o["system"] = o["system"].astype(str)
    o["task"] = o["task"].astype(str)
    systems = order or list(dict.fromkeys(o["system"]))
    score = o.pivot_table(index="task", columns="system", values="score", aggfunc="mean")
    score = score.reindex(columns=systems)
    vals = score.to_numpy(dtype=float)
    ran = ~np.isnan(vals)
    both = ran.sum(axis=1) >= 2
    spread = np.where(both, np.nanmax(np.where(ran, vals, -np.inf), axis=1) - np.nanmin(np.where(ran, vals, np.inf),
                                                                                           axis=1), 0.0)
    table = pd.DataFrame({"task": score.index})
    for s in systems:
        table[s] = score[s].to_numpy()
    table["discordant"] = np.where(both, np.where(spread > 0, "yes", "no"), "")
    for col in _SPEND:
        if col not in o.columns or not pd.to_numeric(o[col], errors="coerce").notna().any():
            continue
        spend = o.assign(v=pd.to_numeric(o[col], errors="coerce")).pivot_table(
            index="task", columns="system", values="v", aggfunc="sum", dropna=False)
        for s in systems:
            table[f"{s} {col}"] = spend.reindex(index=score.index).get(s, pd.Series(np.nan, index=score.index)).to_numpy()
    key = np.where(table["discordant"] == "yes", 0, 1)
    return table.assign(_k=key).sort_values(["_k", "task"], kind="stable").drop(columns="_k").reset_index(drop=True)


def per_task_section(ctx: ReportContext) -> Section | None:
    """The per-task table: task, outcome per system, discordant yes/no, budget per system."""
    o, what = _outcomes(ctx)
    if o is None or not len(o):
        return None
    order = _order(ctx, o)
    table = per_task_table(o, order)
    n_disc = int((table["discordant"] == "yes").sum())
    n_both = int((table["discordant"] != "").sum())
    spend = [c for c in _SPEND if any(f"{s} {c}" in table.columns for s in order)]
    unit = "item" if what == "item" else "task"
    text = (f"One row per {unit}: each system's outcome (the mean over its runs; empty where it did not run the "
            f"{unit})" + (f", discordant when the systems' outcomes differ ({n_disc} of the {n_both} {unit}s run by "
                          "two or more systems; the others carry no evidence for a paired test)" if len(order) > 1
                          else "")
            + (f", and what each system spent on it ({', '.join(spend)}, summed over runs)" if spend else
               "; the logs record no budget (tokens, cost or time)")
            + f". Discordant {unit}s first"
            + (f"; the first {_SHOWN_TASKS} of {len(table)} are shown, all are in tables/per_task.csv."
               if len(table) > _SHOWN_TASKS else "."))
    return Section(f"Per-{unit} outcomes", (Text(text), Table(table.head(_SHOWN_TASKS), floatfmt=".4g",
                                                              csv="tables/per_task.csv", data=table)))


def score_section(ctx: ReportContext) -> Section | None:
    """Each system scored alone (mean, SE, interval, pass@k) with its totals of tokens, cost and time."""
    o, _ = _outcomes(ctx)
    if o is None or not len(o):
        return None
    from evalkit.stats.score import score_runs

    p = ctx.params
    try:
        res = score_runs(o, cluster=p.get("cluster"), confidence_level=p.get("confidence_level", 0.95),
                         threshold=p.get("threshold"))
    except ValueError as exc:
        return Section("Each system alone", (Text(f"Not computed: {plain(str(exc))}"),))
    order = _order(ctx, o)
    table = res.table.set_index("system").reindex(order).reset_index()
    ctx.results["scores_alone"] = res
    spend = [c for c in _SPEND if c in table.columns]
    blocks: list[Block] = [Text(
        f"Each system on its own tasks: the mean over tasks (each task's runs averaged first), se = sd / sqrt(n "
        f"tasks) (Inspect's stderr, lm-eval's acc_stderr), and a {p.get('confidence_level', 0.95):.0%} interval: "
        "Wilson for one pass/fail run per task, t(n - 1) otherwise, CR1 t(G - 1) with clusters."
        + (f" Spend: {', '.join(spend)} in total over runs and per run (`*_per_run`); `*_missing` counts runs whose "
           "log does not record it." if spend else " The logs record no tokens, cost or time.")),
        Table(table, floatfmt=".6g", csv="tables/scores.csv",
              key=("system", "n_tasks", "runs_per_task", "mean", "se", "ci_low", "ci_high", "tokens_per_run",
                   "cost_per_run", "time_per_run"))]
    if res.pass_k is not None and len(res.pass_k):
        blocks.append(Table(res.pass_k, floatfmt=".4g", csv="tables/score_pass_k.csv"))
    return Section("Each system alone", tuple(blocks))


TASK_SECTIONS = (score_section, per_task_section)
