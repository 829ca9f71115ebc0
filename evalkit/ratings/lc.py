"""AlpacaEval's length-controlled (LC) win rate (Dubois et al. 2024, arXiv 2404.04475).

AlpacaEval 2 fits, for each model ``m`` against the baseline, a GLM of the judge's preference
for the model on instruction ``i``::

    logit P(m beats baseline on i) = c_m * tanh(delta_len_i / sd) + b_m * difficulty_i + a_m

(``delta_len`` = baseline length - model length, ``sd`` its standard deviation over the
model's instructions), and reports ``100 * mean_i expit(b_m * difficulty_i + a_m)``: the win
rate predicted with no length difference. The preference is continuous (the judge's
probability), so the GLM is a fractional-response binomial GLM, fitted here with
statsmodels' ``GLM(family=Binomial())``.

AlpacaEval downloads its instruction difficulties at run time; :func:`instruction_difficulty`
estimates them from all models' rows instead: a two-way (model + instruction) logistic model
with a common length term, fitted by Newton's method on the sparse design
(:func:`evalkit.ratings.style.fit_logit`). Two differences with AlpacaEval remain and are
named in the results: AlpacaEval fits each model with an L1 penalty chosen by 5-fold
cross-validation and regularises it towards two "gamed" (verbose / concise) baselines
(weight 0.2); evalkit fits the plain maximum-likelihood GLM.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

from evalkit.ratings.style import fit_logit

__all__ = ["LC_COLUMNS", "alpaca_eval_lc_frame", "instruction_difficulty", "length_controlled_win_rate"]

LC_COLUMNS = ("model", "instruction", "preference", "len_model", "len_baseline")


def alpaca_eval_lc_frame(path: str) -> tuple[pd.DataFrame, int]:
    """Read an AlpacaEval derived preference CSV (``generator_2, instruction_id, preference, len_1, len_2``).

    Returns the :data:`LC_COLUMNS` frame (``preference`` = probability that the model beats the
    baseline, i.e. AlpacaEval's ``preference - 1``, with 0 read as a draw, 0.5) and the number of
    rows dropped for a missing preference.
    """
    raw = pd.read_csv(path)
    need = {"generator_2", "instruction_id", "preference", "len_1", "len_2"}
    missing = sorted(need - set(raw.columns))
    if missing:
        raise ValueError(f"{path}: an AlpacaEval derived CSV needs columns {sorted(need)}; missing {missing}.")
    pref = raw["preference"].astype(float).replace({0.0: 1.5}) - 1.0
    keep = pref.notna()
    frame = pd.DataFrame({"model": raw["generator_2"].astype(str), "instruction": raw["instruction_id"].astype(str),
                          "preference": pref, "len_model": raw["len_2"].astype(float),
                          "len_baseline": raw["len_1"].astype(float)})
    return frame[keep].reset_index(drop=True), int((~keep).sum())


def _check(frame: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in LC_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"The LC frame needs columns {list(LC_COLUMNS)}; missing {missing}.")
    p = frame["preference"].to_numpy(float)
    bad = ~((p >= 0) & (p <= 1))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"'preference' must be a probability in [0, 1]; got {float(p[first])!r} in {int(bad.sum())} rows "
                         f"(first at row {first}). Drop missing annotations first (and count them).")
    return frame


def _tanh_len(frame: pd.DataFrame) -> np.ndarray:
    """``tanh(std delta_len)`` per row, standardised within each model (AlpacaEval's feature)."""
    d = frame["len_baseline"].to_numpy(float) - frame["len_model"].to_numpy(float)
    sd = pd.Series(d).groupby(frame["model"].to_numpy()).transform("std").to_numpy()
    return np.tanh(np.divide(d, sd, out=np.zeros_like(d), where=sd > 0))


def instruction_difficulty(frame: pd.DataFrame) -> pd.Series:
    """Difficulty of each instruction (centred log-odds that models lose to the baseline there).

    Fitted jointly over all models: ``logit p = a_model - difficulty_instruction + c * tanh(std delta_len)``.
    """
    frame = _check(frame)
    models, m = np.unique(frame["model"].to_numpy(), return_inverse=True)
    instr, k = np.unique(frame["instruction"].to_numpy(), return_inverse=True)
    rows = np.arange(len(frame))
    xm = sparse.csr_matrix((np.ones(len(frame)), (rows, m)), shape=(len(frame), len(models)))
    xi = sparse.csr_matrix((-np.ones(len(frame)), (rows, k)), shape=(len(frame), len(instr)))[:, 1:]
    x = sparse.hstack([xm, xi, sparse.csr_matrix(_tanh_len(frame)[:, None])]).tocsr()
    fit = fit_logit(x, frame["preference"].to_numpy(float))
    if not fit.converged:
        raise ValueError(f"The instruction-difficulty fit did not converge in {fit.n_iter} Newton steps.")
    d = np.r_[0.0, fit.coef[len(models): len(models) + len(instr) - 1]]
    return pd.Series(d - d.mean(), index=instr, name="instruction_difficulty")


def length_controlled_win_rate(frame: pd.DataFrame, *, difficulty: pd.Series | None = None,
                               baseline: str | None = None) -> pd.DataFrame:
    """AlpacaEval's LC win rate of every model (percent), with its GLM coefficients.

    Parameters
    ----------
    frame : pandas.DataFrame
        :data:`LC_COLUMNS` (see :func:`alpaca_eval_lc_frame`).
    difficulty : pandas.Series, optional
        Instruction difficulties; default :func:`instruction_difficulty` of ``frame``.
    baseline : str, optional
        The baseline's own rows (every preference 0.5) get an LC win rate of exactly 50.

    Returns
    -------
    pandas.DataFrame
        ``model, n, win_rate, lc_win_rate, coef_length, coef_difficulty, intercept, converged``,
        best LC first.
    """
    import statsmodels.api as sm

    frame = _check(frame)
    diff = instruction_difficulty(frame) if difficulty is None else difficulty
    unknown = sorted(set(frame["instruction"]) - set(diff.index))
    if unknown:
        raise ValueError(f"No difficulty for {len(unknown)} instructions (first {unknown[0]!r}).")
    frame = frame.assign(tanh_len=_tanh_len(frame), difficulty=diff.reindex(frame["instruction"]).to_numpy())
    rows = []
    for model, sub in frame.groupby("model", sort=True):
        y = sub["preference"].to_numpy(float)
        row = {"model": model, "n": len(sub), "win_rate": 100 * y.mean()}
        if model == baseline or np.all(y == 0.5):
            rows.append({**row, "lc_win_rate": 50.0, "coef_length": 0.0, "coef_difficulty": 0.0, "intercept": 0.0,
                         "converged": True})
            continue
        x = np.column_stack([sub["tanh_len"], sub["difficulty"], np.ones(len(sub))])
        res = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-10)
        c_len, c_diff, a = res.params
        lc = 100 * float(np.mean(expit(c_diff * sub["difficulty"].to_numpy() + a)))  # over its instructions
        rows.append({**row, "lc_win_rate": lc, "coef_length": c_len, "coef_difficulty": c_diff, "intercept": a,
                     "converged": bool(res.converged)})
    out = pd.DataFrame(rows).sort_values("lc_win_rate", ascending=False, kind="stable").reset_index(drop=True)
    out.attrs["method"] = ("AlpacaEval LC GLM: tanh(std delta_len) + instruction difficulty + model term, plain "
                           "maximum likelihood (statsmodels GLM Binomial, fractional response); difficulties "
                           "estimated from all models' rows")
    return out
