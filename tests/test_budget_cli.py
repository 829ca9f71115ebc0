"""``evalkit curve`` and the budget plots."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

from evalkit.budget import elo_curves, geometric_grid, inflection_point  # noqa: E402
from evalkit.cli import main  # noqa: E402


def _table(tmp_path):
    gen = np.random.default_rng(0)
    grid = geometric_grid(1e5, 1e7, ratio=1.5)
    rows = []
    for system, slope in (("fast", 600.0), ("slow", 300.0)):
        off = gen.gumbel(size=(6, 8))
        for t in range(6):
            for s in range(8):
                rows.append(pd.DataFrame({"system": system, "task": t, "session": s, "budget": grid,
                                          "score": slope * np.log10(grid / 1e5) / 173.7 + off[t, s]}))
    path = tmp_path / "sessions.csv"
    pd.concat(rows).to_csv(path, index=False)
    return path


def test_cli_curve_prints_table_inflection_and_saves_png(tmp_path, capsys):
    path = _table(tmp_path)
    out = tmp_path / "out"
    rc = main(["curve", str(path), "--bootstrap", "20", "--seed", "3", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "self-Elo per budget" in text and "scaling inflection point" in text
    assert "| fast |" in text and "| slow |" in text
    png = (out / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # The CLI is a thin shell: its table is the library's result with the same options.
    saved = pd.read_csv(out / "curve.csv")
    lib = elo_curves(pd.read_csv(path), n_resamples=20, rng=3)
    np.testing.assert_allclose(saved["elo"], lib.curve["elo"], rtol=1e-9)
    points = pd.read_csv(out / "inflection.csv").set_index("system")
    assert points.loc["fast", "status"] == "above_at_end"  # 600/decade throughout
    assert points.loc["slow", "status"] == "never_above"  # 300/decade throughout


def test_cli_curve_joint_mode_and_error_exit(tmp_path, capsys):
    path = _table(tmp_path)
    assert main(["curve", str(path), "--mode", "joint", "--bootstrap", "0", "--out", str(tmp_path / "o")]) == 0
    assert "joint-Elo per budget" in capsys.readouterr().out
    assert main(["curve", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o2")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_plot_elo_curves_draws_reference_and_inflection(tmp_path):
    import matplotlib.pyplot as plt

    from evalkit.plots.budget import plot_elo_curves, plot_local_slopes

    res = elo_curves(pd.read_csv(_table(tmp_path)), n_resamples=10, rng=0)
    infl = [inflection_point(res, system=s) for s in res.systems]
    fig, ax = plt.subplots()
    assert plot_elo_curves(res, ax=ax, inflection=infl) is ax
    labels = [" ".join(str(line.get_label()).split()) for line in ax.get_lines()]  # legend labels may wrap
    assert "400 Elo / decade (repeated sampling)" in labels
    ref = next(line for line in ax.get_lines() if line.get_label().startswith("400"))
    x, y = ref.get_data()
    np.testing.assert_allclose(np.diff(y) / np.diff(np.log10(x)), 400.0)
    assert ax.get_xscale() == "log"
    ax2 = plot_local_slopes(infl[0])
    assert ax2.get_ylabel() == "Elo per decade"
    plt.close("all")


@pytest.mark.parametrize("bad", [["--grid", "1.0"], ["--mode", "both"]])
def test_cli_rejects_bad_options(tmp_path, bad):
    path = _table(tmp_path)
    if bad[0] == "--mode":
        with pytest.raises(SystemExit):
            main(["curve", str(path), *bad])
    else:
        assert main(["curve", str(path), *bad, "--bootstrap", "0", "--out", str(tmp_path / "o3")]) == 2
