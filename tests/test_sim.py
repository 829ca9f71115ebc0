"""Oracles for the swarm simulator: work/span bounds, Graham's greedy bound, the communication
cap, exact agent-time accounting, determinism, precedence and the concurrency cap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.sim import (
    RULES,
    Policy,
    agent_time_at,
    dag_from_frames,
    generate_dag,
    generate_dags,
    simulate,
    time_to_best,
    time_to_coverage,
)
from evalkit.sim.engine import COMPLETE, DISPATCH, EventQueue

SMALL = {"n_steps": 120.0, "n_layers": 9.0}


@pytest.fixture(scope="module")
def dags():
    from evalkit.sim import GeneratorParams

    p = GeneratorParams(cost_law="geometric", cost_growth=6.0, **SMALL)
    return generate_dags(4, p, rng=7)


def _free(dag, k, **kw):
    return simulate(dag, agents=k, scheduling=0.0, communication=0.0, rng=3, **kw)


def test_single_agent_is_never_idle(dags):
    # one agent without overheads works through all the work back to back: T1 = W
    for d in dags:
        assert _free(d, 1).makespan == pytest.approx(d.work, rel=1e-12)


@pytest.mark.parametrize("swarm", ["standard", "recursive"])
@pytest.mark.parametrize("k", [2, 4, 16, 64])
def test_work_span_upper_bound(dags, swarm, k):
    # any k-agent schedule: T_k >= max(W/k, S), so speedup <= min(k, W/S)
    for d in dags:
        sp = d.work / _free(d, k, swarm=swarm).makespan
        assert sp <= min(k, d.work / d.span) * (1 + 1e-9)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("k", [2, 3, 8, 32])
def test_standard_swarm_is_greedy(dags, rule, k):
    # Graham (1969): a greedy list schedule finishes by W/k + S, i.e. speedup >= W/(W/k + S)
    for d in dags:
        t = _free(d, k, rule=rule).makespan
        assert t <= d.work / k + d.span + 1e-9


def _independent(n):
    steps = pd.DataFrame({"step": range(n), "duration": 1.0})
    return dag_from_frames(pd.DataFrame({"parent": [], "child": []}), steps)


@pytest.mark.parametrize("k, cap", [(16, 12.3), (32, 19.8), (64, 28.3)])
def test_communication_caps_full_occupancy(k, cap):
    # k agents always busy on unit steps, each 1 + 0.02 (k - 1) long: speedup = k / (1 + 0.02 (k - 1))
    # (the notes' 12.3 / 19.8 / 28.3 at 16 / 32 / 64)
    d = _independent(k * 5)
    run = simulate(d, agents=k, scheduling=0.0, communication=0.02, rng=0)
    sp = d.work / run.makespan
    assert sp == pytest.approx(k / (1 + 0.02 * (k - 1)), rel=1e-12)
    assert round(sp, 1) == cap
    assert run.communication.sum() == pytest.approx(d.work * 0.02 * (k - 1))


def test_agent_time_is_sum_of_busy_intervals(dags):
    d = dags[0]
    for swarm in ("standard", "recursive"):
        run = simulate(d, agents=8, swarm=swarm, rng=1)  # overheads on
        busy = run.end - run.start
        assert run.agent_time == pytest.approx(busy.sum())
        # busy time = work + communication + scheduling, to rounding
        assert busy.sum() == pytest.approx(d.work + run.communication.sum() + run.scheduling.sum(), rel=1e-12)
        # the integral of busy agents over the whole run equals the same sum
        assert agent_time_at(run, run.makespan)[0] == pytest.approx(busy.sum(), rel=1e-12)
        # one agent never works two steps at once
        for a in np.unique(run.agent):
            m = run.agent == a
            o = np.argsort(run.start[m])
            assert np.all(run.start[m][o][1:] >= run.end[m][o][:-1] - 1e-9)


def test_scheduling_overhead_charged_on_handoffs(dags):
    d = dags[1]
    run = simulate(d, agents=4, communication=0.0, scheduling=0.05, rng=2)
    unit = 0.05 * np.median(d.cost)
    charged = run.scheduling > 0
    assert np.allclose(run.scheduling[charged], unit)
    # every agent's first step is charged (it was started or dispatched)
    first = pd.DataFrame({"a": run.agent, "t": run.start}).groupby("a")["t"].idxmin().to_numpy()
    assert charged[first].all()


@pytest.mark.parametrize("swarm, rule, knobs", [("standard", r, {}) for r in RULES] + [
    ("standard", "own-branch", {"shared_unlock": True}), ("recursive", "own-branch", {}),
    ("recursive", "own-branch", {"recursive_refork": True}), ("recursive", "own-branch", {"shared_unlock": True})])
def test_precedence_and_cap(dags, swarm, rule, knobs):
    d, k = dags[2], 5
    run = simulate(d, agents=k, swarm=swarm, rule=rule, policy=Policy(**knobs), rng=4)
    e = d.edges()
    assert np.all(run.start[e.child] >= run.end[e.parent] - 1e-9)
    ev = np.concatenate([run.start, run.end])
    delta = np.concatenate([np.ones(d.n_steps), -np.ones(d.n_steps)])
    o = np.lexsort((delta, ev))  # ends before starts at equal times
    assert np.cumsum(delta[o]).max() <= k
    if swarm == "recursive":
        assert (run.start == 0).sum() == 1  # one root agent starts the run


def test_same_seed_same_trace(dags):
    d = dags[3]
    a = simulate(d, agents=16, rule="random", rng=11).trace()
    b = simulate(d, agents=16, rule="random", rng=11).trace()
    c = simulate(d, agents=16, rule="random", rng=12).trace()
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == ["run", "agent", "step", "depth", "start", "end", "value"]


def test_time_to_levels_on_a_chain():
    # a chain of 10 unit steps, values 0..9: coverage X at time ceil(10 X); best 1 at the end
    steps = pd.DataFrame({"step": range(10), "duration": 1.0, "value": np.arange(10.0)})
    edges = pd.DataFrame({"parent": range(9), "child": range(1, 10)})
    d = dag_from_frames(edges, steps)
    run = simulate(d, agents=4, scheduling=0.0, communication=0.0, rng=0)
    assert run.makespan == 10.0 and d.span == 10.0
    np.testing.assert_allclose(time_to_coverage(run, [0.1, 0.5, 0.55, 1.0]), [1, 5, 6, 10])
    np.testing.assert_allclose(time_to_best(run, [1 / 9, 0.5, 1.0]), [2, 6, 10])  # value/9 >= level


def test_engine_orders_by_time_priority_sequence():
    q = EventQueue()
    q.push(2.0, COMPLETE, "d")
    q.push(1.0, DISPATCH, "b")
    q.push(1.0, COMPLETE, "a")
    q.push(1.0, DISPATCH, "c")
    assert [q.pop()[3] for _ in range(4)] == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="before the current time"):
        q.push(1.0, COMPLETE, "late")


@pytest.mark.parametrize(
    "kwargs, match",
    [({"agents": 0}, "integer >= 1"), ({"agents": 2.5}, "integer >= 1"), ({"rule": "deepest"}, "rule must be"),
     ({"scheduling": -0.1}, "scheduling overhead"), ({"communication": float("nan")}, "communication overhead"),
     ({"swarm": "hive"}, "swarm must be"), ({"swarm": "recursive", "rule": "random"}, "only rule='own-branch'")],
)
def test_bad_inputs(dags, kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate(dags[0], rng=0, **kwargs)


def test_policy_rejects_unknown_keys():
    with pytest.raises(ValueError, match="Policy.own_key"):
        Policy(own_key="widest")
    with pytest.raises(ValueError, match="branch_memory"):
        Policy(branch_memory="some")


def test_generator_structure_and_determinism():
    d = generate_dag(rng=5)
    again = generate_dag(rng=5)
    for f in ("depth", "cost", "value", "parent_idx"):
        np.testing.assert_array_equal(getattr(d, f), getattr(again, f))
    assert d.depth[0] == 0 and (d.depth[1:] >= 1).all() and np.all(np.diff(d.depth) >= 0)
    e = d.edges()
    assert (d.depth[e.child] > d.depth[e.parent]).all()  # edges point down: acyclic
    assert (d.cost > 0).all()
    # each step's value = best parent's value + its own change, and parents are never on one chain
    anc = [set() for _ in range(d.n_steps)]
    for v in range(1, d.n_steps):
        ps = d.parent_idx[d.parent_ptr[v]:d.parent_ptr[v + 1]]
        assert len(ps) >= 1
        for p in ps:
            assert not any(p in anc[q] for q in ps if q != p)
            anc[v] |= anc[p] | {int(p)}


def test_generator_depth_width_control():
    # the seed's sweep: 136 layers x 5 steps to 4 layers x 184 at a fixed step count
    for layers, width in ((136, 5), (4, 184)):
        d = generate_dag(rng=1, n_steps=740, n_layers=layers)
        assert d.n_steps == 740 and d.n_layers == layers
        assert round(d.n_steps / layers) == pytest.approx(width, abs=1)


def test_generated_size_is_about_730_on_average():
    from evalkit.sim import GeneratorParams

    n = [d.n_steps for d in generate_dags(40, GeneratorParams(n_steps=675), rng=3)]
    # lognormal: mean = 675 exp(0.4^2 / 2) = 731; sd of the mean of 40 ~ 0.41 * 731 / sqrt(40) = 47
    assert abs(np.mean(n) - 675 * np.exp(0.08)) < 3 * 47


def test_user_dag_validation(tmp_path):
    steps = pd.DataFrame({"step": ["a", "b", "c"], "duration": [1.0, 2.0, 1.5], "value": [0.0, 1.0, 2.0]})
    ok = dag_from_frames(pd.DataFrame({"parent": ["a", "a"], "child": ["b", "c"]}), steps)
    assert ok.n_steps == 3 and ok.span == pytest.approx(3.0)
    with pytest.raises(ValueError, match="cycle"):
        dag_from_frames(pd.DataFrame({"parent": ["a", "b", "c"], "child": ["b", "c", "b"]}), steps)
    with pytest.raises(ValueError, match="unknown steps"):
        dag_from_frames(pd.DataFrame({"parent": ["a"], "child": ["z"]}), steps)
    with pytest.raises(ValueError, match="'duration' column must be a finite number > 0"):
        dag_from_frames(pd.DataFrame({"parent": ["a"], "child": ["b"]}), steps.assign(duration=[1.0, 0.0, -1.0]))
    with pytest.raises(ValueError, match="empty"):
        dag_from_frames(pd.DataFrame({"parent": [], "child": []}), steps.iloc[:0])
    with pytest.raises(ValueError, match="self-loop"):
        dag_from_frames(pd.DataFrame({"parent": ["a"], "child": ["a"]}), steps)


def test_user_dag_round_trip(dags):
    d = dags[0]
    back = dag_from_frames(d.edges(), d.steps())
    np.testing.assert_array_equal(back.depth, d.depth)
    np.testing.assert_allclose(back.cost, d.cost)
    assert back.span == pytest.approx(d.span)


def test_bottom_level_closed_form():
    # diamond a->b, a->c, b->d, c->d with durations 1, 5, 2, 1: heaviest chain a-b-d = 7
    steps = pd.DataFrame({"step": list("abcd"), "duration": [1.0, 5.0, 2.0, 1.0]})
    d = dag_from_frames(pd.DataFrame({"parent": list("aabc"), "child": list("bcdd")}), steps)
    np.testing.assert_allclose(d.bottom_level, [7.0, 6.0, 3.0, 1.0])


def test_biased_deep_interpolates_random_and_deepest(dags):
    from evalkit.sim.swarms import _ranks

    d = dags[0]
    tb = np.random.default_rng(0).random(d.n_steps)
    # a huge bias ranks by depth first (deepest first), like "deepest"
    order = np.argsort(_ranks("biased-deep", d, tb, 1e9))
    assert np.all(np.diff(d.depth[order]) <= 0)
    # bias 0: Gumbel-max over i.i.d. keys = a uniformly random order, the reverse of tb's order here
    np.testing.assert_array_equal(np.argsort(_ranks("biased-deep", d, tb, 0.0)), np.argsort(-tb))


def test_mean_curve_equals_mean_time_for_identical_runs(dags):
    from evalkit.sim.experiments import LEVELS, Results

    run1 = simulate(dags[0], agents=1, scheduling=0.0, communication=0.0, rng=0)
    run4 = simulate(dags[0], agents=4, scheduling=0.0, communication=0.0, rng=0)
    rec = {k: np.stack([time_to_coverage(r, LEVELS), time_to_best(r, LEVELS), time_to_coverage(r, LEVELS),
                        time_to_best(r, LEVELS)]) for k, r in (("single", run1), ("standard|4", run4))}
    a = Results(0, [rec, rec], "mean-time")
    b = Results(0, [rec, rec], "mean-curve")
    for metric in ("coverage", "best"):
        for level in (0.5, 0.9):
            assert b.speedup("standard|4", metric, level) == pytest.approx(a.speedup("standard|4", metric, level))


def test_default_policy_is_the_posts_rules():
    from evalkit.sim.experiments import load_params

    p = Policy()
    # the post: follow the branch to its end, then free the slot; the single agent follows the same rule
    assert (p.branch_memory, p.own_key, p.dispatch_key) == ("last", "deepest", "shallowest")
    assert p.baseline() == p and p.departures() == {}
    assert Policy(branch_memory="all", baseline_own_key="random").departures() == {
        "branch_memory": "all", "baseline_own_key": "random"}
    # the bundled parameter set uses the post's rules and the pre-declared aggregator
    bundled = load_params()
    assert bundled.policy.departures() == {} and bundled.aggregate == "mean-curve"


def test_cost_inherit_correlates_a_branch_and_keeps_the_structure():
    from evalkit.sim import GeneratorParams

    # log cost = the noise z alone (no depth growth, no clock), merges off so a step's one parent is its primary
    p = GeneratorParams(cost_law="geometric", cost_growth=0.0, clock_spread=0.0, cost_sigma=1.0, merge_p=0.0)
    zc, zp = [], []
    for s in range(12):
        plain, inh = generate_dag(p, rng=s), generate_dag(p.replace(cost_inherit=0.6), rng=s)
        for f in ("depth", "value", "parent_idx", "parent_ptr"):  # costs are drawn last: same structure
            np.testing.assert_array_equal(getattr(plain, f), getattr(inh, f))
        z = np.log(inh.cost)
        zc.append(z[1:])
        zp.append(z[inh.parent_idx[inh.parent_ptr[1:-1]]])
    zc, zp = np.concatenate(zc), np.concatenate(zp)
    # z = 0.6 z_parent + 0.8 e keeps N(0, 1) at every depth; corr(child, parent) = 0.6, se ~ 1/sqrt(8000)
    assert np.corrcoef(zc, zp)[0, 1] == pytest.approx(0.6, abs=0.04)
    assert np.std(zc) == pytest.approx(1.0, abs=0.04)
    with pytest.raises(ValueError, match="cost_inherit"):
        GeneratorParams(cost_inherit=1.0)


def test_busy_agents_on_a_chain_and_on_one_wide_layer():
    """F9.wait's measure: agent-time over time. On a chain only one agent can work (1 busy, however
    many are started); on 8 independent unit steps 4 agents are all busy (4), closed form."""
    from evalkit.sim.claims import _busy
    from evalkit.sim.experiments import LEVELS, Results

    def record(run):
        tc, tb = time_to_coverage(run, LEVELS), time_to_best(run, LEVELS)
        at = agent_time_at(run, np.concatenate([tc, tb]))
        return np.stack([tc, tb, at[: tc.size], at[tc.size:]])

    chain = dag_from_frames(pd.DataFrame({"parent": range(9), "child": range(1, 10)}),
                            pd.DataFrame({"step": range(10), "duration": 1.0, "value": np.arange(10.0)}))
    # a root then 8 unit steps hanging from it: the root takes 1, then 4 agents do the 8 in 2
    fan = dag_from_frames(pd.DataFrame({"parent": 0, "child": range(1, 9)}),
                          pd.DataFrame({"step": range(9), "duration": 1.0, "value": np.arange(9.0)}))
    for d, k, level, want in ((chain, 4, 0.9, 1.0), (fan, 4, 1.0, (1 + 8) / 3)):
        rec = {key: record(simulate(d, agents=n, scheduling=0.0, communication=0.0, rng=0))
               for key, n in (("single", 1), ("standard|4", k))}
        r = Results(0, [rec], "mean-time")
        assert _busy(r, "single", "coverage", level) == pytest.approx(1.0)
        assert _busy(r, "standard|4", "coverage", level) == pytest.approx(want)
