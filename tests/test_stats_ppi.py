"""PPI / PPI++ pinned to ppi_py run on the same data; Rogan-Gladen; the judge's agreement with humans."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalkit.stats.ppi import correct_judge, judge_agreement, ppi_lambda, ppi_mean, rogan_gladen

REF = json.loads((Path(__file__).parent / "data" / "ppi" / "ppi_reference.json").read_text())


@pytest.mark.parametrize("case", sorted(REF["cases"]))
def test_ppi_matches_ppi_py(case):
    # tests/data/ppi/make_reference.py: ppi_py.ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05, lam=...) and
    # ppi_mean_pointestimate (ppi-python 0.2.3), _calc_lam_glm(..., clip=True) for lambda
    c = REF["cases"][case]
    y, f, fu = (np.array(c[k]) for k in ("y", "yhat", "yhat_unlabeled"))
    assert ppi_lambda(y, f, fu) == pytest.approx(c["lambda"], abs=1e-12)
    for label, lam in (("ppi_plusplus", None), ("ppi", 1.0), ("classical", 0.0)):
        e = ppi_mean(y, f, fu, lam=lam)
        assert e.estimate == pytest.approx(c[label]["estimate"], abs=1e-12)
        assert tuple(e.confidence_interval()) == pytest.approx(tuple(c[label]["ci"]), abs=1e-12)


def test_ppi_narrower_than_human_only_with_informative_judge():
    c = REF["cases"]["binary"]
    y, f, fu = (np.array(c[k]) for k in ("y", "yhat", "yhat_unlabeled"))
    res = correct_judge(y, f, fu)
    t = res.table.set_index("method")
    assert t.loc["PPI++ (tuned lambda)", "width"] < t.loc["human labels only", "width"]
    assert res.rogan_gladen is not None and "Rogan-Gladen (closed form)" in t.index


def _rg_by_hand(tp, fn, tn, fp, pos_judged, n_judged):
    se, sp, p = tp / (tp + fn), tn / (tn + fp), pos_judged / n_judged
    return (p + sp - 1) / (se + sp - 1), se, sp, p


def test_rogan_gladen_formula_and_delta_method():
    # 40 positives: judge says 1 on 34 (Se 0.85); 60 negatives: judge says 0 on 48 (Sp 0.8); 500 judge-only items
    y = np.r_[np.ones(40), np.zeros(60)]
    f = np.r_[np.ones(34), np.zeros(6), np.zeros(48), np.ones(12)]
    fu = np.r_[np.ones(260), np.zeros(240)]
    est = rogan_gladen(y, f, fu)
    theta, se, sp, p = _rg_by_hand(34, 6, 48, 12, 34 + 12 + 260, 600)
    assert est.estimate == pytest.approx(theta, abs=1e-14)
    # delta method by numerical differentiation of (p, Se, Sp) -> theta, independent of the closed form
    def g(v):
        return (v[0] + v[2] - 1) / (v[1] + v[2] - 1)
    x0, h = np.array([p, se, sp]), 1e-6
    grad = np.array([(g(x0 + h * e) - g(x0 - h * e)) / (2 * h) for e in np.eye(3)])
    var = grad @ np.diag([p * (1 - p) / 600, se * (1 - se) / 40, sp * (1 - sp) / 60]) @ grad
    assert est.se == pytest.approx(np.sqrt(var), rel=1e-7)
    with pytest.raises(ValueError, match="no better than chance"):
        rogan_gladen(y, 1 - f, fu)


def test_judge_agreement_against_statsmodels_kappa():
    import pandas as pd
    from statsmodels.stats.inter_rater import cohens_kappa

    gen = np.random.default_rng(2)
    y = gen.binomial(1, 0.5, 200).astype(float)
    f = np.where(gen.random(200) < 0.8, y, 1 - y)
    a = judge_agreement(y, f)
    expected = cohens_kappa(pd.crosstab(y, f).to_numpy())
    assert a.kappa.estimate == pytest.approx(expected.kappa, abs=1e-12)
    assert a.sensitivity.estimate == pytest.approx(f[y == 1].mean())
    assert a.specificity.estimate == pytest.approx(1 - f[y == 0].mean())
    ties = judge_agreement([0, 0.5, 1, 1], [0, 0.5, 0.5, 1])
    assert ties.sensitivity is None and ties.agreement.estimate == 0.75


def test_ppi_validation():
    with pytest.raises(ValueError, match="same items"):
        ppi_mean([1, 0, 1], [1, 0], [1])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, np.nan], [1, 0], [1])
