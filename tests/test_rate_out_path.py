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


def _arena_file(path: Path, *, models: int = 70, n: int = 6000, seed: int = 5) -> Path:
    """More models than the heatmap draws (60), one pair of models with identical records (a tie in
    rating, broken by name in the table)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    p = 1 / (1 + np.exp(-(0.05 * (a - b))))
    win = np.where(rng.random(n) < 0.1, "tie", np.where(rng.random(n) < p, "model_a", "model_b"))
    frame = pd.DataFrame({"model_a": [f"m{k:02d}" for k in a], "model_b": [f"m{k:02d}" for k in b], "winner": win})
    twins = pd.DataFrame({"model_a": ["zz1", "zz2", "zz1", "zz2"], "model_b": ["m00", "m00", "m01", "m01"],
                          "winner": ["model_a", "model_a", "model_b", "model_b"]})
    pd.concat([frame, twins]).to_csv(path, index=False)
    return path


_EARLY = """
import json, os, sys
import evalkit.cli._aside as aside
import evalkit.cli.rate as rate
mode, data, out, marks = sys.argv[1:5]
real = rate._heatmap_png

def in_child(counts, args):
    open(os.path.join(marks, f"drawn-by-{os.getpid()}"), "w").close()
    got = real(counts, args)
    return {**got, "top": got["top"][::-1], "png": ""} if mode == "other" else got  # "other": not the table's order

rate._heatmap_png = in_child
if mode == "no-fork":  # and cold: no small figure drawn while the rows are counted (rate._first_figure)
    aside.forks_now = lambda: False
    rate._first_figure = lambda: None
from evalkit.cli import main
print(json.dumps({"rc": main(["rate", data, "--out", out, "-q"]), "pid": os.getpid()}))
"""


@pytest.mark.skipif(not can_fork(), reason="Aside forks on Linux only")
@pytest.mark.parametrize("child_order", ["same", "other"])
def test_heatmap_started_after_the_counts_is_the_one_drawn_after_the_table(tmp_path, child_order):
    """``rate --out`` forks the heatmap right after the counts (the child fits the point estimates
    for the order): the folder is byte for byte the one drawn after the table without a fork (and
    without the warm-up figure drawn while the rows are counted); a
    child whose order is not the table's ("other") is not used: the heatmap is drawn again here.
    Each run is a fresh process (a fork needs the only thread; pytest's process may have others)."""
    data = _arena_file(tmp_path / "arena.csv")

    def run(mode: str, name: str) -> tuple[int, list[int]]:
        marks = tmp_path / f"marks-{name}"
        marks.mkdir()
        res = subprocess.run([sys.executable, "-c", _EARLY, mode, str(data), str(tmp_path / name), str(marks)],
                             capture_output=True, text=True, check=True)
        got = json.loads(res.stdout.strip().splitlines()[-1])
        assert got["rc"] == 0, res.stderr
        return got["pid"], [int(p.name.split("-")[-1]) for p in marks.iterdir()]

    pid, drawn = run(child_order, "early")
    assert len(drawn) == 1 and drawn[0] != pid  # by the forked child
    pid, drawn = run("no-fork", "here")
    assert drawn == []  # no child, no early heatmap: drawn after the table, in this process
    for name in ("win_rates.png", "leaderboard.png", "leaderboard.csv"):
        assert (tmp_path / "early" / name).read_bytes() == (tmp_path / "here" / name).read_bytes(), name
