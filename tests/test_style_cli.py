"""``evalkit rate --style A:B`` / ``--style-diff COL``: numbers pinned to statsmodels GLM(Binomial) and to
``fit_style_bt``; the reader keeping the style columns; bad input; --json; --out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from evalkit.cli import main
from evalkit.io import read_comparisons
from evalkit.ratings.style import fit_style_bt, length_feature

ELO = 400 / np.log(10)  # Elo points per unit of natural-log strength
NAMES = [f"m{k}" for k in range(6)]


def _battles(seed: int = 3, rows: int = 600) -> pd.DataFrame:
    """Arena battles whose winner depends on the strengths and on the answers' lengths (coefficient 0.6)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, rows)
    b = (a + rng.integers(1, 6, rows)) % 6
    la, lb = rng.integers(50, 2000, rows), rng.integers(50, 2000, rows)
    z = (la - lb) / (la + lb)
    p = 1 / (1 + np.exp(-(np.linspace(-1, 1, 6)[a] - np.linspace(-1, 1, 6)[b] + 0.6 * (z - z.mean()) / z.std())))
    u = rng.random(rows)
    winner = np.where(u < 0.9 * p, "model_a", np.where(u < 0.9 * p + 0.1, "tie", "model_b"))
    return pd.DataFrame({"model_a": [NAMES[k] for k in a], "model_b": [NAMES[k] for k in b], "winner": winner,
                         "len_a": la, "len_b": lb, "hdiff": rng.normal(size=rows),
                         "question_id": rng.integers(0, 40, rows)})


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    path = tmp_path_factory.mktemp("style") / "battles.csv"
    _battles().to_csv(path, index=False)
    return path


def _rate_json(capsys, *argv) -> dict:
    capsys.readouterr()
    assert main(["rate", *map(str, argv), "--json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


def _reference(raw: pd.DataFrame, extra: list[np.ndarray], **fit):
    """statsmodels GLM(Binomial) on a reference-coded design (m0 dropped) plus the covariates; returns
    (centred Elo, SE of the centred Elo, the covariates' params and SEs)."""
    a = raw["model_a"].map(NAMES.index).to_numpy()
    b = raw["model_b"].map(NAMES.index).to_numpy()
    x = np.zeros((len(raw), 6))
    x[np.arange(len(raw)), a] += 1.0
    x[np.arange(len(raw)), b] -= 1.0
    y = raw["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    res = sm.GLM(y, np.column_stack([x[:, 1:], *extra]), family=sm.families.Binomial()).fit(tol=1e-12, **fit)
    k = len(extra)
    # centred strengths theta - mean(theta) with theta = (0, params): a linear map C of the reference-coded ones
    c = np.vstack([np.zeros(5), np.eye(5)])
    c -= c.mean(axis=0)
    theta = c @ res.params[:5]
    se = np.sqrt(np.diag(c @ res.cov_params()[:5, :5] @ c.T))
    return 1000 + ELO * theta, ELO * se, res.params[5:5 + k], res.bse[5:5 + k]


def _z(raw: pd.DataFrame) -> np.ndarray:
    # LMArena's feature written out: (a - b)/(a + b), standardised with the population SD
    d = (raw["len_a"] - raw["len_b"]) / (raw["len_a"] + raw["len_b"])
    return ((d - d.mean()) / d.std(ddof=0)).to_numpy()


def test_style_cli_equals_statsmodels_glm_and_fit_style_bt(battles, capsys):
    raw = pd.read_csv(battles)
    out = _rate_json(capsys, battles, "--style", "len_a:len_b", "--style-diff", "hdiff")
    board = pd.DataFrame(out["leaderboard"]).set_index("model").loc[NAMES]
    coefs = pd.DataFrame(out["style_coefficients"]).set_index("covariate")
    assert list(coefs.index) == ["len_a:len_b", "hdiff"]
    # statsmodels: sm.GLM(y, [players, z, hdiff], Binomial).fit(cov_type="HC0")
    elo, se, beta, beta_se = _reference(raw, [_z(raw), raw["hdiff"].to_numpy()], cov_type="HC0")
    np.testing.assert_allclose(board["elo"], elo, atol=1e-5)
    q = stats.norm.ppf(0.975)
    np.testing.assert_allclose(board["ci_high"] - board["elo"], q * se, atol=1e-5)
    np.testing.assert_allclose(coefs["coef"], beta, atol=1e-7)
    np.testing.assert_allclose(coefs["se"], beta_se, atol=1e-7)
    np.testing.assert_allclose(coefs["pvalue"], 2 * stats.norm.sf(np.abs(beta / beta_se)), rtol=1e-5)
    assert 0.4 < coefs.loc["len_a:len_b", "coef"] < 0.8  # the simulated length effect, 0.6, is recovered
    # the plain Elo beside it: the same GLM without covariates (ties as half a win)
    plain, *_ = _reference(raw, [], cov_type="HC0")
    np.testing.assert_allclose(board["elo_plain"], plain, atol=1e-4)
    assert (board["rank_change"] == board["rank_plain"] - board["rank"]).all()
    # and the library on the same frame: read_comparisons(keep_columns=) + length_feature + fit_style_bt
    frame, _ = read_comparisons(battles, keep_columns=["len_a", "len_b", "hdiff"])
    fit = fit_style_bt(frame.assign(z=length_feature(frame["len_a"], frame["len_b"]),
                                    hdiff=frame["hdiff"].astype(float)), ["z", "hdiff"])
    np.testing.assert_allclose(board["elo"], 1000 + ELO * fit.theta, atol=1e-9)
    np.testing.assert_allclose(coefs["se"], fit.se()[6:], atol=1e-12)


def test_style_cluster_robust_equals_statsmodels_cluster(battles, capsys):
    raw = pd.read_csv(battles)
    groups = raw["question_id"].to_numpy()
    # statsmodels GLM(...).fit(cov_type="cluster", cov_kwds={"groups": question_id}) (CR1: use_correction=True)
    elo, se, beta, beta_se = _reference(raw, [_z(raw)], cov_type="cluster", cov_kwds={"groups": groups})
    out = _rate_json(capsys, battles, "--style", "len_a:len_b", "--cluster", "item")
    board = pd.DataFrame(out["leaderboard"]).set_index("model").loc[NAMES]
    coefs = pd.DataFrame(out["style_coefficients"])
    # the SE is statsmodels' CR1; the interval and p-value read it off t(G - 1), as every cluster-robust
    # interval in evalkit does
    g = raw["question_id"].nunique()
    np.testing.assert_allclose(board["ci_high"] - board["elo"], stats.t.ppf(0.975, g - 1) * se, atol=1e-5)
    np.testing.assert_allclose(coefs["se"], beta_se, atol=1e-7)
    np.testing.assert_allclose(coefs["pvalue"], 2 * stats.t.sf(np.abs(coefs["coef"] / beta_se), g - 1), rtol=1e-6)
    assert (coefs["df"] == g - 1).all()
    # CR0: use_correction=False
    *_, beta_se0 = _reference(raw, [_z(raw)], cov_type="cluster",
                              cov_kwds={"groups": groups, "use_correction": False})
    out0 = _rate_json(capsys, battles, "--style", "len_a:len_b", "--cluster", "item", "--cluster-correction", "CR0")
    np.testing.assert_allclose(pd.DataFrame(out0["style_coefficients"])["se"], beta_se0, atol=1e-7)


def test_style_model_based_interval_equals_statsmodels_nonrobust(battles, capsys):
    raw = pd.read_csv(battles)
    # statsmodels GLM(...).fit() (default cov_type="nonrobust": the inverse Fisher information)
    elo, se, beta, beta_se = _reference(raw, [_z(raw)])
    out = _rate_json(capsys, battles, "--style", "len_a:len_b", "--interval", "hessian", "--level", "0.9")
    board = pd.DataFrame(out["leaderboard"]).set_index("model").loc[NAMES]
    np.testing.assert_allclose(board["elo"] - board["ci_low"], stats.norm.ppf(0.95) * se, atol=1e-5)
    np.testing.assert_allclose(pd.DataFrame(out["style_coefficients"])["se"], beta_se, atol=1e-7)


def test_style_with_position_adds_the_left_advantage(battles, capsys):
    raw = pd.read_csv(battles)
    out = _rate_json(capsys, battles, "--style", "len_a:len_b", "--adjust-position")
    coefs = pd.DataFrame(out["style_coefficients"]).set_index("covariate")
    # statsmodels: the same GLM with a column of ones (model_a shown first)
    *_, beta, _ = _reference(raw, [_z(raw), np.ones(len(raw))], cov_type="HC0")
    np.testing.assert_allclose(coefs["coef"], beta, atol=1e-7)
    assert list(coefs.index) == ["len_a:len_b", "player_a"]


def test_style_out_writes_tables(battles, tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(["rate", str(battles), "--style", "len_a:len_b", "--out", str(out_dir)]) == 0
    text = capsys.readouterr().out
    assert "Style coefficients" in text and "style control moved the Elo by up to" in text
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["leaderboard.csv", "leaderboard.md", "run.json", "style_coefficients.csv",
                     "style_coefficients.md"]
    board = pd.read_csv(out_dir / "leaderboard.csv")
    js = pd.DataFrame(_rate_json(capsys, battles, "--style", "len_a:len_b")["leaderboard"])
    np.testing.assert_allclose(board["elo"], js["elo"], rtol=1e-12)
    assert pd.read_csv(out_dir / "style_coefficients.csv")["covariate"].tolist() == ["len_a:len_b"]
    run = json.loads((out_dir / "run.json").read_text())
    assert run["variant"] == "style --style len_a:len_b" and run["parameters"]["style"] == ["len_a:len_b"]
    assert run["inputs"] == [str(battles)]


def test_reader_keeps_style_columns_for_left_right_and_canonical(tmp_path):
    raw = _battles(rows=60)
    lr = raw.rename(columns={"model_a": "left", "model_b": "right"}).assign(
        winner=raw["winner"].map({"model_a": "left", "model_b": "right", "tie": "tie"}))
    canon = raw.rename(columns={"model_a": "player_a", "model_b": "player_b"}).assign(
        outcome=raw["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5})).drop(columns="winner")
    for name, table in (("lr.csv", lr), ("canon.jsonl", canon)):
        path = tmp_path / name
        table.to_csv(path, index=False) if name.endswith(".csv") else table.to_json(path, orient="records",
                                                                                    lines=True)
        frame, _ = read_comparisons(path, keep_columns=["len_a", "hdiff"])
        np.testing.assert_array_equal(frame["len_a"].astype(int), raw["len_a"])
        np.testing.assert_allclose(frame["hdiff"].astype(float), raw["hdiff"])
    counts = pd.DataFrame({"player_a": ["a"], "player_b": ["b"], "wins_a": [3], "wins_b": [2], "len_a": [1]})
    counts.to_csv(tmp_path / "counts.csv", index=False)
    with pytest.raises(ValueError, match="'counts' format; extra columns"):
        read_comparisons(tmp_path / "counts.csv", keep_columns=["len_a"])


def _error(capsys, *argv) -> str:
    capsys.readouterr()
    assert main(["rate", *map(str, argv)]) == 2
    return capsys.readouterr().err


def test_style_bad_input_messages(battles, tmp_path, capsys):
    err = _error(capsys, battles, "--style", "len_a:tokens_b")
    assert "has no column 'tokens_b' (asked for by --style len_a:tokens_b)" in err
    assert "'len_a', 'len_b', 'hdiff', 'question_id'" in err
    err = _error(capsys, battles, "--style-diff", "nope")
    assert "has no column 'nope' (asked for by --style-diff nope)" in err
    assert "A_COL:B_COL" in _error(capsys, battles, "--style", "len_a")
    assert "cannot be combined with --bootstrap" in _error(capsys, battles, "--style", "len_a:len_b",
                                                           "--bootstrap", "10")
    assert "cannot be combined with --by" in _error(capsys, battles, "--style", "len_a:len_b", "--by", "judge")
    assert "two different columns" in _error(capsys, battles, "--style", "len_a:len_a")
    assert "more than once" in _error(capsys, battles, "--style", "len_a:len_b", "--style", "len_a:len_b")
    raw = _battles(rows=60).astype({"len_b": object, "hdiff": object})
    raw.loc[9, "len_b"] = "long"  # data row 10: line 11 of the CSV (line 1 is the header)
    raw.loc[[20, 30], "hdiff"] = np.inf
    raw.loc[[40], "len_a"] = -5
    bad = tmp_path / "bad.csv"
    raw.to_csv(bad, index=False)
    err = _error(capsys, bad, "--style", "len_b:len_a")
    assert "The 'len_b' column (style pair len_b:len_a) must hold finite numbers >= 0" in err
    assert f"Got 'long' in 1 row (first at line 11 of {bad}) instead." in err
    err = _error(capsys, bad, "--style-diff", "hdiff")
    assert "The 'hdiff' column (style difference hdiff) must hold finite numbers" in err
    assert "in 2 rows (first at line 22 of" in err
    assert "Got '-5' in 1 row (first at line 42 of" in _error(capsys, bad, "--style", "len_a:len_b")
    flat = tmp_path / "flat.csv"
    _battles(rows=60).assign(zero=0.0).to_csv(flat, index=False)
    assert "['zero'] are 0 on every row" in _error(capsys, flat, "--style-diff", "zero")
