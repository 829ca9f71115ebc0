"""``evalkit rate``: tables and plots written, numbers pinned to evalica's golden, errors are one line."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd

from evalkit.cli import main
from evalkit.io import read_comparisons
from evalkit.plots.ratings import plot_leaderboard, plot_win_rate_heatmap
from evalkit.ratings import ELO_SCALE, aggregate, win_rate_matrix

DATA = Path(__file__).parent / "data" / "evalica"


def test_rate_writes_tables_and_plots(tmp_path, capsys):
    tmp_path = tmp_path / "out"  # --out is a new folder (an existing non-empty one needs --force)
    code = main(["rate", str(DATA / "food.csv"), "--out", str(tmp_path)])
    assert code == 0
    printed = capsys.readouterr()
    assert "sandwich 95% Wald, centred" in printed.out and "kept 30" in printed.err
    for name in ("leaderboard.csv", "leaderboard.md", "leaderboard.png", "win_rates.png"):
        assert (tmp_path / name).stat().st_size > 0
    table = pd.read_csv(tmp_path / "leaderboard.csv")
    # Elo = 1000 + 400/ln 10 * (log s - mean log s) with s = evalica.bradley_terry scores (golden)
    gold = (
        pd.read_csv(DATA / "food-golden.csv")
        .query("algorithm == 'bradley_terry'")
        .set_index("item")["score"]
    )
    expected = 1000 + ELO_SCALE * (np.log(gold) - np.log(gold).mean())
    got = table.set_index("model")["elo"]
    np.testing.assert_allclose(got.loc[expected.index], expected.to_numpy(), atol=0.01)
    assert list(table["rank"]) == list(range(1, len(table) + 1))
    assert (table["ci_low"] < table["elo"]).all() and (table["elo"] < table["ci_high"]).all()


def test_rate_anchor_bootstrap(tmp_path, capsys):
    args = [
        "rate",
        str(DATA / "food.csv"),
        "--anchor",
        "Pizza=1200",
        "--bootstrap",
        "200",
        "--seed",
        "3",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    # 16 of the 200 replicates of these 50 comparisons have a model that never loses or never wins, more
    # than the 2.5 % tail of the interval: the leaderboard says so and gives the sandwich instead
    assert "difference with Pizza" in out and "16 of 200 bootstrap replicates" in out
    assert "intervals: sandwich 95% Wald" in out and "robust sandwich (HC0) instead" in out
    assert "| Pizza | 1200 | 1200 | 1200 |" in out
    big = tmp_path / "food10.csv"  # every vote ten times: no degenerate replicate, the bootstrap is used
    big.write_text("".join([(DATA / "food.csv").read_text()] + [
        "".join((DATA / "food.csv").read_text().splitlines(keepends=True)[1:])] * 9))
    assert main(["rate", str(big), "--anchor", "Pizza=1200", "--bootstrap", "200", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "bootstrap 95% basic interval over comparisons, difference with Pizza" in out


def test_rate_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "two_parts.csv"
    bad.write_text("left,right,winner\na,b,left\nb,a,left\nc,d,left\nd,c,right\n")
    assert main(["rate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "falls into 2 parts" in err and "Traceback" not in err
    assert main(["rate", str(DATA / "food.csv"), "--anchor", "Pizza"]) == 2
    assert "MODEL=1000" in capsys.readouterr().err


def test_plots_return_axes():
    frame = read_comparisons(DATA / "simple.csv").frame
    matrix = win_rate_matrix(aggregate(frame))
    ax = plot_win_rate_heatmap(matrix, order=list(matrix.index[::-1]))
    assert [t.get_text() for t in ax.get_yticklabels()] == list(matrix.index[::-1])
    table = pd.DataFrame(
        {
            "model": ["a", "b"],
            "elo": [1010.0, 990.0],
            "ci_low": [1000.0, 980.0],
            "ci_high": [1020.0, 1000.0],
        }
    )
    table.attrs["interval"] = "sandwich 95% Wald, centred"
    ax2 = plot_leaderboard(table)
    assert ax2.get_xlabel() == "Elo (sandwich 95% Wald, centred)"
    import matplotlib.pyplot as plt

    plt.close("all")


def test_rate_cluster_changes_intervals_not_ratings(tmp_path, capsys):
    llmfao = Path(__file__).parent / "data" / "llmfao" / "crowd-comparisons.csv"
    assert main(["rate", str(llmfao), "--out", str(tmp_path / "plain")]) == 0
    assert main(["rate", str(llmfao), "--cluster", "item", "--out", str(tmp_path / "item")]) == 0
    out = capsys.readouterr().out
    assert "cluster-robust ('item', 13 clusters, CR1) sandwich" in out
    plain = pd.read_csv(tmp_path / "plain" / "leaderboard.csv").set_index("model")
    item = pd.read_csv(tmp_path / "item" / "leaderboard.csv").set_index("model").loc[plain.index]
    np.testing.assert_allclose(item["elo"], plain["elo"], atol=1e-9)  # same point estimate
    assert not np.allclose(item["ci_high"] - item["ci_low"], plain["ci_high"] - plain["ci_low"])


def test_rate_and_summary_give_the_same_tables_on_every_engine(tmp_path, capsys):
    llmfao = Path(__file__).parent / "data" / "llmfao" / "crowd-comparisons.csv"
    outs = []
    for engine in ("pandas", "duckdb"):
        assert main(["rate", str(llmfao), "--cluster", "item", "--engine", engine,
                     "--out", str(tmp_path / engine)]) == 0
        assert main(["summary", str(llmfao), "--engine", engine]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "pandas" / "leaderboard.csv"),
                                  pd.read_csv(tmp_path / "duckdb" / "leaderboard.csv"))


def test_dask_engine_without_the_extra_is_one_line(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if evalkit[dask] were not installed
    llmfao = Path(__file__).parent / "data" / "llmfao" / "crowd-comparisons.csv"
    assert main(["rate", str(llmfao), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # the first import of dask may warn about the installed pyarrow (pyarrow 14.0.0 on the lower bounds):
    # a warning line of its own, shown once per process; the error is one line, with no traceback
    errors = [line for line in err if not line.startswith("evalkit rate: warning:")]
    assert len(errors) == 1 and "pip install 'evalkit[dask]'" in errors[0]
    assert not any("Traceback" in line for line in err)
