"""Writes ``ppi_reference.json``: ppi_py's own numbers on fixed data (the PPI / PPI++ pins of tests/test_stats_ppi.py).

Run with ppi_py installed (``pip install ppi-python`` in a scratch venv; version 0.2.3 from PyPI, the code of
aangelopoulos/ppi_py@bd90caa, MIT):  ``/tmp/ppi-venv/bin/python make_reference.py``.
Cases: a binary judge of 85 % sensitivity / 80 % specificity (n = 60 labelled, N = 400 judge-only), a
continuous judge score (n = 40, N = 250), and a judge independent of the humans (small lambda).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import ppi_py

gen = np.random.default_rng(26)


def binary(n: int, big_n: int, p: float, sens: float, spec: float) -> tuple:
    y_all = gen.binomial(1, p, n + big_n).astype(float)
    f_all = np.where(y_all == 1, gen.binomial(1, sens, n + big_n), gen.binomial(1, 1 - spec, n + big_n)).astype(float)
    return y_all[:n], f_all[:n], f_all[n:]


def continuous(n: int, big_n: int) -> tuple:
    y_all = gen.uniform(0, 1, n + big_n)
    f_all = np.clip(0.7 * y_all + 0.2 + gen.normal(0, 0.15, n + big_n), 0, 1)
    return y_all[:n], f_all[:n], f_all[n:]


cases = {"binary": binary(60, 400, 0.6, 0.85, 0.8), "continuous": continuous(40, 250),
         "uninformative": (gen.binomial(1, 0.5, 30).astype(float), gen.binomial(1, 0.5, 30).astype(float),
                           gen.binomial(1, 0.5, 200).astype(float))}
out = {"ppi_py": ppi_py.__version__ if hasattr(ppi_py, "__version__") else "0.2.3", "cases": {}}
for name, (y, f, fu) in cases.items():
    rec = {"y": y.round(6).tolist(), "yhat": f.round(6).tolist(), "yhat_unlabeled": fu.round(6).tolist()}
    y, f, fu = (np.array(rec[k]) for k in ("y", "yhat", "yhat_unlabeled"))
    for label, lam in (("ppi_plusplus", None), ("ppi", 1.0), ("classical", 0.0)):
        lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam)
        rec[label] = {"estimate": float(np.asarray(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)).reshape(-1)[0]),
                      "ci": [float(np.asarray(lo).reshape(-1)[0]), float(np.asarray(hi).reshape(-1)[0])]}
    grads_theta = rec["ppi"]["estimate"]
    rec["lambda"] = float(ppi_py.ppi._calc_lam_glm(y[:, None] - grads_theta, f[:, None] - grads_theta,
                                                   fu[:, None] - grads_theta, np.eye(1), clip=True))
    out["cases"][name] = rec
Path(__file__).with_name("ppi_reference.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")
