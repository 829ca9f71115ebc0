"""The simulator's user-facing entry points: session traces, the reproduction writer, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.sim import GeneratorParams
from evalkit.sim.claims import CLAIMS
from evalkit.sim.experiments import SimParams, load_params, save_params
from evalkit.sim.sessions import population_scale, session_trace, session_traces
from evalkit.studies.reproduce import reproduce, to_markdown

SMALL = GeneratorParams(n_steps=80.0, n_layers=6.0, cost_law="geometric", cost_growth=6.0)


def test_session_trace_budget_is_agent_time():
    one = session_trace(SMALL, agents=1, rng=0)
    assert list(one.columns) == ["agent_time", "wall_time", "best_value", "best_score", "coverage"]
    # one agent without overheads: agent-time = wall-clock time
    np.testing.assert_allclose(one["agent_time"], one["wall_time"])
    assert one["best_score"].iloc[-1] == 1.0 and one["coverage"].iloc[-1] == 1.0
    four = session_trace(SMALL, agents=4, rng=0)
    assert np.all(np.diff(four["agent_time"]) >= -1e-9) and np.all(np.diff(four["best_score"]) >= 0)
    # four agents spend at least the wall time, at most four times it
    assert np.all(four["agent_time"] <= 4 * four["wall_time"] + 1e-9)
    assert np.all(four["agent_time"] >= four["wall_time"] - 1e-9)


def test_session_traces_are_independent_and_prefix_stable():
    a = session_traces(3, SMALL, rng=5)
    b = session_traces(2, SMALL, rng=5)
    pd.testing.assert_frame_equal(a[a.session < 2].reset_index(drop=True), b)
    scale = population_scale(SIMPLE := SimParams(generator=SMALL), n_dags=16, rng=1)
    c = session_traces(3, SIMPLE, rng=5, scale=scale)
    assert c["best_score"].max() <= 1.0
    with pytest.raises(ValueError, match="scale"):
        session_trace(SMALL, rng=0, scale=-1.0)


def test_params_round_trip(tmp_path):
    p = SimParams(generator=SMALL)
    save_params(p, tmp_path / "p.json", note="test")
    assert load_params(tmp_path / "p.json") == p
    with pytest.raises(ValueError, match="does not exist"):
        load_params(tmp_path / "missing.json")


def test_reproduce_writes_every_claim(tmp_path):
    rep = reproduce(tmp_path, params=SimParams(generator=SMALL, aggregate="mean-time"), seeds=(0,), n_dags=2,
                    workers=1, figures=False, breaks=())
    assert set(rep.summary["claim"]) == {c.id for c in CLAIMS}
    assert (tmp_path / "claims.md").read_text() == to_markdown(rep.summary)
    by_seed = pd.read_csv(tmp_path / "claims_by_seed.csv")
    assert len(by_seed) == len(CLAIMS)
    # with aggregate="mean-time" a speedup row is the ratio of mean times over the same DAGs
    r = rep.results[0]
    t1 = r.data["single"][:, 0, 49].mean()
    t16 = r.data["standard|16"][:, 0, 49].mean()
    row = rep.summary.set_index("claim").loc["F3.cov50"]
    assert row["value_seed0"] == pytest.approx(t1 / t16)


def test_mean_curve_speedup_on_one_dag_is_the_time_ratio():
    # with one DAG the mean curve is that run's curve, so the read-off speedup is T1 / Tk exactly
    rep = reproduce(None, params=SimParams(generator=SMALL), seeds=(3,), n_dags=1, workers=1, figures=False,
                    breaks=())
    r = rep.results[0]
    for lv, col in ((0.5, 49), (0.9, 89)):
        t1, t16 = r.data["single"][0, 0, col], r.data["standard|16"][0, 0, col]
        assert r.speedup("standard|16", "coverage", lv) == pytest.approx(t1 / t16, rel=1e-12)


def test_cli_run_and_errors(tmp_path, capsys):
    steps = pd.DataFrame({"step": list("abcd"), "duration": [1.0, 2.0, 3.0, 1.0], "value": [0, 1, 2, 3]})
    steps.to_csv(tmp_path / "steps.csv", index=False)
    pd.DataFrame({"parent": list("aab"), "child": list("bcd")}).to_csv(tmp_path / "edges.csv", index=False)
    out = tmp_path / "trace.csv"
    assert main(["simulate", "run", "--agents", "2", "--edges", str(tmp_path / "edges.csv"), "--steps",
                 str(tmp_path / "steps.csv"), "--out", str(out)]) == 0
    trace = pd.read_csv(out)
    assert sorted(trace["step"]) == [0, 1, 2, 3] and trace["end"].max() == pytest.approx(4.0)
    pd.DataFrame({"parent": list("abd"), "child": list("bda")}).to_csv(tmp_path / "cyc.csv", index=False)
    assert main(["simulate", "run", "--edges", str(tmp_path / "cyc.csv"), "--steps", str(tmp_path / "steps.csv"),
                 "--out", str(out)]) == 2
    assert "cycle" in capsys.readouterr().err
    assert main(["simulate", "run", "--agents", "0", "--dags", "1", "--out", str(out)]) == 2
    assert main(["simulate", "run", "--rule", "widest", "--dags", "1", "--out", str(out)]) == 2


def test_calibration_search_keeps_the_best_candidate():
    from evalkit.sim.calibrate import calibrate, score_params

    start = SimParams(generator=SMALL)
    space = {("generator", "cost_sigma"): (0.2, 0.8, 1.2), ("generator", "cost_growth"): (3.0,)}
    best, score, hist = calibrate(start, space=space, seeds=(5,), n_dags=2, max_passes=1, workers=1)
    # the current value (0.2) is not re-evaluated
    assert list(hist["knob"]) == ["start", "generator.cost_sigma", "generator.cost_sigma", "generator.cost_growth"]
    # the returned score is the best one evaluated, and re-scoring the returned set gives it again (CRN)
    scores = list(zip(hist["rows_held"], hist["seed_rows_held"], hist["closeness"], strict=True))
    assert (score.rows_held, score.seed_rows_held, score.closeness) == max(scores)
    assert score_params(best, seeds=(5,), n_dags=2, workers=1)[0] == score
    with pytest.raises(ValueError, match="Unknown knob"):
        calibrate(start, space={("policy", "colour"): ("red",)}, seeds=(5,), n_dags=1, workers=1)


def test_robust_objective_counts_rows_held_in_every_triple():
    from evalkit.sim.calibrate import score_params, seed_triples
    from evalkit.sim.claims import summarise

    start = SimParams(generator=SMALL)
    plain, table = score_params(start, seeds=(5, 6, 7, 8, 9, 10), n_dags=1, workers=1)
    robust, _ = score_params(start, seeds=(5, 6, 7, 8, 9, 10), n_dags=1, workers=1, groups=seed_triples((5, 6, 7, 8, 9, 10)))
    # reference: each triple summarised on its own, a row counts when it holds on >= 2 of 3 in both
    a = summarise(table.loc[table["seed"].isin([5, 6, 7])]).set_index("claim")["holds"]
    b = summarise(table.loc[table["seed"].isin([8, 9, 10])]).set_index("claim")["holds"]
    assert robust.rows_held == int((a & b.reindex(a.index)).sum())
    assert robust.seed_rows_held == plain.seed_rows_held and robust.closeness == plain.closeness
    with pytest.raises(ValueError, match="multiple of 3 seeds"):
        seed_triples((1, 2, 3, 4))


def test_calibration_fits_only_what_the_post_leaves_open():
    from evalkit.sim.calibrate import SEARCH_SPACE, select

    # issue 13: the agents' rules and the aggregator are the post's, never searched
    assert {section for section, _ in SEARCH_SPACE} == {"generator"}
    with pytest.raises(ValueError, match="no accepted candidate"):
        select(pd.DataFrame({"accepted": [False], "params": ["{}"], "knob": ["start"], "value": [""]}), seeds=(1,))


def test_cli_reproduce_reports_progress_per_figure(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["simulate", "reproduce", "--out", str(out), "--seeds", "0", "--dags", "1", "--no-figures",
                 "--no-breaks", "--fig11-seeds", "--engine", "serial", "--verbose"]) == 0  # piped: lines with -v
    err = capsys.readouterr().err
    for stage in ("figures 2-5 and 8 (swarms): 1/1", "figure 6 (rules): 1/1", "figure 7 (overheads): 1/1",
                  "figures 9-10 (width): 1/1"):
        assert stage in err
    assert (out / "claims.md").exists() and not (out / "breaks_by_seed.csv").exists()


def test_cli_calibrate_writes_history_and_selection(tmp_path):
    start = tmp_path / "start.json"
    save_params(SimParams(generator=SMALL), start)
    out = tmp_path / "new" / "fit.json"  # a directory that does not exist yet
    assert main(["simulate", "calibrate", "--out", str(out), "--start", str(start), "--seeds", "3",
                 "--select-seeds", "4", "--dags", "1", "--engine", "serial"]) == 0
    hist = pd.read_csv(out.with_suffix(".history.csv"))
    sel = pd.read_csv(out.with_suffix(".selection.csv"))
    # every candidate is logged: each knob's values except the one current when it is tried
    from evalkit.sim.calibrate import SEARCH_SPACE

    tried = hist.iloc[1:].groupby("knob").size()
    assert set(tried.index) == {f"{s}.{k}" for s, k in SEARCH_SPACE}
    for (sec, k), vals in SEARCH_SPACE.items():
        assert len(vals) - 1 <= tried[f"{sec}.{k}"] <= len(vals)
    assert hist["accepted"].sum() == len(sel)
    assert load_params(out).policy == SimParams().policy
    # the robust objective needs whole seed triples
    assert main(["simulate", "calibrate", "--out", str(tmp_path / "r.json"), "--start", str(start), "--seeds", "3",
                 "--robust", "--dags", "1", "--engine", "serial"]) == 2


@pytest.mark.parametrize("agents,share", [(1, 0.25), (2, 0.5), (4, 1.0)])
def test_session_budget_cut_equals_filtered_full_trace(agents, share):
    """A session cut at its budget (simulation stopped early) has exactly the rows of the full
    trace at agent-time <= budget, bit for bit; the reference is the full run, filtered."""
    from evalkit.sim import generate_dag, simulate

    p = load_params()
    dag = generate_dag(p.generator, rng=11)
    budget = share * dag.work
    full = session_trace(dag, agents=agents, rng=5)
    cut = session_trace(dag, agents=agents, rng=5, budget=budget)
    want = full.loc[full["agent_time"] <= budget].reset_index(drop=True)
    assert len(want) < len(full) or share == 1.0
    pd.testing.assert_frame_equal(cut, want, check_exact=True)
    run = simulate(dag, agents=agents, policy=p.policy, scheduling=0.0, communication=0.0, baseline=agents == 1,
                   rng=5, stop_after=budget)
    assert (run.stopped_at < np.inf) == (share < 1.0)  # the cut runs did stop early


def test_shared_map_gives_the_tables_of_separate_runs(tmp_path):
    """Figures 2-10 and figure 11 in one executor map (both cores busy across them) write byte-for-byte
    the files of the two separate runs, and progress still ends once per figure stage."""
    from evalkit.studies import Figure11Config, write_figure11_reproduction
    from evalkit.studies.fig11_claims import FIG11_BREAKS

    params = SimParams(generator=SMALL)
    f11 = Figure11Config(params=params, n_tasks=4, n_sessions=3, decades=2.0, bootstrap=0)
    ticks = []
    rep = reproduce(tmp_path / "one", params=params, seeds=(0, 1), n_dags=2, workers=2, fig11_seeds=(0, 1),
                    fig11_config=f11, progress=lambda *a: ticks.append(a), figures=False)
    reproduce(tmp_path / "two", params=params, seeds=(0, 1), n_dags=2, workers=2, figures=False)
    write_figure11_reproduction(tmp_path / "two", f11, seeds=(0, 1), breaks=FIG11_BREAKS, workers=2, figure=False)
    files = sorted(p.name for p in (tmp_path / "two").iterdir())
    assert "figure11_claims.csv" in files and sorted(p.name for p in (tmp_path / "one").iterdir()) == files
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    summary = pd.read_csv(tmp_path / "two" / "figure11_claims.csv")
    assert list(rep.figure11["claim"]) == list(summary["claim"])
    assert list(rep.figure11["holds"]) == list(summary["holds"])
    # each stage reports its own jobs: 2 seeds x 2 DAGs per sweep part, 2 figure-11 seeds (+ the null, unless
    # an earlier test in this process cached it)
    ends = {s: d for s, d, t in ticks if d == t and t}
    assert {k: v for k, v in ends.items() if k != "figure 11"} == {
        "figures 2-5 and 8 (swarms)": 4, "figure 6 (rules)": 4, "figure 7 (overheads)": 4,
        "figures 9-10 (width)": 4}
    assert ends["figure 11"] in (2, 3)


@pytest.mark.parametrize("engine", ["serial", "process"])
def test_executor_reports_progress_per_job_stage(engine):
    from evalkit.engine import get_executor

    ticks = []
    out = get_executor(engine, workers=2).map(abs, [-1, -2, -3], progress=lambda *a: ticks.append(a),
                                              stage=["a", "b", "a"])
    assert out == [1, 2, 3]
    assert ("a", 0, 2) in ticks and ("b", 0, 1) in ticks and ("a", 2, 2) in ticks and ("b", 1, 1) in ticks
    assert len(ticks) == 2 + 3
    with pytest.raises(ValueError, match="one stage name per job"):
        get_executor(engine, workers=2).map(abs, [1, 2], stage=["a"])
