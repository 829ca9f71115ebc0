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
(:func:`evalkit.ratings.style.fit_logit`). evalkit then fits each model's GLM by plain maximum
likelihood, where AlpacaEval fits it with an L1 penalty chosen by 5-fold cross-validation and
regularised towards two "gamed" (verbose / concise) baselines (weight 0.2).

Where evalkit's numbers differ from the published ones, the difference is in the per-model
coefficients, not in that fitting method: AlpacaEval's own L1 + CV fit, run on evalkit's
difficulties, moves evalkit's LC win rates by about 0.1 point, while the published coefficients
(AlpacaEval's ``weights/.../baseline_gpt4_1106_preview.csv``: length, difficulty and intercept per
model, fitted on its difficulty estimates and its gamed baselines) with evalkit's difficulties land
within about 0.2 point of the published LC win rates (``scripts/lc_vs_alpaca_eval.py``).
``length_controlled_win_rate(frame, weights=...)`` uses such published coefficients
(:func:`read_glm_weights`) for the models they cover.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

from evalkit.ratings.style import fit_logit

__all__ = ["LC_COLUMNS", "GLM_WEIGHT_COLUMNS", "alpaca_eval_lc_frame", "instruction_difficulty",
           "length_controlled_win_rate", "read_glm_weights"]

#: AlpacaEval's column names of a GLM weights file -> evalkit's.
GLM_WEIGHT_COLUMNS = {"np.tanh(std_delta_len)": "coef_length", "instruction_difficulty": "coef_difficulty",
                      "not_gamed_baseline.astype(float)": "intercept"}

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


def read_glm_weights(path: str) -> pd.DataFrame:
    """AlpacaEval's per-model GLM weights (``src/alpaca_eval/metrics/weights/<annotator>/length_controlled_v1/
    baseline_<model>.csv``): one row per model, ``coef_length, coef_difficulty, intercept`` (index: model)."""
    raw = pd.read_csv(path, index_col=0)
    missing = sorted(set(GLM_WEIGHT_COLUMNS) - set(raw.columns))
    if missing:
        raise ValueError(f"{path}: an AlpacaEval GLM weights file needs the columns {sorted(GLM_WEIGHT_COLUMNS)}; "
                         f"missing {missing}.")
    out = raw[list(GLM_WEIGHT_COLUMNS)].rename(columns=GLM_WEIGHT_COLUMNS).astype(float)
    out.index = out.index.astype(str)
    out.index.name = "model"
    return out


def length_controlled_win_rate(frame: pd.DataFrame, *, difficulty: pd.Series | None = None,
                               baseline: str | None = None, weights: pd.DataFrame | None = None) -> pd.DataFrame:
    """AlpacaEval's LC win rate of every model (percent), with its GLM coefficients.

    Parameters
    ----------
    frame : pandas.DataFrame
        :data:`LC_COLUMNS` (see :func:`alpaca_eval_lc_frame`).
    difficulty : pandas.Series, optional
        Instruction difficulties; default :func:`instruction_difficulty` of ``frame``.
    baseline : str, optional
        The baseline's own rows (every preference 0.5) get an LC win rate of exactly 50.
    weights : pandas.DataFrame, optional
        Published per-model coefficients (:func:`read_glm_weights`). Models in it are not fitted:
        their LC win rate is AlpacaEval's ``predict_winrate``, ``100 * mean_i expit(da + db *
        difficulty_i)`` with ``da``, ``db`` the model's intercept and difficulty coefficient minus the
        baseline's (the row of ``baseline``, else zero), over the model's instructions; the others are
        fitted. ``coef_source`` says which.

    Returns
    -------
    pandas.DataFrame
        ``model, n, win_rate, lc_win_rate, coef_length, coef_difficulty, intercept, converged,
        coef_source``, best LC first.
    """
    import statsmodels.api as sm

    frame = _check(frame)
    diff = instruction_difficulty(frame) if difficulty is None else difficulty
    base_w = np.zeros(3)
    if weights is not None and baseline is not None and baseline in weights.index:
        base_w = weights.loc[baseline, ["coef_length", "coef_difficulty", "intercept"]].to_numpy(float)
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
                         "converged": True, "coef_source": "baseline"})
            continue
        if weights is not None and model in weights.index:
            c_len, c_diff, a = weights.loc[model, ["coef_length", "coef_difficulty", "intercept"]].to_numpy(float)
            d_len, d_diff, d_a = np.array([c_len, c_diff, a]) - base_w
            lc = 100 * float(np.mean(expit(d_diff * sub["difficulty"].to_numpy() + d_a)))
            rows.append({**row, "lc_win_rate": lc, "coef_length": d_len, "coef_difficulty": d_diff, "intercept": d_a,
                         "converged": True, "coef_source": "published"})
            continue
        x = np.column_stack([sub["tanh_len"], sub["difficulty"], np.ones(len(sub))])
        res = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-10)
        c_len, c_diff, a = res.params
        lc = 100 * float(np.mean(expit(c_diff * sub["difficulty"].to_numpy() + a)))  # over its instructions
        rows.append({**row, "lc_win_rate": lc, "coef_length": c_len, "coef_difficulty": c_diff, "intercept": a,
                     "converged": bool(res.converged), "coef_source": "fitted"})
    out = pd.DataFrame(rows).sort_values("lc_win_rate", ascending=False, kind="stable").reset_index(drop=True)
    fitted = ("plain maximum likelihood (statsmodels GLM Binomial, fractional response)" if weights is None else
              f"published coefficients for the {int((out['coef_source'] == 'published').sum())} models the weights "
              "cover, plain maximum likelihood for the others")
    out.attrs["method"] = ("AlpacaEval LC GLM: tanh(std delta_len) + instruction difficulty + model term, "
                           f"{fitted}; difficulties "
                           + ("estimated from all models' rows" if difficulty is None else "as given"))
    return out
