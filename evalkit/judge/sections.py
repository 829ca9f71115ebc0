"""Report sections of ``evalkit judge``: the run, the per-task top-k, transcript scores, position bias,
the system-level comparison, execution noise, stopping, and the human-label correction.

They read ``ctx.params["judge_run"]`` (a :class:`evalkit.judge.runner.JudgeRun`) and what
:func:`evalkit.judge.command.analyse` put in ``ctx.results``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain

__all__ = ["JUDGE_SECTIONS"]


def _run(ctx: ReportContext) -> Any:
    return ctx.params.get("judge_run")


def run_section(ctx: ReportContext) -> Section | None:
    run = _run(ctx)
    if run is None:
        return None
    s = run.spec
    items = [
        f"judge: {plain(run.judge)}; prompt: {plain(s.prompt.source)} (SHA-256 {s.prompt.sha256[:12]}); strict "
        "parser (one VERDICT line or one [[A]]/[[B]]/[[C]] token; anything else is recorded as unparseable)",
        f"pairs: {s.pairs}" + (f" (top-k target {s.top_k})" if s.top_k else "") + "; "
        + ("every pair in both orders" if s.both_orders else "each pair in one random order"),
        f"judge calls: {run.calls_made} made by this run, {run.reused} reused from the log, {run.cached} from the "
        f"cache; {run.unparseable} unparseable, {run.errors} failed after {s.retries} retries"
        + (f"; budget {s.budget} calls" if s.budget else ""),
        f"tasks: {len(run.tasks)} ({len(run.skipped_tasks)} with a single transcript, not judged); order "
        + (f"random, seed {s.rng}" if s.task_order == "random" else "as in the files"),
    ]
    if run.log_dropped_bytes:
        items.append(f"the log ended in a partial line ({run.log_dropped_bytes} bytes, a write cut by a kill); dropped "
                     "and re-judged")
    return Section("Judge run", (Bullets(tuple(items)),))


def topk_section(ctx: ReportContext) -> Section | None:
    rk = ctx.results.get("rankings")
    if rk is None or rk.summary.empty:
        return None
    blocks: list[Any] = [
        Text("Per task, Bradley-Terry scores of its transcripts (ties as half a win; sandwich Wald intervals) and the "
             "top k. P(in top k) and P(the estimated set is exactly the true set) come from 2000 Gaussian draws of "
             "the fit's covariance."),
        Table(rk.summary, floatfmt=".3g", csv="tables/top_k.csv"),
    ]
    if not rk.scores.empty:
        blocks.append(Table(rk.scores.head(400), floatfmt=".3g", csv="tables/transcript_scores.csv", data=rk.scores))
    return Section("Top k per task", tuple(blocks))


def position_section(ctx: ReportContext) -> Section | None:
    pb = ctx.results.get("position")
    if pb is None:
        return None
    table, overall = pb
    if not overall:
        return None
    share = overall.get("first_share")
    text = (f"The first-shown transcript won {overall['first_wins']} and the second {overall['second_wins']} of the "
            f"decisive verdicts ({overall['ties']} ties): a share of {share:.3g} "
            f"[{overall['ci_low']:.3g}, {overall['ci_high']:.3g}] for the first (exact binomial p = "
            f"{overall['pvalue']:.3g}). Order consistency: {overall['order_consistency']:.3g} of "
            f"{overall['pairs_both_orders']} pairs judged both ways get the same verdict once the order is undone."
            if share == share else "No decisive verdict: position bias not estimated.")
    return Section("Position bias of the judge", (
        Text(text + " Judging both orders cancels the bias in the scores."),
        Table(table, floatfmt=".3g", csv="tables/position_bias.csv"),
    ))


def system_section(ctx: ReportContext) -> Section | None:
    sc = ctx.results.get("systems")
    if sc is None:
        return None
    if "note" in sc:
        return Section("System-level comparison", (Text(sc["note"]),))
    blocks: list[Any] = [Text(
        "Verdicts between transcripts of different systems, rated with the systems as players (Bradley-Terry Elo, "
        "intervals cluster-robust over tasks), and per pair the per-task win rate of b over a (ties half; mean over "
        "tasks with a t interval; sign test over tasks: the task is the unit).")]
    if "leaderboard" in sc:
        blocks.append(Table(sc["leaderboard"], floatfmt=".4g", csv="tables/system_leaderboard.csv"))
    if "leaderboard_note" in sc:
        blocks.append(Text(f"No leaderboard: {sc['leaderboard_note']}"))
    if "pairs" in sc and not sc["pairs"].empty:
        blocks.append(Table(sc["pairs"], floatfmt=".4g", csv="tables/system_pairs.csv"))
    return Section("System-level comparison", tuple(blocks))


def noise_section(ctx: ReportContext) -> Section | None:
    en = ctx.results.get("noise") or {}
    if not en:
        return None
    lines = []
    if "runs" in en:
        e = en["runs"]
        lo, hi = e.confidence_interval()
        lines.append(f"between runs (the same system, task and configuration run more than once): two pairings of "
                     f"runs on a task give different verdicts with probability {e.estimate:.3g} [{lo:.3g}, {hi:.3g}] "
                     f"({e.details['units']} task x system-pair units, {e.details['units_flipping']} with a flip)")
    if "judge" in en:
        e = en["judge"]
        lines.append(f"the judge itself, asked the same pair again: flip rate {e.estimate:.3g} over "
                     f"{e.details['units']} repeated pairs")
    blocks: list[Any] = [Bullets(tuple(lines))]
    if "runs_table" in en:
        blocks.append(Table(en["runs_table"], floatfmt=".3g", csv="tables/verdict_flips.csv"))
    return Section("Execution noise: verdict flips", tuple(blocks))


def stopping_section(ctx: ReportContext) -> Section | None:
    run = _run(ctx)
    st = ctx.results.get("stopping")
    if run is None or not run.settled.get("sequence"):
        return None
    seq = pd.DataFrame(run.settled["sequence"])
    blocks: list[Any] = [Text(
        "--stop-when-settled: after each task, the betting confidence sequence (Waudby-Smith & Ramdas 2024; "
        "tensorzero's construction) on the per-task win rate of "
        f"{plain(run.settled['systems'][1])} over {plain(run.settled['systems'][0])}; judging stops at the first "
        "task whose interval excludes 1/2. Valid at every look."), Table(seq, floatfmt=".4g", csv="tables/stopping.csv")]
    if st:
        blocks.append(Text(st))
    return Section("When the answer settled", tuple(blocks))


def _human(ctx: ReportContext) -> Section | None:
    from evalkit.report.human import human_section

    return human_section(ctx)


JUDGE_SECTIONS = (run_section, system_section, stopping_section, topk_section, position_section, noise_section,
                  _human)
