"""Cost and efficiency of agent runs: tokens, dollars and time per task, score per token and per dollar.

Input: one row per run (``system, task, score`` and usage columns, e.g. from
:func:`evalkit.io.logs.session_outcomes`): any of ``input_tokens, output_tokens,
cache_read_tokens, cache_write_tokens, tokens`` (input + output), ``tokens_total`` (every token
including cache reads and writes), ``cost`` (dollars) and ``time`` (seconds). Where the logs hold
tokens but no cost, :func:`apply_prices` prices them from a table of dollars per million
input, output and cache tokens per model (``--prices FILE``).

**Efficiency** of a system on a usage column ``u`` (e.g. ``cost``) is the ratio estimator
``R = sum_t s_t / sum_t u_t`` over its tasks ``t``, where ``s_t`` and ``u_t`` are the mean score
and the mean usage of the task's runs: score per dollar (for pass/fail scores: solved tasks per
dollar) or, for tokens, score per million tokens. A **paired ratio** between two systems,
``R_candidate / R_baseline`` over their shared tasks, says how many times more score per unit the
candidate gets (seed 002: "score per output token is 1.2-1.6x the base model's").

Intervals, the method named in every table:

- ``"delta"`` (default): the delta method on the log scale, treating the tasks as the
  independent units. ``log R = log mean(s) - log mean(u)``; its variance is
  ``g' S g / n`` with ``S`` the sample covariance of the per-task ``(s, u)`` (for a paired ratio,
  of the four per-task columns) and ``g`` the gradient ``(1/mean(s), -1/mean(u), ...)``; the
  interval is ``R * exp(+/- t_{n-1} * se)``. The log scale keeps the interval positive and
  follows the ratio's right skew. Coverage: ``scripts/coverage_cells/metrics.py``.
- ``"bootstrap"``: a studentized (bootstrap-t) interval on the log scale from resampling tasks
  (jointly for both systems of a paired ratio), ``n_resamples`` times; a percentile interval
  would under-cover at 20 tasks.

A system with no score at all (``sum s = 0``) has R = 0; its log-scale interval is undefined, so
the delta interval is then ``[0, t_{n-1} * se_linear]`` from the linear-scale delta method (and is
flagged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit._rng import RNGLike, as_generator

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["USAGE_COLUMNS", "TOKEN_COLUMNS", "PRICE_COLUMNS", "usage_table", "efficiency", "EfficiencyResult",
           "read_prices", "apply_prices", "with_usage", "ratio_interval", "paired_ratio_interval", "EFFICIENCY_METHODS"]

TOKEN_COLUMNS: tuple[str, ...] = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                  "tokens", "tokens_total")
USAGE_COLUMNS: tuple[str, ...] = (*TOKEN_COLUMNS, "cost", "time")
PRICE_COLUMNS: tuple[str, ...] = ("input", "output", "cache_read", "cache_write")
EFFICIENCY_METHODS: tuple[str, ...] = ("delta", "bootstrap")
_PER_MILLION = {c for c in TOKEN_COLUMNS}
_UNIT = {"cost": "dollar", "time": "hour"}
_TIME_SCALE = 3600.0  # time is logged in seconds, efficiency is per hour


def _unit_name(column: str) -> str:
    if column in _PER_MILLION:
        return f"1M {column.replace('_', ' ')}"
    return _UNIT.get(column, column)


def _scale(column: str) -> float:
    """Divide usage by this to get the efficiency's unit (1M tokens, hours)."""
    if column in _PER_MILLION:
        return 1e6
    return _TIME_SCALE if column == "time" else 1.0


def available_usage(frame: pd.DataFrame) -> list[str]:
    """The usage columns of ``frame`` that hold at least one finite value."""
    out = []
    for c in USAGE_COLUMNS:
        if c in frame.columns:
            v = np.asarray(frame[c], dtype=float)
            if np.isfinite(v).any():
                out.append(c)
    return out


def usage_table(outcomes: pd.DataFrame, *, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Per-system usage: runs, tasks, and for each usage column ``<column>_sum`` (the total; not ``_total``,
    which would read as the column ``tokens_total``) and ``<column>_per_task`` (the mean per task).

    The mean per task is the mean over tasks of each task's mean over its runs; runs without a
    value (NaN: the log did not record it) are left out and counted in ``<column>_missing``.
    """
    import pandas as pd

    cols = list(columns) if columns is not None else available_usage(outcomes)
    rows = []
    for system, g in outcomes.groupby("system", sort=True):
        row: dict[str, Any] = {"system": system, "n_runs": len(g), "n_tasks": g["task"].nunique()}
        for c in cols:
            v = g[c].astype(float)
            ok = v.notna()
            row[f"{c}_sum"] = float(v[ok].sum()) if ok.any() else float("nan")
            row[f"{c}_per_task"] = float(v[ok].groupby(g.loc[ok, "task"]).mean().mean()) if ok.any() else float("nan")
            row[f"{c}_missing"] = int((~ok).sum())
        rows.append(row)
    return pd.DataFrame(rows)


# ---- prices ---------------------------------------------------------------------------------------


def read_prices(source: str | Mapping[str, Mapping[str, float]] | pd.DataFrame) -> pd.DataFrame:
    """A price table: one row per ``model`` with dollars per million ``input``, ``output`` and
    optionally ``cache_read``, ``cache_write`` tokens.

    ``source``: a CSV / JSON / JSONL / Parquet file with those columns, a JSON object
    ``{model: {"input": 3, "output": 15, ...}}``, a mapping of the same shape, or a DataFrame.
    Errors name the file, the line and the column.
    """
    import pandas as pd

    name = "prices"
    if isinstance(source, pd.DataFrame):
        raw = source.copy()
        if "_line" not in raw.columns:
            raw["_line"] = np.arange(2, len(raw) + 2)
    elif isinstance(source, Mapping):
        raw = _prices_from_mapping(source, name)
    else:
        name = str(source)
        raw = _load_prices_file(name)
    raw.columns = [str(c).strip().lower() if c != "_line" else c for c in raw.columns]
    aliases = {"input_per_million": "input", "output_per_million": "output", "cache_read_per_million": "cache_read",
               "cache_write_per_million": "cache_write", "prompt": "input", "completion": "output",
               "cached_input": "cache_read", "cache_creation": "cache_write"}
    raw = raw.rename(columns={k: v for k, v in aliases.items() if k in raw.columns and v not in raw.columns})
    missing = [c for c in ("model", "input", "output") if c not in raw.columns]
    if missing:
        raise ValueError(f"{name}: the price table needs the columns model, input and output (dollars per million "
                         f"tokens; optionally cache_read, cache_write); missing {missing}, it has "
                         f"{[c for c in raw.columns if c != '_line']}.")
    out = pd.DataFrame({"model": raw["model"].astype(str).str.strip()})
    for c in PRICE_COLUMNS:
        if c not in raw.columns:
            out[c] = np.nan if c.startswith("cache") else 0.0
            continue
        values = pd.to_numeric(raw[c], errors="coerce")
        blank = raw[c].isna() | (raw[c].astype(str).str.strip() == "")
        bad = (values.isna() & ~blank) | (values < 0)
        if c in ("input", "output"):
            bad |= blank
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"{name}, line {int(raw['_line'].iat[i])}, column '{c}': expected dollars per million "
                             f"tokens (a number >= 0), found {raw[c].iat[i]!r}.")
        out[c] = values.to_numpy(float)
    dup = out["model"].duplicated(keep=False)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[1])
        raise ValueError(f"{name}, line {int(raw['_line'].iat[i])}, column 'model': the model {out['model'].iat[i]!r} "
                         "is priced twice; give each model one row.")
    out["_line"] = raw["_line"].to_numpy()
    out.attrs["source"] = name
    return out


def _prices_from_mapping(source: Mapping[str, Any], name: str) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for i, (model, spec) in enumerate(source.items()):
        if not isinstance(spec, Mapping):
            raise ValueError(f"{name}: the price of {model!r} must be an object like {{\"input\": 3, \"output\": 15}}; "
                             f"got {spec!r}.")
        rows.append({"model": model, **spec, "_line": i + 1})
    return pd.DataFrame(rows)


def _load_prices_file(path: str) -> pd.DataFrame:
    import json
    from pathlib import Path

    from evalkit.io._files import load_records

    p = Path(path)
    if p.suffix.lower() == ".json" and p.is_file():
        text = p.read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}).") from None
        if isinstance(data, Mapping) and data and all(isinstance(v, Mapping) for v in data.values()):
            return _prices_from_mapping(data, path)
    frame, _ = load_records(path)
    return frame.rename(columns={"_line": "_line"})


def with_usage(outcomes: pd.DataFrame, prices: str | Mapping[str, Mapping[str, float]] | pd.DataFrame | None = None,
               ) -> pd.DataFrame:
    """``outcomes`` with ``tokens`` (input + output) and ``tokens_total`` (+ cache reads and writes)
    derived from the token split where the logs lack them, and, with ``prices`` (anything
    :func:`read_prices` reads), a ``cost`` column priced by :func:`apply_prices`."""
    runs = outcomes
    if "tokens" not in runs.columns and {"input_tokens", "output_tokens"} <= set(runs.columns):
        runs = runs.assign(tokens=runs["input_tokens"].astype(float) + runs["output_tokens"].astype(float))
    if "tokens_total" not in runs.columns and "tokens" in runs.columns and (
            {"cache_read_tokens", "cache_write_tokens"} & set(runs.columns)):
        extra = sum(np.nan_to_num(runs[c].to_numpy(float)) for c in ("cache_read_tokens", "cache_write_tokens")
                    if c in runs.columns)
        runs = runs.assign(tokens_total=runs["tokens"].to_numpy(float) + extra)
    if prices is not None:
        import pandas as pd

        done = isinstance(prices, pd.DataFrame) and "_line" in prices.columns  # a table read_prices made
        runs = apply_prices(runs, prices if isinstance(prices, pd.DataFrame) and done else read_prices(prices))
    return runs


def apply_prices(outcomes: pd.DataFrame, prices: pd.DataFrame, *, model: str = "model") -> pd.DataFrame:
    """``outcomes`` with a ``cost`` column priced from token counts (dollars).

    ``cost = (input * p_in + output * p_out + cache_read * p_cache_read + cache_write *
    p_cache_write) / 1e6`` with the run's model (column ``model``, else the system name). Needs
    ``input_tokens`` and ``output_tokens``; cache tokens count when the table and the prices have
    them (a model without a cache price is charged its input price for cache tokens, and the
    result says so in ``attrs["notes"]``). An existing ``cost`` column is replaced, and counted.
    """
    need = [c for c in ("input_tokens", "output_tokens") if c not in outcomes.columns]
    if need:
        have = [c for c in USAGE_COLUMNS if c in outcomes.columns]
        raise ValueError(f"Pricing tokens needs input_tokens and output_tokens per run (prices differ between them); "
                         f"the runs have {have or 'no token columns'}. Without them, give the logs' own cost.")
    out = outcomes.copy()
    models = out[model].astype(str) if model in out.columns else out["system"].astype(str)
    table = prices.set_index("model")
    unknown = sorted(set(models) - set(table.index))
    source = prices.attrs.get("source", "the price table")
    if unknown:
        raise ValueError(f"{source} has no price for the model(s) {unknown[:5]}{' ...' if len(unknown) > 5 else ''} "
                         f"(it prices {sorted(table.index)[:8]}). Add a row per model (column 'model'"
                         f"{' — the runs have no model column, so the system names are used' if model not in out.columns else ''}).")
    notes = []
    cost = np.zeros(len(out))
    for col, price in (("input_tokens", "input"), ("output_tokens", "output"), ("cache_read_tokens", "cache_read"),
                       ("cache_write_tokens", "cache_write")):
        if col not in out.columns:
            continue
        p = table.loc[models, price].to_numpy(float)
        if price.startswith("cache"):
            fallback = np.isnan(p)
            if fallback.any() and np.nansum(out[col].to_numpy(float)[fallback]) > 0:
                notes.append(f"no {price} price for {sorted(set(models[fallback]))}: those cache tokens are charged "
                             "the input price")
            p = np.where(fallback, table.loc[models, "input"].to_numpy(float), p)
        tokens = out[col].to_numpy(float)
        tokens = np.where(np.isnan(tokens), 0.0, tokens) if price.startswith("cache") else tokens
        cost = cost + tokens * p / 1e6
    if "cost" in outcomes.columns and np.isfinite(outcomes["cost"].to_numpy(float)).any():
        notes.append("the logs' own cost was replaced by the priced tokens")
    out["cost"] = cost
    out.attrs["notes"] = notes
    return out


# ---- intervals ------------------------------------------------------------------------------------


def _t(level: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df)) if df > 0 else float("inf")


def ratio_interval(s: np.ndarray, u: np.ndarray, *, confidence_level: float = 0.95) -> tuple[float, float, float, str]:
    """``(R, low, high, note)`` for ``R = mean(s) / mean(u)`` by the log-scale delta method
    (module docstring) over independent units (tasks)."""
    s, u = np.asarray(s, float), np.asarray(u, float)
    n = s.size
    ms, mu = s.mean(), u.mean()
    if not mu > 0:
        return float("nan"), float("nan"), float("nan"), "no usage"
    r = ms / mu
    if n < 2:
        return r, float("nan"), float("nan"), "one task: no interval"
    cov = np.cov(np.vstack([s, u]), ddof=1)
    tq = _t(confidence_level, n - 1)
    if ms <= 0:
        se_lin = math.sqrt(max(cov[0, 0], 0.0) / n) / mu
        return r, 0.0, tq * se_lin, "no score: linear-scale delta upper bound"
    g = np.array([1 / ms, -1 / mu])
    se = math.sqrt(max(float(g @ cov @ g), 0.0) / n)
    return r, r * math.exp(-tq * se), r * math.exp(tq * se), ""


def paired_ratio_interval(s_a: np.ndarray, u_a: np.ndarray, s_b: np.ndarray, u_b: np.ndarray, *,
                          confidence_level: float = 0.95) -> tuple[float, float, float, str]:
    """``(Q, low, high, note)`` for ``Q = R_b / R_a`` over paired tasks, log-scale delta method."""
    cols = np.vstack([np.asarray(v, float) for v in (s_b, u_b, s_a, u_a)])
    n = cols.shape[1]
    m = cols.mean(axis=1)
    if not (m[1] > 0 and m[3] > 0):
        return float("nan"), float("nan"), float("nan"), "no usage"
    if not (m[0] > 0 and m[2] > 0):
        q = (m[0] / m[1]) / (m[2] / m[3]) if m[2] > 0 else float("nan")
        return q, float("nan"), float("nan"), "a system with no score: the ratio has no log-scale interval"
    q = (m[0] / m[1]) / (m[2] / m[3])
    if n < 2:
        return q, float("nan"), float("nan"), "one task: no interval"
    g = np.array([1 / m[0], -1 / m[1], -1 / m[2], 1 / m[3]])
    se = math.sqrt(max(float(g @ np.cov(cols, ddof=1) @ g), 0.0) / n)
    tq = _t(confidence_level, n - 1)
    return q, q * math.exp(-tq * se), q * math.exp(tq * se), ""


def _bootstrap_ratio(cols: np.ndarray, signs: Sequence[int], rng: np.random.Generator, n_resamples: int,
                     level: float) -> tuple[float, float]:
    """Studentized (bootstrap-t) interval on the log scale for ``prod_k mean(cols[k]) ** signs[k]``.

    Each replicate resamples the tasks (columns of ``cols``, jointly), recomputes the log
    statistic and its delta-method SE, and ``t* = (log T* - log T) / se*``; the interval is
    ``exp(log T - t*_(hi) se, log T - t*_(lo) se)``. Percentile intervals of a ratio under-cover
    at 20 tasks (0.91-0.92 in the coverage cells); the studentized one does not.
    """
    k, n = cols.shape
    sg = np.asarray(signs, dtype=float)

    def log_stat_se(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tot = w.sum(axis=1, keepdims=True)
        m = (w @ cols.T) / tot  # (B, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = (sg * np.log(m)).sum(axis=1)
            g = sg / m  # gradient of log T in the means
            var = np.zeros(w.shape[0])
            for i in range(k):
                for j in range(k):
                    cij = (w @ (cols[i] * cols[j])) / tot[:, 0] - m[:, i] * m[:, j]
                    var += g[:, i] * g[:, j] * cij
            se = np.sqrt(np.maximum(var, 0) * n / (n - 1) / n)
        return log_t, se

    log_t0, se0 = log_stat_se(np.ones((1, n)))
    if not (np.isfinite(log_t0[0]) and se0[0] > 0):
        return float("nan"), float("nan")
    idx = rng.integers(0, n, size=(n_resamples, n))
    w = np.bincount((np.arange(n_resamples)[:, None] * n + idx).ravel(),
                    minlength=n_resamples * n).reshape(n_resamples, n).astype(float)
    log_t, se = log_stat_se(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstar = (log_t - log_t0[0]) / se
    tstar = np.where(np.isneginf(log_t), -np.inf, np.where(np.isposinf(log_t), np.inf, tstar))
    tstar = tstar[~np.isnan(tstar)]
    if tstar.size == 0:
        return float("nan"), float("nan")
    q_lo, q_hi = np.quantile(tstar, [(1 - level) / 2, (1 + level) / 2])
    with np.errstate(over="ignore"):
        return float(np.exp(log_t0[0] - q_hi * se0[0])), float(np.exp(log_t0[0] - q_lo * se0[0]))


# ---- efficiency -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EfficiencyResult:
    """Usage and efficiency per system, and paired efficiency ratios.

    Attributes
    ----------
    usage : DataFrame
        :func:`usage_table`.
    table : DataFrame
        ``system, per, unit, n_tasks, score_per_task, usage_per_task, efficiency, ci_low,
        ci_high, method, note``: ``efficiency`` is score per ``unit`` (score per 1M tokens,
        per dollar, per hour).
    pairs : DataFrame
        ``baseline, candidate, per, n_tasks, ratio, ci_low, ci_high, method, note``: ``ratio`` is
        the candidate's efficiency over the baseline's on their shared tasks (candidate /
        baseline).
    notes : tuple of str
        What pricing the tokens changed or assumed (a model's cache tokens charged its input price,
        the logs' own cost replaced).
    """

    usage: pd.DataFrame
    table: pd.DataFrame
    pairs: pd.DataFrame
    method: str
    confidence_level: float
    n_resamples: int
    notes: tuple[str, ...] = ()

    def sentences(self) -> list[str]:
        """One sentence per paired ratio whose interval excludes 1."""
        out = []
        r: Any  # pandas-stubs type each itertuples field as the union of every scalar type
        for r in self.pairs.itertuples(index=False):
            if not (np.isfinite(r.ci_low) and np.isfinite(r.ci_high)):
                continue
            if r.ci_low > 1 or r.ci_high < 1:
                word = "more" if r.ratio > 1 else "less"
                out.append(f"{r.candidate} gets {r.ratio:.2f}x the score per {_unit_name(r.per)} of {r.baseline} "
                           f"({100 * self.confidence_level:g}% CI {r.ci_low:.2f}-{r.ci_high:.2f}, {r.method}, "
                           f"{r.n_tasks} shared tasks): {word} score per unit spent (candidate / baseline).")
        return out


def _per_task(outcomes: pd.DataFrame, column: str) -> pd.DataFrame:
    ok = outcomes[column].astype(float).notna() & outcomes["score"].astype(float).notna()
    g = outcomes[ok].groupby(["system", "task"], sort=True)
    out = g.agg(score=("score", "mean"), usage=(column, "mean")).reset_index()
    out["usage"] = out["usage"] / _scale(column)
    return out


def efficiency(outcomes: pd.DataFrame, *, per: Sequence[str] | None = None, method: str = "delta",
               pairs: Sequence[tuple[str, str]] | None = None, confidence_level: float = 0.95,
               n_resamples: int = 2000, rng: RNGLike = 0,
               prices: str | Mapping[str, Mapping[str, float]] | pd.DataFrame | None = None) -> EfficiencyResult:
    """Score per unit of usage per system, and paired ratios (module docstring).

    Parameters
    ----------
    outcomes : DataFrame
        One row per run: ``system, task, score`` and usage columns.
    per : sequence of str, optional
        Usage columns (default: each of ``tokens`` (or ``tokens_total``), ``output_tokens`` and
        ``cost`` the runs record).
    method : {"delta", "bootstrap"}
    pairs : sequence of (baseline, candidate), optional
        Default: every later system against the first (sorted by name). ``[]``: none.
    prices : path, mapping or DataFrame, optional
        Dollars per million input, output and cache tokens per model (:func:`read_prices`): the
        runs' ``cost`` is priced from their tokens (:func:`apply_prices`); the notes it makes are
        in the result's ``notes``.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"system": ["a", "a", "b", "b"], "task": ["t1", "t2", "t1", "t2"],
    ...                      "score": [1.0, 0.0, 1.0, 1.0], "input_tokens": [900, 1100, 400, 600],
    ...                      "output_tokens": [100, 100, 50, 50], "model": ["m1", "m1", "m2", "m2"]})
    >>> e = efficiency(runs, prices={"m1": {"input": 3, "output": 15}, "m2": {"input": 1, "output": 5}},
    ...                per=["cost"])
    >>> round(float(e.table.set_index("system").loc["b", "efficiency"]), 1)  # 2 solved / $0.0015
    1333.3
    """
    import pandas as pd

    from evalkit.stats._validate import check_confidence_level

    level = check_confidence_level(confidence_level)
    outcomes = with_usage(outcomes, prices)
    notes = list(outcomes.attrs.get("notes", [])) if prices is not None else []
    if method not in EFFICIENCY_METHODS:
        raise ValueError(f"method must be one of {EFFICIENCY_METHODS}; got {method!r}.")
    have = available_usage(outcomes)
    if per is None:
        tokens = [c for c in ("tokens", "tokens_total") if c in have][:1]
        per = [*tokens, *[c for c in ("output_tokens", "cost") if c in have]]
    per = list(per)
    missing = [c for c in per if c not in have]
    if missing:
        raise ValueError(f"The runs record no {missing}; they have the usage columns {have or 'none'}.")
    spec = _RatioSpec(method, level, n_resamples, as_generator(rng))
    if method == "bootstrap":
        _warn_few_tasks(outcomes)
    systems = sorted(outcomes["system"].astype(str).unique())
    if pairs is None:
        pairs = [(systems[0], s) for s in systems[1:]]
    rows, prow = [], []
    for col in per:  # the generator is drawn in this order: each column's systems, then its pairs
        pt = _per_task(outcomes, col)
        by = {s: g.set_index("task") for s, g in pt.groupby("system")}
        rows += [_system_row(by[s], s, col, spec) for s in systems if s in by]
        prow += [_pair_row(by[a], by[b], (a, b), col, spec) for a, b in pairs if a in by and b in by]
    table = pd.DataFrame(rows, columns=["system", "per", "unit", "n_tasks", "score_per_task", "usage_per_task",
                                        "efficiency", "ci_low", "ci_high", "method", "note"])
    ptable = pd.DataFrame(prow, columns=["baseline", "candidate", "per", "unit", "n_tasks", "ratio", "ci_low",
                                         "ci_high", "method", "note"])
    return EfficiencyResult(usage=usage_table(outcomes, columns=have), table=table, pairs=ptable, method=method,
                            confidence_level=level, n_resamples=n_resamples, notes=tuple(notes))


@dataclass(frozen=True)
class _RatioSpec:
    """How :func:`efficiency` makes each interval: method, level, resamples and the one generator."""

    method: str
    level: float
    n_resamples: int
    generator: np.random.Generator


def _warn_few_tasks(outcomes: pd.DataFrame) -> None:
    n_min = int(outcomes.groupby("system")["task"].nunique().min())
    if n_min < 40:
        import warnings

        warnings.warn(f"The task bootstrap-t of an efficiency ratio under-covers with few tasks (here as few as "
                      f"{n_min}): 0.91-0.935 at 20 tasks against nominal 0.95 in evalkit's coverage study (0.947-0.95 "
                      "at 80). The delta method (the default) covered 0.95 at 12-50 tasks.", UserWarning,
                      stacklevel=3)


def _system_row(g: pd.DataFrame, system: str, col: str, spec: _RatioSpec) -> dict[str, Any]:
    """One system's score per unit of ``col`` over its tasks, with its interval."""
    sv, uv = g["score"].to_numpy(float), g["usage"].to_numpy(float)
    r, lo, hi, note = ratio_interval(sv, uv, confidence_level=spec.level)
    if spec.method == "bootstrap" and sv.size > 1:
        lo, hi = _bootstrap_ratio(np.vstack([sv, uv]), (1, -1), spec.generator, spec.n_resamples, spec.level)
        note = ""
    return {"system": system, "per": col, "unit": _unit_name(col), "n_tasks": int(sv.size),
            "score_per_task": float(sv.mean()), "usage_per_task": float(uv.mean()), "efficiency": r,
            "ci_low": lo, "ci_high": hi, "method": _method_name(spec.method, spec.n_resamples), "note": note}


def _pair_row(ga: pd.DataFrame, gb: pd.DataFrame, pair: tuple[str, str], col: str, spec: _RatioSpec
              ) -> dict[str, Any]:
    """The candidate's efficiency over the baseline's on the tasks both ran, with its interval."""
    shared = ga.index.intersection(gb.index)
    sa, sb = ga.loc[shared], gb.loc[shared]
    cols = np.vstack([sb["score"], sb["usage"], sa["score"], sa["usage"]]).astype(float)
    q, lo, hi, note = paired_ratio_interval(cols[2], cols[3], cols[0], cols[1], confidence_level=spec.level)
    if spec.method == "bootstrap" and shared.size > 1:
        lo, hi = _bootstrap_ratio(cols, (1, -1, -1, 1), spec.generator, spec.n_resamples, spec.level)
        note = ""
    unmatched = len(ga) + len(gb) - 2 * shared.size
    if unmatched:
        note = "; ".join(filter(None, [note, f"{unmatched} task(s) run by only one of the two left out"]))
    return {"baseline": pair[0], "candidate": pair[1], "per": col, "unit": _unit_name(col),
            "n_tasks": int(shared.size), "ratio": q, "ci_low": lo, "ci_high": hi,
            "method": _method_name(spec.method, spec.n_resamples), "note": note}


def _method_name(method: str, n_resamples: int) -> str:
    if method == "delta":
        return "delta method (log scale, t over tasks)"
    return f"task bootstrap-t (studentized, log scale, {n_resamples} resamples)"
