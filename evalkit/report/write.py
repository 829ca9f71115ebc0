"""``write_report(spec, out)``: comparison logs and/or per-item scores in, a report folder out.

A :class:`ReportSpec` says what to report; :func:`write_report` builds the folder atomically
(:func:`evalkit._output.atomic_output_dir`). The folder holds ``report.md``, ``report.html``
(opens in a browser; figures linked as relative PNGs), ``figures/*.png``, ``tables/*.csv`` and
``run.json`` (inputs with checksums, parameters, seed, evalkit and library versions, and every
file with its SHA-256, written last).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._deprecate import renamed_keywords
from evalkit._output import atomic_output_dir
from evalkit._progress import ProgressFn, tick, track
from evalkit.report.document import ReportContext, Section, Text, plain
from evalkit.report.render import write_documents
from evalkit.report.sections import DEFAULT_SECTIONS
from evalkit.stats import PAIRED_TESTS, TIE_POLICIES, item_scores
from evalkit.stats._validate import check_confidence_level
from evalkit.stats.multiplicity import MULTIPLICITY_METHODS

__all__ = ["SectionBuilder", "ReportSpec", "write_report", "build_report", "read_scores", "common_baseline"]

SectionBuilder = Callable[[ReportContext], "Section | None"]

SCORE_COLUMNS = ("system", "item", "task", "trial", "score")


def common_baseline(comparisons: pd.DataFrame) -> str | None:
    """The player taking part in every comparison (AlpacaEval's reference model), or None.

    With only two players both take part in every comparison, and neither is a baseline the other
    systems are scored against (a two-model log such as an MT-bench pair file): None."""
    if pd.unique(pd.concat([comparisons["player_a"], comparisons["player_b"]])).size < 3:
        return None
    first = comparisons.iloc[0]
    for cand in (first["player_a"], first["player_b"]):
        if ((comparisons["player_a"] == cand) | (comparisons["player_b"] == cand)).all():
            return str(cand)
    return None


def _file_info(path: Path) -> dict[str, Any]:
    """The input's provenance: the SHA-256 of the bytes the reader analysed (kept when it read
    them), not of whatever the file holds by the time the report is written."""
    from evalkit.io._limits import read_digest

    return {"path": str(path), **read_digest(path)}


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
        name = str(source)
    cols = [c for c in raw.columns if c != "_line"]
    mapping = dict(columns or {})
    unknown = sorted(set(mapping) - set(SCORE_COLUMNS))
    if unknown:
        raise ValueError(f"columns maps unknown names {unknown}; allowed: {SCORE_COLUMNS}.")
    missing = [f"{k}={v!r}" for k, v in mapping.items() if v not in cols]
    if missing:
        raise ValueError(f"{name}: column(s) {', '.join(missing)} not found; it has {cols}.")
    frame = raw.rename(columns={v: k for k, v in mapping.items()})
    keep = [c for c in SCORE_COLUMNS if c in frame.columns]
    for need in ("system", "score"):
        if need not in frame.columns:
            raise ValueError(f"{name}: a score table needs a {need!r} column (map yours with columns=); "
                             f"found {cols}.")
    if "item" not in frame.columns and not {"task", "trial"} <= set(frame.columns):
        raise ValueError(f"{name}: a score table needs an 'item' column, or 'task' and 'trial' columns; "
                         f"found {cols}.")
    lines = frame["_line"].to_numpy() if "_line" in frame else np.arange(1, len(frame) + 1)
    frame = frame[keep].copy()
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = score.isna() | ~np.isfinite(score.fillna(0.0))
    if bad.any():
        first = int(bad.to_numpy().nonzero()[0][0])
        where = "line" if "_line" in raw else "row"
        raise ValueError(f"The 'score' column of {name} must hold finite numbers. Got "
                         f"{frame['score'].iloc[first]!r} in {int(bad.sum())} rows (first at {where} "
                         f"{int(lines[first])}) instead. Score failed runs explicitly.")
    from evalkit._errors import check_magnitude

    check_magnitude(score.to_numpy(dtype=float), "score", source=f" of {name}", lines=lines)
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


@dataclass(frozen=True)
class ReportSpec:
    """What a report is made of and how it is computed (everything but where it goes).

    Parameters
    ----------
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
        Keyword arguments of :func:`evalkit.budget.elo_curves` (e.g. ``{"grid": 1.5}``).
    format : str, optional
        Format of the comparisons (default: detected).
    score_columns : mapping, optional
        ``{evalkit name: your column}`` of the score table.
    title : str
    rng : int
        Seed of every random step (bootstrap intervals); ``seed`` is its deprecated name.
    alpha, confidence_level : float
    adjust : {"holm", "bh", "bonferroni", "none"}
        Multiplicity correction of the pairwise family.
    test : {"paired_t", "wilcoxon", "sign"}
        Paired test between systems.
    pairs : {"all", "adjacent"} or list of (a, b), optional
        Which pairs to test (default: all for up to 8 systems, else neighbours by mean score).
    unit_pair : (str, str), optional
        Systems of the unit-of-analysis section (default: the two with the highest mean).
    tie_policy : {"drop", "loss", "win"}
        What a sign test does with tied pairs (``ties``: the deprecated name; ``ties`` elsewhere
        in evalkit is how ties enter a Bradley-Terry fit).
    n_resamples : int
        Bootstrap replicates of the leaderboard intervals (clustered by item when items
        exist; 0 for sandwich intervals); ``n_boot`` is its deprecated name.
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
    raw_csv : bool
        Write table cells verbatim; by default a text cell starting with ``= + - @``, tab or
        CR gets a leading ``'`` so that a spreadsheet does not evaluate it (OWASP).
    """

    comparisons: Any = None
    scores: str | Path | pd.DataFrame | None = None
    traces: str | Path | pd.DataFrame | None = None
    curve_options: Mapping[str, Any] | None = None
    format: str | None = None
    score_columns: Mapping[str, str] | None = None
    title: str = "evalkit report"
    rng: int = 0
    alpha: float = 0.05
    confidence_level: float = 0.95
    adjust: str = "holm"
    test: str = "paired_t"
    pairs: str | Sequence[tuple[str, str]] | None = None
    unit_pair: tuple[str, str] | None = None
    tie_policy: str = "drop"
    n_resamples: int = 200
    max_players: int = 20
    sections: Sequence[SectionBuilder] | None = None
    extra_sections: Sequence[SectionBuilder] = ()
    params: Mapping[str, Any] | None = None
    raw_csv: bool = False

    def __post_init__(self) -> None:
        if self.comparisons is None and self.scores is None and self.traces is None:
            raise ValueError("Nothing to report: pass comparisons=<log>, scores=<table> and/or traces=<sessions>.")
        check_confidence_level(self.confidence_level)
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be strictly between 0 and 1; got {self.alpha!r}.")
        if self.adjust not in MULTIPLICITY_METHODS:
            raise ValueError(f"adjust must be one of {tuple(MULTIPLICITY_METHODS)}; got {self.adjust!r}.")
        if self.test not in PAIRED_TESTS:
            raise ValueError(f"test must be one of {tuple(PAIRED_TESTS)}; got {self.test!r}.")
        if isinstance(self.n_resamples, bool) or not isinstance(self.n_resamples, int) or self.n_resamples < 0:
            raise ValueError(f"n_resamples must be an integer >= 0 (0: sandwich intervals); got {self.n_resamples!r}.")
        if self.tie_policy not in TIE_POLICIES:
            raise ValueError(f"tie_policy must be one of {TIE_POLICIES}; got {self.tie_policy!r}.")

    @property
    def seed(self) -> int:
        """Deprecated name of :attr:`rng`."""
        return self.rng

    @property
    def n_boot(self) -> int:
        """Deprecated name of :attr:`n_resamples`."""
        return self.n_resamples

    @property
    def ties(self) -> str:
        """Deprecated name of :attr:`tie_policy`."""
        return self.tie_policy

    def run_params(self) -> dict[str, Any]:
        """The options as recorded in ``run.json``."""
        pairs = self.pairs
        return {
            "seed": int(self.rng), "alpha": self.alpha, "confidence_level": self.confidence_level,
            "adjust": self.adjust, "test": self.test,
            "pairs": pairs if pairs is None or isinstance(pairs, str) else [list(p) for p in pairs],
            "unit_pair": list(self.unit_pair) if self.unit_pair else None,
            "tie_policy": self.tie_policy, "n_resamples": int(self.n_resamples), "max_players": int(self.max_players), "format": self.format,
            "score_columns": dict(self.score_columns or {}), "curve_options": dict(self.curve_options or {}),
            "raw_csv": self.raw_csv,
        }


def _source_info(kind: str, source: Any, rows: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": kind, "rows": rows}
    entry.update(_file_info(Path(source)) if not isinstance(source, pd.DataFrame) else {"path": "<DataFrame>"})
    return entry


def _load_inputs(spec: ReportSpec, ctx: ReportContext) -> list[dict[str, Any]]:
    inputs: list[dict[str, Any]] = []
    if spec.comparisons is not None:
        ctx.comparisons, reports, info = _read_comparisons(spec.comparisons, spec.format)
        ctx.read_reports.extend(reports)
        inputs.extend(info)
    if spec.traces is not None:
        from evalkit.io import read_traces
        from evalkit.report.budget import final_scores, prepare_curves

        ctx.results["traces"] = read_traces(spec.traces)
        inputs.append(_source_info("traces", spec.traces, len(ctx.results["traces"])))
        if spec.scores is None:
            prepare_curves(ctx)
            ctx.scores = final_scores(ctx.results["traces"], ctx.results["budget"])
    if spec.scores is not None:
        ctx.scores = read_scores(spec.scores, columns=spec.score_columns)
        inputs.append(_source_info("scores", spec.scores, len(ctx.scores)))
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
    return inputs


# the 0.1 spellings, accepted for one release (DeprecationWarning)
ReportSpec.__init__ = renamed_keywords(  # type: ignore[method-assign]  # the dataclass's generated __init__
    seed="rng", n_boot="n_resamples", ties="tie_policy")(ReportSpec.__init__)


def build_report(spec: ReportSpec, folder: str | Path, *, progress: ProgressFn | None = None) -> dict[str, Any]:
    """Write the report's files into an existing ``folder`` and return its ``run.json`` record
    (without the file manifest: :func:`write_report` adds that, last)."""
    from evalkit import __version__
    from evalkit.report.findings import read_caveats

    out = Path(folder)
    run_params = spec.run_params()
    ctx = ReportContext(out_dir=out, params={**run_params, **dict(spec.params or {})}, progress=progress)
    tick(progress, "read inputs", 0, 1)
    inputs = _load_inputs(spec, ctx)
    tick(progress, "read inputs", 1, 1)
    read_caveats(ctx.headline, [r for r in ctx.read_reports if hasattr(r, "dropped")])
    sections = spec.sections
    if sections is None:
        from evalkit.report.budget import BUDGET_SECTIONS

        sections = (*BUDGET_SECTIONS, *DEFAULT_SECTIONS) if spec.traces is not None else DEFAULT_SECTIONS
    builders = list(sections) + list(spec.extra_sections)
    from evalkit.plots._fonts import plot_fonts

    with plot_fonts():  # labels from the data may need a CJK font while the plots are laid out
        built = [s for s in (b(ctx) for b in track(builders, progress, "report sections")) if s is not None]
    preamble = (f"Generated by evalkit {__version__} with seed {int(spec.rng)}. Every test names its method, its "
                "unit and how ties were handled; intervals are computed, not drawn by the plotting library.")
    if ctx.missing_glyphs:
        built.append(Section("Characters missing from the figures", (Text(
            "No installed font could draw these characters of the data, so the figures show them as boxes "
            "(install a font with wider coverage, e.g. Debian's fonts-noto-cjk): "
            + ", ".join(f"{plain(ch)} (U+{ord(ch):04X})" for ch in ctx.missing_glyphs) + "."),)))
    files = write_documents(out, spec.title, built, preamble=preamble, raw_csv=spec.raw_csv, headline=ctx.headline)
    figures = [p for s in built for f in s.figures for p in (f.path, f.full) if p]
    from evalkit.report.headline import resolve_sections

    ids = resolve_sections([(s.title, s.id) for s in built])
    extra = {k: v for k, v in dict(spec.params or {}).items() if _jsonable(v)}
    return {
        "evalkit_version": __version__,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "libraries": _versions(),
        "seed": int(spec.rng),
        "parameters": {**run_params, **extra},
        "inputs": inputs,
        "headline": ctx.headline.to_records(ids=ids),
        "sections": [s.title for s in built],
        "outputs": [p.name for p in files] + figures,
    }


def write_report(
    spec: ReportSpec | str | Path, out: str | Path | None = None, *, force: bool = False,
    progress: ProgressFn | None = None, **options: Any,
) -> Path:
    """Write a self-contained report folder, atomically, and return its path.

    Parameters
    ----------
    spec : ReportSpec
        What to report (inputs, tests, sections).
    out : path
        Folder to create. It is built in a temporary sibling and renamed into place, with
        ``run.json`` (inputs with checksums, parameters, seed, versions, and every file with
        its SHA-256) written last; :func:`evalkit._output.verify_dir` checks it.
    force : bool
        Replace an existing non-empty ``out`` whole (default: refuse it).
    progress : callable, optional
        ``progress(stage, done, total)``.
    **options
        The older form ``write_report(out, comparisons=..., seed=..., ...)`` is still accepted:
        ``options`` are :class:`ReportSpec`'s fields.

    Returns
    -------
    Path
        ``out``, containing ``report.md``, ``report.html``, ``run.json``, ``figures/``
        and ``tables/``.
    """
    target: str | Path
    if not isinstance(spec, ReportSpec):
        if out is not None:
            raise TypeError("write_report(spec, out): spec must be a ReportSpec; or call write_report(out, **options).")
        target = spec
        spec = ReportSpec(**options)
    elif options or out is None:
        raise TypeError("write_report(spec, out, *, force=False, progress=None) takes no other options.")
    else:
        target = out
    with atomic_output_dir(target, force=force, raw_csv=spec.raw_csv) as folder:
        folder.record.update(build_report(spec, folder.path, progress=progress))
    return Path(target)


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
