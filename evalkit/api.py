"""evalkit's five jobs as one call each, and the result objects they return.

=========================  ============================  ===========================================
job                        call                          result
=========================  ============================  ===========================================
rate a judge log           :func:`rate`                  :class:`Rating` (Bradley-Terry Elo, intervals)
compare agent runs         :func:`compare_runs`          :class:`Comparison` (second minus first)
Elo against budget         :func:`elo_curve`             :class:`EloCurve` (curves, inflection points)
a significance report      :func:`significance_report`   :class:`Report` (the folder ``evalkit report``
                                                         writes)
simulate agent swarms      :func:`simulate`              :class:`Simulation` (a session table)
=========================  ============================  ===========================================

Every result has a short ``repr``, ``.summary()`` (a few lines of plain text: the headline
numbers, the method, what was left out) and ``.to_frame()`` (its main table as a
:class:`pandas.DataFrame`). The calls are what the CLI runs, with the CLI's defaults and sign
convention: ``compare_runs(baseline, candidate)`` reports candidate - baseline, as
``evalkit compare BASELINE CANDIDATE`` does. Keywords follow scipy: ``confidence_level``,
``n_resamples``, ``alternative``, ``rng`` (a seed or a :class:`numpy.random.Generator`).
Nothing here prints or touches global state (the matplotlib backend, warnings filters).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._progress import ProgressFn
from evalkit._rng import RNGLike

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit.budget import CurveResult, InflectionResult
    from evalkit.io.report import ReadReport
    from evalkit.metrics.cost import EfficiencyResult
    from evalkit.stats.runs import RunComparison
    from evalkit.studies.fig11 import Figure11Config

__all__ = ["Rating", "rate", "Comparison", "compare_runs", "EloCurve", "elo_curve", "Report",
           "significance_report", "Simulation", "simulate"]

PathLike = str | os.PathLike[str]


def _fmt(x: float, spec: str = ".3g") -> str:
    return "nan" if x != x else format(x, spec)


def _table(frame: pd.DataFrame, columns: Sequence[str], floatfmt: str = ".4g") -> str:
    from evalkit._escape import label, markdown_table

    shown = frame[[c for c in columns if c in frame.columns]]
    return markdown_table(shown, floatfmt=floatfmt, text=label)


# ---- rate ---------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Rating:
    """A Bradley-Terry leaderboard with intervals (:func:`rate`).

    Attributes
    ----------
    leaderboard : DataFrame
        One row per model, best first: ``model, elo, ci_low, ci_high``, the win/loss/tie
        tallies, rank intervals and tie groups (:func:`evalkit.ratings.leaderboard`); its
        ``attrs`` record the method.
    read_report : ReadReport or None
        Rows read, kept and dropped by reason.
    """

    leaderboard: pd.DataFrame
    read_report: ReadReport | None = None

    @property
    def method(self) -> str:
        return str(self.leaderboard.attrs.get("interval", ""))

    def __repr__(self) -> str:
        lb = self.leaderboard
        if lb.empty:
            return "Rating(no models)"
        top = lb.iloc[0]
        n = f", {self.read_report.rows_kept} comparisons" if self.read_report is not None else ""
        return (f"Rating({len(lb)} models{n}; top {top['model']!s} {_fmt(float(top['elo']), '.0f')} "
                f"[{_fmt(float(top['ci_low']), '.0f')}, {_fmt(float(top['ci_high']), '.0f')}]; {self.method})")

    def summary(self, top: int = 10) -> str:
        """The method and the ``top`` rows of the leaderboard as a Markdown table."""
        lines = [f"Bradley-Terry Elo: {self.method}."]
        if self.read_report is not None:
            lines.append(self.read_report.to_text())
        lines.append(_table(self.leaderboard.head(top), ("model", "elo", "ci_low", "ci_high", "rank_low",
                                                          "rank_high", "n", "win_rate")))
        if len(self.leaderboard) > top:
            lines.append(f"... {len(self.leaderboard) - top} more models (.to_frame() has them all).")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        return self.leaderboard.copy()


def rate(
    source: Any, *, format: str | None = None, columns: Mapping[str, str] | None = None,
    ties: str = "half", cluster: str | None = None, interval: str | None = None,
    confidence_level: float = 0.95, n_resamples: int = 1000, rng: RNGLike | None = None,
    anchor: str | None = None, base: float = 1000.0, engine: str = "duckdb", encoding: str | None = None,
    progress: ProgressFn | None = None,
) -> Rating:
    """Rate the players of a judge log: Bradley-Terry Elo with intervals (``evalkit rate``).

    Parameters
    ----------
    source : path, list of paths, folder, glob or DataFrame
        Any log :func:`evalkit.io.read_comparisons` reads (format detected from the content).
    format, columns, encoding
        As in :func:`evalkit.io.read_comparisons`.
    ties : {"half", "drop", "davidson"}
        How ties enter the fit.
    cluster : {"item", "task", "judge"}, optional
        Cluster-robust (CR1) sandwich intervals, or clusters resampled by the bootstrap.
    interval : {"sandwich", "hessian", "bootstrap"}, optional
        Default: the sandwich.
    confidence_level : float
    n_resamples : int
        Bootstrap replicates (with ``interval="bootstrap"``).
    rng : int or Generator, optional
        Seed of the bootstrap (required for it).
    anchor : str, optional
        A model pinned at ``base`` (intervals are then differences with it).
    engine : {"duckdb", "pandas", "dask"}
    progress : callable, optional

    Returns
    -------
    Rating

    Examples
    --------
    >>> import evalkit
    >>> from evalkit.resources import data_file
    >>> r = evalkit.rate(data_file("llmfao/gpt4-comparisons.csv"))
    >>> r  # doctest: +ELLIPSIS
    Rating(70 models, 3236 comparisons; top GPT 3.5 Turbo 1726 [1552, 1900]; sandwich 95% Wald, centred)
    >>> r.to_frame().loc[:2, ["model", "elo", "ci_low", "ci_high"]].round(0)
                     model     elo  ci_low  ci_high
    0        GPT 3.5 Turbo  1726.0  1552.0   1900.0
    1  GPT 3.5 Turbo (16k)  1714.0  1541.0   1888.0
    2          Claude v1.2  1496.0  1349.0   1643.0
    """
    from evalkit.engine import aggregate_comparisons
    from evalkit.ratings import leaderboard

    counts, report = aggregate_comparisons(source, format=format, columns=columns, cluster=cluster, engine=engine,
                                           encoding=encoding, progress=progress)
    table = leaderboard(counts, ties=ties, cluster=cluster, interval=interval,  # type: ignore[arg-type]
                        confidence_level=confidence_level, n_resamples=n_resamples, rng=rng, anchor=anchor,
                        base=base, progress=progress)
    return Rating(table, report)


# ---- compare runs --------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Comparison:
    """Paired comparisons of agent runs over shared tasks (:func:`compare_runs`).

    Attributes
    ----------
    table : DataFrame
        One row per pair, the table of ``evalkit compare`` (its ``tables/run_comparisons.csv``):
        ``baseline`` (the earlier run), ``candidate`` (the later), ``mean_baseline``,
        ``mean_candidate``, ``"diff (candidate − baseline)"`` (second minus first), its SE,
        interval, test and Holm-adjusted p (:func:`evalkit.stats.runs.compare_runs`, columns named
        by :func:`evalkit.report.tasks.labelled_pairs`).
    outcomes : DataFrame
        One row per (system, task, run) with its final score.
    result : RunComparison
        The full result (per-pair test results, unmatched tasks, the multiplicity correction).
    """

    table: pd.DataFrame
    outcomes: pd.DataFrame
    result: RunComparison
    confidence_level: float = 0.95

    def _line(self, row: Any) -> str:
        from evalkit.report.tasks import DIFF_LABEL

        diff = _fmt(float(row[DIFF_LABEL]), '+.3g')
        if row.get("pvalue") != row.get("pvalue"):  # NaN: no test (too few tasks, ...)
            return f"{row['candidate']} − {row['baseline']} = {diff} (not tested: {row.get('note', '')})"
        return (f"{row['candidate']} − {row['baseline']} = {diff}, {self.confidence_level:.0%} CI "
                f"[{_fmt(float(row['ci_low']))}, {_fmt(float(row['ci_high']))}], {row['test']} "
                f"p = {_fmt(float(row['pvalue']))}; {int(row['n_tasks'])} tasks")

    def __repr__(self) -> str:
        rows = self.table.to_dict("records")
        if len(rows) == 1:
            return f"Comparison({self._line(rows[0])})"
        return f"Comparison({len(rows)} pairs of {self.outcomes['system'].nunique()} systems; first: {self._line(rows[0])})"

    def summary(self) -> str:
        """One line per pair (difference, interval, test, p), the correction and unmatched tasks."""
        lines = [self._line(r) for r in self.table.to_dict("records")]
        if self.result.multiplicity is not None and len(self.table) > 1:
            lines.append(f"{self.result.multiplicity.method} over {len(self.table)} pairs: see pvalue_adjusted.")
        if self.result.cluster:
            lines.append(f"Standard errors clustered by {self.result.cluster!r} (CR1, G - 1 df).")
        lines.append(self.result.unmatched_report)
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def efficiency(self, *, prices: Any = None, method: str = "delta", per: Sequence[str] | None = None,
                   n_resamples: int = 2000, rng: RNGLike = 0) -> EfficiencyResult:
        """What each system spent and its score per token and per dollar, with the paired ratios candidate /
        baseline of this comparison's pairs, as ``evalkit compare`` prints them
        (:func:`evalkit.metrics.efficiency`; ``prices``: dollars per million input, output and cache tokens
        per model, for logs that record tokens only; ``method``: "delta" or "bootstrap")."""
        from evalkit.metrics.cost import efficiency

        pairs = list(zip(self.table["baseline"], self.table["candidate"], strict=True))
        return efficiency(self.outcomes, prices=prices, method=method, per=per, pairs=pairs,
                          confidence_level=self.confidence_level, n_resamples=n_resamples, rng=rng)


def compare_runs(
    *runs: Any, names: Sequence[str] | None = None, baseline: str | None = None, cluster: str | None = None,
    test: str = "auto", adjust: str = "holm", alpha: float = 0.05, confidence_level: float = 0.95,
    n_resamples: int = 9999, rng: RNGLike = 0, budget: str = "tokens", **read_options: Any,
) -> Comparison:
    """Compare agent runs on shared tasks: paired per-task differences, second minus first.

    ``compare_runs(baseline, candidate)`` gives candidate - baseline, like
    ``evalkit compare BASELINE CANDIDATE``, with the same system names and the same table; with
    more runs every later run is compared with every earlier one (Holm over the pairs), or each
    with ``baseline``.

    Parameters
    ----------
    *runs : path, folder, glob, list of them, or one DataFrame
        One argument per system: its logs (Inspect ``.eval``/``.json``, SWE-agent ``.traj``,
        lm-eval samples, JSONL events; see :func:`evalkit.io.logs.read_logs`). Or a single
        DataFrame of outcomes with ``system, task, score`` (one row per run of a task).
    names : list of str, optional
        The systems' names. Default, as ``evalkit compare``: the model its logs name, else the
        path's base name; two runs of one model are told apart by their paths
        (``mockllm/model (baseline)``; :func:`evalkit.io.logs.run_names`).
    baseline : str, optional
        Compare every other system with this one.
    cluster : str, optional
        A sample metadata field (or outcome column) naming each task's cluster: CR1 SE with
        G - 1 df and cluster sign flips.
    test : {"auto", "mcnemar", "permutation", "bootstrap"}
    adjust : {"holm", "bh", "bonferroni", "none"}
    alpha, confidence_level : float
    n_resamples : int
    rng : int or Generator
    budget : {"tokens", "tokens_total", "cost", "time"}
        The budget unit read from the logs (kept in ``outcomes``).
    **read_options
        Further :class:`evalkit.io.logs.LogOptions` fields (``scorer``, ``resolved``, ``metric``, ...).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import pandas as pd
    >>> import evalkit
    >>> outcomes = pd.DataFrame({"system": ["base"] * 4 + ["new"] * 4, "task": list("abcd") * 2,
    ...                          "score": [0, 1, 0, 1, 1, 1, 1, 1]})
    >>> c = evalkit.compare_runs(outcomes, names=None, baseline="base")
    >>> c.to_frame()[["baseline", "candidate", "diff (candidate − baseline)"]]
      baseline candidate  diff (candidate − baseline)
    0     base       new                          0.5
    """
    from evalkit.report.tasks import labelled_pairs
    from evalkit.stats.runs import compare_runs as _compare

    outcomes, order = _outcomes_of(runs, names, cluster, budget, read_options)
    res = _compare(outcomes, pairs=_pairs_of(order, baseline), cluster=cluster, test=test, adjust=adjust,
                   alpha=alpha, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
    return Comparison(labelled_pairs(res.table), outcomes, res, confidence_level)


def _outcomes_of(runs: Sequence[Any], names: Sequence[str] | None, cluster: str | None, budget: str,
                 read_options: Mapping[str, Any]) -> tuple[pd.DataFrame, list[str]]:
    """One row per (system, task, run) and the systems in argument order: a given outcome table, or each
    run's logs read and named as ``evalkit compare`` names them."""
    import pandas as pd

    from evalkit._lazy import is_dataframe

    if len(runs) == 1 and is_dataframe(runs[0]):
        outcomes = runs[0].copy()
        missing = [c for c in ("system", "task", "score") if c not in outcomes.columns]
        if missing:
            raise ValueError(f"The outcomes lack the column(s) {missing}; they have {list(outcomes.columns)}.")
        outcomes["system"] = outcomes["system"].astype(str)
        return outcomes, list(dict.fromkeys(outcomes["system"]))
    if len(runs) < 2:
        raise ValueError("compare_runs needs two runs (e.g. compare_runs('runs/a', 'runs/b')), or one DataFrame "
                         "of outcomes with system, task and score.")
    from evalkit.io.logs import LogOptions, read_logs, run_names, session_outcomes

    meta = (cluster,) if cluster and cluster not in ("system", "input", "epoch") else ()
    options = LogOptions(budget=budget, metadata=meta, **read_options)
    keys = [str(r) if isinstance(r, (str, os.PathLike)) else f"run {i + 1}" for i, r in enumerate(runs)]
    parts = [session_outcomes(read_logs(run, options), by=[c for c in (cluster,) if c]).assign(input=key)
             for key, run in zip(keys, runs, strict=True)]
    outcomes = pd.concat(parts, ignore_index=True)
    named = run_names(outcomes, keys, names)
    outcomes["logged_system"] = outcomes["system"].astype(str)
    outcomes["system"] = outcomes["input"].map(named)
    return outcomes, [named[k] for k in keys]


def _pairs_of(order: list[str], baseline: str | None) -> list[tuple[str, str]]:
    """``(candidate, baseline)`` pairs: each system against ``baseline``, else each later system against each
    earlier one."""
    if baseline is None:
        return [(order[j], order[i]) for i in range(len(order)) for j in range(i + 1, len(order))]
    if baseline not in order:
        raise ValueError(f"The baseline {baseline!r} is not one of the systems {order}.")
    return [(s, baseline) for s in order if s != baseline]


# ---- Elo against budget --------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class EloCurve:
    """Elo against budget with bootstrap bands and each system's inflection point (:func:`elo_curve`).

    Attributes
    ----------
    result : CurveResult
        The curves (:func:`evalkit.budget.elo_curves`): ``result.curve`` is tidy, one row per
        (system, checkpoint).
    inflection : dict
        System -> :class:`evalkit.budget.InflectionResult` (self mode; empty in joint mode).
    """

    result: CurveResult
    inflection: dict[str, InflectionResult] = field(default_factory=dict)

    @property
    def curve(self) -> pd.DataFrame:
        return self.result.curve

    def _final(self) -> pd.DataFrame:
        c = self.result.curve
        return c.loc[c.groupby("system", sort=False)["budget"].idxmax()]

    def __repr__(self) -> str:
        c = self.result.curve
        last = ", ".join(f"{r['system']} {r['elo']:.0f}" for r in self._final().to_dict("records"))
        return (f"EloCurve({self.result.mode} Elo, {c['system'].nunique()} systems x {len(self.result.budgets)} "
                f"checkpoints; at the largest budget: {last})")

    def summary(self) -> str:
        """Each system's Elo at the largest budget (with its band) and its inflection point."""
        lines = [f"{self.result.mode}-Elo against budget, {self.result.confidence_level:.0%} session-bootstrap bands."]
        for r in self._final().to_dict("records"):
            line = (f"{r['system']}: {r['elo']:.0f} [{_fmt(r['ci_low'], '.0f')}, {_fmt(r['ci_high'], '.0f')}] at "
                    f"budget {r['budget']:.4g}")
            inf = self.inflection.get(str(r["system"]))
            if inf is not None:
                line += f"; inflection point b_inf = {_fmt(inf.b_inf, '.4g')} ({inf.status})"
            lines.append(line)
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        return self.result.curve.copy()

    def plot(self, ax: Any = None) -> Any:
        """Draw the curves (:func:`evalkit.plots.budget.plot_elo_curves`) on ``ax`` (a new Figure's
        Axes when None, never pyplot's); returns the Axes."""
        from evalkit.plots.budget import plot_elo_curves

        first = next(iter(self.inflection.values()), None)
        return plot_elo_curves(self.result, ax=ax, inflection=first)


def _names_of(runs: Sequence[Any], names: Sequence[str] | None) -> list[str]:
    """``elo_curve``'s system names: ``names``, else each path's base name."""
    if names is not None:
        if len(names) != len(runs):
            raise ValueError(f"names gives {len(names)} names for {len(runs)} runs.")
        return [str(n) for n in names]
    out = []
    for r in runs:
        if isinstance(r, (str, os.PathLike)):
            p = Path(r)
            out.append((p.stem if p.is_file() else p.name) or str(r))
        else:
            out.append(str(len(out) + 1))
    return out if len(set(out)) == len(out) else [str(r) for r in runs]


def _sessions(sources: Sequence[Any], names: Sequence[str] | None, budget: str,
              read_options: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd

    from evalkit._lazy import is_dataframe
    from evalkit.io import read_traces

    if len(sources) == 1 and isinstance(sources[0], Simulation):
        return sources[0].traces
    if len(sources) == 1 and is_dataframe(sources[0]):
        return read_traces(sources[0])
    if len(sources) == 1 and isinstance(sources[0], (str, os.PathLike)) and Path(sources[0]).is_file() and \
            Path(sources[0]).suffix.lower() in (".csv", ".tsv", ".parquet", ".pq"):
        return read_traces(sources[0])
    from evalkit.io.logs import LogOptions, read_logs

    options = LogOptions(budget=budget, **read_options)
    order = _names_of(sources, names)
    return pd.concat([read_logs(s, options).assign(system=n) for n, s in zip(order, sources, strict=True)],
                     ignore_index=True)


def elo_curve(
    *sources: Any, names: Sequence[str] | None = None, mode: str = "self", grid: float = 1.5,
    budgets: Sequence[float] | None = None, start: float | None = None, stop: float | None = None,
    n_resamples: int = 500, confidence_level: float = 0.95, rng: RNGLike = 0, missing: str = "drop",
    budget: str = "tokens", **read_options: Any,
) -> EloCurve:
    """Elo against budget, the 400-Elo-per-decade reference and the inflection point (``evalkit curve``).

    Parameters
    ----------
    *sources
        A session table (DataFrame or CSV/Parquet file with ``system, task, session, budget,
        score``), a :class:`Simulation`, or one argument per system of harness logs (files,
        folders, globs; each accumulates its own budget).
    names : list of str, optional
        The systems' names when logs are given (default: each path's base name).
    mode : {"self", "joint"}
    grid : float
        Ratio between checkpoints (ignored with ``budgets``).
    budgets : list of float, optional
    start, stop : float, optional
        The grid's first and last budget.
    n_resamples : int
        Session-bootstrap replicates within each (system, task).
    confidence_level : float
    rng : int or Generator
    missing : {"drop", "lose"}
        Checkpoints before a session's first submission: their games are dropped, or they lose.
    budget : {"tokens", "tokens_total", "cost", "time"}
        The budget unit read from logs.

    Returns
    -------
    EloCurve

    Examples
    --------
    >>> import evalkit
    >>> sim = evalkit.simulate(n_tasks=3, n_sessions=3, rng=0)
    >>> curve = evalkit.elo_curve(sim, n_resamples=20, rng=0)
    >>> sorted(curve.to_frame()["system"].unique())
    ['group@4', 'pass@1', 'pass@2 group@2', 'pass@4']
    """
    from evalkit.budget import elo_curves, inflection_point

    if not sources:
        raise ValueError("elo_curve needs a session table, a Simulation, or one log path per system.")
    traces = _sessions(sources, names, budget, read_options)
    res = elo_curves(traces[["system", "task", "session", "budget", "score"]], mode=mode, grid=grid,
                     budgets=budgets, start=start, stop=stop, n_resamples=n_resamples,
                     confidence_level=confidence_level, rng=rng, missing=missing)
    infl = {str(s): inflection_point(res, system=str(s)) for s in res.curve["system"].unique()} if mode == "self" \
        else {}
    return EloCurve(res, infl)


# ---- the significance report ---------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Report:
    """A report folder written by :func:`significance_report` (``report.md``, ``report.html``,
    ``figures/``, ``tables/``, ``run.json``).

    Attributes
    ----------
    path : Path
    record : dict
        The parsed ``run.json``: inputs with SHA-256, parameters, seed, library versions, files.
    """

    path: Path
    record: dict[str, Any]

    @property
    def tables(self) -> list[str]:
        return sorted(p.stem for p in (self.path / "tables").glob("*.csv"))

    def table(self, name: str) -> pd.DataFrame:
        """One of the report's tables (``tables/<name>.csv``), as written."""
        import pandas as pd

        p = self.path / "tables" / f"{name}.csv"
        if not p.is_file():
            raise ValueError(f"The report has no table {name!r}; it has {self.tables}.")
        return pd.read_csv(p, keep_default_na=False, na_values=[""])

    def __repr__(self) -> str:
        figures = len(list((self.path / "figures").glob("*.png")))
        return f"Report({str(self.path)!r}: {len(self.record.get('sections', []))} sections, {len(self.tables)} tables, " \
               f"{figures} figures)"

    def summary(self) -> str:
        """The report's sections and where its files are."""
        sections = ", ".join(str(s) for s in self.record.get("sections", []))
        return (f"Report in {self.path}: open {self.path / 'report.html'} (or report.md).\nSections: {sections}.\n"
                f"Tables: {', '.join(self.tables)}.")

    def to_frame(self) -> pd.DataFrame:
        """Every table's name and shape (read any with :meth:`table`)."""
        import pandas as pd

        rows = []
        for name in self.tables:
            t = self.table(name)
            rows.append({"table": name, "rows": len(t), "columns": ", ".join(map(str, t.columns))})
        return pd.DataFrame(rows, columns=["table", "rows", "columns"])


def significance_report(
    out: PathLike, *, comparisons: Any = None, scores: Any = None, traces: Any = None, title: str = "evalkit report",
    confidence_level: float = 0.95, alpha: float = 0.05, adjust: str = "holm", n_resamples: int = 200,
    rng: int = 0, force: bool = False, progress: ProgressFn | None = None, **spec: Any,
) -> Report:
    """Write a self-contained significance report (``evalkit report``) and return it.

    Parameters
    ----------
    out : path
        A new (or empty) folder; with ``force=True`` an existing one is replaced whole.
    comparisons : path or DataFrame, optional
        A judge log: Bradley-Terry leaderboard, head-to-head tests, judge diagnostics.
    scores : path or DataFrame, optional
        Per-item scores (``system, task[, trial], score``): paired tests and the unit of analysis.
    traces : path, DataFrame or Simulation, optional
        A session table: Elo per budget, inflection points and tests of the final scores.
    title : str
    confidence_level, alpha : float
    adjust : {"holm", "bh", "bonferroni", "none"}
    n_resamples : int
        Bootstrap replicates of the intervals that resample.
    rng : int
        Seed of every resampling step (recorded in ``run.json``).
    force : bool
    progress : callable, optional
    **spec
        Further :class:`evalkit.report.ReportSpec` fields (``format``, ``columns``, ``pairs``, ...).

    Returns
    -------
    Report

    Examples
    --------
    >>> import tempfile, evalkit
    >>> from evalkit.resources import data_file
    >>> out = tempfile.mkdtemp() + "/seed002"
    >>> r = evalkit.significance_report(out, scores=data_file("seed002/scores.csv"))
    >>> r  # doctest: +ELLIPSIS
    Report('...seed002': 5 sections, 3 tables, 2 figures)
    >>> r.table("unit_of_analysis")[["unit", "pvalue"]].round(4)
        unit  pvalue
    0  trial  0.0055
    1   task  0.2266
    2   task  0.1692
    """
    from evalkit.report import ReportSpec, write_report

    if isinstance(traces, Simulation):
        traces = traces.traces
    rs = ReportSpec(comparisons=comparisons, scores=scores, traces=traces, title=title,
                    confidence_level=confidence_level, alpha=alpha, adjust=adjust, n_resamples=n_resamples, rng=rng,
                    **spec)
    path = write_report(rs, Path(out), force=force, progress=progress)
    return Report(Path(path), json.loads((Path(path) / "run.json").read_text(encoding="utf-8")))


# ---- simulate ------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Simulation:
    """Simulated sessions of seed 000's four systems on one agent-time budget (:func:`simulate`).

    Attributes
    ----------
    traces : DataFrame
        The session table, ``system, task, session, budget, score``: the columns
        :func:`elo_curve` and :func:`evalkit.budget.elo_curves` take.
    budget : float
        The budget B (agent-time) every system spends per task.
    scale : float
        The best-score scale (a best value equal to it scores 1).
    config : Figure11Config
    """

    traces: pd.DataFrame
    budget: float
    scale: float
    config: Figure11Config

    def __repr__(self) -> str:
        t = self.traces
        return (f"Simulation({t['system'].nunique()} systems x {t['task'].nunique()} tasks x "
                f"{self.config.n_sessions} sessions, {len(t)} rows, budget {self.budget:.4g})")

    def summary(self) -> str:
        """Per system: sessions and the mean final score at the budget."""
        from evalkit.report.budget import final_scores

        final = final_scores(self.traces, self.budget).groupby("system")["score"].agg(["size", "mean"])
        lines = [f"Seed 000's systems on agent-time budget B = {self.budget:.4g} ({self.config.n_tasks} tasks x "
                 f"{self.config.n_sessions} sessions each; best-score scale {self.scale:.4g})."]
        lines += [f"{s}: {int(r['size'])} sessions, mean final score {r['mean']:.3f}" for s, r in final.iterrows()]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        return self.traces.copy()


def simulate(
    *, n_tasks: int = 14, n_sessions: int = 5, budget: float | None = None, rng: RNGLike = 0,
    params: Any = None, engine: str | None = None, workers: int | None = None,
    progress: ProgressFn | None = None,
) -> Simulation:
    """Simulate seed 000's four systems (pass@1, pass@4, group@4, pass@2 group@2) on one budget.

    Every session grows its own task DAG from the calibrated generator (a group's agents
    share one); the result is a session table like a user's own traces.

    Parameters
    ----------
    n_tasks, n_sessions : int
        Tasks, and sessions per system and task.
    budget : float, optional
        The agent-time budget B (default: a multiple of a DAG's mean work).
    rng : int or Generator
    params : SimParams, optional
        Default: the bundled calibrated set (:func:`evalkit.sim.params.calibrated`).
    engine, workers
        Where to simulate (:func:`evalkit.engine.get_executor`; default in process).
    progress : callable, optional

    Returns
    -------
    Simulation

    Examples
    --------
    >>> import evalkit
    >>> sim = evalkit.simulate(n_tasks=2, n_sessions=2, rng=0)
    >>> list(sim.to_frame().columns)
    ['system', 'task', 'session', 'budget', 'score']
    """
    from evalkit.studies.fig11 import Figure11Config, simulate_systems

    config = Figure11Config(n_tasks=n_tasks, n_sessions=n_sessions, budget=budget, params=params)
    traces, b, scale = simulate_systems(config, rng=rng, progress=progress, engine=engine, workers=workers)
    return Simulation(traces, float(b), float(scale), config)
