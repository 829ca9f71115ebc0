"""Harness logs in bulk: files, folders and globs of Inspect, SWE-agent, lm-eval and JSONL event logs.

:func:`read_logs` expands each input (a file, a folder searched recursively, or a glob such
as ``runs/**/*.eval``), recognises every file's format from its name and first bytes, and
reads the files **one at a time** (:func:`iter_log_rows` is a generator; a ``.eval`` zip is
read sample by sample), so 10,000 logs cost the memory of their rows, not of their
transcripts. The result is one session table (:mod:`evalkit.io.traces`) with the extra
columns ``input`` (which argument the row came from) and, for Inspect, ``epoch``.

=============  ===================================================================================
format         files
=============  ===================================================================================
``inspect``    ``*.eval`` (zip) and ``*.json`` Inspect AI logs
``swe_agent``  ``*.traj`` SWE-agent trajectories; the score comes from ``resolved=`` (a SWE-bench
               report read with :func:`evalkit.io.swe_bench.read_swe_bench_report`),
               ``resolved_ids=``, or a SWE-bench report inside the folder given as input
``lm_eval``    ``samples_*.jsonl`` of lm-evaluation-harness (budget 0: it records no usage)
``events``     any other ``*.jsonl``: a generic event stream (``columns=`` maps its fields)
=============  ===================================================================================

In a folder, files of no known format (README, CSV, a SWE-bench report...) are skipped and
counted in the returned frame's ``attrs["skipped"]``; a file named explicitly must be a log.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evalkit._progress import ProgressFn, tick
from evalkit.io._walk import glob_files, walk_files
from evalkit.io.agent_logs import _check_unit, inspect_rows, read_event_stream, swe_agent_rows
from evalkit.io.lm_eval import LM_EVAL_SAMPLES, is_lm_eval_record, lm_eval_rows
from evalkit.io.swe_bench import read_swe_bench_report
from evalkit.io.traces import validate_traces

__all__ = ["LOG_FORMATS", "LogOptions", "expand_paths", "log_format", "iter_log_rows", "read_logs",
           "session_outcomes"]

LOG_FORMATS: tuple[str, ...] = ("inspect", "swe_agent", "lm_eval", "events")
_GLOB_CHARS = set("*?[")
_INSPECT_JSON = re.compile(rb'^\s*\{\s*"version"\s*:')


@dataclass(frozen=True)
class LogOptions:
    """How to read logs (every field has the meaning of the reader it goes to).

    Attributes
    ----------
    budget : {"tokens", "tokens_total", "cost", "time"}
    scorer : str, optional
        Inspect scorer whose value is the score.
    include_scorer : bool
        Count Inspect scorers' model calls in the budget.
    resolved : mapping or bool, optional
        SWE-agent verdicts: instance id -> resolved (a SWE-bench report), or one value for all.
    resolved_ids : set of str, optional
        SWE-agent: the resolved instance ids; every other trajectory scores 0.
    columns : mapping, optional
        JSONL events: canonical name -> field name.
    metric : str, optional
        lm-eval metric of the score.
    metadata : tuple of str
        Sample metadata (Inspect), ``doc`` fields (lm-eval) or event fields to keep as columns.
    """

    budget: str = "tokens"
    scorer: str | None = None
    include_scorer: bool = False
    resolved: Mapping[str, bool] | bool | None = None
    resolved_ids: frozenset[str] | None = None
    columns: Mapping[str, str] | None = None
    metric: str | None = None
    metadata: tuple[str, ...] = field(default_factory=tuple)


def expand_paths(inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[tuple[str, Path, bool]]:
    """``(input, file, explicit)`` for every file an input names: the file itself, a folder's files
    (recursively, sorted) or a glob's matches (``**`` recurses). ``explicit`` is True for a file
    named directly.

    Raises
    ------
    ValueError
        For a path that does not exist or a glob that matches nothing.
    """
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    if not items:
        raise ValueError("No log given: pass files, folders or globs.")
    out: list[tuple[str, Path, bool]] = []
    for item in items:
        spec = str(item)
        p = Path(spec)
        if p.is_file():
            out.append((spec, p, True))
        elif p.is_dir():  # walks and globs end at a symlink loop's first repetition
            out.extend((spec, f, False) for f in walk_files(p))
        elif _GLOB_CHARS & set(spec):
            files = glob_files(spec)
            if not files:
                raise ValueError(f"The pattern {spec!r} matches no file.")
            out.extend((spec, f, False) for f in files)
        else:
            raise ValueError(f"No such file or folder: {spec!r}.")
    return out


def _head(path: Path, n: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def log_format(path: Path) -> str | None:
    """The log format of ``path`` (one of :data:`LOG_FORMATS`), or None when it is none of them."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        if not zipfile.is_zipfile(path):  # truncated, random or renamed: say so, never skip it silently
            raise ValueError(f"{path} is named like an Inspect .eval log but is not a complete zip archive (it "
                             f"starts with {_head(path, 8)!r}; a truncated download or another file renamed). "
                             "Re-copy the log, or move the file out of the folder.")
        return "inspect"
    if suffix == ".traj":
        return "swe_agent"
    if suffix == ".json":
        head = _head(path)
        if head.lstrip()[:1] not in (b"{", b"["):
            raise ValueError(f"{path} is named like a JSON file but does not hold JSON (it starts with {head[:8]!r}). "
                             "Fix or rename it, or move it out of the folder.")
        # an Inspect JSON log opens with its "version" key; Inspect's folder index logs.json (file -> header) does not
        return "inspect" if _INSPECT_JSON.match(head) and b'"eval"' in head else None
    if suffix in (".jsonl", ".ndjson"):
        if LM_EVAL_SAMPLES.match(path.name):
            return "lm_eval"
        first = next((ln for ln in _head(path, 1 << 16).splitlines() if ln.strip()), b"")
        try:
            rec = json.loads(first) if first.count(b"[") + first.count(b"{") <= 64 else None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return "events"  # a long first line cut by the head: let the reader say what is wrong
        return "lm_eval" if is_lm_eval_record(rec) else "events"
    return None


def _session_prefix(path: Path) -> str:
    """Run name unique across all files read: the file's path as found, without its suffix."""
    return path.with_suffix("").as_posix()


def _report_in(spec: str, cache: dict[str, Mapping[str, bool] | None]) -> Mapping[str, bool] | None:
    """A SWE-bench report inside the folder ``spec`` (the run report beside the trajectories), if any."""
    if spec not in cache:
        cache[spec] = None
        base = Path(spec)
        if base.is_dir():
            for f in (x for x in walk_files(base) if x.suffix == ".json"):
                head = _head(f, 1 << 16)
                if b'"resolved_ids"' in head or (f.name == "report.json" and b'"resolved"' in head):
                    found = dict(read_swe_bench_report(f))
                    cache[spec] = {**(cache[spec] or {}), **found}
    return cache[spec]


def _file_rows(fmt: str, spec: str, path: Path, opts: LogOptions,
               reports: dict[str, Mapping[str, bool] | None]) -> tuple[list[dict], list[str]]:
    if fmt == "inspect":
        return inspect_rows(path, budget=opts.budget, scorer=opts.scorer, include_scorer=opts.include_scorer,
                            metadata=opts.metadata, session_prefix=_session_prefix(path))
    if fmt == "swe_agent":
        resolved: Mapping[str, bool] | bool | None = opts.resolved
        if opts.resolved_ids is not None:
            resolved = {path.stem: path.stem in opts.resolved_ids}
        elif resolved is None:
            resolved = _report_in(spec, reports)
        return swe_agent_rows(path, budget=opts.budget, resolved=resolved, session=path.parent.as_posix())
    if fmt == "lm_eval":
        return lm_eval_rows(path, metric=opts.metric, metadata=opts.metadata)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_event_stream(path, budget=opts.budget, columns=opts.columns, keep=opts.metadata)
    unscored = [str(w.message) for w in caught]
    return frame.to_dict("records"), unscored


def iter_log_rows(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: LogOptions = LogOptions(), *,
    progress: ProgressFn | None = None,
) -> Iterator[tuple[Path, str | None, list[dict], list[str]]]:
    """Yield ``(file, format, rows, unscored)`` file by file; unknown files in folders have format None,
    SWE-bench run reports (used to score trajectories) ``"swe_bench_report"`` and no rows.

    A generator: only one file's rows exist at a time unless the caller keeps them.
    """
    _check_unit(options.budget)
    files = expand_paths(inputs)
    reports: dict[str, Mapping[str, bool] | None] = {}
    for i, (spec, path, explicit) in enumerate(files):
        fmt = log_format(path)
        if fmt is None:
            if explicit:
                raise ValueError(
                    f"Cannot tell the log format of {path.name!r}: expected an Inspect log (.eval, or .json "
                    "with an 'eval' header), a SWE-agent .traj, lm-eval samples_*.jsonl or JSONL events.")
            is_report = path.suffix.lower() == ".json" and b'"resolved_ids"' in _head(path, 1 << 16)
            yield path, "swe_bench_report" if is_report else None, [], []
        else:
            rows, unscored = _file_rows(fmt, spec, path, options, reports)
            for r in rows:
                r["input"] = spec
            yield path, fmt, rows, unscored
        tick(progress, "read", i + 1, len(files))


def read_logs(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: LogOptions | None = None, *,
    progress: ProgressFn | None = None, **kwargs: object,
) -> pd.DataFrame:
    """Read files, folders and globs of harness logs into one session table.

    Parameters
    ----------
    inputs : path, glob or a list of them
    options : LogOptions, optional
        Reader options; keyword arguments build one instead (``read_logs("runs/", budget="cost")``).
    progress : callable, optional
        ``progress("read", files_done, files_total)``.

    Returns
    -------
    pandas.DataFrame
        The validated session table with ``input`` (the argument each row came from) and
        ``epoch`` (Inspect). ``attrs``: ``files`` (per-format counts), ``skipped`` (files of
        no known format inside folders), ``unscored`` (sessions without a score, also warned).

    Raises
    ------
    ValueError
        When no file holds a scored submission, or as the readers do.
    """
    opts = options if options is not None else LogOptions(**kwargs)  # type: ignore[arg-type]
    columns: dict[str, list] = {}  # column-wise, strings interned: 240,000 rows of 10,000 logs stay small
    n_rows = 0
    unscored: list[str] = []
    counts: dict[str, int] = {}
    skipped: list[str] = []
    for path, fmt, file_rows, file_unscored in iter_log_rows(inputs, opts, progress=progress):
        if fmt is None:
            skipped.append(str(path))
            continue
        counts[fmt] = counts.get(fmt, 0) + 1
        n_rows = _append_columns(columns, n_rows, file_rows)
        unscored.extend(f"{path.name}: {u}" for u in file_unscored)
    if unscored:
        shown = "; ".join(unscored[:3]) + (" ..." if len(unscored) > 3 else "")
        warnings.warn(f"{len(unscored)} session(s) have no scored submission and are left out ({shown}).",
                      UserWarning, stacklevel=2)
    if not n_rows:
        what = f"{sum(counts.values())} log file(s)" if counts else "no log file"
        skip = f"; skipped {len(skipped)} file(s) of no known log format ({', '.join(skipped[:3])})" if skipped else ""
        raise ValueError(f"Found {what} with a scored submission in {_names(inputs)}{skip}.")
    frame = validate_traces(pd.DataFrame(columns), source=None)
    frame.attrs.update(files=counts, skipped=skipped, unscored=unscored)
    return frame


def _append_columns(columns: dict[str, list], n_rows: int, rows: list[dict]) -> int:
    """Append dict rows to column lists (a column first seen late is back-filled with None)."""
    for r in rows:
        for k in r.keys() - columns.keys():
            columns[k] = [None] * n_rows
        for k, values in columns.items():
            v = r.get(k)
            values.append(sys.intern(v) if isinstance(v, str) else v)
        n_rows += 1
    return n_rows


def _names(inputs: object) -> str:
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) or not isinstance(inputs, Iterable) else list(inputs)
    return ", ".join(repr(str(i)) for i in items[:3]) + (" ..." if len(items) > 3 else "")


def session_outcomes(traces: pd.DataFrame, *, by: str | Sequence[str] = ()) -> pd.DataFrame:
    """Each session's final score: one row per (system, task, session) with the last submission's
    score (the harness's verdict), plus the first value of any ``by`` columns.

    Returns
    -------
    pandas.DataFrame
        ``system, task, session, score, budget`` (budget at the final submission) and ``by`` columns.
    """
    keep = [by] if isinstance(by, str) else list(by)
    keep = [c for c in keep if c in traces.columns and c not in ("system", "task", "session", "score", "budget")]
    last = traces.groupby(["system", "task", "session"], sort=True, as_index=False).tail(1)
    return last[["system", "task", "session", "score", "budget", *keep]].reset_index(drop=True)
