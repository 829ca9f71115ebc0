"""One naming rule and one sign convention in every command; the per-task table of compare and report.

- Names: a RUN's system is the model its logs name; ``--names`` overrides; two RUNs of the same model
  are told apart by their path.
- Sign: ``compare BASELINE CANDIDATE`` and ``report --scores`` both report candidate − baseline
  (second minus first), checked against scipy on the same numbers.
- Per-task table: one row per task with each system's outcome, discordant yes/no and budget; the
  discordant count equals McNemar's discordant pairs; token totals equal Inspect's own usage.
"""

from __future__ import annotations

import pandas as pd
import pytest
from agent_runs_helpers import RUNS, direct_outcomes, eval_samples
from scipy import stats

from evalkit.cli import main

DIFF = "diff (candidate − baseline)"
SEED002 = RUNS.parent / "seed002" / "scores.csv"


def test_systems_take_the_model_name_and_duplicates_are_told_apart(tmp_path):
    out = tmp_path / "c"
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--n-resamples", "99",
                 "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    # both runs are Inspect's mockllm/model: the model name, told apart by the folder
    assert (row["baseline"], row["candidate"]) == ("mockllm/model (baseline)", "mockllm/model (candidate)")
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--names", "old,new", "--n-resamples",
                 "99", "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert (row["baseline"], row["candidate"]) == ("old", "new")
    assert main(["compare", str(RUNS / "baseline"), str(RUNS / "candidate"), "--names", "x,x",
                 "--out", str(out), "--force"]) == 2


def test_compare_and_report_scores_share_the_sign(tmp_path):
    """compare A B and report --scores both print second minus first (candidate − baseline)."""
    scores = pd.read_csv(SEED002)
    first, second = list(dict.fromkeys(scores["system"]))  # base, then mass_round2
    means = scores.groupby(["system", "task"])["score"].mean().unstack("system")
    expected = float((means[second] - means[first]).mean())
    ref = stats.ttest_rel(means[second], means[first])  # scipy: second − first over the 12 task means
    out = tmp_path / "r"
    assert main(["report", "--scores", str(SEED002), "--out", str(out), "--force"]) == 0
    unit = pd.read_csv(out / "tables" / "unit_of_analysis.csv").set_index("test")
    paired = unit.loc["task level: paired t over task means"]
    assert paired["estimate"] == pytest.approx(expected, rel=1e-12) and expected > 0
    assert paired["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert "candidate − baseline" in str(unit.loc["trial level: Welch over trial means", "estimate_name"])
    md = (out / "report.md").read_text()
    assert "candidate − baseline" in md and "differences a - b" not in md
    # per-item scores (one per system and task): the paired-comparisons table, same sign
    items = means.stack().rename("score").reset_index().rename(columns={"task": "item"})
    items.to_csv(tmp_path / "items.csv", index=False)
    assert main(["report", "--scores", str(tmp_path / "items.csv"), "--out", str(tmp_path / "i"), "--force"]) == 0
    pair = pd.read_csv(tmp_path / "i" / "tables" / "pairwise.csv").iloc[0]
    assert (pair["baseline"], pair["candidate"]) == (first, second)
    assert pair[DIFF] == pytest.approx(expected, rel=1e-12)
    # the same table as two RUNs of compare: the same sign, the same difference
    for system in (first, second):
        scores[scores["system"] == system].rename(columns={"trial": "session"}).to_csv(tmp_path / f"{system}.csv",
                                                                                        index=False)
    assert main(["compare", str(tmp_path / f"{first}.csv"), str(tmp_path / f"{second}.csv"), "--n-resamples", "99",
                 "--out", str(tmp_path / "c"), "--force"]) == 0
    row = pd.read_csv(tmp_path / "c" / "tables" / "run_comparisons.csv").iloc[0]
    assert (row["baseline"], row["candidate"]) == (first, second)
    assert row[DIFF] == pytest.approx(expected, rel=1e-12)


def _usage(log) -> dict[str, int]:
    """task -> input + output tokens of the .eval's samples, read with zipfile."""
    out = {}
    for s in eval_samples(log):
        u = next(iter(s["model_usage"].values()))
        out[f"toy_agent_bench/{s['id']}"] = u["input_tokens"] + u["output_tokens"]
    return out


def test_per_task_table_outcomes_discordance_and_budgets(tmp_path, capsys):
    a, b = RUNS / "baseline" / "run-1.eval", RUNS / "candidate" / "run-1.eval"
    out = tmp_path / "c"
    assert main(["compare", str(a), str(b), "--out", str(out), "--force"]) == 0
    printed = capsys.readouterr().out
    per = pd.read_csv(out / "tables" / "per_task.csv", keep_default_na=False, na_values=[""])
    base, cand = "mockllm/model (run-1)", None
    systems = [c for c in per.columns if c not in ("task", "discordant") and not c.endswith(("tokens", "cost", "time"))]
    assert len(systems) == 2
    base, cand = systems
    da, db = direct_outcomes(a), direct_outcomes(b)
    for r in per.itertuples():
        t = r.task.split("/")[1]
        assert (r[2], r[3]) == (da[t][0], db[t][0])
        assert r.discordant == ("yes" if da[t][0] != db[t][0] else "no")
    pair = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert (per["discordant"] == "yes").sum() == pair["candidate_only_pass"] + pair["baseline_only_pass"]
    ua = _usage(a)
    assert per.set_index("task")[f"{base} tokens"].to_dict() == ua
    scores = pd.read_csv(out / "tables" / "scores.csv").set_index("system")
    assert scores.loc[base, "tokens"] == sum(ua.values()) and scores.loc[cand, "tokens"] == sum(_usage(b).values())
    assert "Per-task outcomes" in (out / "report.md").read_text() and "each system alone" in printed


def test_report_has_the_per_item_table_too(tmp_path):
    out = tmp_path / "r"
    assert main(["report", "--scores", str(SEED002), "--out", str(out), "--force"]) == 0
    per = pd.read_csv(out / "tables" / "per_task.csv", keep_default_na=False, na_values=[""])
    scores = pd.read_csv(SEED002)
    means = scores.groupby(["task", "system"])["score"].mean().unstack()
    assert len(per) == len(means)
    got = per.set_index("task")[means.columns.tolist()]
    pd.testing.assert_frame_equal(got.sort_index(), means.sort_index(), check_names=False, check_exact=False,
                                  rtol=1e-12)


def test_advice_does_not_loop_back_to_a_flag_already_given(tmp_path, capsys):
    """`pass --missing lose` was printed again after `--missing lose` was passed."""
    rows = [("a", "t", "s1", 10.0, 1.0), ("b", "t", "s2", 10.0, 0.0)]
    path = tmp_path / "one.csv"
    pd.DataFrame(rows, columns=["system", "task", "session", "budget", "score"]).to_csv(path, index=False)
    assert main(["curve", str(path), "--bootstrap", "0", "--budgets", "5,20", "--missing", "lose"]) == 2
    err = capsys.readouterr().err
    assert "--missing lose" not in err
    assert main(["curve", str(path), "--bootstrap", "0", "--budgets", "5,20"]) == 2
    assert "--missing lose" in capsys.readouterr().err
