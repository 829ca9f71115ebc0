"""Every coverage cell marked ``assumptions_hold=False`` has a run-time warning that evalkit emits there.

The coverage study (scripts/coverage.py) marks the settings where a method is known not to meet its
bound; the README says so, and evalkit must say so at run time. ``WARNINGS`` maps each such cell's key to
a function that runs evalkit on small data of that setting and returns what evalkit emitted (Python
warnings, the result's notes, or the CLI's output), and the text the warning must contain. A new
``assumptions_hold=False`` cell without an entry here fails the first test.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
_spec = importlib.util.spec_from_file_location("evalkit_coverage_script_w", ROOT / "scripts" / "coverage.py")
coverage = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = coverage
_spec.loader.exec_module(coverage)

NOT_HOLDING = [c for c in coverage.load_cells() if not c.assumptions_hold]


def _caught(fn: Callable[[], object]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    notes = [str(w.message) for w in caught]
    return notes + list(getattr(out, "warnings", ()) or ())


def _partial_items_cli(tmp_path: Path, capsys, bootstrap: bool) -> list[str]:
    """``evalkit rate --cluster item`` on 10 items that each hold 3 of the 10 pairs (the cells' design)."""
    from coverage_cells._sim import clustered, draw_until

    from evalkit.cli import main

    frame = draw_until(np.random.default_rng(0), clustered, 10, 60, pairs_per_item=3)
    path = tmp_path / "c10.csv"
    frame.to_csv(path, index=False)
    argv = ["rate", str(path), "--cluster", "item"] + (["--n-resamples", "20"] if bootstrap else [])
    assert main(argv) == 0
    out, err = capsys.readouterr()
    return [out + err]


def _position_unclustered(tmp_path: Path, capsys) -> list[str]:
    """Counts of a judge that favours the left answer, 4 votes per comparison, taken without the items."""
    from evalkit.ratings.counts import as_cells
    from evalkit.stats.judge_warnings import count_warnings

    gen = np.random.default_rng(1)
    n = 120
    left_wins = np.repeat(gen.random(n) < 0.6, 4)  # a comparison's 4 votes repeat its verdict
    frame = pd.DataFrame({"player_a": "a", "player_b": "b", "outcome": left_wins.astype(float), "weight": 1.0})
    return count_warnings(as_cells(frame), "left_right", judge="j")


def _position_by_comparison(tmp_path: Path, capsys) -> list[str]:
    """The cell's design (items hold 20 comparisons of 4 votes): ``evalkit report``'s position test
    clusters by comparison, and its table and section say what that leaves out."""
    from coverage_cells._sim import THETA, expit

    from evalkit.report.judge import _position_lines
    from evalkit.stats.judges import judge_panels, position_bias_table

    gen = np.random.default_rng(7)
    a = gen.integers(0, 5, 200)
    b = (a + gen.integers(1, 5, a.size)) % 5
    item = np.repeat(np.arange(10), 20)
    p = expit(THETA[a] - THETA[b] + gen.normal(0.0, 0.3, 10)[item])
    rep = np.repeat(np.arange(a.size), 4)
    frame = pd.DataFrame({"player_a": a[rep].astype(str), "player_b": b[rep].astype(str), "weight": 1.0,
                          "outcome": (gen.random(rep.size) < p[rep]).astype(float), "item": item[rep].astype(str)})
    table = position_bias_table(frame, judge_panels(frame, judge="j"))
    return list(table["note"]) + _position_lines(table, 0.95)


def _efficiency_bootstrap(tmp_path: Path, capsys) -> list[str]:
    from evalkit.metrics.cost import efficiency

    gen = np.random.default_rng(2)
    rows = [pd.DataFrame({"system": s, "task": [f"t{k}" for k in range(20)], "score": gen.random(20).round(),
                          "tokens": gen.integers(1000, 5000, 20).astype(float)}) for s in ("a", "b")]
    return _caught(lambda: efficiency(pd.concat(rows), method="bootstrap", n_resamples=50, rng=0))


def _frontier_near_tie(tmp_path: Path, capsys) -> list[str]:
    """The coverage cell's near-tie design; seed 0 is a data set where the near-tie system is excluded."""
    from coverage_cells.metrics import _NEAR_TIE, _expit

    from evalkit.metrics._frontier import frontier

    g, n = np.random.default_rng(0), 40
    d = g.normal(size=n)
    rows = []
    for k, (a, c) in enumerate(_NEAR_TIE):
        acc = (g.random(n) < _expit(a - d)).astype(float)
        cost = c * np.exp(0.5 * g.normal(size=n) - 0.125)
        rows.append(pd.DataFrame({"system": f"s{k}", "task": np.arange(n).astype(str), "score": acc, "cost": cost}))
    return _caught(lambda: frontier(pd.concat(rows), method="hal", n_resamples=300, rng=0))


def _wilson(k: int, n: int) -> Callable[[Path, object], list[str]]:
    from evalkit.stats import pass_rate

    return lambda tmp_path, capsys: _caught(lambda: pass_rate(np.r_[np.ones(k), np.zeros(n - k)]))


def _families_no_cluster(tmp_path: Path, capsys) -> list[str]:
    """compare_runs on 6 families of 4 tasks named ``f{j}/t{k}``, no cluster given."""
    from evalkit.stats.runs import compare_runs

    gen = np.random.default_rng(3)
    rows = [{"system": s, "task": f"f{k // 4}/t{k}", "session": str(r), "score": float(gen.random() < 0.5)}
            for s in ("a", "b") for k in range(24) for r in range(6)]
    return _caught(lambda: compare_runs(pd.DataFrame(rows), pairs=[("b", "a")], n_resamples=99, rng=0))


def _flaky_readme(tmp_path: Path, capsys) -> list[str]:
    """data/agent_runs' design: 24 tasks x 6 runs."""
    from evalkit.stats.reliability import reliability

    gen = np.random.default_rng(4)
    rows = [{"system": "s", "task": f"t{k:02d}", "score": float(gen.random() < (0.5 if k == 2 else 0.95))}
            for k in range(24) for _ in range(6)]
    return _caught(lambda: reliability(pd.DataFrame(rows)))


def _row_bootstrap(tmp_path: Path, capsys) -> list[str]:
    from coverage_cells._sim import draw_until, independent

    from evalkit.ratings import leaderboard

    frame = draw_until(np.random.default_rng(5), independent, 300)
    return _caught(lambda: leaderboard(frame, interval="bootstrap", n_resamples=20, rng=0))


def _head_to_head_15_items(tmp_path: Path, capsys) -> list[str]:
    from evalkit.stats.headtohead import head_to_head

    gen = np.random.default_rng(6)
    frame = pd.DataFrame({"player_a": "a", "player_b": "b", "outcome": (gen.random(60) < 0.5).astype(float),
                          "weight": 1.0, "item": np.repeat([f"q{k}" for k in range(15)], 4)})
    return _caught(lambda: head_to_head(frame, cluster="item"))


WARNINGS: dict[str, tuple[Callable[..., list[str]], str]] = {
    "ratings|row bootstrap (leaderboard default n_boot 200)|independent, n=300":
        (_row_bootstrap, "row bootstrap's intervals under-cover"),
    "report|head-to-head CR1 t-test clustered by item, t(G-1)|60 games on 15 items, repeated verdicts, H0":
        (_head_to_head_15_items, "as few as 15 clusters"),
    "ratings|CR1 sandwich Wald, t(G-1)|clustered, G=10, each item 3 of the 10 pairs":
        (lambda t, c: _partial_items_cli(t, c, bootstrap=False), "rest on only 10 clusters"),
    "ratings|cluster bootstrap (leaderboard, n_boot 200)|clustered, G=10, each item 3 of the 10 pairs":
        (lambda t, c: _partial_items_cli(t, c, bootstrap=True), "rest on only 10 clusters"),
    "judges|position bias: exact binomial (votes taken as independent)|4 votes per comparison, 500 comparisons, H0":
        (_position_unclustered, "votes taken as independent"),
    "judges|position bias: CR1 t-test clustered by comparison (ignores the items)|50 items x 20 comparisons x 4 "
    "votes, item-level position effects, H0": (_position_by_comparison, "varies by item is not covered"),
    "cost|score per token: task bootstrap-t (log scale)|n=20 tasks, p~0.57 (evalkit warns)":
        (_efficiency_bootstrap, "under-covers with few tasks"),
    "cost|paired efficiency ratio: task bootstrap-t (log scale)|n=20 tasks (evalkit warns)":
        (_efficiency_bootstrap, "under-covers with few tasks"),
    "frontier|frontier probability >= 0.05 as a confidence set (HAL hull rule)|near-tie: a system 0.003 above its "
    "neighbours' chord": (_frontier_near_tie, "near-tie"),
    "proportions|Wilson score interval|n=24, p=0.02 (0.5 expected successes: evalkit warns)":
        (_wilson(1, 24), "fewer than 5 successes"),
    "proportions|Wilson score interval|n=24, p=0.31 (its lowest point at n=24 with np >= 5)":
        (_wilson(7, 24), "fewer than 30 trials"),
    "compare|sign-flip permutation over tasks, no --cluster|families share a system effect, G=6 (4 tasks each), H0":
        (_families_no_cluster, "--cluster-regex"),
    "flakiness|flaky-task test: coin-flip task flagged (BH over the tasks)|README design: t02 among data/agent_runs' "
    "24 tasks, 6 runs": (_flaky_readme, "flaky-task test has little power"),
}


def test_every_cell_outside_its_assumptions_has_a_warning_entry():
    keys = {c.key for c in NOT_HOLDING}
    assert keys, "no assumptions_hold=False cells found"
    assert keys == set(WARNINGS), (sorted(keys - set(WARNINGS)), sorted(set(WARNINGS) - keys))


@pytest.mark.parametrize("key", sorted(WARNINGS))
def test_evalkit_warns_in_that_setting(key, tmp_path, capsys):
    run, text = WARNINGS[key]
    emitted = run(tmp_path, capsys)
    assert any(text in e for e in emitted), (key, emitted)
