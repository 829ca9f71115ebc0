"""Judge diagnostics (issue 12): report section, CLI warnings and flags, per-category leaderboards."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from evalkit.cli import main
from evalkit.io import read_comparisons
from evalkit.ratings import leaderboard
from evalkit.ratings.categories import category_leaderboards
from evalkit.report import write_report
from evalkit.report.judge import cluster_warning, judge_section
from evalkit.stats.judges import (
    agreement_table,
    judge_from_source,
    judge_panels,
    self_preference_table,
)

LLMFAO = "tests/data/llmfao"


@pytest.mark.parametrize("judge, name, favours, self_model", [
    ("gpt3", "gpt-3.5-turbo", "left", "GPT 3.5 Turbo"),
    ("gpt4", "gpt-4", "right", "GPT 4"),
    ("crowd", "crowd", "left", None),
])
def test_report_judge_section_on_llmfao(tmp_path, judge, name, favours, self_model):
    path = f"{LLMFAO}/{judge}-comparisons.csv"
    out = write_report(tmp_path, comparisons=path, sections=[judge_section])
    md = (out / "report.md").read_text()
    raw = pd.read_csv(path)
    left, right = int((raw["winner"] == "left").sum()), int((raw["winner"] == "right").sum())
    p = stats.binomtest(left, left + right).pvalue  # exact binomial test on the decisive votes
    table = pd.read_csv(out / "tables" / "position_bias.csv")
    row = table.set_index("judge").loc[name]
    assert row["favours"] == favours and row["left"] == left and row["right"] == right
    if judge == "crowd":  # ~4 workers judged each comparison (prompt id x pair, answers in fixed places)
        p = _comparison_clustered_p(raw)
        assert row["test"].startswith("CR1 t-test clustered by comparison") and row["clusters"] == 1918
    else:  # one vote per comparison: the exact binomial test
        assert row["test"].startswith("exact binomial")
    assert row["pvalue"] == pytest.approx(p, rel=1e-9)
    # the report prints p with 3 significant digits, scientific below 1e-4 (e.g. 5.61e-08)
    shown = f"{p:.2e}" if p < 1e-4 else f"{p:#.3g}"
    assert f"**{name}** favours the **{favours}** answer" in md and f"p = {shown}" in md
    if self_model:
        assert f"Self-preference: judge **{name}** is also a contestant, **{self_model}** (same model)" in md
    else:
        assert "matches a contestant: no self-preference" in md


def _comparison_clustered_p(raw: pd.DataFrame) -> float:
    """The left-share test clustered by LLMFAO's comparison id: score form (group sums of y - 1/2 under
    H0), CR1 factor G / (G - 1), t(G - 1); bracketed by statsmodels' Wald version (OLS on a constant,
    cov_type="cluster"), which centres at the estimate instead and so gives a slightly smaller p."""
    import statsmodels.api as sm

    dec = raw[raw["winner"].isin(["left", "right"])]
    y = (dec["winner"] == "left").to_numpy(float)
    codes = pd.factorize(dec["id"])[0]
    g = codes.max() + 1
    e = np.bincount(codes, weights=y - 0.5)
    se = np.sqrt(g / (g - 1) * np.sum(e**2)) / len(y)
    p = 2 * stats.t.sf(abs(y.mean() - 0.5) / se, g - 1)
    wald = sm.OLS(y - 0.5, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": codes})
    p_wald = 2 * stats.t.sf(abs(wald.tvalues[0]), g - 1)
    assert p_wald < p < 1.1 * p_wald and p > 100 * stats.binomtest(int(y.sum()), len(y)).pvalue
    return float(p)


def test_self_preference_with_and_without_the_judge():
    frame, _ = read_comparisons([f"{LLMFAO}/gpt3-comparisons.csv", f"{LLMFAO}/crowd-comparisons.csv"])
    panels = judge_panels(frame)
    assert set(panels) == {"gpt-3.5-turbo", "crowd"}
    table = self_preference_table(frame, panels).set_index("model")
    crowd, _ = read_comparisons(f"{LLMFAO}/crowd-comparisons.csv")
    ref = leaderboard(crowd).set_index("model").loc["GPT 3.5 Turbo"]  # the crowd's rating alone
    row = table.loc["GPT 3.5 Turbo"]
    assert row["elo_without"] == pytest.approx(ref["elo"]) and row["rank_without"] == ref["rank"]
    assert row["games_judged"] == 168 and np.isfinite(row["elo_all"])


def test_agreement_between_two_judges_is_cohens_kappa():
    frame, _ = read_comparisons([f"{LLMFAO}/gpt3-comparisons.csv", f"{LLMFAO}/gpt4-comparisons.csv"])
    got = agreement_table(frame, judge_panels(frame)).set_index("statistic")
    g3, g4 = pd.read_csv(f"{LLMFAO}/gpt3-comparisons.csv"), pd.read_csv(f"{LLMFAO}/gpt4-comparisons.csv")
    assert (g3[["prompt", "left", "right"]].to_numpy() == g4[["prompt", "left", "right"]].to_numpy()).all()
    swap = g3["left"] > g3["right"]  # orient each vote to the alphabetically first model, as the units are

    def orient(w):
        return np.where(swap & (w != "tie"), np.where(w == "left", "right", "left"), w)

    ref = cohens_kappa(pd.crosstab(orient(g3["winner"]), orient(g4["winner"])))  # statsmodels
    assert got.loc["Cohen's kappa", "value"] == pytest.approx(ref["kappa"], abs=1e-12)
    assert got.loc["Cohen's kappa", "units"] == len(g3)


def test_judge_names_from_files_and_flags():
    assert judge_from_source("data/llmfao/gpt3-comparisons.csv") == "gpt-3.5-turbo"
    assert judge_from_source("x/gpt4-comparisons.csv") == "gpt-4"
    frame, _ = read_comparisons(f"{LLMFAO}/gpt4-comparisons.csv")
    assert set(judge_panels(frame, judge="my-judge")) == {"my-judge"}


def test_cluster_warning_names_the_count():
    with pytest.warns(UserWarning, match="only 13 clusters"):
        assert "13 clusters" in cluster_warning(13, "The bootstrap over items")
    assert cluster_warning(30, "x") is None


def test_cli_warnings_and_adjust_position(tmp_path, capsys):
    assert main(["summary", f"{LLMFAO}/gpt3-comparisons.csv"]) == 0
    err = capsys.readouterr().err
    assert "judge gpt-3.5-turbo favours the left answer in 67.2% of 2923 decisive votes" in err
    assert "judge gpt-3.5-turbo is also a contestant (GPT 3.5 Turbo" in err
    assert main(["rate", f"{LLMFAO}/gpt4-comparisons.csv", "--adjust-position", "--out", str(tmp_path / "out"), "--force"]) == 0
    cap = capsys.readouterr()
    assert "Position-adjusted" in cap.out and "favours the right (second) position" in cap.out
    assert (tmp_path / "out" / "leaderboard.csv").exists()
    assert main(["rate", f"{LLMFAO}/crowd-comparisons.csv", "--cluster", "item"]) == 0
    assert "rests on only 13 clusters" in capsys.readouterr().err


def test_rate_by_category_names_the_correction(capsys):
    rng = np.random.default_rng(0)
    names = np.array(["a", "b", "c", "d"])
    i = rng.integers(0, 4, 900)
    j = (i + rng.integers(1, 4, 900)) % 4
    frame = pd.DataFrame({"player_a": names[i], "player_b": names[j],
                          "outcome": (rng.random(900) < 1 / (1 + np.exp(-(j - i) / 2))).astype(float),
                          "weight": 1.0, "category": rng.choice(["code", "math", "chat"], 900)})
    table = category_leaderboards(frame, "category")
    assert table.attrs["level"] == pytest.approx(1 - 0.05 / 3)  # Bonferroni over 3 categories
    assert "Bonferroni across 3 categories" in table.attrs["correction"]
    one = leaderboard(frame[frame["category"] == "math"].reset_index(drop=True), confidence_level=1 - 0.05 / 3)
    mine = table[table["category"] == "math"].reset_index(drop=True)
    np.testing.assert_allclose(mine["ci_low"], one["ci_low"])
    assert table.attrs["skipped"] == {}
    with pytest.raises(ValueError, match="'nope' is not in the comparisons"):
        category_leaderboards(frame, "nope")


def test_position_adjusted_ratings_one_panel_equals_position_fit():
    from evalkit.ratings.position import position_leaderboard
    from evalkit.stats.judges import position_adjusted_ratings

    frame, _ = read_comparisons(f"{LLMFAO}/gpt3-comparisons.csv")
    got = position_adjusted_ratings(frame, judge_panels(frame)).set_index("model")
    ref = position_leaderboard(frame).set_index("model")
    np.testing.assert_allclose(got["elo_adjusted"], ref.loc[got.index, "elo"], atol=1e-6)
    plain = leaderboard(frame).set_index("model")
    assert (got["rank_change"] == plain.loc[got.index, "rank"] - got["rank_adjusted"]).all()


def test_crowd_raters_biased_on_their_own_holm():
    from statsmodels.stats.multitest import multipletests

    from evalkit.stats.judges import position_bias_table

    frame, _ = read_comparisons(f"{LLMFAO}/crowd-comparisons.csv")
    got = position_bias_table(frame, judge_panels(frame))["raters"].iloc[0]
    raw = pd.read_csv(f"{LLMFAO}/crowd-comparisons.csv")
    tally = pd.crosstab(raw["worker"], raw["winner"])
    tally = tally[tally["left"] + tally["right"] >= 10]
    p = [stats.binomtest(a, a + b).pvalue for a, b in zip(tally["left"], tally["right"], strict=True)]
    reject = multipletests(p, method="holm")[0]  # statsmodels Holm
    assert got.startswith(f"{int(reject.sum())} of {len(tally)} raters with >= 10 decisive votes")


def test_adjust_position_refuses_options_it_ignores(capsys):
    assert main(["rate", f"{LLMFAO}/gpt4-comparisons.csv", "--adjust-position", "--anchor", "GPT 4=1000"]) == 2
    assert "cannot be combined with --anchor" in capsys.readouterr().err


def test_crowd_krippendorff_alpha_pinned_to_the_krippendorff_package():
    crowd, _ = read_comparisons(f"{LLMFAO}/crowd-comparisons.csv")
    got = agreement_table(crowd, judge_panels(crowd)).set_index("statistic")
    # krippendorff.alpha(reliability_data=<124 workers x 2,139 (prompt, pair) units, label = win/tie/loss of the
    # alphabetically first model>, level_of_measurement="nominal") with krippendorff 0.9.0
    assert got.loc["Krippendorff's alpha (nominal)", "value"] == pytest.approx(0.29034496681675614, abs=1e-12)


def test_alpaca_eval_annotators_are_matched_to_their_models():
    from evalkit.stats.judges import match_contestants

    assert match_contestants("alpaca_eval_gpt4", ["gpt4", "gpt4_0613", "gpt-4o", "claude"]) == (["gpt4"], ["gpt4_0613"])
    # AlpacaEval 2's annotator is GPT-4 Turbo, i.e. gpt-4-1106-preview, which is also its baseline
    assert match_contestants("weighted_alpaca_eval_gpt4_turbo", ["gpt4_1106_preview", "gpt4"]) == (
        ["gpt4_1106_preview"], [])


@pytest.mark.parametrize("judge", ["gpt3", "gpt4", "crowd"])
def test_count_warnings_equal_row_warnings(judge):
    """`rate`/`summary` warn from the aggregated cells. Without a cluster the lines equal the row-based
    ones where each comparison has one vote (the cells cannot tell repeated votes on one comparison
    apart, and say so); with `--cluster item` the test is clustered by the item, as the intervals
    are: the p-value equals the score-form CR1 t-test computed here from the rows with scipy."""
    from scipy import stats

    from evalkit.engine.aggregate import aggregate_comparisons
    from evalkit.report.judge import judge_warnings
    from evalkit.stats.judges import count_warnings, judge_from_source

    path = f"{LLMFAO}/{judge}-comparisons.csv"
    frame, report = read_comparisons(path)
    name = judge_from_source(path)
    rows = judge_warnings(frame, report.format, judge=name)
    plain, _ = aggregate_comparisons(path)
    lines = count_warnings(plain, report.format, judge=name)
    assert "votes taken as independent" in lines[0]
    assert ("clustered by comparison" in rows[0]) == (judge == "crowd")  # ~4 votes per comparison there
    if judge != "crowd":
        assert lines == [rows[0].replace("binomial p", "binomial, votes taken as independent (`evalkit report` "
                                         "clusters repeated votes on one comparison) p"), *rows[1:]]
    counts, _ = aggregate_comparisons(path, cluster="item")
    dec = frame[frame["outcome"].isin([0.0, 1.0])]
    y, w = (dec["outcome"] == 1.0).to_numpy(float), dec["weight"].to_numpy(float)
    e = pd.Series(w * (y - 0.5)).groupby(dec["item"].astype(str).to_numpy()).sum().to_numpy()
    g, n = len(e), w.sum()
    t = (np.sum(w * y) / n - 0.5) / (np.sqrt(g / (g - 1) * np.sum(e * e)) / n)
    p = 2 * stats.t.sf(abs(t), g - 1)
    every = count_warnings(counts, report.format, judge=name, alpha=1.0)  # the position line whatever its p
    assert f"(CR1 t-test clustered by item p = {p:.2g})" in every[0]
    assert every[0].split(" (")[0] == rows[0].split(" (")[0] and every[1:] == rows[1:]
    by_item = count_warnings(counts, report.format, judge=name)
    # the crowd's 13 prompts: p = 0.17 by item (5.4e-4 by comparison, which ignores the prompts; 1e-6 unclustered)
    assert by_item == (every if p < 0.05 else every[1:]) and (p < 0.05) == (judge != "crowd")


def test_judge_section_shows_hostile_judge_names_literally(tmp_path):
    """A judge name with Markdown and HTML in it is shown as text, not rendered, in both formats."""
    from evalkit.cli import main

    name = "**bold** <b>x</b>"
    hostile = Path(__file__).parent / "data" / "hostile" / "comparisons.csv"
    assert main(["report", str(hostile), "--judge", name, "--out", str(tmp_path / "r"), "-q"]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    html = (tmp_path / "r" / "report.html").read_text()
    section = md[md.index("## Judge diagnostics"):]
    assert "Judges: \\*\\*bold\\*\\*" in section and "Judges: **bold**" not in section
    assert "<strong>bold</strong>" not in html and "<b>x</b>" not in html


def test_adjust_position_json_is_json_on_stdout(capsys):
    """--json with --adjust-position prints the table as JSON records (the heading goes to stderr)."""
    import json

    assert main(["rate", f"{LLMFAO}/gpt4-comparisons.csv", "--adjust-position", "--json"]) == 0
    cap = capsys.readouterr()
    rows = json.loads(cap.out)
    plain = main(["rate", f"{LLMFAO}/gpt4-comparisons.csv", "--adjust-position"])
    table = capsys.readouterr().out
    assert plain == 0 and "Position-adjusted" in cap.err and "Position-adjusted" in table
    assert len(rows) == table.count("\n| ") - 1 and {"model", "elo"} <= set(rows[0])
