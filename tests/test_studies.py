"""Figure 11 on the simulator and the end-to-end demo (small designs, for speed)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalkit.studies import Figure11Config, figure11, figure11_claims, simulate_systems
from evalkit.studies.demo import final_scores, run_demo
from evalkit.studies.fig11 import checkpoints

SMALL = Figure11Config(n_tasks=4, n_sessions=3, decades=2.0, bootstrap=10)


@pytest.fixture(scope="module")
def small_result():
    return figure11(SMALL, rng=7)


def test_checkpoints_end_at_budget_and_span_three_decades():
    b = checkpoints(2000.0, decades=3, grid=1.5)
    assert b[-1] == pytest.approx(2000.0)
    np.testing.assert_allclose(b[1:] / b[:-1], 1.5)
    # 1.5**17 = 985 < 1000 < 1.5**18: 18 checkpoints fit in three decades
    assert len(b) == 18 and b[-1] / b[0] <= 1000


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="n_tasks"):
        Figure11Config(n_tasks=0)
    with pytest.raises(ValueError, match="n_sessions must be an integer >= 2"):
        Figure11Config(n_sessions=1)
    with pytest.raises(ValueError, match="grid"):
        Figure11Config(grid=1.0)
    with pytest.raises(ValueError, match="budget"):
        Figure11Config(budget=-1.0)


def test_session_counts_and_budgets():
    traces, budget, scale = simulate_systems(SMALL, rng=3)
    n = traces.groupby("system")[["task", "session"]].apply(lambda f: len(f.drop_duplicates()))
    # every system has n_tasks x n_sessions sessions (a best-of-K composite counts once)
    assert set(n) == {SMALL.n_tasks * SMALL.n_sessions}
    assert traces["budget"].max() <= budget * (1 + 1e-9)
    assert scale > 0 and ((traces["score"] >= 0) & (traces["score"] <= 1)).all()


def test_pass4_is_best_of_four_quarter_budget_sessions():
    """Recompute pass@4 from its members independently: best of 4 sessions at B/4."""
    from evalkit.sim.experiments import load_params
    from evalkit.sim.sessions import population_scale, session_traces
    from evalkit.studies.fig11 import _mean_work

    traces, budget, scale = simulate_systems(Figure11Config(n_tasks=1, n_sessions=2, bootstrap=0), rng=11)
    # replay the generator's draws in simulate_systems' order
    g = np.random.default_rng(11)
    params = load_params()
    assert population_scale(params, rng=int(g.integers(2**63))) == scale
    assert _mean_work(params, g) == budget
    g.integers(2**63)  # pass@1's single task
    members = session_traces(8, params, agents=1, rng=int(g.integers(2**63)), scale=scale)
    best = members.loc[members["agent_time"] <= budget / 4].groupby("session")["best_score"].max()
    p4 = traces.loc[traces["system"] == "pass@4"].groupby("session")["score"].max()
    # sessions 0-3 form the first composite, 4-7 the second (grouped in order of session id)
    assert list(p4) == [best.loc[0:3].max(), best.loc[4:7].max()]


def test_same_seed_same_study(small_result):
    again = figure11(SMALL, rng=7)
    pd.testing.assert_frame_equal(small_result.traces, again.traces)
    pd.testing.assert_frame_equal(small_result.joint_elo.curve, again.joint_elo.curve)
    pd.testing.assert_frame_equal(small_result.final, again.final)


def test_curves_cover_all_systems_on_the_grid(small_result):
    r = small_result
    assert set(r.joint_elo.curve["system"]) == {"pass@1", "pass@4", "group@4", "pass@2 group@2"}
    assert set(r.self_elo.curve["system"]) == {"pass@1", "group@4"}
    assert r.final["budget"].eq(r.budget).all()
    assert list(r.final["elo"]) == sorted(r.final["elo"], reverse=True)


def test_claims_table_shape(small_result):
    c = figure11_claims(small_result, seed=7)
    assert list(c.columns) == ["claim", "figure", "text", "seed_value", "measure", "tolerance", "seed", "value",
                               "holds", "detail"]
    assert list(c["claim"]) == ["F11.start", "F11.below", "F11.bend", "F11.overtake", "F11.track", "F11.between"]
    assert c["holds"].map(type).eq(bool).all()
    # the rows are consistent with the final table they quote
    e = small_result.final.set_index("system")["elo"]
    lo, hi = sorted((e["group@4"], e["pass@4"]))
    row = c.set_index("claim")
    assert row.loc["F11.between", "holds"] == bool(lo <= e["pass@2 group@2"] <= hi)
    assert row.loc["F11.track", "value"] == pytest.approx(e["group@4"] - e["pass@1"])
    assert row.loc["F11.track", "holds"] == bool(abs(e["group@4"] - e["pass@1"]) <= 50)


def test_reproduction_over_seeds_is_written_into_the_claim_table(tmp_path):
    from evalkit.studies import write_figure11_reproduction

    (tmp_path / "claims.md").write_text("| simulator rows |\n")
    summary = write_figure11_reproduction(tmp_path, SMALL, seeds=(0, 1), workers=1, figure=False,
                                          breaks=("constcost",))
    by_seed = pd.read_csv(tmp_path / "figure11_claims_by_seed.csv")
    assert set(by_seed["seed"]) == {0, 1} and len(by_seed) == 24
    assert set(summary["kind"]) <= {"evidence", "restatement"}
    by_seed = by_seed.loc[by_seed["simulator"] == "model"]
    # seeds held = count of per-seed holds; a row holds on >= 2/3 of the seeds (here: both)
    held = by_seed.groupby("claim", sort=False)["holds"].sum()
    assert list(summary["seeds_held"]) == list(held)
    assert list(summary["holds"]) == [h == 2 for h in held]
    md = (tmp_path / "claims.md").read_text()
    assert md.startswith("| simulator rows |") and "## Figure 11" in md and "F11.between" in md
    # writing again replaces the figure-11 section instead of appending a second one
    write_figure11_reproduction(tmp_path, SMALL, seeds=(0, 1), workers=1, figure=False, breaks=())
    assert (tmp_path / "claims.md").read_text().count("## Figure 11") == 1


def test_best_of_n_null_sits_on_the_reference():
    from evalkit.studies import best_of_n_null

    # best of n i.i.d. continuous scores beats best of m with probability n / (n + m): exactly 400 Elo per
    # decade (notes/swarm-post-model.md). So over the whole span the null's self-Elo ends on the reference
    # line through its start: the mean of "Elo at B minus the line" is 0 within its standard error, on the
    # study's design (14 tasks x 5 sessions, 3 decades; tiny designs carry Bradley-Terry's small-sample bias).
    null = best_of_n_null(14, 5, 3.0, 1.5, n_replicates=100, rng=3)
    lv = null["level_at_B"]
    assert abs(lv.mean()) < 3 * lv.std() / np.sqrt(len(lv))
    assert null["start_slope"].notna().all()


def test_final_scores_are_best_so_far_at_budget(small_result):
    s = final_scores(small_result)
    tr = small_result.traces
    direct = tr.groupby(["system", "task", "session"])["score"].max()
    assert np.allclose(np.sort(s["score"]), np.sort(direct.to_numpy()))


def test_demo_writes_a_complete_report(tmp_path):
    out = run_demo(tmp_path / "demo", config=SMALL, rng=1)
    html = (out / "report.html").read_text()
    pngs = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert "figure11.png" in pngs
    for name in pngs:
        assert f"figures/{name}" in html
    linked = set(re.findall(r'src="(figures/[^"]+)"', html))
    assert all((out / p).exists() for p in linked)
    assert (out / "run.json").exists() and (out / "sessions.parquet").exists()
    # the second report rates the bundled real judgments and is linked from the first
    assert 'href="real/report.html"' in html
    real_html = (out / "real" / "report.html").read_text()
    assert "figures/leaderboard.png" in real_html and (out / "real" / "figures" / "leaderboard.png").exists()
    # the written session table is a valid trace table that the curve path reads back
    from evalkit.io import read_traces

    back = read_traces(out / "sessions.parquet")
    frame = back.frame if hasattr(back, "frame") else back
    assert set(frame["system"]) == {"pass@1", "pass@4", "group@4", "pass@2 group@2"}
