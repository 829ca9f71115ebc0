"""Judge diagnostics for pairwise judgment logs: who judged, position bias, self-preference, agreement.

* :func:`judge_panels` - one judge label per row: the ``judge`` column when it names a few
  judges, else the judge named by the caller or by the source file (``gpt3-comparisons.csv``
  -> ``gpt-3.5-turbo``); a crowd (many raters in ``judge``) is one panel named after its file.
* :func:`match_contestants` - contestants that are the judge model itself (names compared
  after lower-casing and dropping punctuation: ``gpt-3.5-turbo`` = ``GPT 3.5 Turbo``), and
  variants of it (``GPT 3.5 Turbo (16k)``: the judge's name tokens followed by more).
* :func:`position_bias_table` - per panel: exact binomial test of left wins among decisive
  votes (:func:`evalkit.stats.position_bias_test`), clustered by comparison when several votes
  fall on one comparison, and the position-adjusted odds of the left answer between equals
  (:func:`evalkit.ratings.position.fit_position_bt`).
* :func:`self_preference_table` - a judge that is also a contestant: its model's Elo and rank
  with all votes and without the judge's own votes, and :func:`self_preference_test`: does the
  judge score its model higher than the other judges do on the same comparisons?
* :func:`position_adjusted_ratings` - plain Elo next to Elo with a left-position advantage
  per judge (how far the position bias moved each model);
* :func:`agreement_table` - agreement on shared (item, pair) units: between panels (Cohen's
  kappa for two, Fleiss' kappa and Krippendorff's alpha for more) and among the raters of a
  crowd panel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.stats.judge_warnings import (  # noqa: F401 - re-exported
    POSITION_FORMATS,
    count_warnings,
    judge_from_source,
    match_contestants,
    normalise_name,
    position_warning,
    self_rating_warnings,
)

__all__ = ["POSITION_FORMATS", "ITEM_CAVEAT", "judge_panels", "judge_from_source", "match_contestants", "position_bias_table",
           "self_preference_table", "self_preference_test", "agreement_table", "normalise_name", "position_adjusted_ratings",
           "position_warning", "self_rating_warnings", "count_warnings"]

_MAX_NAMED_JUDGES = 10
_LABELS = {1.0: "left", 0.0: "right", 0.5: "tie"}


def judge_panels(frame: pd.DataFrame, *, judge: str | None = None) -> pd.Series:
    """The judge panel of every row (see the module docstring); ``attrs`` are not used."""
    if "judge" in frame.columns and frame["judge"].notna().all() and frame["judge"].nunique() <= _MAX_NAMED_JUDGES:
        return frame["judge"].astype(str)
    if judge is not None:
        return pd.Series(str(judge), index=frame.index)
    if "source" in frame.columns and frame["source"].notna().all():
        return frame["source"].map(judge_from_source).astype(str)
    return pd.Series("judge", index=frame.index)


#: The position test clustered by comparison covers votes repeated on one comparison, not a bias that
#: varies by item across its comparisons (size 0.118 at 50 items, ``scripts/coverage.py``)
ITEM_CAVEAT = ("clustered by comparison: a position bias that varies by item is not covered; "
               "`evalkit rate --cluster item` tests it clustered by item")


def position_bias_table(frame: pd.DataFrame, panels: pd.Series, *, level: float = 0.95) -> pd.DataFrame:
    """Per panel: left / right / tie votes, the left share with its interval, the p-value of "no position bias"
    (decisive votes, ties dropped), the direction, and the position-adjusted odds of the left answer.

    The test is the exact binomial test when every comparison got one vote; when several votes fall on
    one comparison (the same item and pair, so the same two answers in the same places, as in a crowd
    where ~4 workers judge each comparison) they are not independent, and the test is the CR1 t-test
    clustered by comparison with a Korn-Graubard interval
    (:func:`evalkit.stats.judge_warnings.clustered_share_test`). The ``test`` column says which, and
    ``clusters`` how many comparisons; where items hold several comparisons the ``note`` says that a
    bias varying by item is not covered (:data:`ITEM_CAVEAT`). (Clustering by prompt instead, a coarser unit, is more
    conservative still: on LLMFAO's crowd file p = 1e-6 unclustered, 5.4e-4 by comparison, 0.17 by prompt, the
    test `evalkit rate --cluster item` runs.)"""
    from evalkit.ratings.position import fit_position_bt, position_effect
    from evalkit.stats.agreement import position_bias_test
    from evalkit.stats.judge_warnings import _repeats, clustered_share_test, comparison_units

    has_items = "item" in frame.columns and frame["item"].notna().all()
    rows = []
    for name, idx in panels.groupby(panels, sort=True).groups.items():
        sub = frame.loc[idx]
        lab = sub["outcome"].map(_LABELS)
        caveat = ""
        row = {"judge": name, "n": len(sub), "left": int((lab == "left").sum()),
               "right": int((lab == "right").sum()), "ties": int((lab == "tie").sum()),
               "other": int(lab.isna().sum())}
        decisive = lab.isin(["left", "right"]).to_numpy()
        units = (comparison_units(sub["player_a"].to_numpy(), sub["player_b"].to_numpy(), sub["item"].to_numpy())
                 if has_items else None)
        weight = sub["weight"].to_numpy(float) if "weight" in sub else np.ones(len(sub))
        try:
            if units is not None and _repeats(units[decisive], weight[decisive]):
                res = clustered_share_test((lab[decisive] == "left").to_numpy(float), weight[decisive],
                                           units[decisive], level=level)
                share, lo, hi, p = res["share"], res["ci_low"], res["ci_high"], res["pvalue"]
                test = "CR1 t-test clustered by comparison (item x pair), Korn-Graubard interval"
                clusters = int(res["n_clusters"])
                if len(pd.unique(sub["item"].to_numpy()[decisive])) < clusters:  # items hold several comparisons
                    caveat = ITEM_CAVEAT
            else:
                r = position_bias_test(lab.dropna().to_numpy(), confidence_level=level)
                (lo, hi), share, p = r.confidence_interval(), r.estimate, r.pvalue
                test, clusters = "exact binomial, Clopper-Pearson interval", int(decisive.sum())
        except ValueError as exc:
            rows.append({**row, "note": f"not tested: {exc}"})
            continue
        row.update(left_share=share, ci_low=lo, ci_high=hi, pvalue=p, test=test, clusters=clusters,
                   favours="left" if share > 0.5 else "right" if share < 0.5 else "neither")
        try:
            eff = position_effect(fit_position_bt(sub), level)
            g_lo, g_hi = eff.confidence_interval()
            row.update(adj_odds_left=eff.odds_ratio, adj_odds_low=float(np.exp(g_lo)),
                       adj_odds_high=float(np.exp(g_hi)), note=caveat)
        except (ValueError, np.linalg.LinAlgError) as exc:
            row["note"] = "; ".join(filter(None, [caveat, f"no position-adjusted fit: {exc}"]))
        rows.append({**row, "raters": _rater_summary(sub, lab)})
    cols = ["judge", "n", "left", "right", "ties", "other", "left_share", "ci_low", "ci_high", "pvalue", "test",
            "clusters", "favours", "adj_odds_left", "adj_odds_low", "adj_odds_high", "note", "raters"]
    return pd.DataFrame(rows).reindex(columns=cols)


def _rater_summary(sub: pd.DataFrame, lab: pd.Series, *, min_votes: int = 10) -> str:
    """For a panel of several raters (a crowd): how many are individually biased, Holm-adjusted."""
    if "judge" not in sub.columns or sub["judge"].isna().any() or sub["judge"].nunique() < 2:
        return ""
    from scipy.stats import binom

    from evalkit.stats.multiplicity import adjust_pvalues

    tally = pd.crosstab(sub["judge"].astype(str), lab).reindex(columns=["left", "right"], fill_value=0)
    tally = tally[tally.sum(axis=1) >= min_votes]
    if tally.empty:
        return f"no rater has {min_votes} decisive votes"
    k, n = tally["left"].to_numpy(), tally.sum(axis=1).to_numpy()
    # exact two-sided binomial test at 1/2 (symmetric: twice the smaller tail), vectorised over raters
    p = np.minimum(1.0, 2 * binom.cdf(np.minimum(k, n - k), n, 0.5))
    res = adjust_pvalues(p, method="holm", family=f"position-bias tests of {len(tally)} raters")
    rej = np.asarray(res.reject, dtype=bool)
    left = int(np.sum(rej & (tally["left"] > tally["right"]).to_numpy()))
    return (f"{int(rej.sum())} of {len(tally)} raters with >= {min_votes} decisive votes are biased on their own "
            f"(exact binomial, Holm; {left} towards the left)")


def position_adjusted_ratings(frame: pd.DataFrame, panels: pd.Series, *, plain: pd.DataFrame | None = None,
                              level: float = 0.95) -> pd.DataFrame:
    """Plain Bradley-Terry Elo next to Elo with one left-position advantage per judge panel.

    The adjusted fit is :func:`evalkit.ratings.style.fit_style_bt` with the covariates
    ``1[panel == j]`` (for one panel: :func:`evalkit.ratings.position.fit_position_bt`).
    ``plain`` is the plain leaderboard if already computed. Sorted by the adjusted Elo;
    ``rank_change`` = plain rank - adjusted rank (positive: the bias had pushed the model down).
    """
    from evalkit.ratings import leaderboard
    from evalkit.ratings.style import fit_style_bt

    names = sorted(panels.unique())
    cols = {f"left|{j}": (panels == j).to_numpy(dtype=float) for j in names}
    adj = fit_style_bt(frame.assign(**cols), list(cols)).table(level=level)
    plain = leaderboard(frame, confidence_level=level) if plain is None else plain
    out = adj.rename(columns={"rank": "rank_adjusted", "elo": "elo_adjusted", "ci_low": "ci_low_adjusted",
                              "ci_high": "ci_high_adjusted"})
    out = out.join(plain.set_index("model")[["rank", "elo"]], on="model")
    out["rank_change"] = out["rank"] - out["rank_adjusted"]
    out.attrs["interval"] = adj.attrs["interval"]
    return out[["model", "rank", "elo", "rank_adjusted", "elo_adjusted", "ci_low_adjusted", "ci_high_adjusted",
                "rank_change"]]


def _rating(frame: pd.DataFrame, model: str, level: float) -> tuple[float, float, float, int, int] | str:
    from evalkit.ratings import leaderboard

    try:
        t = leaderboard(frame, confidence_level=level)
    except ValueError as exc:
        return f"no ratings ({str(exc).split('.')[0]})"
    if model not in set(t["model"]):
        return "not rated"
    r = t.set_index("model").loc[model]
    return float(r["elo"]), float(r["ci_low"]), float(r["ci_high"]), int(r["rank"]), len(t)


def self_preference_table(frame: pd.DataFrame, panels: pd.Series, *, level: float = 0.95) -> pd.DataFrame:
    """One row per (judge, contestant that is the judge model or a variant of it): Elo, interval and rank with all
    votes, and without the judge's own votes (from the other judges), plus the judge's win rate for its model."""
    players = sorted(set(frame["player_a"]) | set(frame["player_b"]))
    rows = []
    for name in sorted(panels.unique()):
        same, variants = match_contestants(name, players)
        for model, kind in [(m, "same model") for m in same] + [(m, "variant") for m in variants]:
            own = panels == name
            mine = own & ((frame["player_a"] == model) | (frame["player_b"] == model))
            score = np.where(frame.loc[mine, "player_a"] == model, frame.loc[mine, "outcome"],
                             1 - frame.loc[mine, "outcome"])
            row = {"judge": name, "model": model, "match": kind, "games_judged": int(mine.sum()),
                   "judge_win_rate": float(np.mean(score)) if len(score) else np.nan}
            for tag, part in (("all", frame), ("without", frame[~own])):
                got = _rating(part, model, level) if len(part) else "no other judge's votes"
                if isinstance(got, str):
                    row[f"note_{tag}"] = got
                else:
                    row.update({f"elo_{tag}": got[0], f"ci_low_{tag}": got[1], f"ci_high_{tag}": got[2],
                                f"rank_{tag}": got[3], f"n_models_{tag}": got[4]})
            row.update(self_preference_test(frame, own.to_numpy(), model, level=level))
            rows.append(row)
    cols = ["judge", "model", "match", "games_judged", "judge_win_rate", "elo_all", "ci_low_all", "ci_high_all",
            "rank_all", "n_models_all", "elo_without", "ci_low_without", "ci_high_without", "rank_without",
            "n_models_without", "self_preference", "self_ci_low", "self_ci_high", "self_pvalue", "self_units",
            "self_test", "note_all", "note_without"]
    return pd.DataFrame(rows).reindex(columns=cols)


def self_preference_test(frame: pd.DataFrame, own: np.ndarray, model: str, *, level: float = 0.95) -> dict:
    """Does a judge score its own model higher than the other judges do on the same comparisons?

    Units are the comparisons (item and pair) of ``model`` that the judge (rows ``own``) and at least one
    other judge rated. Per unit, ``d`` = the judge's score for ``model`` (1, 0.5 or 0; mean over its votes)
    minus the other judges' mean score for it there. Under "the judge treats its own model as the others
    do" the mean of ``d`` is 0 (the judges are exchangeable on those units), whatever the model's quality:
    the comparison is on the same answers. Test: the mean of ``d`` with a CR1 SE clustered by item and
    t(G - 1) (:func:`evalkit.stats.mean_se`; by unit when every item holds one unit).

    Returns
    -------
    dict
        ``self_preference`` (mean d), ``self_ci_low``, ``self_ci_high``, ``self_pvalue``, ``self_units``,
        ``self_test``; NaN with the reason in ``self_test`` when there are fewer than 3 shared units.
    """
    from evalkit.stats.means import mean_se

    empty = {"self_preference": np.nan, "self_ci_low": np.nan, "self_ci_high": np.nan, "self_pvalue": np.nan,
             "self_units": 0}
    if "item" not in frame.columns or frame["item"].isna().any():
        return {**empty, "self_test": "not tested: no item column to find comparisons shared with other judges"}
    mine = ((frame["player_a"] == model) | (frame["player_b"] == model)).to_numpy()
    sub = frame.loc[mine]
    score = np.where(sub["player_a"] == model, sub["outcome"], 1 - sub["outcome"])
    other = np.where(sub["player_a"] == model, sub["player_b"], sub["player_a"])
    unit = sub["item"].astype(str).to_numpy() + "\x1f" + other.astype(str)
    tab = pd.DataFrame({"unit": unit, "item": sub["item"].astype(str).to_numpy(), "own": own[mine],
                        "score": score.astype(float)})
    per = tab.groupby(["unit", "own"])["score"].mean().unstack()
    if True not in per.columns or False not in per.columns:
        return {**empty, "self_test": "not tested: no comparison rated by this judge and another"}
    both = per.dropna(subset=[True, False])
    if len(both) < 3:
        return {**empty, "self_units": len(both),
                "self_test": f"not tested: {len(both)} comparison(s) rated by this judge and another"}
    d = (both[True] - both[False]).to_numpy()
    items = tab.drop_duplicates("unit").set_index("unit").loc[both.index, "item"].to_numpy()
    clustered = len(set(items)) < len(items)
    try:
        est = mean_se(d, clusters=items if clustered else None, confidence_level=level)
    except ValueError as exc:
        return {**empty, "self_units": len(both), "self_test": f"not tested: {exc}"}
    lo, hi = est.confidence_interval()
    from evalkit._cluster import t_two_sided_pvalue

    se, df = est.se, (float(est.df) if est.df is not None else float("inf"))  # df None: normal reference
    p = t_two_sided_pvalue(est.estimate / se, df) if se is not None and se > 0 else 1.0
    how = (f"paired over {len(both)} comparisons, CR1 by item ({len(set(items))} items), t({est.df:g})" if clustered
           else f"paired over {len(both)} comparisons, t({est.df:g})")
    return {"self_preference": est.estimate, "self_ci_low": lo, "self_ci_high": hi, "self_pvalue": p,
            "self_units": len(both), "self_test": how}


def _units(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Unit = (item, unordered pair); label = outcome of the alphabetically first player (0, 0.5, 1)."""
    a, b = frame["player_a"].astype(str), frame["player_b"].astype(str)
    swap = a > b
    lo, hi = a.where(~swap, b), b.where(~swap, a)
    unit = frame["item"].astype(str) + "\x1f" + lo + "\x1f" + hi
    label = frame["outcome"].where(~swap, 1 - frame["outcome"]).round(6)
    return unit, label


def _stats(long: pd.DataFrame, what: str) -> list[dict]:
    """Agreement statistics of long-format labels (columns ``unit, rater, label``; one label per unit and rater).

    Works on per-unit label counts (units x labels), never on a units x raters matrix, so a crowd of
    many raters costs nothing extra. Cohen's kappa when there are exactly two raters.
    """
    from evalkit.stats.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha_counts

    per_unit = long.groupby("unit")["rater"].transform("size")
    shared = long[per_unit >= 2]
    if shared["unit"].nunique() < 2:
        return [{"between": what, "statistic": "none", "value": np.nan, "units": int(shared["unit"].nunique()),
                 "note": "fewer than 2 units rated by two or more raters"}]
    counts = shared.groupby(["unit", "label"]).size().unstack(fill_value=0)
    values = counts.columns.to_numpy(dtype=float)
    table = counts.to_numpy(dtype=float)
    out = []
    if long["rater"].nunique() == 2:
        wide = shared.pivot(index="unit", columns="rater", values="label")
        try:
            k = cohen_kappa(wide.iloc[:, 0].astype(str), wide.iloc[:, 1].astype(str))
            out.append({"between": what, "statistic": "Cohen's kappa", "value": k.estimate, "units": len(wide),
                        "note": f"SE {k.details['se']:.3g}"})
        except ValueError as exc:
            out.append({"between": what, "statistic": "Cohen's kappa", "value": np.nan, "units": len(wide),
                        "note": str(exc)})
    else:
        raters = table.sum(axis=1)
        m = int(pd.Series(raters).mode().iloc[0])
        eq = table[raters == m]
        try:
            value, note = fleiss_kappa(eq), f"units with exactly {m} raters (the most common number)"
        except ValueError as exc:
            value, note = np.nan, str(exc)
        out.append({"between": what, "statistic": "Fleiss' kappa", "value": value, "units": len(eq), "note": note})
    try:
        alpha = krippendorff_alpha_counts(table, values, level="nominal") if values.size >= 2 else np.nan
    except ValueError:
        alpha = np.nan
    out.append({"between": what, "statistic": "Krippendorff's alpha (nominal)", "value": alpha, "units": len(table),
                "note": "all units with two or more raters"})
    return out


def agreement_table(frame: pd.DataFrame, panels: pd.Series) -> pd.DataFrame:
    """Agreement on shared (item, pair) units, labels = which of the pair won (or tie), oriented by name.

    Between panels (each panel's label on a unit is its most common label there; units where
    that is tied are left out) when there are two or more panels; among the raters of each
    panel with a ``judge`` column of several raters (a crowd)."""

    if "item" not in frame.columns or frame["item"].isna().any():
        return pd.DataFrame([{"between": "judges", "statistic": "none", "value": np.nan, "units": 0,
                              "note": "no item column: shared units cannot be identified"}])
    unit, label = _units(frame)
    rows: list[dict] = []
    if panels.nunique() >= 2:
        long = pd.DataFrame({"unit": unit, "panel": panels, "label": label})
        cnt = long.groupby(["unit", "panel", "label"]).size().rename("n").reset_index()
        top = cnt[cnt["n"] == cnt.groupby(["unit", "panel"])["n"].transform("max")]
        unique = top.groupby(["unit", "panel"])["label"].transform("size") == 1
        best = top[unique].rename(columns={"panel": "rater"})[["unit", "rater", "label"]]
        rows += _stats(best, "panels " + ", ".join(map(str, sorted(best["rater"].unique()))))
    if "judge" in frame.columns and frame["judge"].notna().all():
        for name in sorted(panels.unique()):
            sub = (panels == name).to_numpy()
            n_raters = frame.loc[sub, "judge"].nunique()
            if n_raters < 2:
                continue
            long = pd.DataFrame({"unit": unit[sub], "rater": frame.loc[sub, "judge"].astype(str).to_numpy(),
                                 "label": label[sub]}).drop_duplicates(["unit", "rater"])
            rows += _stats(long, f"raters of {name} ({n_raters})")
    if not rows:
        rows = [{"between": "judges", "statistic": "none", "value": np.nan, "units": 0,
                 "note": "one judge with one vote per unit: no agreement to measure"}]
    return pd.DataFrame(rows)
