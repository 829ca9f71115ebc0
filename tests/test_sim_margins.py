"""Margins of the claim rows to their tolerance edges (evalkit.sim.margins), on hand-made tables."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.sim import GeneratorParams
from evalkit.sim.claims import CLAIMS
from evalkit.sim.experiments import SimParams, save_params
from evalkit.sim.margins import MarginScore, margin_score, margin_table

BY_ID = {c.id: c for c in CLAIMS}


def _evaluate_fixed(claim: str, v: float) -> bool:
    c = BY_ID[claim]
    lo, hi, _ = c.edges()
    return lo <= v <= hi


def test_speedup_margin_is_read_on_the_log_scale():
    # F3.cov90: 22x +-20 % -> [17.6, 26.4]; values 20, 22, 25
    vals = [20.0, 22.0, 25.0]
    t = pd.DataFrame({"claim": "F3.cov90", "seed": [0, 1, 2], "value": vals,
                      "holds": [_evaluate_fixed("F3.cov90", v) for v in vals]})
    m = margin_table(t).iloc[0]
    logs = [math.log(v) for v in vals]
    mu, sd = statistics.fmean(logs), statistics.stdev(logs)
    expected = min(mu - math.log(17.6), math.log(26.4) - mu) / sd
    assert m["scale"] == "log" and m["lo"] == pytest.approx(17.6) and m["hi"] == pytest.approx(26.4)
    assert m["mean"] == pytest.approx(math.exp(mu)) and m["sd"] == pytest.approx(sd)
    assert m["margin"] == pytest.approx(expected) and bool(m["robust"]) == (expected >= 1)
    assert m["seeds_held"] == 3 and m["n_seeds"] == 3
    # chance on a fresh seed: normal with that mean and sd inside [log 17.6, log 26.4]; on >= 2 of 3 seeds
    nd = statistics.NormalDist(mu, sd)
    p = nd.cdf(math.log(26.4)) - nd.cdf(math.log(17.6))
    assert m["p_seed"] == pytest.approx(p) and m["p_triple"] == pytest.approx(p**3 + 3 * p**2 * (1 - p))


def test_bound_and_share_rows_are_linear_and_outside_is_negative():
    # F8.bestall: max ratio < 1; values 1.1, 1.2, 1.0 -> mean 1.1, sd 0.1, margin (1 - 1.1) / 0.1 = -1
    t = pd.DataFrame({"claim": "F8.bestall", "seed": [0, 1, 2], "value": [1.1, 1.2, 1.0], "holds": False})
    m = margin_table(t).iloc[0]
    assert m["scale"] == "linear" and m["margin"] == pytest.approx(-1.0) and not m["robust"]
    # F7.comm8: 10 % +-3 pp -> [0.07, 0.13]; values 0.09, 0.10, 0.11 -> mean 0.10, sd 0.01, margin 3
    t = pd.DataFrame({"claim": "F7.comm8", "seed": [0, 1, 2], "value": [0.09, 0.10, 0.11], "holds": True})
    assert margin_table(t).iloc[0]["margin"] == pytest.approx(3.0)
    # an ordering with a threshold (F7.flat: < 1.2) has a margin; a yes/no row has none
    t = pd.DataFrame({"claim": "F7.flat", "seed": [0, 1], "value": [1.0, 1.1], "holds": True})
    assert margin_table(t).iloc[0]["margin"] == pytest.approx((1.2 - 1.05) / statistics.stdev([1.0, 1.1]))


def test_yes_no_rows_are_robust_when_they_hold_on_five_sixths():
    rows = [pd.DataFrame({"claim": "F3.shift", "seed": range(6), "value": 1.0, "holds": [True] * 5 + [False]}),
            pd.DataFrame({"claim": "F7.rises", "seed": range(6), "value": 1.0, "holds": [True] * 4 + [False] * 2}),
            pd.DataFrame({"claim": "F7.comm8", "seed": range(6), "value": [0.1, 0.1, 0.1, 0.1, 0.1, 0.11],
                          "holds": True})]
    m = margin_table(pd.concat(rows)).set_index("claim")
    assert m.loc["F3.shift", "robust"] and not m.loc["F7.rises", "robust"]
    assert m.loc["F7.rises", "p_seed"] == pytest.approx(4 / 6)
    assert math.isnan(m.loc["F3.shift", "margin"])
    # score: robust rows 2 (F3.shift, F7.comm8), rows held on >= 2/3: all 3 (4/6 counts), margin of F7.comm8 clipped at 3
    assert margin_score(pd.concat(rows)) == MarginScore(2, 3, 3.0)
    with pytest.raises(ValueError, match="not among the claims"):
        margin_table(pd.DataFrame({"claim": "F99.x", "seed": [0], "value": [1.0], "holds": [True]}))


def test_cli_margins_writes_one_table_per_group(tmp_path, capsys):
    start = tmp_path / "p.json"
    save_params(SimParams(generator=GeneratorParams(n_steps=80.0, n_layers=6.0, cost_law="geometric")), start)
    out = tmp_path / "m.csv"
    assert main(["simulate", "margins", "--out", str(out), "--params", str(start), "--groups", "3-4", "5,7",
                 "--dags", "1", "--engine", "serial"]) == 0
    t = pd.read_csv(out)
    assert list(t["seeds"].unique()) == ["3-4", "5,7"] and len(t) == 2 * len(CLAIMS)
    assert "seeds 3-4:" in capsys.readouterr().out
    kinds = tmp_path / "k.csv"
    pd.DataFrame({"claim": [c.id for c in CLAIMS], "kind": "evidence"}).to_csv(kinds, index=False)
    assert main(["simulate", "margins", "--out", str(out), "--params", str(start), "--groups", "3-4", "--dags", "1",
                 "--engine", "serial", "--kinds", str(kinds), "--force"]) == 0
    t = pd.read_csv(out)
    expected = t["p_triple"].sum()  # every row evidence here: both counts are the same sum
    assert f"expected to hold {expected:.1f} rows, {expected:.1f} of them evidence" in capsys.readouterr().out
    assert main(["simulate", "margins", "--out", str(tmp_path / "x.csv"), "--groups", "3", "--dags", "1"]) == 2
    assert main(["simulate", "margins", "--out", str(tmp_path / "y.csv"), "--groups", "a-b", "--dags", "1"]) == 2


def test_tradeoffs_name_what_the_best_candidate_inside_gains_and_loses():
    import json

    from evalkit.sim.tradeoffs import row_tradeoffs

    # three candidates; F3.cov50 (13x +-20 % -> [10.4, 15.6]) and F7.comm64 (37 % +-3 pp -> [0.34, 0.40])
    # and F3.cov90 (22x -> [17.6, 26.4]): the start misses cov50 and comm64
    vals = [{"F3.cov50": 19.0, "F7.comm64": 0.19, "F3.cov90": 19.0},
            {"F3.cov50": 14.0, "F7.comm64": 0.20, "F3.cov90": 16.0},   # cov50 in, cov90 out
            {"F3.cov50": 15.0, "F7.comm64": 0.36, "F3.cov90": 15.0}]   # cov50 and comm64 in, cov90 out
    hist = pd.DataFrame({"knob": ["start", "generator.cost_growth", "generator.cost_growth"], "value": ["", "6.0", "0.0"],
                         "values": [json.dumps(v) for v in vals]})
    t = row_tradeoffs(hist).set_index("claim")
    assert set(t.index) == {"F3.cov50", "F7.comm64"}
    assert t.loc["F3.cov50", "inside"] == 2 and t.loc["F3.cov50", "mean_min"] == 14.0
    assert t.loc["F3.cov50", "best_knobs"] == "#2 generator.cost_growth=0.0" and t.loc["F3.cov50", "best_rows_inside"] == 2
    assert t.loc["F7.comm64", "gains"] == "F3.cov50, F7.comm64" and t.loc["F7.comm64", "losses"] == "F3.cov90"
    with pytest.raises(ValueError, match="no 'values' column"):
        row_tradeoffs(hist.drop(columns="values"))


def test_cli_tradeoffs_and_every_failing_evidence_row_has_an_argument(tmp_path, capsys):
    import json
    from pathlib import Path

    from evalkit.sim.notes import NOTES

    hist = pd.DataFrame({"pass": [0, 1], "knob": ["start", "generator.peak"], "value": ["", "0.2"],
                         "values": [json.dumps({"F3.cov50": 19.0}), json.dumps({"F3.cov50": 14.0})]})
    hist.to_csv(tmp_path / "h.csv", index=False)
    assert main(["simulate", "tradeoffs", str(tmp_path / "h.csv"), "--out", str(tmp_path / "t.csv")]) == 0
    t = pd.read_csv(tmp_path / "t.csv")
    assert list(t["claim"]) == ["F3.cov50"] and t.loc[0, "best_knobs"] == "#1 pass 1 generator.peak=0.2"
    assert "1 rows missed by candidate 0; 0 of them never inside" in capsys.readouterr().out
    # --expected: one seed group of a margins CSV; without --margins it is refused
    from evalkit.sim.margins import margin_table

    table = pd.DataFrame({"claim": [c.id for c in CLAIMS for _ in range(3)], "seed": [0, 1, 2] * len(CLAIMS),
                          "value": 19.0, "holds": True})
    margin_table(table).assign(seeds="0-2").to_csv(tmp_path / "m.csv", index=False)
    hist["values"] = [json.dumps({c.id: v for c in CLAIMS}) for v in (19.0, 14.0)]
    hist.to_csv(tmp_path / "h.csv", index=False)
    args = ["simulate", "tradeoffs", str(tmp_path / "h.csv"), "--out", str(tmp_path / "t.csv"), "--force",
            "--expected", str(tmp_path / "e.csv")]
    assert main(args) == 2
    assert main([*args, "--margins", str(tmp_path / "m.csv"), "--group", "0-2"]) == 0
    e = pd.read_csv(tmp_path / "e.csv")
    assert len(e) == 2 and "expected_evidence" not in e and "for candidate 0, at most" in capsys.readouterr().out
    assert main([*args, "--margins", str(tmp_path / "m.csv"), "--group", "7-9"]) == 2
    # the moonshot: every evidence row of the committed table that fails in a reporting group has its argument
    claims = pd.read_csv(Path(__file__).resolve().parents[1] / "data" / "sim" / "claims.csv")
    failing = claims.loc[(claims["kind"] == "evidence") & ~claims["holds"].astype(bool), "claim"]
    assert len(failing) > 0 and not sorted(set(failing) - set(NOTES))
    assert set(NOTES) <= set(claims["claim"])


def test_expected_counts_use_the_reference_spread():
    import json

    from evalkit.sim.tradeoffs import expected_counts

    claims = [BY_ID["F3.cov90"], BY_ID["F3.shift"]]
    hist = pd.DataFrame({"pass": [0, 1], "knob": ["start", "generator.peak"], "value": ["", "0.2"],
                         "values": [json.dumps({"F3.cov90": 22.0, "F3.shift": 1.0}),
                                    json.dumps({"F3.cov90": 17.6, "F3.shift": 1.0})]})
    ref = pd.DataFrame({"claim": ["F3.cov90", "F3.shift"], "sd": [0.1, float("nan")], "p_seed": [0.0, 0.5]})
    kinds = pd.DataFrame({"claim": ["F3.cov90", "F3.shift"], "kind": ["evidence", "restatement"]})
    e = expected_counts(hist, ref, claims, kinds=kinds)

    def tri(p):
        return p**3 + 3 * p**2 * (1 - p)

    shift = tri(0.5)  # the yes/no row keeps the reference's share
    for i, mean in enumerate((22.0, 17.6)):  # log scale: edges log 17.6 and log 26.4, sd 0.1
        nd = statistics.NormalDist(math.log(mean), 0.1)
        p = nd.cdf(math.log(26.4)) - nd.cdf(math.log(17.6))
        assert e.loc[i, "expected_rows"] == pytest.approx(tri(p) + shift)
        assert e.loc[i, "expected_evidence"] == pytest.approx(tri(p))
    assert e.loc[1, "expected_evidence"] == pytest.approx(0.5, abs=1e-3)  # on the edge: p about 1/2
    with pytest.raises(ValueError, match="one seed group"):
        expected_counts(hist, ref.assign(seeds=["a", "b"]), claims)
