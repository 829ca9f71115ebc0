"""The v4 calibration record (issue 13): the bundled parameter set is the one the pre-declared
selection rule picks from the committed selection runs, and those runs name history rows whose
knobs they used."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.sim.experiments import load_params

SIM = Path(__file__).resolve().parents[1] / "data" / "sim"


def test_bundled_set_is_what_the_selection_rule_picks():
    sel = pd.read_csv(SIM / "selection_v4.csv")
    # the rule of scripts/sim_select.py: every figure-11 row held; then the mean over the two selection
    # groups of evidence rows held; then the mean of rows held
    ok = sel.loc[sel["fig11 held"] == sel["fig11 rows"]].assign(
        ev=lambda d: d[["evidence held 200-202", "evidence held 203-205"]].mean(axis=1),
        rows_=lambda d: d[["held 200-202", "held 203-205"]].mean(axis=1))
    best = ok.sort_values(["ev", "rows_"]).iloc[-1]
    assert (best["candidate"], best["history"]) == ("#20", "search_history_fig11.csv")
    assert best["ev"] > ok.loc[ok["candidate"] == "bundled", "ev"].max()  # it beat the incumbent (v2)
    knobs = json.loads(best["knobs"])
    gen = load_params().generator
    assert {k: getattr(gen, k) for k in knobs} == pytest.approx(knobs)


def test_selection_runs_used_their_history_rows():
    sel = pd.read_csv(SIM / "selection_v4.csv")
    for name, rows in sel.loc[sel["candidate"] != "bundled"].groupby("history"):
        hist = pd.read_csv(SIM / name)
        for cand, knobs in zip(rows["candidate"], rows["knobs"], strict=True):
            assert json.loads(hist.loc[int(cand.lstrip("#")), "knobs"]) == json.loads(knobs), (name, cand)
