"""A column table's CSV (``rate --out``'s leaderboard, written without pandas) is byte for byte what
pandas' ``DataFrame.to_csv`` writes for the same table through ``evalkit._output.write_csv``."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit._output import write_csv
from evalkit.ratings.leaderboard import Leaderboard

NAMES = ["plain", "=cmd|' /C calc'!A0", "+1", "-x", "@sum", "\tlead", "a,b", 'q"uote', "line\nbreak", "模型 ✓",
         "", " spaced "]


def _table(names: list[str]) -> Leaderboard:
    n = len(names)
    gen = np.random.default_rng(7)
    elo = gen.normal(1000, 200, n)
    elo[1] = np.nan
    return Leaderboard(columns={
        "rank": np.arange(1, n + 1), "model": np.array(names, dtype=object), "elo": elo,
        "ci_low": np.r_[1e16, 1e-5, -0.0, np.inf, -np.inf, gen.normal(size=n - 5)] if n >= 5 else elo,
        "n": gen.integers(0, 10**6, n), "win_rate": gen.uniform(size=n) / 3.0,
        "rank_low": np.full(n, None, dtype=object),  # None-filled above RANK_MAX_PLAYERS players
        "flag": np.arange(n) % 2 == 0, "=total": np.full(n, 2.5),
    })


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("names", [NAMES, NAMES + ["cr\rcell"]], ids=["lf", "crlf"])
def test_column_table_csv_equals_pandas(tmp_path, names, raw):
    table = _table(names)
    mine = write_csv(table, tmp_path / "columns.csv", raw=raw).read_bytes()
    ref = write_csv(table.to_frame(), tmp_path / "pandas.csv", raw=raw).read_bytes()
    assert mine == ref
    assert (b"\r\n" in mine) == ("cr\rcell" in names)
    if not raw:
        assert b"'=cmd" in mine and b"'+1" in mine and b"'=total" in mine
