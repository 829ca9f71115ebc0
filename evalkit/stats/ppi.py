"""Correcting a judge with human labels: prediction-powered inference and Rogan–Gladen.

A judge (an LLM grader, a model-graded scorer) labels every item; humans label a random subset.
The judge's mean alone is biased by its errors; the humans' mean alone is unbiased but wide.

* :func:`ppi_mean` - the prediction-powered estimate of the mean (accuracy, win rate) with a
  CLT interval: PPI (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, *Science* 382) with
  ``lam=1``, PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453) with the power-tuned
  ``lam`` (default), the classical human-only interval with ``lam=0``. The formulas are ppi_py's
  ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` / ``_calc_lam_glm`` (aangelopoulos/ppi_py@bd90caa,
  ``ppi_py/ppi.py``), pinned in the tests against ppi_py 0.2.3 run on the same data:

  ``theta = lam * mean(f(X_unlabeled)) + mean(Y - lam * f(X))``,
  ``se^2 = lam^2 var(f(X_unlabeled)) / N + var(Y - lam f(X)) / n`` (population variances, ddof 0),
  ``lam* = clip(2 cov(Y, f) / (2 (1 + n/N) var(f over all n + N items, ddof 1)), 0, 1)``.

* :func:`rogan_gladen` - the closed-form correction of a binary judge's positive rate by its
  sensitivity and specificity measured on the labelled items (Rogan & Gladen 1978, *Am J Epidemiol*
  107:71): ``theta = (p + Sp - 1) / (Se + Sp - 1)``, with the delta-method interval
  ``var = [var(p) + theta^2 var(Se) + (1 - theta)^2 var(Sp)] / (Se + Sp - 1)^2``.
* :func:`judge_agreement` - sensitivity, specificity (Wilson intervals), percent agreement and
  Cohen's kappa (:func:`evalkit.stats.cohen_kappa`) of the judge against the humans.

Assumption of every method here: the labelled items are a random sample of the items (not chosen
by the judge's verdict or by difficulty). PPI needs nothing else: the judge may be as biased as it
likes, an uninformative judge only costs width (PPI++ then falls back to the human-only interval).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from evalkit.stats._result import Estimate

if TYPE_CHECKING:
    import pandas as pd
from evalkit.stats._validate import check_alternative, check_confidence_level

__all__ = ["ppi_mean", "ppi_lambda", "rogan_gladen", "judge_agreement", "JudgeAgreement", "CorrectionResult",
           "correct_judge"]


def _vector(x: ArrayLike, name: str, min_n: int = 2) -> np.ndarray:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite numbers (drop unlabelled or unscored items first).")
    if arr.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} values; got {arr.size}.")
    return arr


def ppi_lambda(y: ArrayLike, yhat: ArrayLike, yhat_unlabeled: ArrayLike) -> float:
    """The power-tuned ``lam`` of PPI++ for a mean (ppi_py ``_calc_lam_glm`` with the identity Hessian,
    evaluated at the PPI (``lam=1``) estimate, clipped to [0, 1])."""
    y, f, fu = _vector(y, "y"), _vector(yhat, "yhat"), _vector(yhat_unlabeled, "yhat_unlabeled", 1)
    n, big_n = y.size, fu.size
    theta = fu.mean() + (y - f).mean()
    g, gh, ghu = y - theta, f - theta, fu - theta
    cov = 2.0 * float(np.sum((g - g.mean()) * (gh - gh.mean()))) / n
    var = float(np.var(np.concatenate([gh, ghu]), ddof=1))
    if var == 0.0:
        return 0.0
    return float(np.clip(cov / (2.0 * (1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    y: ArrayLike, yhat: ArrayLike, yhat_unlabeled: ArrayLike, *, lam: float | None = None,
    confidence_level: float = 0.95, alternative: str = "two-sided",
) -> Estimate:
    """Prediction-powered estimate of a mean with its CLT interval.

    Parameters
    ----------
    y : array_like
        Human labels (the gold standard) on the ``n`` labelled items.
    yhat : array_like
        The judge's labels on the same ``n`` items.
    yhat_unlabeled : array_like
        The judge's labels on the ``N`` items without a human label.
    lam : float, optional
        ``None`` (default): PPI++'s power-tuned ``lam`` (:func:`ppi_lambda`); ``1``: PPI; ``0``: the
        classical interval from the human labels alone.
    confidence_level : float
    alternative : {"two-sided", "less", "greater"}

    Returns
    -------
    Estimate
        ``estimate`` and its interval; ``details``: ``lam``, ``n_labeled``, ``n_unlabeled``,
        ``judge_only`` (the judge's mean over all items), ``human_only`` (the labelled mean),
        ``rectifier`` (mean human - lam * judge on the labelled items), ``se_imputed``, ``se_rectifier``.
    """
    level = check_confidence_level(confidence_level)
    check_alternative(alternative)
    yv, f = _vector(y, "y"), _vector(yhat, "yhat")
    fu = _vector(yhat_unlabeled, "yhat_unlabeled", 1)
    if yv.size != f.size:
        raise ValueError(f"y and yhat must label the same items: got {yv.size} and {f.size} values.")
    tuned = lam is None
    lam_v = ppi_lambda(yv, f, fu) if tuned else float(lam)  # type: ignore[arg-type]
    if not np.isfinite(lam_v):
        raise ValueError(f"lam must be a finite number (or None for PPI++); got {lam!r}.")
    n, big_n = yv.size, fu.size
    est = float(lam_v * fu.mean() + (yv - lam_v * f).mean())
    se_imp = float(np.std(lam_v * fu) / np.sqrt(big_n))
    se_rect = float(np.std(yv - lam_v * f) / np.sqrt(n))
    se = float(np.hypot(se_imp, se_rect))

    def ci(lv: float) -> tuple[float, float]:
        if alternative == "two-sided":
            q = float(stats.norm.ppf(0.5 + lv / 2))
            return est - q * se, est + q * se
        q = float(stats.norm.ppf(lv))
        return (-np.inf, est + q * se) if alternative == "less" else (est - q * se, np.inf)

    name = ("PPI++ (power-tuned lambda)" if tuned else "PPI" if lam_v == 1.0 else
            "classical (human labels only)" if lam_v == 0.0 else f"PPI with lambda = {lam_v:g}")
    return Estimate(
        method=f"{name}: prediction-powered mean with a normal (CLT) interval", estimate=est, se=se, n=n,
        confidence_level=level,
        handling=f"{n} human-labelled items, {big_n} items labelled by the judge only",
        details={"lam": lam_v, "n_labeled": n, "n_unlabeled": big_n,
                 "judge_only": float(np.concatenate([f, fu]).mean()), "human_only": float(yv.mean()),
                 "rectifier": float((yv - lam_v * f).mean()), "se_imputed": se_imp, "se_rectifier": se_rect,
                 "alternative": alternative},
        _ci=ci,
    )


def _as_binary(x: ArrayLike, name: str) -> np.ndarray:
    arr = _vector(x, name, 1)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise ValueError(f"{name} must be 0/1 labels for sensitivity, specificity and Rogan-Gladen; got values "
                         f"{sorted(set(arr[~np.isin(arr, (0.0, 1.0))].tolist()))[:5]}. Threshold scores first.")
    return arr


def rogan_gladen(
    y: ArrayLike, yhat: ArrayLike, yhat_unlabeled: ArrayLike, *, confidence_level: float = 0.95,
    use_labeled: bool = True, clip: bool = True,
) -> Estimate:
    """Rogan–Gladen corrected prevalence (accuracy, win rate) of a binary judge, delta-method interval.

    ``p`` is the judge's positive rate (over every item when ``use_labeled``, else over the
    unlabelled ones), ``Se`` and ``Sp`` its sensitivity and specificity against the human labels.
    ``theta = (p + Sp - 1) / (Se + Sp - 1)``; binomial variances of ``p``, ``Se`` and ``Sp`` treated as
    independent (they are not quite when ``p`` includes the labelled items; PPI has no such caveat).

    Returns
    -------
    Estimate
        ``details``: ``p``, ``sensitivity``, ``specificity``, ``youden`` (Se + Sp - 1), ``unclipped``.

    Raises
    ------
    ValueError
        When the labels are not 0/1, a class is missing among the human labels, or the judge is
        no better than chance (Se + Sp <= 1: the correction divides by it).
    """
    level = check_confidence_level(confidence_level)
    yv, f, fu = _as_binary(y, "y"), _as_binary(yhat, "yhat"), _as_binary(yhat_unlabeled, "yhat_unlabeled")
    if yv.size != f.size:
        raise ValueError(f"y and yhat must label the same items: got {yv.size} and {f.size} values.")
    pos, neg = yv == 1, yv == 0
    if not pos.any() or not neg.any():
        raise ValueError("Rogan-Gladen needs human labels of both classes (to measure sensitivity and "
                         "specificity); every human label is " + ("1." if pos.all() else "0."))
    se_, sp_ = float(f[pos].mean()), float(1 - f[neg].mean())
    judged = np.concatenate([f, fu]) if use_labeled else fu
    p = float(judged.mean())
    j = se_ + sp_ - 1.0
    if j <= 0:
        raise ValueError(f"The judge is no better than chance against the humans (sensitivity {se_:.3g} + "
                         f"specificity {sp_:.3g} <= 1): Rogan-Gladen is undefined; use the human labels alone.")
    theta_raw = (p + sp_ - 1.0) / j
    theta = float(np.clip(theta_raw, 0.0, 1.0)) if clip else float(theta_raw)
    var = (p * (1 - p) / judged.size + theta_raw**2 * se_ * (1 - se_) / int(pos.sum())
           + (1 - theta_raw) ** 2 * sp_ * (1 - sp_) / int(neg.sum())) / j**2
    se = float(np.sqrt(var))

    def ci(lv: float) -> tuple[float, float]:
        q = float(stats.norm.ppf(0.5 + lv / 2))
        lo, hi = theta_raw - q * se, theta_raw + q * se
        return (max(lo, 0.0), min(hi, 1.0)) if clip else (lo, hi)

    return Estimate(
        method="Rogan-Gladen corrected rate with a delta-method interval", estimate=theta, se=se, n=int(yv.size),
        confidence_level=level,
        handling=(f"sensitivity from {int(pos.sum())} and specificity from {int(neg.sum())} human labels; judge rate "
                  f"over {judged.size} items" + ("; clipped to [0, 1]" if clip and theta != theta_raw else "")),
        details={"p": p, "sensitivity": se_, "specificity": sp_, "youden": j, "unclipped": float(theta_raw)},
        _ci=ci,
    )


@dataclass(frozen=True)
class JudgeAgreement:
    """The judge against the humans on the labelled items."""

    n: int
    sensitivity: Estimate | None
    specificity: Estimate | None
    agreement: Estimate
    kappa: object | None  # TestResult of cohen_kappa, None when undefined
    note: str = ""


def judge_agreement(y: ArrayLike, yhat: ArrayLike, *, confidence_level: float = 0.95) -> JudgeAgreement:
    """Sensitivity, specificity, percent agreement and Cohen's kappa of the judge against human labels.

    Labels may be 0/1 (sensitivity and specificity are then given) or any discrete values such as
    0 / 0.5 / 1 for loss / tie / win (agreement and kappa only).
    """
    from evalkit.stats.agreement import cohen_kappa, percent_agreement
    from evalkit.stats.proportions import wilson_interval

    yv, f = _vector(y, "y"), _vector(yhat, "yhat")
    if yv.size != f.size:
        raise ValueError(f"y and yhat must label the same items: got {yv.size} and {f.size} values.")
    agree = percent_agreement(yv, f, confidence_level=confidence_level)
    note = ""
    try:
        kappa = cohen_kappa(yv, f, confidence_level=confidence_level)
    except ValueError as exc:
        kappa, note = None, str(exc)
    sens = spec = None
    if np.isin(yv, (0.0, 1.0)).all() and np.isin(f, (0.0, 1.0)).all():
        pos, neg = yv == 1, yv == 0
        if pos.any():
            sens = wilson_interval(int(f[pos].sum()), int(pos.sum()), confidence_level=confidence_level)
        if neg.any():
            spec = wilson_interval(int((1 - f[neg]).sum()), int(neg.sum()), confidence_level=confidence_level)
    return JudgeAgreement(n=int(yv.size), sensitivity=sens, specificity=spec, agreement=agree, kappa=kappa,
                          note=note)


@dataclass(frozen=True)
class CorrectionResult:
    """The judge-only, human-only, PPI++ and (binary labels) Rogan–Gladen estimates side by side."""

    table: pd.DataFrame  # method, estimate, ci_low, ci_high, width, n
    ppi: Estimate
    human_only: Estimate
    rogan_gladen: Estimate | None
    agreement: JudgeAgreement
    judge_only: float
    note: str = ""


def correct_judge(y: ArrayLike, yhat: ArrayLike, yhat_unlabeled: ArrayLike, *,
                  confidence_level: float = 0.95) -> CorrectionResult:
    """Every estimate of the mean a report shows for a judge with human labels on some items.

    Rows: the judge's mean over all items (no interval: its bias is unknown without the humans), the
    human-only mean with its CLT interval (``lam = 0``), PPI (``lam = 1``), PPI++ (tuned ``lam``) and, for
    0/1 labels, Rogan–Gladen.
    """
    import pandas as pd

    ppi_pp = ppi_mean(y, yhat, yhat_unlabeled, confidence_level=confidence_level)
    ppi1 = ppi_mean(y, yhat, yhat_unlabeled, lam=1.0, confidence_level=confidence_level)
    human = ppi_mean(y, yhat, yhat_unlabeled, lam=0.0, confidence_level=confidence_level)
    rg, note = None, ""
    yv, f, fu = (np.asarray(v, dtype=float).reshape(-1) for v in (y, yhat, yhat_unlabeled))
    if all(np.isin(v, (0.0, 1.0)).all() for v in (yv, f, fu)):
        try:
            rg = rogan_gladen(yv, f, fu, confidence_level=confidence_level)
        except ValueError as exc:
            note = f"Rogan-Gladen not computed: {exc}"
    judge_mean = float(ppi_pp.details["judge_only"])
    rows = [{"method": "judge only (all items; bias unknown)", "estimate": judge_mean, "ci_low": np.nan,
             "ci_high": np.nan, "se": np.nan, "n": int(yv.size + fu.size), "lambda": np.nan}]
    for label, e in (("human labels only", human), ("PPI", ppi1), ("PPI++ (tuned lambda)", ppi_pp)):
        lo, hi = e.confidence_interval()
        rows.append({"method": label, "estimate": e.estimate, "ci_low": lo, "ci_high": hi, "se": e.se,
                     "n": int(yv.size + (fu.size if e.details["lam"] else 0)), "lambda": e.details["lam"]})
    if rg is not None:
        lo, hi = rg.confidence_interval()
        rows.append({"method": "Rogan-Gladen (closed form)", "estimate": rg.estimate, "ci_low": lo, "ci_high": hi,
                     "se": rg.se, "n": int(yv.size + fu.size), "lambda": np.nan})
    table = pd.DataFrame(rows)
    table["width"] = table["ci_high"] - table["ci_low"]
    return CorrectionResult(table=table, ppi=ppi_pp, human_only=human, rogan_gladen=rg,
                            agreement=judge_agreement(yv, f, confidence_level=confidence_level),
                            judge_only=judge_mean, note=note)
