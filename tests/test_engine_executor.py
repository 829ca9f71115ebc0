"""The executor switch: every engine returns results in job order, with progress ticks."""

from __future__ import annotations

import math

import pytest

from evalkit.engine import ProcessExecutor, SerialExecutor, get_executor


def _square_root(x: int) -> float:
    return math.sqrt(x)


@pytest.mark.parametrize("engine", ["serial", "process"])
def test_results_in_job_order(engine: str) -> None:
    jobs = list(range(40, 0, -1))
    ticks: list[tuple[str, int, int | None]] = []
    out = get_executor(engine, workers=2).map(_square_root, jobs, progress=lambda *a: ticks.append(a), stage="t")
    assert out == [math.sqrt(j) for j in jobs]
    assert ticks[0] == ("t", 0, 40) and ticks[-1] == ("t", 40, 40)
    assert [d for _, d, _ in ticks] == list(range(41))


def test_default_engine_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_DASK_SCHEDULER", raising=False)
    assert isinstance(get_executor(workers=1), SerialExecutor)
    assert isinstance(get_executor(), ProcessExecutor)
    with pytest.raises(ValueError, match="engine must be one of"):
        get_executor("spark")
    with pytest.raises(ValueError, match="workers must be >= 1"):
        ProcessExecutor(-1)
