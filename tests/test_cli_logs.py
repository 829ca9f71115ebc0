"""Every invocation of issue 11 from the command line: it works, or its error names the CLI flag.

- `evalkit curve run.traj`                (needs the SWE-bench verdict: --resolved / --resolved-ids)
- `evalkit curve --logs events.jsonl`     (fields mapped with --map)
- `evalkit curve --logs logs/`            (a folder of Inspect logs)
- `evalkit report --traces run.eval`      (an Inspect log, not a CSV)
- a single Inspect log                    (single-budget grid: --grid / --budgets / --start)
- `evalkit compare A B`, `compare --plan`, `compare X --by epoch`, lm-eval runs
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from agent_runs_helpers import RUNS, TRANSCRIPTS

from evalkit.cli import main

DIFF = "diff (candidate − baseline)"  # the sign convention: second RUN minus first

TRAJ = TRANSCRIPTS / "swe_agent" / "pydicom__pydicom-1458.traj"
SMALL = TRANSCRIPTS / "metr_inspect_action" / "small.eval"


def _err(capsys) -> str:
    return capsys.readouterr().err


def test_curve_traj_names_resolved_flags_and_reads_the_report(tmp_path, capsys):
    assert main(["curve", str(TRAJ), "--out", str(tmp_path / "out"), "--force"]) == 2
    err = _err(capsys)
    assert "--resolved REPORT.json" in err and "--resolved-ids FILE" in err and "resolved=True" not in err
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"resolved_ids": [TRAJ.stem], "unresolved_ids": []}))
    # scored now; one trajectory is one budget, so the next error is the grid's, again as flags
    assert main(["curve", str(TRAJ), "--resolved", str(report), "--bootstrap", "0", "--out", str(tmp_path / "out"), "--force"]) == 2
    err = _err(capsys)
    assert "--grid" in err and "--budgets" in err and "explicit budgets" not in err
    ids = tmp_path / "ids.txt"
    ids.write_text(TRAJ.stem + "\n")
    assert main(["curve", str(TRAJ), "--resolved-ids", str(ids), "--bootstrap", "0", "--out", str(tmp_path / "out"), "--force"]) == 2
    assert "--budgets" in _err(capsys)


def _events(path, *, system_field="agent"):
    rows = []
    for system, lift in (("a", 0.0), ("b", 0.2)):
        for task in range(3):
            for session in range(4):
                for step in range(1, 5):
                    rows.append({system_field: system, "task": f"t{task}", "run": f"{system}{session}",
                                 "input_tokens": 100 * step, "output_tokens": 10,
                                 "reward": round(min(1.0, 0.1 * step + lift + 0.05 * session), 3)})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_curve_events_jsonl_with_map(tmp_path, capsys):
    path = _events(tmp_path / "events.jsonl")
    assert main(["curve", "--logs", str(path), "--out", str(tmp_path / "out"), "--force"]) == 2
    err = _err(capsys)
    assert "--map NAME=FIELD" in err and "columns=" not in err and "'agent'" in err
    out = tmp_path / "out"
    assert main(["curve", "--logs", str(path), "--map", "system=agent", "--map", "session=run", "--map",
                 "score=reward", "--bootstrap", "10", "--grid", "2", "--out", str(out), "--force"]) == 0
    curve = pd.read_csv(out / "curve.csv")
    assert set(curve["system"]) == {"a", "b"}
    # budget: cumulative input + output tokens, so checkpoints start at the first submission's 110 tokens
    assert curve["budget"].min() == 110


def test_curve_on_a_folder_of_inspect_logs(tmp_path):
    assert main(["curve", "--logs", str(RUNS / "baseline"), str(RUNS / "candidate"), "--by", "input",
                 "--bootstrap", "10", "--out", str(tmp_path / "out"), "--force"]) == 0
    assert set(pd.read_csv(tmp_path / "out" / "inflection.csv")["system"]) == {"baseline", "candidate"}
    assert (tmp_path / "out" / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_single_inspect_log_names_grid_flags_and_works_with_them(tmp_path, capsys):
    assert main(["curve", str(SMALL), "--bootstrap", "0", "--out", str(tmp_path / "out"), "--force"]) == 2
    err = _err(capsys)
    assert "--grid" in err and "--budgets B1,B2" in err and "--start/--stop" in err
    assert main(["curve", str(SMALL), "--budgets", "500,1000,2000,4000", "--bootstrap", "0", "--out", str(tmp_path / "out"), "--force"]) == 0
    assert pd.read_csv(tmp_path / "out" / "curve.csv")["budget"].tolist() == [500.0, 1000.0, 2000.0, 4000.0]


def test_report_traces_reads_an_inspect_log(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["report", "--traces", str(SMALL), "--out", str(out), "--force"]) == 2
    err = _err(capsys)
    assert "CSV" not in err and "--grid" in err and "--budgets" in err
    assert main(["report", "--traces", str(SMALL), "--grid", "1.05", "--curve-bootstrap", "10", "--out", str(out), "--force"]) == 0
    md = (out / "report.md").read_text()
    assert "## Elo per budget" in md
    run = json.loads((out / "run.json").read_text())
    assert run["parameters"]["traces_read"]["files"] == {"inspect": 1}


def test_compare_plan_prints_the_power_table(capsys):
    assert main(["compare", "--plan", "--tasks", "50", "--epochs", "5", "--baseline-rate", "0.4", "--icc", "0.3",
                 "--effect", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "| mcnemar |" in out and "| paired tasks |" in out and "| independent tasks |" in out
    assert main(["compare", "--plan", "--epochs", "5"]) == 2
    assert "--tasks" in _err(capsys)


def test_compare_by_epoch_splits_a_single_log(tmp_path, capsys):
    assert main(["compare", str(SMALL), "--by", "epoch", "--out", str(tmp_path / "out"), "--force"]) == 0
    t = pd.read_csv(tmp_path / "out" / "tables" / "run_comparisons.csv")
    assert len(t) == 15  # six epochs, all pairs
    assert t["note"].str.contains("at least 2").all()  # one task: every pair is untestable, and says why
    assert main(["compare", str(SMALL), "--by", "seed", "--out", str(tmp_path / "out"), "--force"]) == 2
    assert "--by 'seed'" in _err(capsys)


def test_compare_lm_eval_runs_of_two_models(tmp_path):
    from test_io_logs import _lm_eval_samples

    scores_a = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1]
    scores_b = [1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1]
    _lm_eval_samples(tmp_path / "org__a", "org/a", scores_a, "2025-01-02T03-04-05.1")
    _lm_eval_samples(tmp_path / "org__b", "org/b", scores_b, "2025-01-02T03-04-05.2")
    out = tmp_path / "r"
    assert main(["compare", str(tmp_path / "org__a"), str(tmp_path / "org__b"), "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert row["test"] == "McNemar's exact test" and row[DIFF] == pytest.approx(3 / 12)
    assert main(["compare", str(tmp_path / "org__a"), str(tmp_path / "org__b"), "--metric", "f1",
                 "--out", str(out), "--force"]) == 2


def test_compare_swe_agent_runs_with_their_reports(tmp_path):
    ids = [f"{r}__{r}-{i}" for r in ("django", "astropy", "sympy") for i in range(2)]
    for run, resolved in (("run-a", ids[:2]), ("run-b", ids[:5])):
        (tmp_path / run).mkdir()
        for i in ids:
            shutil.copyfile(TRAJ, tmp_path / run / f"{i}.traj")
        (tmp_path / run / "model.run.json").write_text(json.dumps({"resolved_ids": resolved,
                                                                  "unresolved_ids": sorted(set(ids) - set(resolved))}))
    out = tmp_path / "r"
    assert main(["compare", str(tmp_path / "run-a"), str(tmp_path / "run-b"), "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert (row["candidate"], row["baseline"], row["mean_candidate"], row["mean_baseline"]) == ("run-b", "run-a", 5 / 6, 2 / 6)
    # clusters from the instance ids: the repository (SWE-bench's natural cluster)
    assert main(["compare", str(tmp_path / "run-a"), str(tmp_path / "run-b"), "--cluster-regex", r"^(.+)-\d+$",
                 "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert row["se_method"] == "CR1 clustered by cluster (3 clusters)" and row["df"] == 2
    assert main(["compare", str(tmp_path / "run-a"), str(tmp_path / "run-b"), "--cluster-regex", "^django",
                 "--out", str(out), "--force"]) == 2


def test_compare_continuous_scores_warn_and_take_a_pass_threshold(tmp_path, capsys):
    rows = [{"agent": s, "run": f"{s}{r}", "task": f"t{t}", "input_tokens": 10, "reward": round(0.1 * ((t + r) % 7), 2)
             + (0.2 if s == "b" else 0.0)} for s in ("a", "b") for t in range(8) for r in range(3)]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    args = ["compare", str(path), "--by", "system", "--map", "system=agent", "--map", "session=run",
            "--map", "score=reward"]
    assert main([*args, "--out", str(tmp_path / "r1")]) == 0
    assert "--pass-threshold T" in _err(capsys)
    assert "Not computed" in (tmp_path / "r1" / "report.md").read_text()
    assert main([*args, "--pass-threshold", "0.5", "--out", str(tmp_path / "r2")]) == 0
    k1 = pd.read_csv(tmp_path / "r2" / "tables" / "pass_k.csv").query("k == 1 and metric == 'pass@k'")
    direct = pd.DataFrame(rows).assign(p=lambda f: f["reward"] >= 0.5).groupby("agent")["p"].mean()
    assert k1.set_index("system")["estimate"].to_dict() == pytest.approx(direct.to_dict())
    t = pd.read_csv(tmp_path / "r2" / "tables" / "run_comparisons.csv").iloc[0]
    assert t["test"].startswith("Sign-flip permutation test") and t[DIFF] == pytest.approx(0.2)


def test_compare_orders_pairs_as_the_runs_are_given(tmp_path):
    out = tmp_path / "r"
    assert main(["compare", str(RUNS / "candidate"), str(RUNS / "baseline"), "--names", "new,old",
                 "--n-resamples", "999", "--out", str(out), "--force"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert (row["candidate"], row["baseline"]) == ("old", "new") and row[DIFF] == pytest.approx(-0.1180555556)


def test_report_traces_table_keeps_its_checksum(tmp_path):
    import hashlib

    import numpy as np

    g = np.random.default_rng(0)
    rows = [(s, f"t{t}", f"s{k}", 2.0**b, 0.1 * b + (0.3 if s == "b" else 0.0) + g.gumbel())
            for s in ("a", "b") for t in range(3) for k in range(6) for b in range(6)]
    path = tmp_path / "sessions.csv"
    pd.DataFrame(rows, columns=["system", "task", "session", "budget", "score"]).to_csv(path, index=False)
    out = tmp_path / "r"
    assert main(["report", "--traces", str(path), "--curve-bootstrap", "10", "--out", str(out), "--force"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["parameters"]["traces_file"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_rating_remedies_name_the_prior_flag(capsys):
    from evalkit.cli._logs import cli_remedies

    with pytest.raises(ValueError, match=r"start the grid later \(--start\), or pass --prior N"):
        with cli_remedies():
            raise ValueError("use more sessions or tasks, start the grid later, or pass prior=... (pseudo-games).")
    with pytest.raises(ValueError, match=r"Remedies: add symmetric pseudo-games with --prior N \(ratings"):
        with cli_remedies():
            raise ValueError("Remedies: add an L2 prior (e.g. fit_bt(..., l2=0.01), which shrinks the ratings and "
                             "always exists), drop these models.")


def test_compare_prints_formula_like_names_as_they_are(tmp_path, capsys):
    """The CSV neutralises a system named '=cmd' against spreadsheet formulas; the terminal shows
    the name itself (it used to print the CSV's "'=cmd")."""
    out = tmp_path / "r"
    assert main(["compare", str(RUNS / "candidate"), str(RUNS / "baseline"), "--names", "=cmd,@old",
                 "--n-resamples", "999", "--out", str(out), "--force"]) == 0
    printed = capsys.readouterr().out
    assert "| =cmd | @old |" in printed and "'=cmd" not in printed
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    assert (row["candidate"], row["baseline"]) == ("'@old", "'=cmd")
