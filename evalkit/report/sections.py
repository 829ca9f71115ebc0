"""Section builders of the report. Each takes a :class:`ReportContext` and returns a
:class:`Section` (or None when its inputs are absent).

To add a section (e.g. Elo per budget for ``evalkit demo``), write a function of the same
shape and pass it to :func:`evalkit.report.write_report` via ``extra_sections=``::

    def budget_section(ctx: ReportContext) -> Section | None:
        curve = ctx.params["curve"]                      # anything you put in params
        ax = plot_curve(curve)                           # any plot_* returning an Axes
        fig = ctx.save_figure(ax, "elo_per_budget", "Self-Elo against budget, 95% bootstrap band.")
        return Section("Elo per budget", (Text("..."), fig, Table(curve.table, csv="tables/curve.csv")))

    write_report(out, comparisons=frame, extra_sections=[budget_section], params={"curve": curve})
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.report.document import Block, Bullets, ReportContext, Section, Table, Text, plain
from evalkit.stats import compare_systems, compare_units
from evalkit.stats.headtohead import head_to_head

__all__ = [
    "inputs_section", "leaderboard_section", "win_rate_section", "head_to_head_section", "pairwise_section", "unit_section",
    "methods_section", "DEFAULT_SECTIONS",
]


def inputs_section(ctx: ReportContext) -> Section | None:
    """What was read: files, rows kept and dropped by reason, players, items."""
    items: list[str] = []
    for r in ctx.read_reports:
        items.extend(plain(line.strip()) for line in str(r.to_text() if hasattr(r, "to_text") else r).splitlines())
    c = ctx.comparisons
    if c is not None:
        players = pd.unique(pd.concat([c["player_a"], c["player_b"]]))
        n_items = c["item"].nunique() if "item" in c and c["item"].notna().any() else 0
        items.append(f"comparisons: {len(c)} rows, {len(players)} players"
                     + (f", {n_items} items" if n_items else ""))
    t = ctx.results.get("traces")
    if t is not None:
        n_sess = len(t[["system", "task", "session"]].drop_duplicates())
        items.append(f"session table: {len(t)} submissions, {t['system'].nunique()} systems, "
                     f"{t['task'].nunique()} tasks, {n_sess} sessions")
    s = ctx.scores
    if s is not None:
        extra = ", ".join(f"{s[col].nunique()} {col}s" for col in ("task", "trial") if col in s)
        items.append(f"scores: {len(s)} rows, {s['system'].nunique()} systems"
                     + (f", {s['item'].nunique()} items" if "item" in s else "") + (f", {extra}" if extra else ""))
        base = ctx.params.get("scores_from_comparisons")
        if base:
            b = plain(repr(base))
            items.append(f"per-item scores were derived from the comparisons: every comparison involves {b}, "
                         f"so a system's score on an item is its outcome against {b} there (ties as half); "
                         f"{b} itself is rated in the leaderboard, not in the paired tests")
    if not items:
        return None
    return Section("Inputs", (Bullets(tuple(items)),))


#: Key columns of the leaderboard table (the rest are in its "all columns" table).
LEADERBOARD_KEY = ("rank", "model", "elo", "ci_low", "ci_high", "rank_low", "rank_high", "n")


def leaderboard_section(ctx: ReportContext) -> Section | None:
    """Bradley-Terry Elo leaderboard with intervals (evalkit.ratings.leaderboard); thin rows
    (fewer than :data:`evalkit.plots._layout.THIN_N` comparisons) are tagged *preliminary*."""
    if ctx.comparisons is None:
        return None
    from evalkit.ratings import leaderboard
    from evalkit.report.findings import THIN_N, leaderboard_findings, thin_mask

    p = ctx.params
    has_items = "item" in ctx.comparisons and ctx.comparisons["item"].notna().all()
    if has_items and p.get("n_resamples", 200) > 0:
        table = leaderboard(ctx.comparisons, interval="bootstrap", cluster="item", n_resamples=p.get("n_resamples", 200),
                            rng=ctx.seed, confidence_level=p["confidence_level"], progress=ctx.progress)
    else:
        table = leaderboard(ctx.comparisons, confidence_level=p["confidence_level"])
    ctx.results["leaderboard"] = table
    thin_n = int(p.get("thin_n", THIN_N))
    leaderboard_findings(ctx.headline, table, section="Leaderboard", thin_n=thin_n,
                         cluster="item" if has_items and p.get("n_resamples", 200) > 0 else None)
    from evalkit.plots.ratings import plot_leaderboard

    ax = plot_leaderboard(table, thin_n=thin_n)
    fig = ctx.save_figure(ax, "leaderboard", "Bradley-Terry Elo rating of each model (dot), best first, with its "
                                             f"{table.attrs.get('interval', 'confidence')} interval (whiskers); "
                                             f"hollow: preliminary (fewer than {thin_n} comparisons).")
    text = (f"Bradley-Terry ratings on the Elo scale (ties: {table.attrs.get('ties', 'half')}); interval: "
            f"{table.attrs.get('interval', '')}. Fit converged: {table.attrs.get('converged', 'n/a')}. "
            f"Ranks: {table.attrs.get('ranks', '')}; tie_group: models not distinguishable from their group's best. "
            f"Rows tagged *preliminary* rest on fewer than {thin_n} comparisons.")
    if has_items and p.get("n_resamples", 200) > 0:
        from evalkit.report.judge import cluster_warning

        text += " " + (cluster_warning(ctx.comparisons["item"].nunique(), "The bootstrap over items") or "")
    shown = table.copy()
    shown["flag"] = np.where(thin_mask(shown["n"], thin_n), "preliminary", "")
    return Section("Leaderboard", (Text(text), Table(shown, floatfmt=".4g", csv="tables/leaderboard.csv",
                                                      key=LEADERBOARD_KEY, tag="flag"), fig))


def win_rate_section(ctx: ReportContext) -> Section | None:
    """Head-to-head win rates (ties as half) of the top players as a heatmap."""
    if ctx.comparisons is None:
        return None
    from evalkit.ratings import aggregate, win_rate_matrix

    mat = win_rate_matrix(aggregate(ctx.comparisons))
    order = list(ctx.results["leaderboard"]["model"]) if "leaderboard" in ctx.results else list(mat.index)
    k = int(ctx.params.get("max_players", 20))
    met = mat.notna().sum(axis=1)
    # hubs (players who met at least half of the others, e.g. AlpacaEval's baseline) are always shown
    hubs = [m for m in order if met[m] >= (len(order) - 1) / 2]
    top = hubs + [m for m in order if m not in hubs][: max(k - len(hubs), 0)]
    top = [m for m in order if m in top]
    mat = mat.loc[top, top]
    share_met = float(np.triu(mat.notna().to_numpy(), 1).sum() / max(len(top) * (len(top) - 1) / 2, 1))
    from evalkit.plots.ratings import plot_win_rate_heatmap

    ax = plot_win_rate_heatmap(mat)
    shown = f"{len(top)} of {len(order)}" if len(order) > len(top) else f"all {len(top)}"
    hub_txt = f" (always including {', '.join(map(str, hubs))}, who met most players)" if hubs else ""
    fig = ctx.save_figure(ax, "win_rates", f"Head-to-head win rate of the row player against the column player (ties "
                                           f"as half), {shown} players by rating{hub_txt}; grey hatched cells: the two "
                                           "players never met.")
    text = Text(f"{share_met:.0%} of the pairs shown met directly; the others are compared only through the "
                "Bradley-Terry model (leaderboard above) or through paired tests on shared items (below).")
    return Section("Head-to-head win rates", (text, fig))


def head_to_head_section(ctx: ReportContext) -> Section | None:
    """Exact binomial tests of direct games between the top players (logs without a shared baseline)."""
    if ctx.comparisons is None or ctx.params.get("scores_from_comparisons"):
        return None
    p = ctx.params
    order = list(ctx.results["leaderboard"]["model"]) if "leaderboard" in ctx.results else None
    k = int(p.get("max_players", 20))
    if order is not None:
        order = order[:k]
    pairs = p["pairs"] if isinstance(p.get("pairs"), str) else "all"
    cluster = "item" if "item" in ctx.comparisons and ctx.comparisons["item"].notna().all() else None
    table, mult = head_to_head(ctx.comparisons, pairs=pairs, order=order, ties=p.get("tie_policy", "drop"),
                               adjust=p["adjust"], alpha=p["alpha"], confidence_level=p["confidence_level"],
                               cluster=cluster)
    ctx.results["head_to_head"] = (table, mult)
    if mult is not None and "reject" in table and len(table):
        from evalkit.report.findings import ADJUST_NAMES

        n_sig = int(table["reject"].fillna(False).astype(bool).sum())
        ctx.headline.finding(f"Direct games: {n_sig} of {int(table['pvalue'].notna().sum())} tested pairs of the top "
                             f"players differ significantly after {ADJUST_NAMES.get(p['adjust'], p['adjust'])} "
                             f"(alpha = {p['alpha']:g}).",
                             section="Head-to-head tests", severity="low", source="head-to-head")
    if mult is None:
        return Section("Head-to-head tests", (Text("No pair among the players shown has integral direct game counts "
                                                   "to test (see the notes)."), Table(table)))
    blocks: list[Block] = [
        Text(f"Direct games only, between the top {len(order) if order else 'ranked'} players by rating "
             f"({'pairs that met' if pairs == 'all' else 'neighbours in the ranking'}): exact binomial sign test of "
             f"a's wins among decisive games (ties: {p.get('ties', 'drop')}), win rate with ties as half and its "
             f"{p['confidence_level']:.0%} Wilson interval."
             + (f" Votes on one {cluster!r} are not independent (several judges see the same prompt and pair): "
                "p-values are cluster-robust t-tests (CR1, by item, G - 1 df) instead of exact sign tests; pairs "
                "that met on a single item are not testable." if cluster else "")),
        Text(f"Multiplicity correction: {mult.description}."),
        Table(table.rename(columns={"pvalue_adjusted": f"p_{p['adjust']}"}), floatfmt=".4g",
              csv="tables/head_to_head.csv", data=table,
              key=("a", "b", "win_rate", "ci_low", "ci_high", "wins_a", "wins_b", "ties", "pvalue", f"p_{p['adjust']}",
                   "reject")),
    ]
    from evalkit.plots.stats import plot_forest

    shown = table.dropna(subset=["win_rate"])
    if len(shown):
        ax = plot_forest(shown, estimate="win_rate", reference=0.5, xlabel="win rate of a against b (ties as half)",
                         max_rows=40, what="pairs")
        blocks.append(ctx.save_figure(ax, "head_to_head", "Head-to-head win rates with Wilson intervals; red: "
                                                          f"significant after {p['adjust']}."))
    return Section("Head-to-head tests", tuple(blocks))


def pairwise_section(ctx: ReportContext) -> Section | None:
    """Paired tests between systems on shared items, with the multiplicity correction."""
    s = ctx.scores
    if s is None or "item" not in s:
        return None
    p = ctx.params
    pairs = p.get("pairs") or ("all" if s["system"].nunique() <= 8 else "adjacent")
    order = list(dict.fromkeys(s["system"].astype(str)))
    if isinstance(pairs, str):  # the baseline of each pair is the system appearing first in the table
        from evalkit.report.tasks import oriented_pairs

        pairs_used = oriented_pairs(order, pairs, s.groupby("system")["score"].mean())
    else:
        pairs_used = pairs
    res = compare_systems(s, pairs=pairs_used, test=p["test"], adjust=p["adjust"], alpha=p["alpha"],
                          confidence_level=p["confidence_level"])
    ctx.results["pairwise"] = res
    t = res.table
    from evalkit.report.findings import comparison_findings
    from evalkit.report.tasks import DIFF_LABEL, labelled_pairs

    comparison_findings(ctx.headline, t, section="Paired comparisons on shared items", alpha=p["alpha"],
                        level=p["confidence_level"], adjust=p["adjust"], unit="items", n_col="n_items",
                        what="mean difference", source="pairwise")
    show = labelled_pairs(t[["a", "b", "n_items", "only_a", "only_b", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
                             "effect_size", "pvalue", "pvalue_adjusted", "reject", "note"]].rename(
        columns={"effect_size": "d_z", "pvalue_adjusted": f"p_{p['adjust']}"}))
    blocks: list = [Text(
        f"Each pair is compared on the items both systems were scored on: mean difference candidate − baseline "
        f"(the baseline is the system that appears first in the table) with a "
        f"{p['confidence_level']:.0%} t interval, Cohen's d_z, and the {res.test} "
        f"({'neighbours by mean score' if pairs == 'adjacent' else 'all pairs' if pairs == 'all' else 'the pairs asked for'}).")]
    if res.multiplicity is not None:
        blocks.append(Text(f"Multiplicity correction: {res.multiplicity.description}."))
    blocks.append(Text(plain(res.unmatched_report)))
    untested = t[t["note"].fillna("") != ""]
    if len(untested):
        blocks.append(Text(f"{len(untested)} pairs could not be tested (see the note column) and are not in the family."))
    blocks.append(Table(show, floatfmt=".4g", csv="tables/pairwise.csv", data=labelled_pairs(t),
                        key=("baseline", "candidate", DIFF_LABEL, "ci_low", "ci_high", "n_items", "pvalue",
                             f"p_{p['adjust']}", "reject")))
    from evalkit.plots.stats import plot_forest

    tested = t.dropna(subset=["diff"])
    if len(tested):
        ax = plot_forest(tested.assign(pair=tested["a"].astype(str) + " − " + tested["b"].astype(str)), label="pair",
                         xlabel="mean difference on shared items (candidate − baseline)", max_rows=40, what="pairs")
        more = f" (first 40 of {len(tested)})" if len(tested) > 40 else ""
        blocks.append(ctx.save_figure(ax, "pairwise", f"Paired differences with {p['confidence_level']:.0%} t intervals"
                                                      f"{more}; red: significant after {p['adjust']}."))
    return Section("Paired comparisons on shared items", tuple(blocks))


def unit_section(ctx: ReportContext) -> Section | None:
    """Trial-level vs task-level tests (needs per-(task, trial) scores)."""
    s = ctx.scores
    if s is None or not {"task", "trial"} <= set(s.columns):
        return None
    p = ctx.params
    pair = p.get("unit_pair")  # (baseline, candidate), as `--unit-pair A B`: differences B − A
    if pair is None:
        best = s.groupby("system")["score"].mean().sort_values(ascending=False).index.tolist()
        if len(best) < 2:
            return None
        seen = list(dict.fromkeys(s["system"].astype(str)))  # the baseline is the one appearing first
        pair = tuple(sorted(best[:2], key=seen.index))
    unknown = [x for x in pair if x not in set(s["system"])]
    if unknown:
        raise ValueError(f"unit_pair names {unknown}, not systems of the score table; it has "
                         f"{sorted(set(s['system']))}.")
    try:
        u = compare_units(s, pair[1], pair[0], alpha=p["alpha"], ties=p.get("tie_policy", "drop"))
    except ValueError as exc:  # degenerate data (all ties, zero variance): say so, keep the report
        return Section("Unit of analysis: trials or tasks?", (
            Text(f"**{plain(pair[1])}** (candidate) vs **{plain(pair[0])}** (baseline): not testable on these scores. "
                 f"{plain(exc)}"),))
    ctx.results["unit"] = u
    if not u.agree:
        from evalkit._format import format_p

        ctx.headline.caveat(f"For **{plain(u.a)}** − **{plain(u.b)}** the trial-level test (Welch p = "
                            f"{format_p(u.trial_level.pvalue)}) and the task-level tests (sign test p = "
                            f"{format_p(u.task_sign.pvalue)}, paired t p = {format_p(u.task_paired_t.pvalue)}) disagree: "
                            "generalise to new tasks only from the task level.",
                            section="Unit of analysis: trials or tasks?", source="unit")
    from evalkit.plots.stats import plot_task_differences, plot_trial_means

    f1 = ctx.save_figure(plot_trial_means(u), "unit_trials", "Trial means of each system (grey) with the mean and "
                                                               "its t interval (blue): the sample of the trial-level test.")
    f2 = ctx.save_figure(plot_task_differences(u), "unit_tasks", "Per-task mean difference: the sample of the "
                                                                   "task-level tests.")
    table = u.to_frame()[["unit", "test", "method", "n", "statistic", "df", "pvalue", "estimate", "estimate_name",
                          "ci_low", "ci_high",
                          "effect_size", "effect_size_name", "handling", "significant"]]
    names = {"first - second": "candidate − baseline", "of the first sample": "of the candidate"}
    table = table.assign(estimate_name=table["estimate_name"].astype(str).replace(names, regex=True))
    note = "" if p.get("unit_pair") else " (the two systems with the highest mean score)"
    from evalkit.stats import minimum_detectable_effect

    mde_task = minimum_detectable_effect(u.n_tasks, alpha=p["alpha"]) if u.n_tasks >= 2 else float("nan")
    mde_trial = (minimum_detectable_effect(u.n_trials_a, alpha=p["alpha"], design="unpaired",
                                           ratio=u.n_trials_b / u.n_trials_a) if min(u.n_trials_a, u.n_trials_b) >= 2
                 else float("nan"))
    power = Text(f"Power (80 %, alpha = {p['alpha']:g}): with {u.n_tasks} tasks the paired t-test detects a "
                 f"standardised task-level effect d_z >= {mde_task:.2f}; with {u.n_trials_a} vs {u.n_trials_b} trials "
                 f"the trial-level test detects d >= {mde_trial:.2f} (in units of the run-to-run SD).")
    return Section("Unit of analysis: trials or tasks?", (
        Text(f"**{plain(u.a)}** (candidate) vs **{plain(u.b)}** (baseline){note}, differences candidate − baseline."),
        Table(table, floatfmt=".4g", csv="tables/unit_of_analysis.csv",
              key=("unit", "test", "n", "estimate", "ci_low", "ci_high", "pvalue", "significant")),
        Text(plain(u.verdict)), Text(plain(u.explanation)), power, f1, f2,
    ))


def methods_section(ctx: ReportContext) -> Section | None:
    """The conventions behind every number of the report."""
    p = ctx.params
    items = [
        "Two-sample tests are Welch's t-test (Welch-Satterthwaite df), never Student's pooled test.",
        "Sign tests are exact binomial tests; tied pairs are "
        + {"drop": "dropped (and counted)", "loss": "counted as losses", "win": "counted as wins"}[p.get("tie_policy", "drop")] + ".",
        f"Intervals are {p['confidence_level']:.0%}: t quantiles for means (df = n - 1), Wilson or Clopper-Pearson for "
        "proportions; plots draw these intervals, not seaborn's bootstrap.",
        f"Random seed {ctx.seed} (bootstrap intervals); the same inputs and seed give the same report.",
    ]
    families = []
    for key in ("pairwise", "final_tests"):
        if key in ctx.results and ctx.results[key].multiplicity is not None:
            families.append(ctx.results[key].multiplicity.description)
    if "head_to_head" in ctx.results and ctx.results["head_to_head"][1] is not None:
        families.append(ctx.results["head_to_head"][1].description)
    if families:
        items.insert(3, "Multiplicity, each family corrected separately: " + "; ".join(families) + ".")
    else:
        items.insert(3, "No family of pairwise tests in this report, so no multiplicity correction was applied; "
                        f"each test is read at alpha = {p['alpha']:g}.")
    return Section("Methods", (Bullets(tuple(items)),))


from evalkit.report.judge import judge_section  # noqa: E402  (issue 12: judge diagnostics)
from evalkit.report.tasks import per_task_section, score_section  # noqa: E402  (issue 20: per-task table)

DEFAULT_SECTIONS = (inputs_section, leaderboard_section, judge_section, win_rate_section, head_to_head_section,
                    pairwise_section, unit_section, score_section, per_task_section, methods_section)
