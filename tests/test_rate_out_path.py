"""``rate --out`` in proportion (issue 27): no pandas on its path, the figures drawn by forked processes
(:class:`evalkit.cli._aside.Standby`, :class:`~evalkit.cli._aside.Aside`), BLAS on one thread unless the user set a count, and the heatmap's
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


@pytest.mark.parametrize("fork", [True, False])
def test_rate_out_imports_no_pandas_and_writes_a_complete_folder(tmp_path, fork):
    """Forked, the figures' process imports matplotlib, this one never does; unforked, this one
    draws. pandas is imported by neither."""
    out = tmp_path / "out"
    code = ("import sys, json; import evalkit.cli._aside as aside\n"
            "if sys.argv[1] == 'no': aside.forks_now = lambda: False\n"
            "from evalkit.cli import main; rc = main(sys.argv[2:]); "
            "print(json.dumps({'rc': rc, 'pandas': 'pandas' in sys.modules, 'mpl': 'matplotlib' in sys.modules}))")
    res = subprocess.run([sys.executable, "-c", code, "yes" if fork else "no", "rate", str(DATA), "--out", str(out),
                          "-q"], capture_output=True, text=True, check=True)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got == {"rc": 0, "pandas": False, "mpl": not (fork and can_fork())}
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


_FIGURES = """
import json, os, sys
import evalkit.cli._aside as aside
import evalkit.cli.rate as rate
mode, data, out, marks = sys.argv[1:5]

def marked(fn, what):
    def draw(*args, **kwargs):
        open(os.path.join(marks, f"{what}-{os.getpid()}"), "w").close()
        return fn(*args, **kwargs)
    return draw

rate._heatmap = marked(rate._heatmap, "heatmap")
rate._draw_figures = marked(rate._draw_figures, "figures")
rate._draw_figures.__qualname__ = "_draw_figures"  # pickled by name: the marked one
rate._draw_figures.__module__ = "evalkit.cli.rate"
if mode == "other":  # the heatmap sent first is not in the table's order: drawn again in that order
    first = rate._heatmap_data
    def reversed_first(args, counts, order=None):
        if order is not None:
            return first(args, counts, order)
        block, top, total = first(args, counts)
        return block[::-1, ::-1], top[::-1], total
    rate._heatmap_data = reversed_first
if mode == "no-fork":  # the figures drawn here, after the table, by one process
    aside.forks_now = lambda: False
from evalkit.cli import main
print(json.dumps({"rc": main(["rate", data, "--out", out, "-q"]), "pid": os.getpid()}))
"""


@pytest.mark.skipif(not can_fork(), reason="Aside and Standby fork on Linux only")
@pytest.mark.parametrize("first_order", ["same", "other"])
def test_figures_drawn_by_forked_processes_are_the_ones_drawn_here(tmp_path, first_order):
    """``rate --out`` forks its figures' process before the rows are read (Standby), sends it the
    heatmap's data after a fit of the point estimates and the table after the intervals; there the
    heatmap is drawn by a forked child while the leaderboard is drawn. The folder is byte for byte
    the one drawn here without any fork. A first heatmap that is not in the table's order ("other")
    is drawn again in that order. Each run is a fresh process (a fork needs the only thread)."""
    data = _arena_file(tmp_path / "arena.csv")

    def run(mode: str, name: str) -> tuple[int, dict[str, list[int]]]:
        marks = tmp_path / f"marks-{name}"
        marks.mkdir()
        res = subprocess.run([sys.executable, "-c", _FIGURES, mode, str(data), str(tmp_path / name), str(marks)],
                             capture_output=True, text=True, check=True)
        got = json.loads(res.stdout.strip().splitlines()[-1])
        assert got["rc"] == 0, res.stderr
        by: dict[str, list[int]] = {}
        for mark in marks.iterdir():
            what, pid = mark.name.split("-")
            by.setdefault(what, []).append(int(pid))
        return got["pid"], by

    pid, drawn = run(first_order, "forked")
    (figures,) = drawn["figures"]
    assert figures != pid  # the figures' process
    children = [p for p in drawn["heatmap"] if p not in (pid, figures)]
    assert len(children) == 1  # the first heatmap: by a child of the figures' process
    again = [p for p in drawn["heatmap"] if p == figures]
    assert again == ([] if first_order == "same" else [figures])  # redrawn there in the table's order
    pid, drawn = run("no-fork", "here")
    assert drawn == {"figures": [pid], "heatmap": [pid]}  # no fork: all drawn in this process
    for name in ("win_rates.png", "leaderboard.png", "leaderboard.csv", "leaderboard.md"):
        assert (tmp_path / "forked" / name).read_bytes() == (tmp_path / "here" / name).read_bytes(), name


def _twice(receive):
    """A Standby job: the sum of the two objects it receives, with the pid that added them."""
    return [receive() + receive(), os.getpid()]


def _fails_in_child(receive):
    first = receive()
    if os.getpid() != int(os.environ["EVALKIT_TEST_PARENT"]):
        raise RuntimeError("child only")
    return first


@pytest.mark.skipif(not can_fork(), reason="Standby forks on Linux only")
def test_standby_runs_the_job_in_its_child_and_again_here_after_a_failure(monkeypatch):
    from evalkit.cli._aside import Standby

    prepared = []
    standby = Standby(lambda: prepared.append(os.getpid()), fork=True)
    assert standby.forked
    standby.submit(_twice)
    standby.send(2)
    standby.send(40)
    total, pid = standby.result()
    assert total == 42 and pid != os.getpid() and prepared == []  # prepared and run in the child
    monkeypatch.setenv("EVALKIT_TEST_PARENT", str(os.getpid()))
    standby = Standby(lambda: 1 / 0, fork=True)  # an error in prepare is ignored
    standby.submit(_fails_in_child)
    standby.send("here")
    assert standby.result() == "here"  # the child failed: run again here, on what was sent
    with pytest.raises(RuntimeError, match="submit"):
        Standby(lambda: None, fork=False).send(1)


@pytest.mark.skipif(not can_fork(), reason="Standby forks on Linux only")
def test_standby_cancel_kills_and_reaps_the_child_and_an_unpicklable_job_runs_here():
    from evalkit.cli._aside import Standby

    standby = Standby(lambda: None, fork=True)
    pid = standby._pid
    assert pid is not None
    standby.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    standby.cancel()  # twice: no error
    standby = Standby(lambda: None, fork=True)
    standby.submit(lambda receive: receive() * 2)  # a lambda does not pickle: the child is stopped
    standby.send(21)
    assert not standby.forked and standby.result() == 42


def test_standby_without_a_fork_prepares_in_a_thread_and_runs_here():
    import threading

    from evalkit.cli._aside import Standby

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        where: list[str] = []
        standby = Standby(lambda: where.append(threading.current_thread().name))  # another thread: no fork
        assert not standby.forked
        standby.submit(_twice)
        standby.send(1)
        standby.send(2)
        assert standby.result() == [3, os.getpid()] and where == ["evalkit-standby"]
    finally:
        stop.set()
        t.join()


def test_no_estimate_with_out_is_the_one_line_error_and_no_folder(tmp_path):
    """One model never loses: no maximum-likelihood ratings. With ``--out`` (the figures' process forked,
    the early heatmap's point fit failing) the command still ends with the one-line error naming
    ``--l2``, exit 2, and leaves no folder."""
    path = tmp_path / "v.csv"
    path.write_text("left,right,winner\na,b,left\na,b,left\nb,c,left\nc,b,left\n")
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "evalkit", "rate", str(path), "--out", str(out), "--quiet"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("evalkit rate: error:") and res.stderr.count("\n") == 1
    assert res.stderr.rstrip().endswith("On the command line: --l2 0.01.")
    assert not out.exists()
