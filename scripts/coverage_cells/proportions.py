"""Wilson and Clopper-Pearson intervals of a proportion (pass rates, win rates, agreement): ``k ~ Bin(n, p)``.

Wilson's coverage at a fixed ``p`` oscillates with ``n`` and ``p`` (Brown, Cai & DasGupta 2001). Computed
exactly (sum of binomial probabilities of the ``k`` whose interval holds ``p``): at n = 24 its lowest value with
``n p >= 5`` is 0.925 (p = 0.31), and with fewer than one expected success it falls to 0.84 (p = 0.007).
The cells at those points are marked; the rest are the settings a report meets.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from evalkit.stats import clopper_pearson_interval, wilson_interval


def _draw(gen: np.random.Generator, *, n: int, p: float, method: str) -> tuple[bool, float]:
    k = int(gen.binomial(n, p))
    f = wilson_interval if method == "wilson" else clopper_pearson_interval
    lo, hi = f(k, n).confidence_interval()
    return bool(lo <= p <= hi), hi - lo


def _cell(method: str, n: int, p: float, *, hold: bool = True, note: str = "") -> dict:
    name = {"wilson": "Wilson score interval", "cp": "Clopper-Pearson (exact)"}[method]
    return {"family": "proportions", "method": name, "setting": f"n={n}, p={p:g}{note}", "kind": "interval",
            "nominal": 0.95, "draw": partial(_draw, n=n, p=p, method=method), "reps": 20000, "quick_reps": 400,
            "assumptions_hold": hold}


CELLS = [
    _cell("wilson", 24, 0.5),
    _cell("wilson", 24, 0.02, hold=False, note=" (0.5 expected successes: evalkit warns)"),
    _cell("wilson", 24, 0.31, hold=False, note=" (its lowest point at n=24 with np >= 5)"),
    _cell("wilson", 100, 0.02),
    _cell("wilson", 100, 0.5),
    _cell("cp", 24, 0.02),
    _cell("cp", 24, 0.5),
    _cell("cp", 100, 0.98),
]
