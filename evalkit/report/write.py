"""``write_report``: comparison logs and/or per-item scores in, a self-contained report folder out.

The folder holds ``report.md``, ``report.html`` (opens in a browser; figures linked as
relative PNGs), ``figures/*.png``, ``tables/*.csv`` and ``run.json`` (inputs with checksums,
parameters, seed, evalkit and library versions).
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.report.document import ReportContext, Section, write_documents
from evalkit.report.sections import DEFAULT_SECTIONS
from evalkit.stats import PAIRED_TESTS, TIE_POLICIES, item_scores
from evalkit.stats._validate import check_confidence_level
from evalkit.stats.multiplicity import MULTIPLICITY_METHODS

__all__ = ["SectionBuilder", "write_report", "read_scores", "common_baseline"]

SectionBuilder = Callable[[ReportContext], "Section | None"]

SCORE_COLUMNS = ("system", "item", "task", "trial", "score")


def common_baseline(comparisons: pd.DataFrame) -> str | None:
    """The player taking part in every comparison (AlpacaEval's reference model), or None."""
    first = comparisons.iloc[0]
    for cand in (first["player_a"], first["player_b"]):
        if ((comparisons["player_a"] == cand) | (comparisons["player_b"] == cand)).all():
            return str(cand)
    return None


def _file_info(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {"path": str(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def read_scores(source: str | Path | pd.DataFrame, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read a per-item score table: one score per (system, item) or per (system, task, trial).

    Parameters
    ----------
    source : path or DataFrame
        CSV (optionally gzipped), JSON Lines, JSON or Parquet.
    columns : mapping, optional
        ``{evalkit name: your column}`` for ``system``, ``item``, ``task``, ``trial``, ``score``.

    Returns
    -------
    DataFrame
        Columns ``system`` (str), ``score`` (float) and those of ``item``, ``task``, ``trial``
        present (as str).

    Raises
    ------
    ValueError
        If ``system`` or ``score`` is missing, neither ``item`` nor ``task`` + ``trial`` is
        present, or a score is missing or not a number.
    """
    if isinstance(source, pd.DataFrame):
        raw, name = source.copy(), "<DataFrame>"
    else:
        from evalkit.io._files import load_records

        raw, _ = load_records(source)
        raw = raw.drop(columns=[c for c in raw.columns if c == "_line"])
        name = str(source)
    mapping = dict(columns or {})
    unknown = sorted(set(mapping) - set(SCORE_COLUMNS))
    if unknown:
        raise ValueError(f"columns maps unknown names {unknown}; allowed: {SCORE_COLUMNS}.")
    missing = [f"{k}={v!r}" for k, v in mapping.items() if v not in raw.columns]
    if missing:
        raise ValueError(f"{name}: column(s) {', '.join(missing)} not found; it has {list(raw.columns)}.")
    frame = raw.rename(columns={v: k for k, v in mapping.items()})
    keep = [c for c in SCORE_COLUMNS if c in frame.columns]
    for need in ("system", "score"):
        if need not in frame.columns:
            raise ValueError(f"{name}: a score table needs a {need!r} column (map yours with columns=); "
                             f"found {list(raw.columns)}.")
    if "item" not in frame.columns and not {"task", "trial"} <= set(frame.columns):
        raise ValueError(f"{name}: a score table needs an 'item' column, or 'task' and 'trial' columns; "
                         f"found {list(raw.columns)}.")
    frame = frame[keep].copy()
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = score.isna()
    if bad.any():
        first = int(bad.to_numpy().nonzero()[0][0])
        raise ValueError(f"{name}: column 'score' must hold numbers; got {frame['score'].iloc[first]!r} in "
                         f"{int(bad.sum())} rows (first at row {first}). Score failed runs explicitly.")
    frame["score"] = score.astype(float)
    for c in ("system", "item", "task", "trial"):
        if c in frame:
            frame[c] = frame[c].astype(str)
    return frame.reset_index(drop=True)


def _read_comparisons(source: Any, fmt: str | None) -> tuple[pd.DataFrame, list[Any], list[dict[str, Any]]]:
    from evalkit.io import read_comparisons, validate_comparisons

    if isinstance(source, pd.DataFrame):
        return validate_comparisons(source), ["comparisons: a DataFrame passed in"], [{"kind": "comparisons",
                                                                                      "path": "<DataFrame>"}]
    if hasattr(source, "frame") and hasattr(source, "report"):
        return source.frame, [source.report], [{"kind": "comparisons", "path": source.report.source}]
    res = read_comparisons(source, format=fmt)
    paths = [Path(p) for p in (source if isinstance(source, (list, tuple)) else [source])]
    info = []
    for p in paths:
        entry = {"kind": "comparisons", **(_file_info(p) if p.is_file() else {"path": str(p)})}
        info.append(entry)
    rep = res.report
    info[0].update(format=rep.format, rows_read=rep.rows_read, rows_kept=rep.rows_kept, dropped=dict(rep.dropped))
    return res.frame, [rep], info


def write_report(
    out_dir: str | Path,
    *,
    comparisons: Any = None,
    scores: str | Path | pd.DataFrame | None = None,
    traces: str | Path | pd.DataFrame | None = None,
    curve_options: Mapping[str, Any] | None = None,
    format: str | None = None,
    score_columns: Mapping[str, str] | None = None,
    title: str = "evalkit report",
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    adjust: str = "holm",
    test: str = "paired_t",
    pairs: str | Sequence[tuple[str, str]] | None = None,
    unit_pair: tuple[str, str] | None = None,
    ties: str = "drop",
    n_boot: int = 200,
    max_players: int = 20,
    sections: Sequence[SectionBuilder] | None = None,
    extra_sections: Sequence[SectionBuilder] = (),
    params: Mapping[str, Any] | None = None,
) -> Path:
    """Write a self-contained report folder and return its path.

    Parameters
    ----------
    out_dir : path
        Folder to create (or overwrite files in).
    comparisons : path, list of paths, DataFrame or ReadResult, optional
        Pairwise judgments, read with :func:`evalkit.io.read_comparisons` (``format=``).
        Gives the leaderboard and the win-rate heatmap; with an ``item`` column (and no
        ``scores``) also per-item scores for paired tests.
    scores : path or DataFrame, optional
        Per-item scores (see :func:`read_scores`; ``score_columns`` maps column names).
        With ``item``: paired tests between systems; with ``task`` and ``trial``: the
        trial- vs task-level comparison.
    traces : path or DataFrame, optional
        A session table (``system, task, session, budget, score``; see
        :func:`evalkit.io.read_traces`): adds the Elo-per-budget sections
        (:mod:`evalkit.report.budget`) and, without ``scores``, each session's best score at
        the budget as the per-(task, trial) score table.
    curve_options : mapping, optional
        Keyword arguments of :func:`evalkit.budget.elo_curves` for those sections (e.g.
        ``{"grid": 1.5, "bootstrap": 200}``).
    title : str
    seed : int
        Seed of every random step (bootstrap intervals).
    alpha, confidence_level : float
    adjust : {"holm", "bh", "bonferroni", "none"}
        Multiplicity correction of the pairwise family.
    test : {"paired_t", "wilcoxon", "sign"}
        Paired test between systems.
    pairs : {"all", "adjacent"} or list of (a, b), optional
        Which pairs to test (default: all for up to 8 systems, else neighbours by mean score).
    unit_pair : (str, str), optional
        Systems of the unit-of-analysis section (default: the two with the highest mean).
    ties : {"drop", "loss", "win"}
        Tie policy of sign tests.
    n_boot : int
        Bootstrap replicates of the leaderboard intervals (clustered by item when items
        exist; 0 for sandwich intervals).
    max_players : int
        Players shown in the heatmap.
    sections : sequence of callables, optional
        Replace the default section builders (:data:`evalkit.report.DEFAULT_SECTIONS`).
    extra_sections : sequence of callables
        Builders appended after the defaults (``ctx -> Section | None``); see
        :mod:`evalkit.report.sections` for how to write one.
    params : mapping, optional
        Extra values for custom builders (``ctx.params``); JSON-serialisable ones are
        recorded in ``run.json``.

    Returns
    -------
    Path
        ``out_dir``, containing ``report.md``, ``report.html``, ``run.json``, ``figures/``
        and ``tables/``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from evalkit import __version__

    if comparisons is None and scores is None and traces is None:
        raise ValueError("Nothing to report: pass comparisons=<log>, scores=<table> and/or traces=<sessions>.")
    check_confidence_level(confidence_level)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    if adjust not in MULTIPLICITY_METHODS:
        raise ValueError(f"adjust must be one of {tuple(MULTIPLICITY_METHODS)}; got {adjust!r}.")
    if test not in PAIRED_TESTS:
        raise ValueError(f"test must be one of {tuple(PAIRED_TESTS)}; got {test!r}.")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 0:
        raise ValueError(f"n_boot must be an integer >= 0 (0: sandwich intervals); got {n_boot!r}.")
    if ties not in TIE_POLICIES:
        raise ValueError(f"ties must be one of {TIE_POLICIES}; got {ties!r}.")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_params: dict[str, Any] = {
        "seed": int(seed), "alpha": alpha, "confidence_level": confidence_level, "adjust": adjust, "test": test,
        "pairs": pairs if pairs is None or isinstance(pairs, str) else [list(p) for p in pairs],
        "unit_pair": list(unit_pair) if unit_pair else None, "ties": ties, "n_boot": int(n_boot),
        "max_players": int(max_players), "format": format, "score_columns": dict(score_columns or {}),
    }
    run_params["curve_options"] = dict(curve_options or {})
    ctx = ReportContext(out_dir=out, params={**run_params, **dict(params or {})})
    inputs: list[dict[str, Any]] = []
    if comparisons is not None:
        ctx.comparisons, reports, info = _read_comparisons(comparisons, format)
        ctx.read_reports.extend(reports)
        inputs.extend(info)
    if traces is not None:
        from evalkit.io import read_traces
        from evalkit.report.budget import final_scores, prepare_curves

        ctx.results["traces"] = read_traces(traces)
        entry_t: dict[str, Any] = {"kind": "traces", "rows": len(ctx.results["traces"])}
        entry_t.update(_file_info(Path(traces)) if not isinstance(traces, pd.DataFrame) else {"path": "<DataFrame>"})
        inputs.append(entry_t)
        if scores is None:
            prepare_curves(ctx)
            ctx.scores = final_scores(ctx.results["traces"], ctx.results["budget"])
    if scores is not None:
        ctx.scores = read_scores(scores, columns=score_columns)
        entry: dict[str, Any] = {"kind": "scores", "rows": len(ctx.scores)}
        entry.update(_file_info(Path(scores)) if not isinstance(scores, pd.DataFrame) else {"path": "<DataFrame>"})
        inputs.append(entry)
    elif ctx.comparisons is not None and "item" in ctx.comparisons and ctx.comparisons["item"].notna().all():
        base = common_baseline(ctx.comparisons)
        if base is not None:
            s = item_scores(ctx.comparisons)
            ctx.scores = s[s["system"] != base].reset_index(drop=True)
            ctx.params["scores_from_comparisons"] = base
        else:
            ctx.read_reports.append(
                "no paired tests between systems: the comparisons have no common baseline, so a system's "
                "per-item score would depend on whom it faced; pass a per-item score table (scores=) for them")
    if sections is None:
        from evalkit.report.budget import BUDGET_SECTIONS

        sections = (*BUDGET_SECTIONS, *DEFAULT_SECTIONS) if traces is not None else DEFAULT_SECTIONS
    builders = list(sections) + list(extra_sections)
    built = [s for s in (b(ctx) for b in builders) if s is not None]
    preamble = (f"Generated by evalkit {__version__} with seed {int(seed)}. Every test names its method, its unit "
                "and how ties were handled; intervals are computed, not drawn by the plotting library.")
    files = write_documents(out, title, built, preamble=preamble)
    figures = [f.path for s in built for f in s.figures]
    extra = {k: v for k, v in dict(params or {}).items() if _jsonable(v)}
    run = {
        "evalkit_version": __version__,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "libraries": _versions(),
        "seed": int(seed),
        "parameters": {**run_params, **extra},
        "inputs": inputs,
        "sections": [s.title for s in built],
        "outputs": [p.name for p in files] + figures,
    }
    (out / "run.json").write_text(json.dumps(run, indent=2, default=str) + "\n", encoding="utf-8")
    return out


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return False
    return True


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for lib in ("numpy", "scipy", "pandas", "statsmodels", "matplotlib", "seaborn"):
        try:
            out[lib] = md.version(lib)
        except md.PackageNotFoundError:
            out[lib] = "not installed"
    return out
