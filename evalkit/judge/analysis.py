"""From verdict records to the numbers of a judge run: the judge logs in evalkit's canonical format,
per-task Bradley–Terry scores with intervals, the top-k with a statement of confidence, the judge's
position bias, the system-level comparison and the execution-noise flip rate.

All of it reads the canonical comparisons frame (``player_a`` = the transcript shown first,
``outcome`` = its score: 1 win, 0.5 tie, 0 loss; ``item`` = the task), so the log written by
``evalkit judge`` is read back by ``evalkit rate`` / ``report`` exactly as these functions read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["judged_frame", "system_frame", "task_rankings", "position_bias", "system_comparison",
           "execution_noise", "TaskRanking"]

_SCORE = {"first": 1.0, "second": 0.0, "tie": 0.5}


def judged_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Transcript-level comparisons in the canonical format (unparseable and failed calls left out).

    Columns: ``player_a`` (first-shown transcript id), ``player_b``, ``outcome``, ``weight``, ``item``
    (task), ``judge``, ``system_a``, ``system_b``, ``repeat``, ``key``.
    """
    rows = [{"player_a": r["first"], "player_b": r["second"], "outcome": _SCORE[r["verdict"]], "weight": 1.0,
             "item": r["task"], "judge": r["judge"], "system_a": r["first_system"], "system_b": r["second_system"],
             "repeat": int(r.get("repeat", 0)), "key": r["key"]}
            for r in records if r["verdict"] in _SCORE]
    cols = ["player_a", "player_b", "outcome", "weight", "item", "judge", "system_a", "system_b", "repeat", "key"]
    return pd.DataFrame(rows, columns=cols)


def system_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparisons between transcripts of different systems, with the systems as players
    (what ``evalkit rate`` / ``report`` rate; the task stays the ``item``)."""
    cross = frame[frame["system_a"] != frame["system_b"]]
    return pd.DataFrame({"player_a": cross["system_a"].astype(str), "player_b": cross["system_b"].astype(str),
                         "outcome": cross["outcome"], "weight": cross["weight"], "item": cross["item"],
                         "judge": cross["judge"], "transcript_a": cross["player_a"],
                         "transcript_b": cross["player_b"]}).reset_index(drop=True)


@dataclass(frozen=True)
class TaskRanking:
    """Per-transcript scores and the per-task top-k statements."""

    scores: pd.DataFrame  # task, transcript, system, run, theta, se, ci_low, ci_high, rank, p_top_k, in_top_k
    summary: pd.DataFrame  # task, n, k, calls, top_k_set_prob, confident_in, confident_out, uncertain, statement


def _fit_task(sub: pd.DataFrame) -> tuple[Any, str]:
    from evalkit.ratings import aggregate, fit_bt

    counts = aggregate(sub[["player_a", "player_b", "outcome", "weight"]])
    try:
        return fit_bt(counts, ties="half"), "maximum likelihood"
    except ValueError:
        return fit_bt(counts, ties="half", l2=0.1), ("MAP with an L2 prior of 0.1 (the maximum-likelihood scores do "
                                                     "not exist: a transcript won or lost every comparison)")


def task_rankings(frame: pd.DataFrame, transcripts: Mapping[str, Any], k_for: Callable[[int], int | None], *,
                  confidence_level: float = 0.95, rng: int = 0, n_draws: int = 2000,
                  calls: Mapping[str, int] | None = None) -> TaskRanking:
    """Bradley–Terry scores of each task's transcripts with sandwich Wald intervals, each transcript's
    probability of being in the top k, and the probability that the estimated top-k set is the true one
    (both from ``n_draws`` Gaussian draws of the fit's covariance, seeded by ``rng``)."""
    from scipy import stats

    from evalkit.ratings.ranks import gaussian_replicates

    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    rows, summary = [], []
    by_task: dict[str, list[str]] = {}
    for tid, t in transcripts.items():
        by_task.setdefault(t.task, []).append(tid)
    for task, ids in by_task.items():
        sub = frame[frame["item"] == task]
        n = len(ids)
        k = k_for(n)
        if sub.empty or k is None:
            summary.append({"task": task, "n": n, "k": k, "calls": (calls or {}).get(task, 0), "fit": "",
                            "statement": "not judged" if sub.empty else "a single transcript"})
            continue
        fit, how = _fit_task(sub)
        theta = dict(zip(fit.players, fit.theta, strict=True))
        cov = fit.covariance("sandwich")
        se = dict(zip(fit.players, np.sqrt(np.clip(np.diag(cov), 0, None)), strict=True))
        draws = gaussian_replicates(fit.theta, cov, n_draws=n_draws, rng=rng)
        players = list(fit.players)
        est_order = np.argsort(-fit.theta, kind="stable")
        m = len(players)
        kk = min(k, m - 1) if m > 1 else m
        top_est = set(est_order[:kk].tolist())
        ranks_draw = np.argsort(np.argsort(-draws, axis=1, kind="stable"), axis=1) + 1
        in_top = ranks_draw <= kk
        p_in = in_top.mean(axis=0)
        set_prob = float(np.mean([set(np.flatnonzero(row).tolist()) == top_est for row in in_top]))
        rank = np.empty(m, dtype=int)
        rank[est_order] = np.arange(1, m + 1)
        for p_idx, pid in enumerate(players):
            t = transcripts[pid]
            rows.append({"task": task, "transcript": pid, "system": t.system, "run": t.run,
                         "theta": theta[pid], "se": se[pid], "ci_low": theta[pid] - z * se[pid],
                         "ci_high": theta[pid] + z * se[pid], "rank": int(rank[p_idx]),
                         "p_top_k": float(p_in[p_idx]), "in_top_k": bool(p_idx in top_est)})
        unjudged = sorted(set(ids) - set(players))
        conf_in = int((p_in >= 0.95).sum())
        conf_out = int((p_in <= 0.05).sum())
        unsure = m - conf_in - conf_out
        statement = (f"top {kk} of {n}: {conf_in} confidently in (P >= 0.95), {conf_out} confidently out (P <= 0.05), "
                     f"{unsure} uncertain; P(the estimated top {kk} is exactly the true top {kk}) = {set_prob:.2f}"
                     + (f"; {len(unjudged)} transcript(s) never judged" if unjudged else ""))
        summary.append({"task": task, "n": n, "k": kk, "calls": (calls or {}).get(task, len(sub)), "fit": how,
                        "top_k_set_prob": set_prob, "confident_in": conf_in, "confident_out": conf_out,
                        "uncertain": unsure, "statement": statement})
    scores = pd.DataFrame(rows)
    if not scores.empty:
        scores = scores.sort_values(["task", "rank"], kind="stable").reset_index(drop=True)
    return TaskRanking(scores=scores, summary=pd.DataFrame(summary))


def position_bias(frame: pd.DataFrame, *, confidence_level: float = 0.95) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The judge's preference for the first-shown transcript: per task and overall, the share of decisive
    verdicts won by the first-shown one (exact binomial test, ties left out and counted), and the
    order consistency (share of pairs judged both ways whose two verdicts agree once the order is undone)."""
    from evalkit.stats.agreement import position_bias_test

    def one(sub: pd.DataFrame) -> dict[str, Any]:
        lab = np.where(sub["outcome"] == 1.0, "left", np.where(sub["outcome"] == 0.0, "right", "tie"))
        first, second = int((lab == "left").sum()), int((lab == "right").sum())
        out: dict[str, Any] = {"judgements": len(sub), "first_wins": first, "second_wins": second,
                               "ties": int((lab == "tie").sum())}
        if first + second:
            res = position_bias_test(lab)
            lo, hi = res.confidence_interval(confidence_level)
            out.update(first_share=res.estimate, ci_low=lo, ci_high=hi, pvalue=res.pvalue)
        else:
            out.update(first_share=np.nan, ci_low=np.nan, ci_high=np.nan, pvalue=np.nan)
        a, b = sub["player_a"].astype(str), sub["player_b"].astype(str)
        lo_id = np.where(a < b, a, b)
        hi_id = np.where(a < b, b, a)
        score_lo = np.where(a < b, sub["outcome"], 1 - sub["outcome"])
        both = pd.DataFrame({"x": lo_id, "y": hi_id, "first_lo": a.to_numpy() < b.to_numpy(),
                             "s": score_lo, "r": sub["repeat"].to_numpy()})
        g = both.groupby(["x", "y", "r"])
        paired = g.filter(lambda d: d["first_lo"].nunique() == 2)
        if len(paired):
            agree = paired.groupby(["x", "y", "r"])["s"].agg(lambda s: float(s.nunique() == 1))
            out.update(pairs_both_orders=int(agree.size), order_consistency=float(agree.mean()))
        else:
            out.update(pairs_both_orders=0, order_consistency=np.nan)
        return out

    table = pd.DataFrame([{"task": str(task), **one(sub)} for task, sub in frame.groupby("item", sort=False)])
    overall = one(frame) if len(frame) else {}
    return table, overall


def system_comparison(frame: pd.DataFrame, *, confidence_level: float = 0.95,
                      systems: list[str] | None = None) -> dict[str, Any]:
    """Across tasks: the systems' Bradley–Terry leaderboard on the cross-system verdicts (clustered by task),
    and per pair of systems the per-task win rate of the second over the first (mean over tasks with a t
    interval, and a sign test over tasks: the task is the unit)."""
    from evalkit.ratings import leaderboard
    from evalkit.stats import sign_test
    from evalkit.stats.means import mean_se

    sf = system_frame(frame)
    out: dict[str, Any] = {"frame": sf}
    names = systems or list(dict.fromkeys(list(sf["player_a"]) + list(sf["player_b"])))
    if len(names) < 2 or sf.empty:
        out["note"] = "one system only: no system-level comparison (the per-task rankings are the result)"
        return out
    n_tasks = sf["item"].nunique()
    try:
        board = leaderboard(sf, cluster="item" if n_tasks >= 2 else None, confidence_level=confidence_level)
        out["leaderboard"] = board
    except ValueError as exc:
        out["leaderboard_note"] = str(exc)
    rows = []
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            a, b = names[x], names[y]
            m1 = sf[(sf["player_a"] == b) & (sf["player_b"] == a)]
            m2 = sf[(sf["player_a"] == a) & (sf["player_b"] == b)]
            per = pd.concat([m1.assign(s=m1["outcome"]), m2.assign(s=1 - m2["outcome"])])
            if per.empty:
                continue
            w = per.groupby("item")["s"].mean()
            row: dict[str, Any] = {"a": a, "b": b, "tasks": int(w.size), "judgements": len(per),
                                   "win_rate_b": float(w.mean()), "tasks_b_ahead": int((w > 0.5).sum()),
                                   "tasks_a_ahead": int((w < 0.5).sum()), "tasks_even": int((w == 0.5).sum())}
            if w.size >= 2 and w.std() > 0:
                e = mean_se(w.to_numpy(), confidence_level=confidence_level)
                row["ci_low"], row["ci_high"] = e.confidence_interval()
            if (w != 0.5).any():
                st = sign_test(w.to_numpy() - 0.5)
                row["sign_pvalue"] = st.pvalue
            rows.append(row)
    out["pairs"] = pd.DataFrame(rows)
    return out


def execution_noise(frame: pd.DataFrame, *, confidence_level: float = 0.95) -> dict[str, Any]:
    """Verdict flips between repeats of the same configuration: per task and pair of systems, the verdicts
    of different runs (transcript pairings A_i vs B_j) — how often two of them disagree; and, for the
    same transcript pair asked again (``repeat`` > 0), the judge's own flip rate."""
    from evalkit.stats.flips import unit_flip_rates, verdict_flip_rate

    out: dict[str, Any] = {}
    sf = system_frame(frame)
    if not sf.empty:
        a = np.where(sf["player_a"] < sf["player_b"], sf["player_a"], sf["player_b"])
        b = np.where(sf["player_a"] < sf["player_b"], sf["player_b"], sf["player_a"])
        s_hi = np.where(sf["player_a"] < sf["player_b"], 1 - sf["outcome"], sf["outcome"])  # score of b
        pairing = np.where(sf["player_a"] < sf["player_b"], sf["transcript_a"] + " ~ " + sf["transcript_b"],
                           sf["transcript_b"] + " ~ " + sf["transcript_a"])
        d = pd.DataFrame({"a": a, "b": b, "task": sf["item"], "pairing": pairing, "s": s_hi})
        per_pairing = d.groupby(["a", "b", "task", "pairing"])["s"].mean().reset_index()
        per_pairing["verdict"] = np.sign(per_pairing["s"] - 0.5).astype(int)
        try:
            out["runs"] = verdict_flip_rate(per_pairing, unit=["a", "b", "task"], confidence_level=confidence_level)
            out["runs_table"] = unit_flip_rates(per_pairing, unit=["a", "b", "task"])
        except ValueError:
            pass
    rep = frame[frame.groupby(["player_a", "player_b"])["repeat"].transform("nunique") > 1]
    if len(rep):
        out["judge"] = verdict_flip_rate(rep.assign(v=rep["outcome"]), unit=["player_a", "player_b"], verdict="v",
                                         confidence_level=confidence_level)
    return out
