"""Elo-per-budget sections of `evalkit report` on a user's session table."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.cli import main
from evalkit.report import write_report
from evalkit.report.budget import final_scores

DIFF = "diff (candidate − baseline)"  # the sign convention: second RUN minus first


def _traces(rng: int = 0) -> pd.DataFrame:
    """Two systems x 4 tasks x 6 sessions; every session submits at budgets 1..64 (doubling).

    System "b" draws from a better score distribution; the table holds each submission's own score
    (not the best so far), as a user's log would."""
    g = np.random.default_rng(rng)
    rows = []
    for system, shift in (("a", 0.0), ("b", 0.4)):
        for task in range(4):
            for session in range(6):
                for budget in 2.0 ** np.arange(7):
                    rows.append((system, f"t{task}", f"s{session}", budget, g.normal(shift + 0.1 * task)))
    return pd.DataFrame(rows, columns=["system", "task", "session", "budget", "score"])


def test_final_scores_are_best_so_far_at_the_budget():
    tr = _traces()
    s = final_scores(tr, 16.0)
    direct = tr[tr["budget"] <= 16].groupby(["system", "task", "session"])["score"].max().to_numpy()
    np.testing.assert_array_equal(s["score"].to_numpy(), direct)
    assert s.attrs["missing"] == 0 and list(s.columns) == ["system", "task", "trial", "score"]


def test_report_from_traces_has_curves_tests_and_every_figure(tmp_path):
    tr = _traces()
    out = write_report(tmp_path / "r", traces=tr, curve_options={"grid": 2.0, "n_resamples": 30}, rng=3)
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for title in ("## Elo per budget", "## Systems at the budget", "## Unit of analysis"):
        assert title in md
    for png in (out / "figures").glob("*.png"):
        assert f"figures/{png.name}" in html
    assert {"elo_per_budget.png", "unit_trials.png"} <= {p.name for p in (out / "figures").glob("*.png")}
    assert all((out / p).exists() for p in re.findall(r'src="([^"]+)"', html))
    # the paired test over task means equals scipy's on the same numbers
    means = final_scores(tr, 64.0).groupby(["system", "task"])["score"].mean().unstack("task")
    ref = stats.ttest_rel(means.loc["b"], means.loc["a"])  # scipy.stats.ttest_rel(b, a) over the 4 task means
    t = pd.read_csv(out / "tables" / "final_score_tests.csv")
    row = t.iloc[0]
    sign = 1 if row["candidate"] == "b" else -1
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert sign * row[DIFF] == pytest.approx(float((means.loc["b"] - means.loc["a"]).mean()), rel=1e-9)
    assert "Holm" in md.split("## Methods")[1]


def test_cli_report_with_traces(tmp_path, capsys):
    path = tmp_path / "sessions.csv"
    _traces(1).to_csv(path, index=False)
    rc = main(["report", "--traces", str(path), "--grid", "2", "--curve-bootstrap", "20", "--out",
               str(tmp_path / "out")])
    assert rc == 0 and (tmp_path / "out" / "report.html").exists()
    assert (tmp_path / "out" / "tables" / "inflection.csv").exists()


def test_report_needs_some_input(tmp_path):
    with pytest.raises(ValueError, match="traces=<sessions>"):
        write_report(tmp_path / "x")


def test_report_survives_tied_systems(tmp_path):
    """Two systems with identical scores everywhere: the unit-of-analysis tests are undefined (all
    ties, zero variance), so the report says so instead of aborting."""
    rows = [(s, f"t{t}", f"r{r}", 1.0) for s in ("p", "q") for t in range(4) for r in range(3)]
    scores = pd.DataFrame(rows, columns=["system", "task", "trial", "score"])
    out = write_report(tmp_path / "tie", scores=scores)
    md = (out / "report.md").read_text()
    assert "not testable on these scores" in md
    with pytest.raises(ValueError, match="not systems of the score table"):
        write_report(tmp_path / "bad", scores=scores, unit_pair=("p", "nope"))


def test_b_inf_with_a_zero_lower_bound_says_what_zero_means() -> None:
    """A bootstrap lower bound of 0 is "some resamples never exceed the reference", not a budget of 0:
    the headline says "up to" the upper bound and the share of such resamples (3 of 8 finite here)."""
    from types import SimpleNamespace

    from evalkit.report.budget import _b_inf_text

    reps = np.array([0.0, 0.0, 0.0, 640.0, 700.0, 772.0, 772.0, 772.0, np.nan])
    inf = SimpleNamespace(b_inf=772.0, ci_low=0.0, ci_high=772.0, replicates=reps)
    text = _b_inf_text(inf, 0.95)  # type: ignore[arg-type]
    assert text.startswith("772 (95% CI up to 772; in 38% of bootstrap resamples")  # 3/8 = 37.5 % -> 38 %
    assert "CI 0 to" not in text
    crossed = SimpleNamespace(b_inf=772.0, ci_low=500.0, ci_high=900.0, replicates=reps)
    assert _b_inf_text(crossed, 0.95) == "772 (95% CI 500 to 900)"  # type: ignore[arg-type]
