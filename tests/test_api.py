"""The public API of issue 21: one call and one result object per job, lazy exports, scipy's
names with the old ones deprecated, no global matplotlib state, bundled data read through
importlib.resources."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.resources import ResourceNotFoundError, data_file

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "scipy", "matplotlib")


def _imported_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()


def test_import_and_dir_are_light():
    mods = _imported_after("import evalkit\nnames = dir(evalkit)\nassert 'compare_runs' in names, names")
    assert [m for m in HEAVY if m in mods] == []


def test_the_five_jobs_are_exported_lazily_and_documented():
    names = dir(evalkit)
    for name in ("rate", "compare_runs", "elo_curve", "significance_report", "simulate", "Rating", "Comparison",
                 "EloCurve", "Report", "Simulation", "ratings", "io", "stats", "budget", "sim"):
        assert name in names and name in evalkit.__all__
    assert evalkit.compare_runs is evalkit.api.compare_runs
    assert evalkit.ratings.leaderboard.__module__ == "evalkit.ratings.leaderboard"  # a subpackage, on access
    for fn in (evalkit.rate, evalkit.compare_runs, evalkit.elo_curve, evalkit.significance_report, evalkit.simulate):
        assert "Examples\n    --------" in fn.__doc__, fn.__name__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        evalkit.nope  # noqa: B018


DIFF = "diff (candidate − baseline)"  # the CLI's header, naming the sign


def test_compare_runs_has_the_cli_sign_convention(tmp_path):
    """``compare_runs(baseline, candidate)`` is candidate - baseline, as ``evalkit compare A B`` (+0.118)."""
    from evalkit.cli import main

    runs = data_file("agent_runs/truth.csv").parent
    c = evalkit.compare_runs(runs / "baseline", runs / "candidate", cluster="family")
    table = c.to_frame()
    row = table.iloc[0]
    # the CLI's names (the model the logs name, two runs of one model told apart by their paths) and columns
    assert (row["baseline"], row["candidate"]) == ("mockllm/model (baseline)", "mockllm/model (candidate)")
    assert round(float(row[DIFF]), 3) == 0.118  # the README's number
    assert main(["compare", str(runs / "baseline"), str(runs / "candidate"), "--cluster", "family",
                 "--out", str(tmp_path / "r"), "--quiet"]) == 0
    cli = pd.read_csv(tmp_path / "r" / "tables" / "run_comparisons.csv")
    # one table: the CLI's run_comparisons.csv has the API's columns, names and numbers
    assert cli.columns.tolist() == table.columns.tolist()
    assert cli[["baseline", "candidate"]].to_numpy().tolist() == table[["baseline", "candidate"]].to_numpy().tolist()
    assert float(cli[DIFF].iloc[0]) == pytest.approx(float(row[DIFF]), abs=1e-12)
    assert float(cli["pvalue"].iloc[0]) == pytest.approx(float(row["pvalue"]), abs=1e-12)
    line = "mockllm/model (candidate) − mockllm/model (baseline) = +0.118"
    assert repr(c).startswith(f"Comparison({line}") and len(repr(c)) < 200
    assert line in c.summary()
    named = evalkit.compare_runs(runs / "baseline", runs / "candidate", names=["old", "new"])
    assert named.to_frame()[["baseline", "candidate"]].iloc[0].tolist() == ["old", "new"]  # as compare --names


def test_compare_runs_on_a_frame_and_with_a_baseline():
    outcomes = pd.DataFrame({"system": ["base"] * 4 + ["new"] * 4 + ["old"] * 4, "task": list("abcd") * 3,
                             "score": [0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1]})
    c = evalkit.compare_runs(outcomes)  # every later system minus every earlier one
    assert [tuple(p) for p in c.to_frame()[["candidate", "baseline"]].to_numpy()] == [
        ("new", "base"), ("old", "base"), ("old", "new")]
    assert c.to_frame()[DIFF].tolist() == pytest.approx([0.5, -0.25, -0.75])
    b = evalkit.compare_runs(outcomes, baseline="new")
    assert [tuple(p) for p in b.to_frame()[["candidate", "baseline"]].to_numpy()] == [("base", "new"),
                                                                                    ("old", "new")]
    with pytest.raises(ValueError, match="needs two runs"):
        evalkit.compare_runs("only-one")


def test_rate_is_the_leaderboard_of_the_cells():
    from evalkit.engine import aggregate_comparisons
    from evalkit.ratings import leaderboard

    path = data_file("llmfao/gpt4-comparisons.csv")
    r = evalkit.rate(path, cluster="item")
    want = leaderboard(aggregate_comparisons(path, cluster="item")[0], cluster="item")
    pd.testing.assert_frame_equal(r.to_frame(), want)
    assert r.read_report.rows_kept == 3236
    assert repr(r).startswith("Rating(70 models, 3236 comparisons; top ") and len(repr(r)) < 200
    assert "cluster-robust" in r.summary(top=3).splitlines()[0]


def test_simulate_feeds_elo_curve_and_the_report(tmp_path):
    sim = evalkit.simulate(n_tasks=3, n_sessions=3, rng=1)
    assert list(sim.to_frame().columns) == ["system", "task", "session", "budget", "score"]
    again = evalkit.simulate(n_tasks=3, n_sessions=3, rng=1)
    pd.testing.assert_frame_equal(sim.traces, again.traces)  # same seed, same table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degenerate replicates on 3 sessions
        curve = evalkit.elo_curve(sim, n_resamples=10, rng=0)
    from evalkit.budget import elo_curves

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = elo_curves(sim.traces, n_resamples=10, rng=0)
    pd.testing.assert_frame_equal(curve.to_frame(), want.curve)
    assert set(curve.inflection) == set(sim.traces["system"])
    assert repr(curve).startswith("EloCurve(self Elo, 4 systems") and len(repr(sim)) < 200
    ax = curve.plot()
    ax.figure.canvas.draw()  # an Agg canvas of its own, not pyplot's
    assert np.asarray(ax.figure.canvas.buffer_rgba()).shape[2] == 4
    rep = evalkit.significance_report(tmp_path / "rep", traces=sim, curve_options={"n_resamples": 10})
    assert (tmp_path / "rep" / "report.html").is_file() and rep.record["complete"] is True
    assert "inflection" in rep.tables and rep.to_frame()["table"].tolist() == rep.tables


def test_old_keyword_names_warn_and_mean_the_same():
    from evalkit.ratings import bootstrap_bt, leaderboard

    frame = pd.read_csv(data_file("llmfao/gpt4-comparisons.csv")).rename(
        columns={"left": "player_a", "right": "player_b"})
    frame["outcome"] = frame["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5})
    frame = frame[["player_a", "player_b", "outcome"]]
    new = leaderboard(frame, confidence_level=0.9)
    with pytest.warns(DeprecationWarning, match="'level' is deprecated.*use 'confidence_level'"):
        old = leaderboard(frame, level=0.9)
    pd.testing.assert_frame_equal(old, new)
    with pytest.warns(DeprecationWarning, match="'n_boot' is deprecated"):
        b = bootstrap_bt(frame, n_boot=5, rng=0)
    assert b.n_resamples == 5
    with pytest.warns(DeprecationWarning):
        assert b.n_boot == 5
    with pytest.raises(TypeError, match="got both 'level'"):
        leaderboard(frame, level=0.9, confidence_level=0.9)
    from evalkit.report import ReportSpec

    with pytest.warns(DeprecationWarning, match="'seed' is deprecated"):
        spec = ReportSpec(comparisons=frame, seed=3, n_resamples=0)
    assert spec.rng == 3


def test_old_cli_flags_still_work_with_a_note(capsys):
    from evalkit.cli import main

    path = str(data_file("llmfao/gpt4-comparisons.csv"))
    assert main(["rate", path, "--level", "0.9", "--seed", "1", "--json"]) == 0
    old = capsys.readouterr()
    assert "--level is deprecated" in old.err and "use --confidence-level" in old.err
    assert main(["rate", path, "--confidence-level", "0.9", "--rng", "1", "--json"]) == 0
    new = capsys.readouterr()
    assert json.loads(old.out) == json.loads(new.out) and "deprecated" not in new.err


def test_no_pyplot_and_no_backend_switch_in_the_library():
    """Library code draws on Figure objects: no pyplot import, no matplotlib.use anywhere in evalkit/."""
    found = []
    for p in (ROOT / "evalkit").rglob("*.py"):
        if "_data" in p.parts:
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and "pyplot" in node.module or \
                    isinstance(node, ast.Import) and any("pyplot" in a.name for a in node.names):
                found.append(f"{p.name}:{node.lineno} imports pyplot")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use" and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "matplotlib":
                found.append(f"{p.name}:{node.lineno} calls matplotlib.use")
    assert found == []


def test_a_report_leaves_the_backend_and_pyplot_alone(tmp_path):
    code = (f"import matplotlib; matplotlib.use('svg'); import matplotlib.pyplot as plt\n"
            f"from evalkit.report import ReportSpec, write_report\n"
            f"write_report(ReportSpec(scores={str(data_file('seed002/scores.csv'))!r}), {str(tmp_path / 'r')!r})\n"
            f"from evalkit.plots.ratings import plot_leaderboard\n"
            f"import pandas as pd\n"
            f"ax = plot_leaderboard(pd.DataFrame({{'model': ['a', 'b'], 'elo': [1010., 990.], 'ci_low': [1000., 980.],"
            f" 'ci_high': [1020., 1000.]}}))\n"
            f"assert matplotlib.get_backend() == 'svg', matplotlib.get_backend()\n"
            f"assert plt.get_fignums() == [], plt.get_fignums()\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_sim_run_repr_is_short():
    from evalkit.sim import generate_dag, simulate

    run = simulate(generate_dag(rng=0), agents=4, rng=0)
    assert len(repr(run)) < 200 and repr(run).startswith("SimRun(standard swarm")


def test_bundled_data_are_there_and_a_missing_one_is_an_error():
    for name in ("sim/calibrated.json", "llmfao/crowd-comparisons.csv", "seed002/scores.csv", "agent_runs/truth.csv",
                 "alpaca_eval/alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz", "README.md"):
        p = data_file(name)
        assert p.read_bytes() == (ROOT / "data" / name).read_bytes()  # one copy: data/ is what ships
    with pytest.raises(ResourceNotFoundError, match="'sim/nope.json' is missing"):
        data_file("sim/nope.json")
    with pytest.raises(ValueError, match="relative to evalkit's data folder"):
        data_file("../pyproject.toml")


def test_no_silent_default_parameters(monkeypatch):
    """Without the bundled file, the simulator refuses instead of using the dataclasses' defaults."""
    import evalkit.resources as res
    from evalkit.sim.params import load_params

    monkeypatch.setattr(res, "CALIBRATED", "sim/not-installed.json")
    res._calibrated_text.cache_clear()
    try:
        with pytest.raises(ResourceNotFoundError, match="not-installed.json"):
            load_params()
    finally:
        monkeypatch.undo()
        res._calibrated_text.cache_clear()
    p = load_params()
    assert p.generator.cost_growth == json.loads((ROOT / "data/sim/calibrated.json").read_text())["generator"][
        "cost_growth"]
    assert np.isfinite(p.generator.cost_growth)


def test_session_traces_give_the_columns_elo_curves_takes():
    from evalkit.budget import elo_curves
    from evalkit.sim import session_traces

    parts = [session_traces(4, rng=k, task=f"t{k}") for k in range(3)]
    parts += [session_traces(4, agents=4, rng=10 + k, task=f"t{k}") for k in range(3)]
    table = pd.concat(parts, ignore_index=True)
    assert list(table.columns[:5]) == ["system", "task", "session", "budget", "score"]
    assert (table["budget"] == table["agent_time"]).all() and (table["score"] == table["best_score"]).all()
    res = elo_curves(table, n_resamples=0, prior=1.0)  # no renaming needed
    assert sorted(res.curve["system"].unique()) == ["1 agent", "swarm of 4"]
