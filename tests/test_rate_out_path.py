"""``rate --out`` in proportion (issue 27): no pandas on its path, the heatmap drawn by a forked child
(:class:`evalkit.cli._aside.Aside`), BLAS on one thread unless the user set a count, and the heatmap's
columns numbered above 20 models. No timing is asserted anywhere here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalkit.cli._aside import Aside, can_fork

DATA = Path(__file__).parent / "data" / "evalica" / "food.csv"


def test_rate_out_imports_no_pandas_and_writes_a_complete_folder(tmp_path):
    out = tmp_path / "out"
    code = ("import sys, json; from evalkit.cli import main; rc = main(sys.argv[1:]); "
            "print(json.dumps({'rc': rc, 'pandas': 'pandas' in sys.modules, 'mpl': 'matplotlib' in sys.modules}))")
    res = subprocess.run([sys.executable, "-c", code, "rate", str(DATA), "--out", str(out), "-q"],
                         capture_output=True, text=True, check=True)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got == {"rc": 0, "pandas": False, "mpl": True}
    from evalkit._output import verify_dir

    assert verify_dir(out) == []
    names = {f["path"] for f in json.loads((out / "run.json").read_text())["files"]}
    assert {"leaderboard.csv", "leaderboard.md", "leaderboard.png", "win_rates.png"} <= names


@pytest.mark.skipif(not can_fork(), reason="Aside forks on Linux only; elsewhere it runs in this process")
def test_aside_returns_the_childs_result_and_redraws_after_a_failure(tmp_path):
    parent = os.getpid()

    def write() -> list[str]:
        (tmp_path / f"by-{os.getpid()}").write_text("x")
        return ["drawn"]

    assert Aside(write, fork=True).result() == ["drawn"]
    made = [p.name for p in tmp_path.iterdir()]
    assert len(made) == 1 and made[0] != f"by-{parent}"  # written by the child

    def fails_in_child() -> list[str]:
        if os.getpid() != parent:
            raise RuntimeError("child only")
        return ["here"]

    assert Aside(fails_in_child, fork=True).result() == ["here"]  # the child failed: run again in this process


@pytest.mark.skipif(not can_fork(), reason="Aside forks on Linux only")
def test_aside_cancel_kills_and_reaps_the_child():
    import time

    aside = Aside(lambda: [str(time.sleep(600))], fork=True)
    pid = aside._pid
    assert pid is not None
    aside.cancel()
    with pytest.raises(ChildProcessError):  # reaped: no such child any more
        os.waitpid(pid, os.WNOHANG)
    aside.cancel()  # twice: no error


def test_aside_does_not_fork_beside_another_thread():
    """A fork while another thread may hold a lock can leave the child waiting for ever: with a second
    Python thread alive, Aside runs the function in this process."""
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        aside = Aside(lambda: [str(os.getpid())])
        assert aside._pid is None and aside.result() == [str(os.getpid())]
    finally:
        stop.set()
        t.join()


def test_one_blas_thread_only_when_the_user_set_no_count():
    code = ("import os, sys; from evalkit.cli._common import one_blas_thread; did = one_blas_thread(); "
            "import numpy; print(did, os.environ.get('OPENBLAS_NUM_THREADS'), one_blas_thread())")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                             "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                             "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True", "1", "False"]  # after numpy loaded: no change
    run = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_NUM_THREADS": "2"},
                         capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "None", "False"]  # the user's count stands


@pytest.mark.parametrize("n", [12, 60])
def test_heatmap_numbers_its_columns_above_twenty_models(n):
    from evalkit.plots.ratings import NAMED_COLUMNS_MAX, plot_win_rate_heatmap

    names = [f"system {k}" for k in range(n)]
    m = np.random.default_rng(1).uniform(size=(n, n))
    ax = plot_win_rate_heatmap(m, order=names)
    ax.figure.canvas.draw()
    x = [t.get_text() for t in ax.get_xticklabels()]
    y = [t.get_text() for t in ax.get_yticklabels()]
    if n <= NAMED_COLUMNS_MAX:
        assert x == names and y == names
    else:
        assert x == ["1", *[str(k) for k in range(5, n + 1, 5)]]
        assert y == [f"{k + 1}  {s}" for k, s in enumerate(names)]
        assert ax.get_xlabel().startswith("opponent, by row number")
    with pytest.raises(ValueError, match="needs the models' order"):
        plot_win_rate_heatmap(m)
