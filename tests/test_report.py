"""evalkit report: files exist, the HTML references every PNG, run.json records the run."""

import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalkit.cli import main
from evalkit.report import Section, Table, Text, write_report

ROOT = Path(__file__).resolve().parents[1]
SEED002 = ROOT / "data" / "seed002" / "scores.csv"
AE1 = ROOT / "data" / "alpaca_eval" / "alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz"
LLMFAO_GPT4 = ROOT / "data" / "llmfao" / "gpt4-comparisons.csv"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.ids = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images.append(a["src"])
        if "id" in a:
            self.ids.append(a["id"])


def _check_folder(out: Path) -> _Links:
    for name in ("report.md", "report.html", "run.json"):
        assert (out / name).is_file(), name
    pngs = sorted(p.relative_to(out).as_posix() for p in (out / "figures").glob("*.png"))
    assert pngs, "no figures written"
    parser = _Links()
    parser.feed((out / "report.html").read_text(encoding="utf-8"))
    assert sorted(parser.images) == pngs  # every PNG is referenced, every reference exists
    md = (out / "report.md").read_text(encoding="utf-8")
    for png in pngs:
        assert f"]({png})" in md
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return parser


def test_seed002_report_shows_both_units(tmp_path):
    out = write_report(tmp_path / "r", scores=SEED002, title="Seed 002", rng=3)
    _check_folder(out)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Unit of analysis" in md and "Welch two-sample t-test" in md and "Exact sign test" in md
    assert "8 wins / 3 losses / 1 ties, p = 0.2266" in md  # scipy.stats.binomtest(8, 11).pvalue = 0.2265625
    assert "Here the two units disagree" in md
    # statsmodels TTestPower().solve_power(nobs=12, power=0.8, alpha=0.05) = 0.8887;
    # TTestIndPower().solve_power(nobs1=5, power=0.8, alpha=0.05) = 2.0244
    assert "detects a standardised task-level effect d_z >= 0.89" in md and "detects d >= 2.02" in md
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 3 and run["evalkit_version"]
    assert run["parameters"]["adjust"] == "holm" and run["parameters"]["confidence_level"] == 0.95
    (entry,) = run["inputs"]
    assert entry["sha256"] == hashlib.sha256(SEED002.read_bytes()).hexdigest()
    assert set(run["outputs"]) >= {"report.md", "report.html", "figures/unit_trials.png", "figures/unit_tasks.png"}
    table = pd.read_csv(out / "tables" / "unit_of_analysis.csv")
    assert list(table["unit"]) == ["trial", "task", "task"]


def test_cli_report_on_bundled_alpaca_eval(tmp_path):
    out = tmp_path / "ae"
    code = main(["report", str(AE1), "--out", str(out), "--n-boot", "20", "--seed", "1"])
    assert code == 0
    links = _check_folder(out)
    assert {"figures/leaderboard.png", "figures/win_rates.png", "figures/pairwise.png"} <= set(links.images)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "dropped 61" in md  # the 61 NaN preferences are reported, not silently dropped
    assert "Holm step-down" in md and "Paired t-test" in md
    pair = pd.read_csv(out / "tables" / "pairwise.csv")
    assert "text_davinci_003" not in set(pair["candidate"]) | set(pair["baseline"])  # the baseline is rated, not paired
    # falcon-7b-instruct is a byte copy of falcon-40b-instruct: equal means, so neighbours; all
    # differences are zero and the pair is reported as not tested (and kept out of the Holm family)
    dup = pair[pair["candidate"].str.startswith("falcon") & pair["baseline"].str.startswith("falcon")]
    assert len(dup) == 1 and "not tested" in dup["note"].iloc[0] and pd.isna(dup["pvalue"].iloc[0])
    board = pd.read_csv(out / "tables" / "leaderboard.csv")
    assert board["model"].nunique() == 54 and (board["ci_low"] <= board["elo"]).all()


def test_cli_report_on_llmfao_has_head_to_head_tests(tmp_path):
    out = tmp_path / "llm"
    assert main(["report", str(LLMFAO_GPT4), "--out", str(out), "--n-boot", "0"]) == 0
    links = _check_folder(out)
    assert "figures/head_to_head.png" in links.images
    md = (out / "report.md").read_text(encoding="utf-8")
    # items exist: votes on one prompt are dependent, so the tests are cluster-robust by item (issue 12)
    assert "no common baseline" in md and "head-to-head cluster-robust (CR1, by 'item') tests" in md


def test_same_seed_same_report(tmp_path):
    a = write_report(tmp_path / "a", scores=SEED002, rng=5)
    b = write_report(tmp_path / "b", scores=SEED002, rng=5)
    assert (a / "report.md").read_text() == (b / "report.md").read_text()
    for png in (a / "figures").glob("*.png"):
        assert png.read_bytes() == (b / "figures" / png.name).read_bytes()


def test_extra_section_builder_is_rendered(tmp_path):
    def budget_section(ctx):
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
        ax.plot([1, 10, 100], [1000, 1100, 1150])
        fig = ctx.save_figure(ax, "elo_per_budget", "Elo against budget.")
        return Section("Elo per budget", (Text(f"seed {ctx.seed}, k = {ctx.params['k']}"), fig,
                                          Table(pd.DataFrame({"budget": [1, 10], "elo": [1000.0, 1100.5]}),
                                                csv="tables/curve.csv")))

    out = write_report(tmp_path / "x", scores=SEED002, extra_sections=[budget_section], params={"k": 4}, rng=9)
    links = _check_folder(out)
    assert "figures/elo_per_budget.png" in links.images and "elo-per-budget" in links.ids
    assert "seed 9, k = 4" in (out / "report.md").read_text()
    assert (out / "tables" / "curve.csv").is_file()
    assert json.loads((out / "run.json").read_text())["parameters"]["k"] == 4


def test_report_bad_inputs(tmp_path, capsys):
    with pytest.raises(ValueError, match="Nothing to report"):
        write_report(tmp_path / "n")
    with pytest.raises(ValueError, match="confidence_level"):
        write_report(tmp_path / "c", scores=SEED002, confidence_level=1.5)
    with pytest.raises(ValueError, match="adjust"):
        write_report(tmp_path / "c", scores=SEED002, adjust="hs")
    bad = pd.DataFrame({"model": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match="'system' column"):
        write_report(tmp_path / "s", scores=bad)
    with pytest.raises(ValueError, match="'item' column, or 'task' and 'trial'"):
        write_report(tmp_path / "s", scores=bad, score_columns={"system": "model"})
    assert main(["report", "--out", str(tmp_path / "e")]) == 2
    assert "evalkit report: error:" in capsys.readouterr().err


def test_cli_report_from_a_per_item_score_table_with_column_mapping(tmp_path):
    d = pd.read_csv(AE1)
    models = ["gpt4", "claude-2", "phi-2", "ghost-7b-alpha"]
    d = d[d["model_dir"].isin(models)].dropna(subset=["preference"])
    d["x"] = d["preference"].replace(0.0, 1.5) - 1.0  # AlpacaEval's own definition of a win
    table = tmp_path / "scores.csv"
    d[["model_dir", "instruction_id", "x"]].to_csv(table, index=False)
    out = tmp_path / "s"
    code = main(["report", "--scores", str(table), "--score-col", "system=model_dir", "--score-col",
                 "item=instruction_id", "--score-col", "score=x", "--adjust", "bh", "--out", str(out)])
    assert code == 0
    links = _check_folder(out)
    assert links.images == ["figures/pairwise.png"]
    pair = pd.read_csv(out / "tables" / "pairwise.csv")
    assert len(pair) == 6  # all pairs of 4 systems
    wide = d.pivot(index="instruction_id", columns="model_dir", values="x")
    for _, row in pair.iterrows():
        both = wide[[row["candidate"], row["baseline"]]].dropna()
        assert row["n_items"] == len(both)
        assert row["pvalue"] == pytest.approx(stats.ttest_rel(both[row["candidate"]], both[row["baseline"]]).pvalue, rel=1e-9)
    # statsmodels multipletests(p, method='fdr_bh')
    assert pair["pvalue_adjusted"].to_numpy() == pytest.approx(
        multipletests(pair["pvalue"].to_numpy(), method="fdr_bh")[1], rel=1e-12)
    assert "Benjamini-Hochberg" in (out / "report.md").read_text()


def test_numbers_formatted_per_column_and_tables_scroll_in_their_box():
    from evalkit.report import Section, Table
    from evalkit.report.render import format_column, render_html, render_markdown

    frame = pd.DataFrame({"model": ["a", "b"], "elo": [1012.345, 987.655], "ci_low": [950.04, 925.96],
                          "n": [12.0, 7.0], "pvalue": [3.2e-7, 0.2265625], "p_holm": [0.0, 1.0],
                          "diff": [0.123456, -2.5], "significant": [True, False]})
    shown = {c: format_column(c, frame[c], elo_table=True) for c in frame.columns}
    assert shown["elo"] == ["1012.3", "987.7"] and shown["ci_low"] == ["950.0", "926.0"]  # Elo: 1 decimal
    assert shown["n"] == ["12", "7"]  # counts as integers, though stored as floats
    # p-values as the text prints them (evalkit._format.format_p: 3 significant digits, scientific below 1e-4)
    assert shown["pvalue"] == ["3.20e-07", "0.227"] and shown["p_holm"] == ["0", "1.00"]
    assert shown["diff"] == ["0.123", "-2.500"] and shown["significant"] == ["yes", "no"]  # same decimals per column
    big = pd.Series([79530.0, 9941.0, 7953.4])
    assert format_column("budget", big) == ["79530", "9941", "7953"]
    assert format_column("b", pd.Series([0.0077071, 0.2963])) == ["0.0077", "0.2963"]
    assert format_column("tiny", pd.Series([2e-5, 3e-4])) == ["2.000e-05", "3.000e-04"]
    assert format_column("diff", frame["diff"], spec=".2f") == ["0.12", "-2.50"]
    sec = [Section("T", (Table(frame, caption="What **this** shows"),))]
    page = render_html("t", sec)
    assert '<div class="table-wrap"><table class="sortable key" data-filter="10"><caption>What **this** shows' in page
    assert '<td class="text">a</td><td class="num" data-v="1012.345">1012.3</td>' in page  # sorts on the raw value
    assert ".table-wrap{overflow-x:auto" in page and "<nav" in page
    md = render_markdown("t", sec)
    assert "|:---|---:|---:|---:|---:|---:|---:|:---|" in md and "*What \\*\\*this\\*\\* shows*" in md


def test_plain_marks_data_inside_text_and_unsafe_links_are_dropped():
    from evalkit.report import Section, Text, plain
    from evalkit.report.render import render_html, render_markdown

    sec = [Section("S", (Text(f"**{plain('**x** <b>')}** beat [it](javascript:alert(1)); see [r](real/report.html)"),))]
    page = render_html("t", sec)
    assert "<strong>**x** &lt;b&gt;</strong> beat it; see <a href=\"real/report.html\">r</a>" in page
    md = render_markdown("t", sec)
    assert "**\\*\\*x\\*\\* \\<b\\>** beat it; see [r](real/report.html)" in md


def test_read_scores_names_the_file_line_of_a_bad_score(tmp_path):
    from evalkit.report import read_scores

    path = tmp_path / "scores.csv"
    path.write_text("system,item,score\na,1,0.5\nb,1,inf\na,2,0.25\nb,2,oops\n")
    with pytest.raises(ValueError) as exc:
        read_scores(path)
    msg = str(exc.value)
    # 'inf' is on the file's third line (the header is line 1); two rows are bad in all
    assert "scores.csv" in msg and "'score' column" in msg and "in 2 rows (first at line 3)" in msg


def test_forest_plot_draws_an_interval_that_excludes_its_estimate():
    # a percentile-bootstrap interval need not contain the point estimate; matplotlib's errorbar refuses that
    import matplotlib.pyplot as plt

    from evalkit.plots.stats import plot_forest

    t = pd.DataFrame({"a": ["x", "y"], "b": ["z", "z"], "diff": [1.0, 2.0], "ci_low": [1.2, 1.0],
                      "ci_high": [1.5, 3.0], "reject": [True, False]})
    ax = plot_forest(t)
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    spans = sorted((float(s[0][0]), float(s[1][0])) for s in segments)
    assert spans == [(1.0, 3.0), (1.2, 1.5)]  # both intervals drawn as given
    plt.close(ax.figure)
