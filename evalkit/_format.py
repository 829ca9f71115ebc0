"""How evalkit prints numbers in sentences: one p-value format, estimates with their intervals.

The report's tables (:func:`evalkit.report.render.format_column`) print p-values with
:func:`format_p` too, so a p-value reads the same in a sentence, in a table cell and on the
terminal. A leaf module: no numpy, no pandas.
"""

from __future__ import annotations

import math

__all__ = ["format_p", "decimals_for", "format_number", "format_estimate", "format_interval", "format_count"]


def format_p(p: float) -> str:
    """A p-value with three significant digits: ``0.0172``, ``0.000122``, ``0.500``, ``1.00``;
    scientific below 1e-4 (``5.61e-08``); ``0`` for an exact zero; empty for NaN."""
    p = float(p)
    if math.isnan(p):
        return ""
    if p == 0:
        return "0"
    if p < 1e-4:
        return f"{p:.2e}"
    return f"{p:#.3g}"


def decimals_for(values: list[float] | tuple[float, ...], sig: int = 3) -> int:
    """Decimals that give the largest finite magnitude of ``values`` ``sig`` significant
    digits (0 to 6), so that an estimate and its interval share one precision."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    top = max(finite, default=0.0)
    if top == 0:
        return sig - 1
    return int(min(max(sig - 1 - math.floor(math.log10(top)), 0), 6))


def format_number(x: float, decimals: int, *, sign: bool = False) -> str:
    """``x`` with ``decimals`` decimals (a leading ``+`` with ``sign``; ``n/a`` when not finite)."""
    x = float(x)
    if not math.isfinite(x):
        return "n/a" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return f"{x:+.{decimals}f}" if sign else f"{x:.{decimals}f}"


def format_interval(low: float, high: float, decimals: int, *, sign: bool = False) -> str:
    """``low to high`` at ``decimals`` decimals."""
    return f"{format_number(low, decimals, sign=sign)} to {format_number(high, decimals, sign=sign)}"


def format_estimate(estimate: float, low: float, high: float, *, level: float = 0.95, sig: int = 3,
                    sign: bool = False, decimals: int | None = None) -> str:
    """``+0.118 (95% CI +0.031 to +0.205)``: the estimate and its interval at one precision
    (``sig`` significant digits of the largest of the three, or ``decimals``)."""
    d = decimals_for([estimate, low, high], sig) if decimals is None else decimals
    ci = format_interval(low, high, d, sign=sign) if math.isfinite(float(low)) or math.isfinite(float(high)) else "n/a"
    return f"{format_number(estimate, d, sign=sign)} ({level:.0%} CI {ci})"


def format_count(n: float) -> str:
    """An integer count with thousands separators (``12``, ``3,097``)."""
    return f"{int(round(float(n))):,}"
