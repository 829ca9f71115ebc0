"""Frozen result objects shared by every test and estimate in :mod:`evalkit.stats`.

Every hypothesis test returns a :class:`TestResult` (or a subclass with a few extra,
named counts); every estimate returns an :class:`Estimate`. Both are frozen dataclasses
that carry the method's name, ``n``, the confidence level they were computed at, and a
plain-language note on how ties or zeros were handled, so that a report can print exactly
what was done. ``confidence_interval()`` can be asked for another level where the method
allows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = ["ConfidenceInterval", "TestResult", "SignTestResult", "Estimate"]


class ConfidenceInterval(NamedTuple):
    """A two-sided (or one-sided, with an infinite end) confidence interval."""

    low: float
    high: float


_CIFunction = Callable[[float], tuple[float, float]]


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, kw_only=True)
class _HasInterval:
    confidence_level: float = 0.95
    _ci: _CIFunction | None = field(default=None, repr=False, compare=False)

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The confidence interval of :attr:`estimate` at ``confidence_level``.

        Parameters
        ----------
        confidence_level : float, optional
            In (0, 1); defaults to the level the result was computed at.

        Raises
        ------
        ValueError
            If the level is outside (0, 1) or the method has no interval.
        """
        from evalkit.stats._validate import check_confidence_level

        level = self.confidence_level if confidence_level is None else confidence_level
        check_confidence_level(level)
        if self._ci is None:
            raise ValueError(f"{getattr(self, 'method', 'This result')} has no confidence interval.")
        low, high = self._ci(float(level))
        return ConfidenceInterval(float(low), float(high))

    def to_dict(self) -> dict[str, Any]:
        """A flat dict (for tables and JSON), with the interval at the stored level."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        details = out.pop("details", {}) or {}
        if self._ci is not None:
            ci = self.confidence_interval()
            out["ci_low"], out["ci_high"] = ci.low, ci.high
        out.update({f"details.{k}": v for k, v in dict(details).items()})
        return out


@dataclass(frozen=True, kw_only=True)
class TestResult(_HasInterval):
    """Result of a hypothesis test.

    Attributes
    ----------
    method : str
        Full name of the test as a report should print it (e.g. "Welch two-sample t-test").
    statistic : float
        The test statistic (named by ``statistic_name``).
    pvalue : float
        The p-value for ``alternative``.
    alternative : {"two-sided", "less", "greater"}
    n : int
        Number of observations (pairs for paired tests) that entered the test.
    df : float or None
        Degrees of freedom where the reference distribution has them.
    estimate : float
        The quantity the confidence interval is about (a mean difference, a proportion).
    estimate_name : str
    effect_size, effect_size_name : float or None, str or None
        A standardised effect size and its name (Cohen's d, Hedges' g, rank-biserial ...).
    handling : str
        How ties, zeros or unmatched observations were handled ("" if nothing to say).
    details : Mapping
        Further method-specific numbers (read-only).
    """

    __test__ = False  # not a pytest test class

    method: str
    statistic: float
    pvalue: float
    alternative: str = "two-sided"
    n: int
    df: float | None = None
    statistic_name: str = "statistic"
    estimate: float = float("nan")
    estimate_name: str = ""
    effect_size: float | None = None
    effect_size_name: str | None = None
    handling: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _frozen_mapping(self.details))


@dataclass(frozen=True, kw_only=True)
class SignTestResult(TestResult):
    """:class:`TestResult` of a sign test, with the counts it rests on.

    ``wins`` / ``losses`` are the pairs where the first sample is larger / smaller,
    ``ties`` the pairs with a zero difference, ``tie_policy`` what was done with them.
    """

    wins: int
    losses: int
    ties: int
    tie_policy: str


@dataclass(frozen=True, kw_only=True)
class Estimate(_HasInterval):
    """A point estimate with its standard error and interval.

    Attributes
    ----------
    method : str
        How the estimate and its interval were computed.
    estimate : float
    se : float or None
        Standard error (None for intervals that are not built from one, e.g. Clopper-Pearson).
    n : int or float
        Observations used (their total weight, for weighted counts).
    df : float or None
        Degrees of freedom of the t quantile used for the interval, if any.
    handling : str
        Ties / missing values / clusters: what was done.
    details : Mapping
        Further numbers (read-only).
    """

    method: str
    estimate: float
    se: float | None = None
    n: float
    df: float | None = None
    handling: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _frozen_mapping(self.details))
