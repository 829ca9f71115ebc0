"""The broken-simulator check (issue 13): evidence rows must keep failing under some break, so a
row cannot silently become cheap; and the kind logic itself on hand-made tables."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from evalkit.sim.breaks import BREAKS, break_params
from evalkit.sim.claims import CLAIMS, evidence_kinds
from evalkit.sim.experiments import load_params
from evalkit.studies.reproduce import reproduce

# Rows that are evidence on the reduced set (bundled parameters, seeds 0-2, 4 DAGs each), from
# reproduce(None, seeds=(0, 1, 2), n_dags=4, figures=False) when data/sim/calibrated.json v4 was adopted.
# A code change that makes one of them hold under every break fails this test: the row became cheap.
REDUCED_EVIDENCE = {
    "F10.wide90", "F10.widebest", "F10.widest", "F2.sbest", "F2.scov", "F3.best50", "F3.best90", "F3.cov50",
    "F3.cov90", "F3.sbest", "F3.scov", "F4.best50", "F4.best90", "F4.cov50", "F4.cov90", "F5.gap", "F5.std>rec",
    "F6.cpslow", "F6.fastcov", "F6.shallow2", "F7.comm64", "F7.comm8", "F7.flat", "F7.rises", "F7.sched",
    "F8.bestall", "F8.bestmin", "F8.covmax", "F8.covmin", "F8.std16", "F9.bestmore", "F9.narrow99", "F9.narrowbest",
}


@pytest.fixture(scope="module")
def reduced():
    return reproduce(None, seeds=(0, 1, 2), n_dags=4, figures=False)


def test_evidence_rows_stay_evidence(reduced):
    s = reduced.summary.set_index("claim")
    assert set(s.index) == {c.id for c in CLAIMS}
    cheap = sorted(c for c in REDUCED_EVIDENCE if s.loc[c, "kind"] != "evidence")
    assert not cheap, f"rows that became restatements (hold under every break): {cheap}"
    # the kind column agrees with the per-break seed counts it was made from
    for claim, row in s.iterrows():
        failed = [b for b in BREAKS if b in row["breaks_failed"].split(", ")]
        for b in failed:
            held, n = map(int, row[b].split("/"))
            assert held * 3 < n * 2, (claim, b)
        assert (row["kind"] == "evidence") == bool(failed)


def test_breaks_change_only_what_they_name():
    p = load_params()
    cc, rr, nc = (break_params(p, b) for b in ("constcost", "randrule", "nocomm"))
    assert cc.generator.cost_growth == 0 and cc.generator.cost_sigma == 0 and cc.policy == p.policy
    assert dataclasses.replace(cc, generator=p.generator) == p
    assert {rr.policy.own_key, rr.policy.dispatch_key, rr.policy.baseline().own_key} == {"random"}
    assert dataclasses.replace(rr, policy=p.policy) == p
    assert nc.communication == 0 and nc.scheduling == p.scheduling
    with pytest.raises(ValueError, match="break must be one of"):
        break_params(p, "slowclock")


def _table(claim: str, values: list[float], holds: list[bool]) -> pd.DataFrame:
    return pd.DataFrame({"claim": claim, "seed": range(len(values)), "value": values, "holds": holds})


def test_kind_logic_on_hand_made_tables():
    model = pd.concat([_table("A", [1.0, 1.0, 1.0], [True] * 3), _table("B", [2.0, 2.0, 2.0], [True] * 3),
                       _table("C", [3.0, 3.0, 3.0], [False] * 3)])
    broken = {
        # A fails (1 of 3 seeds) with changed values -> evidence; B still holds on 2 of 3 -> cheap under x
        "x": pd.concat([_table("A", [0.5, 0.5, 1.0], [False, False, True]),
                        _table("B", [2.5, 2.0, 2.0], [False, True, True]), _table("C", [3.0] * 3, [False] * 3)]),
        # C "fails" under y only because it fails in the model too, with unchanged values -> not counted
        "y": pd.concat([_table("A", [1.0] * 3, [True] * 3), _table("B", [2.0] * 3, [True] * 3),
                        _table("C", [3.0] * 3, [False] * 3)]),
    }
    k = evidence_kinds(model, broken).set_index("claim")
    assert k.loc["A", "kind"] == "evidence" and k.loc["A", "breaks_failed"] == "x" and k.loc["A", "x"] == "1/3"
    assert k.loc["B", "kind"] == "restatement" and k.loc["B", "x"] == "2/3"
    assert k.loc["C", "kind"] == "restatement" and k.loc["C", "breaks_failed"] == "-"
