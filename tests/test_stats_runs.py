"""compare_runs and `evalkit compare` on Inspect logs written by Inspect (data/agent_runs), against
scipy / statsmodels run directly on the per-task outcomes read straight from the zips."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from agent_runs_helpers import RUNS, direct_outcomes
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evalkit.cli import main
from evalkit.stats.runs import compare_runs, task_means

DIFF = "diff (candidate − baseline)"  # the sign convention: second RUN minus first


def _direct_frame(system: str, runs: range) -> pd.DataFrame:
    rows = []
    for r in runs:
        for task, (score, family) in direct_outcomes(RUNS / system / f"run-{r}.eval").items():
            rows.append((system, f"toy_agent_bench/{task}", f"{system}{r}", score, family))
    return pd.DataFrame(rows, columns=["system", "task", "session", "score", "family"])


def test_compare_two_single_run_folders_matches_statsmodels_mcnemar(tmp_path):
    for system in ("baseline", "candidate"):
        (tmp_path / system).mkdir()
        shutil.copyfile(RUNS / system / "run-1.eval", tmp_path / system / "run-1.eval")
    out = tmp_path / "report"
    assert main(["compare", str(tmp_path / "baseline"), str(tmp_path / "candidate"), "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    base = _direct_frame("baseline", range(1, 2)).set_index("task")["score"]
    cand = _direct_frame("candidate", range(1, 2)).set_index("task")["score"].reindex(base.index)
    # both logs name the same model: the systems are told apart by their folders (the naming rule)
    assert (row["candidate"], row["baseline"]) == ("mockllm/model (candidate)", "mockllm/model (baseline)")
    assert row[DIFF] == pytest.approx((cand - base).mean(), abs=1e-12)
    assert row["se"] == pytest.approx((cand - base).std(ddof=1) / np.sqrt(len(base)), rel=1e-12)
    table = [[int(((cand == 1) & (base == 1)).sum()), int(((cand == 1) & (base == 0)).sum())],
             [int(((cand == 0) & (base == 1)).sum()), int(((cand == 0) & (base == 0)).sum())]]
    ref = mcnemar(table, exact=True)  # statsmodels' exact McNemar on the same 2x2 table of tasks
    assert row["test"] == "McNemar's exact test"
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert (row["candidate_only_pass"], row["baseline_only_pass"]) == (table[0][1], table[1][0])
    md = (out / "report.md").read_text()
    assert "## Paired comparison over shared tasks" in md and "no unmatched tasks" in md


def test_clustered_se_equals_statsmodels_ols_cluster_and_permutation_equals_scipy(tmp_path):
    out = tmp_path / "report"
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--cluster", "family",
                 "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    frame = pd.concat([_direct_frame("baseline", range(1, 7)), _direct_frame("candidate", range(1, 7))])
    means = frame.groupby(["system", "task"])["score"].mean().unstack("system")
    d = (means["candidate"] - means["baseline"]).to_numpy()
    family = frame.drop_duplicates("task").set_index("task")["family"].reindex(means.index).to_numpy()
    fit = OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(family)[0]})
    assert row[DIFF] == pytest.approx(fit.params[0], abs=1e-12)
    assert row["se"] == pytest.approx(fit.bse[0], rel=1e-9)  # CR1, as statsmodels' default cluster correction
    assert row["df"] == 5  # six families -> G - 1
    # sign flips of whole clusters: 2**6 = 64 vectors, exact; scipy's permutation_test on the cluster sums
    sums = pd.Series(d).groupby(family).sum().to_numpy()
    ref = stats.permutation_test((sums,), np.mean, permutation_type="samples", n_resamples=np.inf)
    assert row["test"] == "Sign-flip permutation test (exact)"
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)


def test_three_systems_holm_over_pairs_and_unmatched_tasks_listed():
    g = np.random.default_rng(5)
    rows = [(s, f"t{t}", f"r{r}", float(g.random() < p)) for s, p in (("a", 0.3), ("b", 0.5), ("c", 0.8))
            for t in range(30) for r in range(3) if not (s == "c" and t >= 27)]
    outcomes = pd.DataFrame(rows, columns=["system", "task", "session", "score"])
    res = compare_runs(outcomes, n_resamples=2000, rng=1)
    t = res.table.set_index(["a", "b"])
    assert t.loc[("a", "c"), "only_a"] == 3 and t.loc[("a", "c"), "n_tasks"] == 27
    assert res.unmatched[("a", "c")][0] == ("t27", "t28", "t29")
    assert "3 task(s) only a ran (t27, t28, t29)" in res.unmatched_report
    ref = multipletests(res.table["pvalue"], method="holm")[1]  # statsmodels' Holm
    np.testing.assert_allclose(res.table["pvalue_adjusted"], ref, rtol=1e-12)
    means = task_means(outcomes)
    assert means["runs"].eq(3).all()


def test_compare_errors_name_their_flags(tmp_path, capsys):
    # one RUN is scored alone (as `evalkit score` does), not refused
    assert main(["compare", str(RUNS / "baseline"), "--out", str(tmp_path / "out"), "--force"]) == 0
    assert "one system: its score" in capsys.readouterr().out
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--cluster", "suite",
                 "--out", str(tmp_path / "out"), "--force"]) == 2
    err = capsys.readouterr().err
    assert "--cluster" in err and "suite" in err
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--test", "mcnemar",
                 "--out", str(tmp_path / "m")]) == 0  # several runs: the pair is reported untestable, with why
    note = pd.read_csv(tmp_path / "m" / "tables" / "run_comparisons.csv")["note"].iat[0]
    assert "one pass/fail (0/1) run per task" in note

