"""The reduced coverage study: every cell of scripts/coverage_cells/ at its quick_reps, fixed seed.

Each cell whose assumptions hold must meet the full-run bound moved by the reduced run's Monte Carlo
allowance (scripts/coverage.py, "Bounds": 2.326 binomial SEs at the bound, so a method sitting exactly on
the full-run bound passes with probability 0.99). The seed is fixed, so the outcome is the same on every
run. Cells marked ``assumptions_hold=False`` (the method is known not to meet its bound there; the README
says so and evalkit warns, which the modules' own tests check) run only in the full study
(``python scripts/coverage.py``), which writes data/coverage/coverage.csv and the README table.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("evalkit_coverage_script", ROOT / "scripts" / "coverage.py")
coverage = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = coverage
_spec.loader.exec_module(coverage)

CELLS = coverage.load_cells()


def test_cells_are_well_formed_and_keys_unique():
    assert CELLS, "no cells found in scripts/coverage_cells/"
    assert len({c.key for c in CELLS}) == len(CELLS)
    for c in CELLS:
        assert c.kind in coverage.KINDS and 0 < c.nominal < 1 and c.quick_reps >= 0 and c.reps >= c.quick_reps


def test_quick_bound_is_the_full_bound_moved_by_the_mc_allowance():
    cell = next(c for c in CELLS if c.kind == "interval" and c.nominal == 0.95)
    assert coverage.bound(cell) == pytest.approx(0.935)
    n = 400
    assert coverage.bound(cell, n) == pytest.approx(0.935 - 2.326 * math.sqrt(0.935 * 0.065 / n))


def test_streams_do_not_depend_on_the_number_of_workers():
    cells = [c for c in CELLS if c.family == "proportions"][:2]
    serial = coverage.run(cells, quick=True, jobs=1)
    pooled = coverage.run(cells, quick=True, jobs=2)
    assert [r["rate"] for r in serial] == [r["rate"] for r in pooled]


HOLDING = [c for c in CELLS if c.assumptions_hold and c.quick_reps]
# CI splits the reduced runs between its two suites, which run side by side (.ci/run): EVALKIT_COVERAGE_SHARD=K/N
# (or K1,K2/N) keeps the cells whose index is K modulo N; unset, every cell runs here
_SHARD = os.environ.get("EVALKIT_COVERAGE_SHARD")
if _SHARD:
    _keep, _n = _SHARD.split("/")
    HOLDING = [c for i, c in enumerate(HOLDING) if i % int(_n) in {int(k) for k in _keep.split(",")}]


@pytest.mark.parametrize("cell", HOLDING, ids=[c.key for c in HOLDING])
def test_reduced_run_meets_its_bound(cell):
    row = coverage.run([cell], quick=True, seed=coverage.DEFAULT_SEED)[0]
    assert coverage.meets(cell, row["rate"], cell.quick_reps), (
        f"{cell.key}: {row['rate']:.3f} over {row['reps']} replicates, quick bound {row['bound']:.3f}")
