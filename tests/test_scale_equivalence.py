"""Counts-only statistics equal the row-based code of main 5ca7eb2 on every real dataset, on both engines.

The reference numbers were computed by the OLD code (rows, pandas): see
``tests/data/scale/make_reference.py`` for the command that regenerates them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.engine import aggregate_comparisons
from evalkit.ratings import leaderboard
from evalkit.summary import alpaca_eval_summary, summarize

HERE = Path(__file__).parent
REF = json.loads((HERE / "data" / "scale" / "reference_5ca7eb2.json").read_text())
ROOT = HERE.parent
ENGINES = ["pandas", "duckdb"]


def source(name: str, tmp_path_factory) -> Path:
    path = ROOT / REF["datasets"][name]
    if name != "gold_five":
        return path
    spec = json.loads(path.read_text())  # the gold counts, as the 'counts' format
    rows = [(spec["players"][i], spec["players"][j], wi, wj, t) for i, j, wi, wj, t in spec["counts"]]
    out = tmp_path_factory.mktemp("gold") / "gold-counts.csv"
    pd.DataFrame(rows, columns=["player_a", "player_b", "wins_a", "wins_b", "ties"]).to_csv(out, index=False)
    return out


_CACHE: dict = {}


def counts_of(name: str, engine: str, cluster: str | None, tmp_path_factory):
    """Aggregate each (dataset, engine, cluster) once per session."""
    key = (name, engine, cluster)
    if key not in _CACHE:
        _CACHE[key] = aggregate_comparisons(source(name, tmp_path_factory), engine=engine, cluster=cluster)[0]
    return _CACHE[key]


def cases():
    for key in REF["cases"]:
        name, *rest = key.split("/")
        if len(rest) == 4:
            yield pytest.param(name, *rest, id=key)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "ties", "interval", "cluster", "anchor"), list(cases()))
def test_leaderboard_equals_the_row_based_code(name, ties, interval, cluster, anchor, engine,
                                                tmp_path_factory):
    ref = REF["cases"][f"{name}/{ties}/{interval}/{cluster}/{anchor}"]
    cluster = None if cluster == "None" else cluster
    counts = counts_of(name, engine, cluster, tmp_path_factory)
    kw = dict(ties=ties, interval=interval, cluster=cluster, anchor=ref.get("anchor"))
    if "error" in ref:
        with pytest.raises(ValueError) as exc:
            leaderboard(counts, **kw)
        assert str(exc.value)[:200] == ref["error"]
        return
    # the old cluster-robust sandwich had no small-sample factor (CR0) and a normal quantile; evalkit's
    # cluster-robust intervals now take t(G - 1): the same SEs, arms longer by t / z
    table = leaderboard(counts, cluster_correction="CR0", **kw).set_index("model").loc[ref["model"]]
    stretch = 1.0
    if cluster:
        g = table.attrs["n_clusters"]
        stretch = stats.t.ppf(0.975, g - 1) / stats.norm.ppf(0.975)
    elo = np.asarray(ref["elo"])
    for col in ("elo", "ci_low", "ci_high"):
        want = elo + stretch * (np.asarray(ref[col]) - elo)
        np.testing.assert_allclose(table[col], want, rtol=0, atol=1e-9, err_msg=col)
    for col in ("n", "wins", "losses", "ties", "win_rate"):
        np.testing.assert_allclose(table[col], ref[col], rtol=1e-12, atol=1e-12, err_msg=col)
    if cluster:  # CR1 widens every interval by sqrt(G / (G - 1) * (N - 1) / (N - K)) around the same estimate
        cr1 = leaderboard(counts, **kw).set_index("model").loc[ref["model"]]
        g = cr1.attrs["n_clusters"]
        assert g == counts.cells[cluster].nunique() and cr1.attrs["cluster_correction"] == "CR1"
        n_obs, k = float(counts.cells["weight"].sum()), len(ref["model"]) - 1 + (ties == "davidson")
        half = stretch * (np.asarray(ref["ci_high"]) - np.asarray(ref["ci_low"])) / 2
        np.testing.assert_allclose((cr1["ci_high"] - cr1["ci_low"]) / 2,
                                   half * np.sqrt(g / (g - 1) * (n_obs - 1) / (n_obs - k)), rtol=1e-9,
                                   atol=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(REF["datasets"]))
def test_summaries_equal_the_row_based_code(name, engine, tmp_path_factory):
    counts = counts_of(name, engine, None, tmp_path_factory)
    ref = pd.DataFrame(REF["cases"][f"{name}/summarize"]).set_index("model")
    got = summarize(counts).set_index("model").loc[ref.index]
    for col in ("n", "wins", "losses", "ties", "win_rate", "standard_error", "opponents"):
        np.testing.assert_allclose(got[col].astype(float), ref[col].astype(float), rtol=1e-12,
                                   atol=1e-14, err_msg=col)
    if f"{name}/alpaca_eval_summary" in REF["cases"]:
        ref = pd.DataFrame(REF["cases"][f"{name}/alpaca_eval_summary"]).set_index("model")
        got = alpaca_eval_summary(counts).loc[ref.index]
        for col in ref.columns:
            np.testing.assert_allclose(got[col].astype(float), ref[col].astype(float), rtol=1e-12,
                                       atol=1e-12, err_msg=col)
