"""Harness logs in bulk: files, folders and globs of every harness log evalkit reads.

:func:`read_logs` expands each input (a file, a folder searched recursively, or a glob such
as ``runs/**/*.eval``), recognises every file's format from its name and first bytes, and
reads the files **one at a time** (:func:`iter_log_rows` is a generator; a ``.eval`` zip is
read sample by sample), so 10,000 logs cost the memory of their rows, not of their
transcripts. The result is one session table (:mod:`evalkit.io.traces`) with the extra
columns ``input`` (which argument the row came from), the session totals ``tokens``,
``tokens_total``, ``cost`` and ``time`` (NaN where a log does not record them), and, where
the log has them, ``epoch``, ``status``, ``error``, ``model``, ``filter``, ``api_calls``.

===================  ==============================================================================
format               files
===================  ==============================================================================
``inspect``          ``*.eval`` (zip) and ``*.json`` Inspect AI logs, every version since 0.3.4x
``swe_agent``        ``*.traj`` SWE-agent trajectories; the score comes from ``resolved=``,
                     ``resolved_ids=``, or a SWE-bench verdict file inside the folder given as input
``mini_swe_agent``   ``*.traj.json`` (``trajectory_format: mini-swe-agent-*``), scored the same way
``swe_bench``        SWE-bench verdict files read on their own (no trajectory beside them): every
                     shape of :mod:`evalkit.io.swe_bench`; one outcome per instance, no budget
``lm_eval``          ``samples_*.jsonl`` of lm-evaluation-harness, each paired with the
                     ``results_<date>.json`` of its own run (no budget: it records no usage)
``mt_bench_single``  MT-bench single-answer judgments (``gpt-4_single.jsonl``, plain or ``.gz``)
``table``            an outcome or session table (``system, task[, session], score[, budget]``) in
                     CSV, TSV, JSONL or Parquet; the budget may be absent
``events``           any other ``*.jsonl``: a generic event stream (``columns=`` maps its fields)
===================  ==============================================================================

In a folder, files of no known format (README, a CSV that is no table...) are skipped and
counted in the returned frame's ``attrs["skipped"]``; a file named explicitly must be a log.
A budget unit a log does not record leaves the budget missing (NaN), never 0: the commands
that need a budget (``curve``, ``report --traces``) say so. An Inspect run written twice, as
``x.eval`` and as ``x.json`` (``inspect log convert``), is read once.
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

from evalkit._errors import list_ids
from evalkit._progress import ProgressFn, tick
from evalkit.io._walk import glob_files, walk_files
from evalkit.io.agent_logs import (
    USAGE_COLUMNS,
    FileRows,
    _check_unit,
    inspect_rows,
    mini_swe_agent_rows,
    read_event_stream,
    swe_agent_rows,
)
from evalkit.io.fastchat import is_mt_bench_single, mt_bench_single_rows
from evalkit.io.formats import read_head
from evalkit.io.lm_eval import LM_EVAL_SAMPLES, is_lm_eval_record, lm_eval_rows
from evalkit.io.swe_bench import Verdicts, read_swe_bench_report, verdict_system
from evalkit.io.traces import validate_traces

__all__ = ["LOG_FORMATS", "COMPARISON_LOG", "LogOptions", "expand_paths", "log_format", "iter_log_rows",
           "read_logs", "session_outcomes", "run_names"]

LOG_FORMATS: tuple[str, ...] = ("inspect", "swe_agent", "mini_swe_agent", "swe_bench", "lm_eval",
                                "mt_bench_single", "table", "events")
#: Format name of a pairwise judgment log (Arena, MT-bench pair, AlpacaEval...) found among harness logs.
COMPARISON_LOG = "comparisons"
_GLOB_CHARS = set("*?[")
_INSPECT_JSON = re.compile(rb'^\s*\{\s*"version"\s*:')
_VERDICT_NAMES = ("report.json", "results.json", "results_summary.json", "eval_results.json")
_LM_EVAL_RESULTS = re.compile(r"^results_\d{4}-\d{2}-\d{2}T[0-9\-.:]+\.json$")
_USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cost", "time", "tokens")
_TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet", ".pq")
_TRAJ = ("swe_agent", "mini_swe_agent")


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
        JSONL events and tables: canonical name -> field name.
    metric : str, optional
        lm-eval metric of the score.
    filter : str, optional
        lm-eval filter of the score when a task logs several.
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
    filter: str | None = None
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
    return read_head(path, n)


def _first_record(path: Path) -> object:
    first = next((ln for ln in _head(path, 1 << 16).splitlines() if ln.strip()), b"")
    if first.count(b"[") + first.count(b"{") > 64:  # deeply nested: the bounded reader says what is wrong
        return None
    try:
        return json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None  # a long first line cut by the head: let the reader say what is wrong


def _json_format(path: Path) -> str | None:
    head = _head(path, 1 << 16)
    if _INSPECT_JSON.match(head) and b'"eval"' in head[:4096]:
        # an Inspect JSON log opens with its "version" key; Inspect's folder index logs.json (file -> header) does not
        return "inspect"
    if b'"trajectory_format"' in head and b"mini-swe-agent" in head:
        return "mini_swe_agent"
    if _LM_EVAL_RESULTS.match(path.name):
        return "lm_eval_results"
    if path.name in _VERDICT_NAMES or b'"resolved_ids"' in head:
        return "swe_bench"
    return None


def _table_format(path: Path) -> str | None:
    """``table`` for a CSV/Parquet with ``system`` and ``score`` columns, ``comparisons`` for a judgment log."""
    from evalkit.io.formats import FORMATS

    head = _head(path, 1 << 16)
    if head.startswith(b"PAR1"):
        try:
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
        except Exception:  # noqa: BLE001 - unreadable: let the reader say why
            return None
    else:
        line = head.decode("utf-8-sig", errors="replace").split("\n", 1)[0]
        sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
        names = [c.strip().strip('"') for c in line.split(sep)]
    if "system" in names and "score" in names:
        return "table"
    if any(all(any(a in names for a in spec.split("|")) for spec in need)
           for name, need in FORMATS.items() if name != "columns"):
        return COMPARISON_LOG
    return None


def _jsonl_format(path: Path) -> str | None:
    if LM_EVAL_SAMPLES.match(path.name):
        return "lm_eval"
    rec = _first_record(path)
    if rec is None:
        return "events"
    if is_lm_eval_record(rec):
        return "lm_eval"
    if is_mt_bench_single(rec):
        return "mt_bench_single"
    if isinstance(rec, dict) and ({"model_1", "g1_winner"} <= rec.keys() or {"model_a", "winner"} <= rec.keys()
                                  or {"generator_1", "preference"} <= rec.keys()):
        return COMPARISON_LOG
    if isinstance(rec, dict) and "system" in rec and "score" in rec and not any(k in rec for k in _USAGE_FIELDS):
        return "table"
    return "events"


def log_format(path: Path) -> str | None:
    """The log format of ``path`` (one of :data:`LOG_FORMATS`, ``"comparisons"`` for a pairwise judgment
    log, ``"lm_eval_results"`` for an lm-eval ``results_*.json``), or None when it is none of them."""
    name = path.name.lower()
    suffix = path.suffix.lower()
    if suffix == ".eval":
        if not zipfile.is_zipfile(path):  # truncated, random or renamed: say so, never skip it silently
            raise ValueError(f"{path} is named like an Inspect .eval log but is not a complete zip archive (it "
                             f"starts with {_head(path, 8)!r}; a truncated download or another file renamed). "
                             "Re-copy the log, or move the file out of the folder.")
        return "inspect"
    if name.endswith(".traj.json"):
        return "mini_swe_agent"
    if suffix == ".traj":
        return "swe_agent"  # a renamed mini-swe-agent trajectory is recognised when read
    if suffix == ".json":
        head = _head(path)
        if head.lstrip()[:1] not in (b"{", b"["):
            raise ValueError(f"{path} is named like a JSON file but does not hold JSON (it starts with {head[:8]!r}). "
                             "Fix or rename it, or move it out of the folder.")
        return _json_format(path)
    plain = name.removesuffix(".gz")
    if plain.endswith((".jsonl", ".ndjson")):
        return _jsonl_format(path)
    if plain.endswith(_TABLE_SUFFIXES):
        return _table_format(path)
    return None


def _session_prefix(path: Path) -> str:
    """Run name unique across all files read: the file's path as found, without its suffix."""
    return path.with_suffix("").as_posix()


@dataclass
class _ReadState:
    """What reading one batch of inputs accumulates across files."""

    verdicts: dict[str, Verdicts | None] = field(default_factory=dict)
    runs: dict[tuple, str] = field(default_factory=dict)
    prefixes: set[str] = field(default_factory=set)
    traj_specs: set[str] = field(default_factory=set)


def _verdicts_in(spec: str, files: Sequence[tuple[str, Path, bool]], state: _ReadState) -> Verdicts | None:
    """Every SWE-bench verdict file among the files of the input ``spec``, merged (cached)."""
    if spec not in state.verdicts:
        merged: Verdicts | None = None
        for s, f, _ in files:
            if s != spec or log_format(f) != "swe_bench":
                continue
            try:
                found = read_swe_bench_report(f)
            except ValueError:
                continue  # a results.json of something else: not a verdict
            if merged is None:
                merged = Verdicts(shape=found.shape, default=found.default)
            merged.update(found)
            merged.default = merged.default if found.default is None else found.default
        state.verdicts[spec] = merged
    return state.verdicts[spec]


def _verdict_rows(path: Path) -> FileRows:
    """A verdict file read on its own: one outcome per instance it lists."""
    v = read_swe_bench_report(path)
    system = verdict_system(path, v)
    rows = [{"system": system, "task": i, "session": "1", "budget": float("nan"), "score": float(r),
             "source": path.name} for i, r in v.items()]
    return FileRows(rows, [], [], {"format": "swe_bench", "model": system, "shape": v.shape, "reported": v.reported})


def _traj_rows(fmt: str, spec: str, path: Path, opts: LogOptions, files: Sequence[tuple[str, Path, bool]],
               state: _ReadState) -> FileRows:
    resolved: Mapping[str, bool] | bool | None = opts.resolved
    instance = path.name.removesuffix(".traj.json").removesuffix(".traj")
    if opts.resolved_ids is not None:
        resolved = {instance: instance in opts.resolved_ids}
    elif resolved is None:
        resolved = _verdicts_in(spec, files, state)
    if fmt == "swe_agent" and b"mini-swe-agent" in _head(path, 1 << 20):
        fmt = "mini_swe_agent"  # a mini-swe-agent trajectory renamed to .traj
    reader = mini_swe_agent_rows if fmt == "mini_swe_agent" else swe_agent_rows
    return reader(path, budget=opts.budget, resolved=resolved, session=path.parent.as_posix())


def _inspect_file(spec: str, path: Path, opts: LogOptions, state: _ReadState) -> FileRows | str:
    """An Inspect log's rows, or the note that it repeats a run already read in another format."""
    prefix = _session_prefix(path)
    if prefix in state.prefixes:
        prefix = path.as_posix()
    got = inspect_rows(path, budget=opts.budget, scorer=opts.scorer, include_scorer=opts.include_scorer,
                       metadata=opts.metadata, session_prefix=prefix)
    key = got.meta.get("run_key")
    if key is not None:
        seen = state.runs.get(key)
        if seen is not None and Path(seen).suffix != path.suffix:
            return (f"{path.name} is the same Inspect run as {Path(seen).name} (task_id {key[0]}, run_id {key[1]}), "
                    "written in another format (inspect log convert): read once")
        if seen is not None:
            got.notes.append(f"{path.name} repeats the Inspect run of {Path(seen).name} (task_id {key[0]}, run_id "
                             f"{key[1]}): a copy is read as another run of the same system")
        state.runs.setdefault(key, str(path))
    state.prefixes.add(prefix)
    return got


def _file_rows(fmt: str, spec: str, path: Path, opts: LogOptions, files: Sequence[tuple[str, Path, bool]],
               state: _ReadState) -> FileRows | str:
    if fmt == "inspect":
        return _inspect_file(spec, path, opts, state)
    if fmt in _TRAJ:
        return _traj_rows(fmt, spec, path, opts, files, state)
    if fmt == "swe_bench":
        return _verdict_rows(path)
    if fmt == "lm_eval":
        return FileRows(*lm_eval_rows(path, metric=opts.metric, metadata=opts.metadata, filter=opts.filter))
    if fmt == "mt_bench_single":
        return FileRows(*mt_bench_single_rows(path))
    if fmt == "table":
        from evalkit.io.traces import read_traces

        frame = read_traces(path, columns=dict(opts.columns) if opts.columns else None, budget_required=False)
        return FileRows(frame.to_dict("records"), [], [], {"format": "table"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_event_stream(path, budget=opts.budget, columns=opts.columns, keep=opts.metadata, strict=False)
    return FileRows(frame.to_dict("records"), [str(w.message) for w in caught], [], {"format": "events"})


def _unknown_format(path: Path, fmt: str | None) -> ValueError:
    if fmt == COMPARISON_LOG:
        return ValueError(f"{path.name} is a pairwise judgment log (Arena, MT-bench pair, AlpacaEval...), not a "
                          "harness log of runs: read it with `evalkit summary`, `evalkit rate` or `evalkit report`.")
    if fmt == "lm_eval_results":
        return ValueError(f"{path.name} is an lm-eval results file: pass the samples_*.jsonl beside it (lm_eval "
                          "--log_samples), or the folder holding both.")
    return ValueError(
        f"Cannot tell the log format of {path.name!r}: expected an Inspect log (.eval, or .json with an 'eval' "
        "header), a SWE-agent .traj, a mini-swe-agent .traj.json, a SWE-bench verdict file, lm-eval "
        "samples_*.jsonl, MT-bench single-answer judgments, an outcome table (system, task, score) or JSONL events.")


def iter_log_rows(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: LogOptions = LogOptions(), *,
    progress: ProgressFn | None = None,
) -> Iterator[tuple[Path, str | None, list[dict], list[str]]]:
    """Yield ``(file, format, rows, unscored)`` file by file; unknown files in folders have format None,
    SWE-bench verdict files used to score trajectories ``"swe_bench_report"`` and no rows.

    A generator: only one file's rows exist at a time unless the caller keeps them.
    """
    for path, fmt, got in _iter_files(inputs, options, progress=progress):
        yield path, fmt, (got.rows if got else []), (got.unscored if got else [])


def _iter_files(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: LogOptions, *,
    progress: ProgressFn | None = None,
) -> Iterator[tuple[Path, str | None, FileRows | None]]:
    """``(file, format, FileRows or None)``; format ``"skipped-duplicate"`` carries its note as the only note."""
    _check_unit(options.budget)
    files = expand_paths(inputs)
    state = _ReadState()
    fmts = [log_format(path) for _, path, _ in files]
    state.traj_specs = {spec for (spec, _, _), fmt in zip(files, fmts, strict=True) if fmt in _TRAJ}
    for i, ((spec, path, explicit), fmt) in enumerate(zip(files, fmts, strict=True)):
        if fmt is not None and fmt not in LOG_FORMATS and not explicit:
            fmt = "lm_eval_results" if fmt == "lm_eval_results" else None  # judgment logs in folders: skipped
            yield path, fmt, None
        elif fmt is None or fmt not in LOG_FORMATS:
            if explicit:
                raise _unknown_format(path, fmt)
            yield path, None, None
        elif fmt == "swe_bench" and spec in state.traj_specs and not explicit:
            yield path, "swe_bench_report", None  # scores the trajectories beside it
        else:
            got = _file_rows(fmt, spec, path, options, files, state)
            if isinstance(got, str):
                yield path, "skipped-duplicate", FileRows([], [], [got], {})
            else:
                for r in got.rows:
                    r["input"] = spec
                yield path, fmt, got
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
        The validated session table (budget NaN where a log does not record the unit) with
        ``input`` (the argument each row came from) and the per-format columns. ``attrs``:
        ``files`` (per-format counts), ``skipped`` (files of no known log format inside
        folders), ``unscored`` (sessions without a score, also warned), ``notes`` (what the
        user should know: a cancelled run, calls without usage...; also warned) and
        ``reported`` (per input and system, the harness's own headline where its log has one).

    Raises
    ------
    ValueError
        When no file holds a scored submission, or as the readers do.
    """
    opts = options if options is not None else LogOptions(**kwargs)  # type: ignore[arg-type]
    columns: dict[str, list] = {}  # column-wise, strings interned: 240,000 rows of 10,000 logs stay small
    n_rows = 0
    unscored: list[str] = []
    notes: list[str] = []
    counts: dict[str, int] = {}
    skipped: list[str] = []
    reported: list[dict] = []
    for path, fmt, got in _iter_files(inputs, opts, progress=progress):
        if fmt is None:
            skipped.append(str(path))
            continue
        counts[fmt] = counts.get(fmt, 0) + 1
        if got is None:
            continue
        n_rows = _append_columns(columns, n_rows, got.rows)
        unscored.extend(f"{path.name}: {u}" for u in got.unscored)
        notes.extend(got.notes)
        if got.meta.get("reported"):
            reported.append({"file": str(path), "format": fmt, "model": got.meta.get("model"),
                             "input": got.rows[0]["input"] if got.rows else None,
                             "system": got.rows[0]["system"] if got.rows else None, **_flat(got.meta)})
    counts.pop("lm_eval_results", None)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if unscored:
        warnings.warn(f"{len(unscored)} session(s) have no scored submission and are left out "
                      f"({list_ids(unscored, limit=3, sep='; ')}).", UserWarning, stacklevel=2)
    if not n_rows:
        raise ValueError(_nothing_scored(inputs, counts, skipped))
    frame = validate_traces(pd.DataFrame(columns), source=None, budget_required=False)
    frame.attrs.update(files=counts, skipped=skipped, unscored=unscored, notes=notes, reported=reported)
    return frame


def _flat(meta: Mapping[str, object]) -> dict[str, object]:
    """The headline a harness reported, as one flat dict (``reported`` of the reader's meta)."""
    rep = meta.get("reported") or {}
    out: dict[str, object] = {k: meta[k] for k in ("task", "filter", "shape") if meta.get(k) is not None}
    if isinstance(rep, Mapping) and rep and all(isinstance(v, Mapping) for v in rep.values()):  # Inspect: per scorer
        out["scores"] = {str(k): dict(v) for k, v in rep.items()}
    elif isinstance(rep, Mapping):
        out.update(rep)
    return out


def _nothing_scored(inputs: object, counts: Mapping[str, int], skipped: list[str]) -> str:
    names = _names(inputs)
    skip = f"; skipped {len(skipped)} file(s) of no known log format ({list_ids(skipped, limit=3)})" if skipped else ""
    if not counts:
        return f"Found no log file in {names}{skip}."
    n = sum(counts.values())
    return f"Found {n} log file(s) in {names}, but none has a scored submission{skip}."


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


#: The token split of a session, kept for pricing (evalkit.metrics.cost.apply_prices, --prices).
_SPLIT = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_KEEP = (*USAGE_COLUMNS, *_SPLIT, "total_time", "status", "model", "input", "api_calls")


def session_outcomes(traces: pd.DataFrame, *, by: str | Sequence[str] = ()) -> pd.DataFrame:
    """Each session's final score: one row per (system, task, session) with the last submission's
    score (the harness's verdict), plus the first value of any ``by`` columns and the session's
    totals where the table has them.

    Returns
    -------
    pandas.DataFrame
        ``system, task, session, score, budget`` (budget at the final submission), ``by``
        columns, then those of ``tokens, tokens_total, cost, time, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, total_time, status, model, input, api_calls`` the
        table has.
    """
    keep = [by] if isinstance(by, str) else list(by)
    keep = [c for c in keep if c in traces.columns and c not in ("system", "task", "session", "score", "budget")]
    extra = [c for c in _KEEP if c in traces.columns and c not in keep]
    last = traces.groupby(["system", "task", "session"], sort=True, as_index=False).tail(1)
    return last[["system", "task", "session", "score", "budget", *keep, *extra]].reset_index(drop=True)


# ---- naming the systems of several runs ------------------------------------------------------------


def _path_name(run: str) -> str:
    p = Path(run)
    return (p.stem if p.is_file() else p.name) or run


def run_names(outcomes: pd.DataFrame, runs: Sequence[str], names: str | Sequence[str] | None, *,
              what: str = "names") -> dict[str, str]:
    """Run -> system name, the rule of ``evalkit compare`` and :func:`evalkit.compare_runs`.

    A run's system takes the model name its logs give (``outcomes["system"]`` of the rows whose
    ``input`` is the run: Inspect's ``eval.model``, lm-eval's ``model_name``, ...) when they give
    exactly one, else the run's file or folder name; ``names`` (a list, or ``"a,b"``) overrides;
    two runs with the same name are told apart by as much of their paths as differs
    (``mockllm/model (baseline)``). ``what`` names the option in errors (``--names`` for the CLI).
    """
    if names is not None:
        given = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n) for n in names]
        if len(given) != len(runs):
            raise ValueError(f"{what} gives {len(given)} names for {len(runs)} runs ({', '.join(runs)}).")
        if len(set(given)) < len(given):
            raise ValueError(f"{what} must name each run differently; got {given}.")
        return dict(zip(runs, given, strict=True))
    out = {}
    for r in runs:
        models = sorted(set(outcomes.loc[outcomes["input"] == r, "system"].astype(str)))
        out[r] = models[0] if len(models) == 1 else _path_name(r)
    dup = _duplicates(out)
    if dup:  # same name twice: add as much of each run's path as tells them apart (baseline/run-1, ...)
        base = dict(out)
        for k in range(1, 1 + max(len(Path(r).with_suffix("").parts) for r in dup)):
            tags = {r: "/".join(Path(r).with_suffix("").parts[-k:]) for r in dup}
            out = {r: (f"{base[r]} ({tags[r]})" if r in dup else v) for r, v in out.items()}
            if not _duplicates(out):
                break
    return out


def _duplicates(names: dict[str, str]) -> set[str]:
    count: dict[str, int] = {}
    for v in names.values():
        count[v] = count.get(v, 0) + 1
    return {r for r, v in names.items() if count[v] > 1}
