"""The judge room's coverage cells (scripts/coverage_cells/judge.py): well formed and cheap, and on a
shared seed the PPI++ interval is narrower than the human-only one (the judge is informative)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_PATH = Path(__file__).parents[1] / "scripts" / "coverage_cells" / "judge.py"


def _cells() -> list[dict]:
    spec = importlib.util.spec_from_file_location("judge_cells", _PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CELLS


def test_cells_are_well_formed_and_ppi_beats_human_only():
    cells = _cells()
    keys = {"family", "method", "setting", "kind", "nominal", "draw", "reps", "quick_reps"}
    assert all(keys <= set(c) for c in cells) and {c["kind"] for c in cells} == {"test", "interval"}
    widths: dict[str, float] = {}
    for c in cells:
        if c["kind"] != "interval" or "n=100" not in c["setting"]:
            continue
        rng = np.random.default_rng(7)
        draws = [c["draw"](rng) for _ in range(40)]
        assert all(isinstance(h, bool) and np.isfinite(w) and w > 0 for h, w in draws)
        widths[c["method"].split()[0]] = float(np.mean([w for _, w in draws]))
    assert widths["PPI++"] < widths["human-only"]  # sens 0.85 / spec 0.75 judge, N = 10 n


def test_sequential_null_cell_draws_a_test():
    cell = next(c for c in _cells() if c["kind"] == "test")
    rng = np.random.default_rng(3)
    rejected = [cell["draw"](rng) for _ in range(5)]
    assert all(isinstance(r, bool) and np.isnan(w) for r, w in rejected)
