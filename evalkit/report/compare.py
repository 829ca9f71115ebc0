"""Report sections of ``evalkit compare``: runs read, paired comparisons, reliability, power plan.

The sections read ``ctx.results["outcomes"]`` (one row per system, task and run: ``system,
task, session, score`` and the cluster column if any) and ``ctx.params``: ``cluster``,
``test``, ``pairs`` (list of (a, b)), ``adjust``, ``alpha``, ``confidence_level``,
``n_resamples``, ``threshold``, ``noise``, ``ks`` and ``read`` (what the log reader counted).
:func:`compare_scores` turns the outcomes into the per-(task, trial) score table the existing
unit-of-analysis section takes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit._errors import list_ids
from evalkit._format import format_p
from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain, table_rows
from evalkit.stats.power import cluster_design
from evalkit.stats.reliability import reliability
from evalkit.stats.runs import compare_runs

__all__ = ["compare_scores", "runs_section", "comparison_section", "reliability_section", "plan_section",
           "COMPARE_SECTIONS"]


def compare_scores(outcomes: pd.DataFrame) -> pd.DataFrame:
    """``system, task, trial, score`` with trial = the run (session) id, for :func:`evalkit.report.unit_section`."""
    return outcomes.rename(columns={"session": "trial"})[["system", "task", "trial", "score"]].astype(
        {"system": str, "task": str, "trial": str, "score": float})


def _outcomes(ctx: ReportContext) -> pd.DataFrame | None:
    """The outcomes table: ``ctx.results["outcomes"]``, or ``ctx.params["outcomes"]`` as ``write_report`` passes it."""
    if "outcomes" not in ctx.results and isinstance(ctx.params.get("outcomes"), pd.DataFrame):
        ctx.results["outcomes"] = ctx.params["outcomes"]
    return ctx.results.get("outcomes")


def runs_section(ctx: ReportContext) -> Section | None:
    """Which logs were read, how many tasks and runs each system has, and the unmatched tasks."""
    o = _outcomes(ctx)
    if o is None:
        return None
    read = ctx.params.get("read") or {}
    items = []
    if read.get("files"):
        items.append("log files read: " + ", ".join(f"{n} {fmt}" for fmt, n in sorted(read["files"].items())))
    if read.get("skipped"):
        items.append(f"{len(read['skipped'])} file(s) of no known log format skipped inside folders "
                     f"({', '.join(read['skipped'][:3])}{' ...' if len(read['skipped']) > 3 else ''})")
    if read.get("unscored"):
        items.append(f"{len(read['unscored'])} session(s) without a score left out "
                     f"({list_ids(read['unscored'], limit=3, sep='; ')})")
    items.extend(plain(str(n)) for n in read.get("notes") or [])
    per = o.groupby("system", sort=False).agg(tasks=("task", "nunique"), runs=("session", "nunique"),
                                              outcomes=("score", "size"), mean=("score", "mean")).reset_index()
    all_tasks = set(o["task"])
    for system, tasks in o.groupby("system", sort=False)["task"]:
        missing = sorted(all_tasks - set(tasks))
        if missing:
            items.append(f"{plain(system)} has no run of {len(missing)} task(s) another system ran: "
                         f"{plain(list_ids(missing))}")
    if not any("no run of" in i for i in items) and o["system"].nunique() > 1:
        items.append(f"every system ran the same {len(all_tasks)} tasks")
    return Section("Runs compared", (
        Text("One outcome per run of a task: the final score of each session (an Inspect sample epoch, a "
             "SWE-agent trajectory with its SWE-bench verdict, an lm-eval document, a JSONL session)."),
        Bullets(tuple(items)), Table(per, floatfmt=".4g", csv="tables/runs.csv"),
    ))


def comparison_section(ctx: ReportContext) -> Section | None:
    """Per-task paired differences with (clustered) SEs, the paired test per pair, Holm over pairs."""
    o = _outcomes(ctx)
    if o is None or o["system"].nunique() < 2:
        return None
    p = ctx.params
    res = compare_runs(o, pairs=p.get("pairs") or "all", cluster=p.get("cluster"), test=p.get("test", "auto"),
                       adjust=p.get("adjust", "holm"), alpha=p.get("alpha", 0.05),
                       confidence_level=p.get("confidence_level", 0.95), n_resamples=p.get("n_resamples", 9999),
                       rng=ctx.seed)
    ctx.results["pairwise"] = res  # the methods section lists its multiplicity family
    t = res.table
    from evalkit.report.findings import comparison_findings

    comparison_findings(ctx.headline, t, section="Paired comparison over shared tasks", alpha=p.get("alpha", 0.05),
                        level=p.get("confidence_level", 0.95), adjust=p.get("adjust", "holm"), unit="tasks",
                        n_col="n_tasks", what="mean per-task difference", source="compare")
    cols = [c for c in ("a", "b", "n_tasks", "only_a", "only_b", "runs_a", "runs_b", "mean_a", "mean_b", "diff",
                        "se", "df", "ci_low", "ci_high", "test", "pvalue", "pvalue_adjusted", "reject", "note")
            if c in t.columns]
    se_what = (f"the cluster-robust (CR1) SE over clusters of `{res.cluster}` with G - 1 df" if res.cluster
               else "the CLT SE over tasks with n - 1 df")
    blocks: list = [
        Text(f"Differences are candidate − baseline (the later RUN minus the earlier one, or each system minus "
             f"--baseline) on the tasks both systems ran. Each system's runs of a task are averaged "
             f"first (the task is the unit, Miller 2024); the interval is a {p.get('confidence_level', 0.95):.0%} "
             f"t interval with {se_what}. Test: McNemar's exact test when every task has one pass/fail run per "
             "system and no clusters; otherwise the sign-flip permutation test of the mean difference"
             + (" flipping whole clusters" if res.cluster else "") + "."),
        Text(res.unmatched_report),
    ]
    if res.multiplicity is not None:
        blocks.append(Text(f"Multiplicity correction: {res.multiplicity.description}."))
    blocks.append(Table(labelled_pairs(t[cols].rename(columns={"pvalue_adjusted": f"p_{p.get('adjust', 'holm')}"})),
                        floatfmt=".4g", csv="tables/run_comparisons.csv", data=labelled_pairs(t),
                        key=("baseline", "candidate", DIFF_LABEL, "ci_low", "ci_high", "n_tasks", "pvalue",
                             f"p_{p.get('adjust', 'holm')}", "reject")))
    if "ci_low" in t and t["ci_low"].notna().any():
        from evalkit.plots.stats import plot_forest

        shown = t.dropna(subset=["ci_low"])
        ax = plot_forest(shown.assign(pair=shown["a"].astype(str) + " − " + shown["b"].astype(str)), label="pair",
                         xlabel="mean per-task difference in score (candidate − baseline)")
        blocks.append(ctx.save_figure(ax, "run_comparisons", "Per-task paired differences with their intervals; "
                                                             f"red: significant after {p.get('adjust', 'holm')}."))
    return Section("Paired comparison over shared tasks", tuple(blocks))


def reliability_section(ctx: ReportContext) -> Section | None:
    """pass@k and pass^k, flaky tasks, and run-to-run vs task-to-task variance."""
    o = _outcomes(ctx)
    if o is None:
        return None
    p = ctx.params
    try:
        rel = reliability(o, ks=p.get("ks"), threshold=p.get("threshold"), noise=p.get("noise", 0.05),
                          alpha=p.get("alpha", 0.05), confidence_level=p.get("confidence_level", 0.95))
    except ValueError as exc:
        return Section("Reliability across runs", (Text(f"Not computed: {plain(str(exc))}"),))
    ctx.results["reliability"] = rel
    if rel.counts["n"].max() < 2:
        return Section("Reliability across runs", (Text(
            "Every task has a single run per system: pass@k, pass^k and flakiness need repeated runs "
            "(Inspect --epochs, or several runs of the harness)."),))
    from evalkit.plots.runs import plot_pass_k

    fig = ctx.save_figure(plot_pass_k(rel.pass_k), "pass_k", "pass@k (solid: at least one of k runs passes) and "
                          "pass^k (dashed: all k pass) per system, unbiased estimators averaged over tasks, "
                          "with t intervals over tasks.")
    flaky = rel.flaky
    summary = flaky.groupby("system").agg(tasks=("task", "size"), flaky=("flaky", "sum"),
                                          more_than_noise=("more_than_noise", "sum"),
                                          mean_flip_rate=("flip_rate", "mean")).reset_index()
    flagged = flaky[flaky["more_than_noise"]].sort_values(["system", "pvalue"])
    for r in summary.itertuples():
        if r.more_than_noise:
            ctx.headline.caveat(f"{int(r.more_than_noise)} of {int(r.tasks)} tasks of {plain(r.system)} flip between runs "
                                f"more than a {rel.noise:g} glitch rate explains (exact binomial, BH): their outcome "
                                "depends on the run, not only on the system.",
                                section="Reliability across runs", severity="low", source="reliability")
    v = rel.variance
    lines = []
    for r in table_rows(v):
        if getattr(r, "note", ""):
            lines.append(f"{plain(r.system)}: {plain(r.note)}.")
            continue
        lines.append(f"{plain(r.system)}: {r.icc:.0%} of the outcome variance is task-to-task, {1 - r.icc:.0%} run-to-run "
                     f"(F = {r.F:.3g}, p = {format_p(r.pvalue)} against pure binomial noise). SE of the mean {r.se_mean:.3g}; "
                     f"twice the tasks -> {r.se_2x_tasks:.3g}, twice the runs -> {r.se_2x_runs:.3g}: per run spent, "
                     f"new tasks buy {r.tasks_vs_runs:.3g}x the precision of more runs of the same tasks.")
    return Section("Reliability across runs", (
        Text("Pass/fail per run" + (f" (a pass: score >= {p['threshold']:g})" if p.get("threshold") is not None else "")
             + ". pass@k = mean over tasks of 1 - C(n-c, k)/C(n, k); pass^k = mean of C(c, k)/C(n, k) (n runs, "
             "c passes of a task); tasks with fewer than k runs are left out and counted."),
        Table(rel.pass_k, floatfmt=".4g", csv="tables/pass_k.csv"), fig,
        Text(f"A task is flaky when its runs disagree; its flip rate 2c(n-c)/(n(n-1)) estimates the chance that "
             f"two runs disagree. Tested against a stable task with a per-run glitch rate of {rel.noise:g} (exact "
             "binomial, Benjamini-Hochberg over each system's tasks):"),
        Table(summary, floatfmt=".3g", csv="tables/flaky_summary.csv"),
        Table(flagged[["system", "task", "n", "c", "flip_rate", "pvalue", "pvalue_bh"]].head(30), floatfmt=".3g",
              csv="tables/flaky_tasks.csv", data=flaky),
        Text("Variance components (one-way random-effects ANOVA on pass/fail): " + " ".join(lines)),
        Table(v, floatfmt=".4g", csv="tables/variance_components.csv"),
    ))


def plan_section(ctx: ReportContext) -> Section | None:
    """Power for the next run, from the observed pass rate and intra-task correlation."""
    rel = ctx.results.get("reliability")
    o = _outcomes(ctx)
    if rel is None or o is None or rel.variance.get("icc") is None or rel.variance["icc"].isna().all():
        return None
    p = ctx.params
    v = rel.variance.dropna(subset=["icc"])
    base = float(np.clip(v["mean"].mean(), 0.01, 0.99))
    icc = float(np.clip(v["icc"].mean(), 0.0, 0.99))
    n_tasks = int(v["n_tasks"].min())
    runs = max(1, int(round(v["runs_per_task"].mean())))
    if n_tasks < 3:
        return None
    plan = cluster_design(n_tasks, runs, base_rate=base, icc=icc, effect=p.get("effect"),
                          alpha=p.get("alpha", 0.05), power=p.get("power", 0.8))
    return Section("Power for the next run", (
        Text(f"With the observed pass rate {base:.3g} and intra-task correlation {icc:.3g} (mean over systems), "
             f"{n_tasks} tasks and {runs} run(s) per task: the minimum detectable difference in pass rate at "
             f"{p.get('power', 0.8):.0%} power, alpha = {p.get('alpha', 0.05):g}"
             + (f", and the tasks or runs needed for a difference of {p['effect']:g}" if p.get("effect") else "")
             + ". The paired and independent rows bound the truth (task effects fully shared or not at all). "
               "`evalkit compare --plan` prints this table before any run."),
        Table(plan, floatfmt=".4g", csv="tables/power_plan.csv"),
    ))


from evalkit.report.tasks import DIFF_LABEL, labelled_pairs, per_task_section, score_section  # noqa: E402

COMPARE_SECTIONS = (runs_section, comparison_section, score_section, per_task_section, reliability_section,
                    plan_section)
