"""The judge-diagnostics section of the report, and the warnings ``summary`` / ``rate`` print.

Whenever a comparison log has positions (``left_right``: ``player_a`` is the left answer;
Arena: ``model_a`` shown first) or judge names, :func:`judge_section` reports per judge:
the position bias (exact binomial test on the decisive votes, and the position-adjusted odds
of the left answer between equals), self-preference when a judge is also a contestant (its
model's rating with and without the judge's votes), and agreement between judges on shared
(item, pair) units. :func:`judge_warnings` condenses the same findings into lines for stderr;
:func:`cluster_warning` flags cluster-robust or cluster-bootstrap intervals resting on fewer
than ~30 clusters.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit._cluster import MIN_CLUSTERS, SmallClusterWarning, cluster_warning
from evalkit._format import format_count, format_p
from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain, table_rows
from evalkit.report.headline import Headline
from evalkit.stats.judges import (
    POSITION_FORMATS,
    agreement_table,
    judge_panels,
    position_adjusted_ratings,
    position_bias_table,
    position_warning,
    self_preference_table,
    self_rating_warnings,
)

__all__ = ["SmallClusterWarning", "judge_section", "judge_warnings", "cluster_warning", "MIN_CLUSTERS",
           "position_findings", "self_preference_findings"]

#: Key columns of the self-preference table (the rest under "all columns").
SELF_KEY = ("judge", "model", "games_judged", "judge_win_rate", "self_preference", "self_ci_low", "self_ci_high",
            "self_pvalue", "rank_all", "rank_without")


def _has_positions(fmt: str | None, params: dict) -> bool:
    if params.get("positions") is not None:
        return bool(params["positions"])
    return fmt in POSITION_FORMATS


def _position_lines(table: pd.DataFrame, level: float) -> list[str]:
    out = []
    for r in table_rows(table):
        if pd.isna(r.pvalue):
            out.append(f"**{plain(r.judge)}**: {plain(r.note)}")
            continue
        decisive = r.left + r.right
        side = r.favours
        share = r.left_share if side != "right" else 1 - r.left_share
        test, _, ci_name = str(r.test).partition(", ")
        line = (f"**{plain(r.judge)}** favours the **{side}** answer: {share:.1%} of {decisive} decisive votes "
                f"({r.ties} ties left out), {test} p = {format_p(r.pvalue)}; left share {r.left_share:.3f} "
                f"({level:.0%} {ci_name.removesuffix(' interval')} {r.ci_low:.3f}..{r.ci_high:.3f})")
        if not pd.isna(r.adj_odds_left):
            line += (f"; position-adjusted odds of the left answer between equals {r.adj_odds_left:.3g} "
                     f"({r.adj_odds_low:.3g}..{r.adj_odds_high:.3g})")
        note = f" Note: {r.note}." if isinstance(r.note, str) and r.note else ""
        out.append(line + "." + (f" Raters: {r.raters}." if isinstance(r.raters, str) and r.raters else "") + note)
    return out


def _self_lines(table: pd.DataFrame, judges: list[str]) -> list[str]:
    if table.empty:
        return [f"No judge name ({', '.join(map(plain, judges))}) matches a contestant: no self-preference to check."]
    out = []
    for r in table_rows(table):
        head = (f"Self-preference: judge **{plain(r.judge)}** is also a contestant, **{plain(r.model)}** ({r.match}); in "
                f"{r.games_judged} of its games it judged, it gave {plain(r.model)} a win rate of {r.judge_win_rate:.1%}.")
        if pd.isna(r.elo_all):
            head += f" Rating with all votes: {plain(r.note_all)}."
        else:
            head += (f" With all votes: Elo {r.elo_all:.0f} ({r.ci_low_all:.0f}..{r.ci_high_all:.0f}), rank "
                     f"{r.rank_all:.0f} of {r.n_models_all:.0f}.")
        if pd.isna(r.elo_without):
            head += (f" Without this judge's votes: {plain(r.note_without)} — self-preference cannot be separated from "
                     "quality here; add another judge's log of the same pairs (e.g. the crowd votes) to compare.")
        else:
            head += (f" Without this judge's votes: Elo {r.elo_without:.0f} ({r.ci_low_without:.0f}.."
                     f"{r.ci_high_without:.0f}), rank {r.rank_without:.0f} of {r.n_models_without:.0f}.")
        if pd.notna(getattr(r, "self_pvalue", np.nan)):
            head += (f" On the comparisons that other judges rated too, it scored {plain(r.model)} "
                     f"{r.self_preference:+.3f} above them ({r.self_ci_low:+.3f}..{r.self_ci_high:+.3f}; "
                     f"{r.self_test}; p = {r.self_pvalue:.2g}).")
        out.append(head)
    return out


def position_findings(headline: Headline, table: pd.DataFrame, *, alpha: float = 0.05,
                      section: str = "Judge diagnostics") -> None:
    """A finding per judge: its position bias with the share, the decisive votes and the p-value
    (high severity when significant at ``alpha``)."""
    for r in table_rows(table):
        if pd.isna(r.pvalue):
            continue
        decisive = int(r.left + r.right)
        side = r.favours if r.pvalue < alpha else ("right" if r.left_share < 0.5 else "left")
        share = r.left_share if side == "left" else 1 - r.left_share
        if r.pvalue < alpha:
            headline.finding(f"Judge **{plain(r.judge)}** favours the **{side}** answer: {share:.1%} of "
                             f"{format_count(decisive)} decisive votes, exact binomial p = {format_p(r.pvalue)}.",
                             section=section, severity="high", source="judge")
        else:
            headline.finding(f"Judge **{plain(r.judge)}** shows no significant position bias: {share:.1%} of "
                             f"{format_count(decisive)} decisive votes went to the {side} answer, p = {format_p(r.pvalue)}.",
                             section=section, severity="low", source="judge")


def self_preference_findings(headline: Headline, table: pd.DataFrame, *, section: str = "Judge diagnostics") -> None:
    """A finding per judge that is also a contestant: its own model's win rate in the games it
    judged, its rank, and the rating without the judge's votes when other votes exist."""
    for r in table_rows(table):
        text = (f"Judge **{plain(r.judge)}** rates its own model **{plain(r.model)}**: a win rate of "
                f"{r.judge_win_rate:.1%} in the {format_count(r.games_judged)} games it judged")
        if not pd.isna(r.elo_all):
            text += f" (rank {int(r.rank_all)} of {int(r.n_models_all)} with all votes)"
        if pd.isna(r.elo_without):
            text += ("; with no other judge's votes, self-preference cannot be separated from quality "
                     "(add another judge's log of the same pairs).")
        else:
            text += (f"; without its votes the model ranks {int(r.rank_without)} of {int(r.n_models_without)} "
                     f"(Elo {r.elo_without:.0f}, {r.ci_low_without:.0f} to {r.ci_high_without:.0f}).")
        headline.finding(text, section=section, severity="high", source="judge")


def judge_section(ctx: ReportContext) -> Section | None:
    """Judge diagnostics: position bias, self-preference, agreement (see the module docstring)."""
    frame = ctx.comparisons
    if frame is None:
        return None
    fmt = getattr(ctx.read_reports[0], "format", None) if ctx.read_reports else None
    positions = _has_positions(fmt, ctx.params)
    has_judges = "judge" in frame.columns or ctx.params.get("judge") is not None or fmt in POSITION_FORMATS
    if not (positions or has_judges):
        return None
    level = ctx.params["confidence_level"]
    panels = judge_panels(frame, judge=ctx.params.get("judge"))
    judges = sorted(panels.unique())
    blocks: list = [Text(f"Judges: {', '.join(map(plain, judges))} (from the {'judge column' if 'judge' in frame else 'file name'}"
                         "; pass --judge NAME to name a single judge).")]
    results: dict = {}
    if positions:
        pos = position_bias_table(frame, panels, level=level)
        results["position_bias"] = pos
        position_findings(ctx.headline, pos, alpha=float(ctx.params.get("alpha", 0.05)))
        blocks += [Text("**Position bias.** `player_a` is the answer shown first (left). Exact binomial test of left "
                        "wins among decisive votes, or, when several votes fall on one comparison (the same item "
                        "and pair), a CR1 t-test clustered by comparison: those votes are not independent (the "
                        "`test` column says which); the odds ratio is exp(gamma) of the position-adjusted "
                        "Bradley-Terry fit (`evalkit rate --adjust-position`), whose ratings do not depend on the "
                        "side a model was shown on."),
                   Bullets(tuple(_position_lines(pos, level))),
                   Table(pos, floatfmt=".4g", csv="tables/position_bias.csv")]
        try:
            adj = position_adjusted_ratings(frame, panels, plain=ctx.results.get("leaderboard"), level=level)
        except ValueError as exc:
            blocks.append(Text(f"No position-adjusted ratings: {str(exc).split('.')[0]}."))
        else:
            results["position_adjusted"] = adj
            moved = adj.iloc[int(adj["rank_change"].abs().to_numpy().argmax())]
            blocks += [Text(f"How far the position bias moved the ratings: Elo with a left advantage per judge "
                            f"({adj.attrs['interval']}) next to the plain Elo; the largest rank change is "
                            f"{plain(moved['model'])} ({int(moved['rank'])} -> {int(moved['rank_adjusted'])}). Full table: "
                            "`tables/position_adjusted.csv`."),
                       Table(adj.head(int(ctx.params.get("max_players", 20))), floatfmt=".4g",
                             csv="tables/position_adjusted.csv", data=adj)]
    else:
        blocks.append(Text(f"Position bias: not tested — the answer order is not known for format {fmt!r}."))
    selfp = self_preference_table(frame, panels, level=level)
    results["self_preference"] = selfp
    self_preference_findings(ctx.headline, selfp)
    blocks.append(Bullets(tuple(_self_lines(selfp, judges))))
    if not selfp.empty:
        blocks.append(Table(selfp, floatfmt=".4g", csv="tables/self_preference.csv", key=SELF_KEY))
    agree = agreement_table(frame, panels)
    results["agreement"] = agree
    blocks += [Text("**Agreement** on shared (item, pair) units; label = which of the two won, or a tie. Cohen's "
                    "kappa for two judges, Fleiss' kappa (units with the most common number of raters) and "
                    "Krippendorff's alpha (all units rated at least twice) for more."),
               Table(agree, floatfmt=".4g", csv="tables/agreement.csv")]
    ctx.results["judges"] = results
    return Section("Judge diagnostics", tuple(blocks))


def judge_warnings(frame: pd.DataFrame, fmt: str | None, *, judge: str | None = None, alpha: float = 0.05,
                   command: str = "rate") -> list[str]:
    """Lines for stderr: significant position bias per judge and judges that rate themselves."""
    panels = judge_panels(frame, judge=judge)
    out = []
    if fmt in POSITION_FORMATS:
        pos = position_bias_table(frame, panels)
        for r in table_rows(pos.dropna(subset=["pvalue"])):
            if r.pvalue < alpha:
                out.append(position_warning(r.judge, r.left, r.right, r.pvalue, str(r.test).split(",")[0]))
    players = sorted(set(frame["player_a"]) | set(frame["player_b"]))
    return out + self_rating_warnings(panels.unique(), players)
