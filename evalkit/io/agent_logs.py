"""Readers that turn real agent logs into the session table, accumulating the budget themselves.

Every reader returns the table of :mod:`evalkit.io.traces` (``system, task, session, budget,
score``) and takes an explicit budget unit, because on cached runs they differ twentyfold:

=================  ===========================================================================
``budget=``        meaning
=================  ===========================================================================
``"tokens"``       input + output tokens as logged (note: Anthropic's ``input_tokens`` exclude
                   cache reads/writes, OpenAI's include cache reads)
``"tokens_total"`` every token processed, including cache reads and writes (``total_tokens``)
``"cost"``         money, where the log records it
``"time"``         working (wall-clock minus waiting) seconds since the session started
=================  ===========================================================================

A unit the log does not record raises a ValueError naming the units it does record.
Sessions without a scored submission are left out with a warning that counts them.

Formats: Inspect AI logs (``.json`` and the zipped ``.eval``; one session per sample and
epoch, the task is ``<eval task>/<sample id>``, budget summed over model calls outside
scorers), SWE-agent trajectories (``.traj``; ``model_stats`` totals, the score comes from the
separate SWE-bench report), and a generic JSONL event stream.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalkit._errors import list_ids
from evalkit.io._inspect import NAN, inspect_samples, inspect_session
from evalkit.io._json import read_json
from evalkit.io.traces import validate_traces

__all__ = [
    "BUDGET_UNITS", "USAGE_COLUMNS", "FileRows", "read_inspect_log", "read_swe_agent_traj",
    "read_mini_swe_agent_traj", "read_event_stream", "read_agent_logs", "inspect_rows", "swe_agent_rows",
    "mini_swe_agent_rows", "finish_rows",
]

BUDGET_UNITS: tuple[str, ...] = ("tokens", "tokens_total", "cost", "time")
#: Per-session totals every reader adds where its log records them (NaN where not).
USAGE_COLUMNS: tuple[str, ...] = ("tokens", "tokens_total", "cost", "time")


class FileRows(NamedTuple):
    """One log file read: rows (one per submission), unscored sessions, notes for the user (a cancelled
    run, calls without usage...) and facts about the file (``meta``: the harness's own headline, the
    run's identity, the model)."""

    rows: list[dict]
    unscored: list[str]
    notes: list[str] = []
    meta: dict = {}


def _check_unit(budget: str) -> None:
    if budget not in BUDGET_UNITS:
        raise ValueError(f"budget must be one of {BUDGET_UNITS}; got {budget!r}.")


def _inspect_notes(path: Path, header: dict, n_samples: int, no_usage: list[str], errors: list[str]) -> list[str]:
    """What a reader of this log should know before trusting its scores."""
    notes = []
    status = header.get("status") or "success"
    if status != "success":
        total = ((header.get("eval") or {}).get("dataset") or {}).get("samples")
        of = f" of {total}" if isinstance(total, int) else ""
        err = header.get("error")
        why = f"; error: {str((err or {}).get('message', err))[:120]}" if err else ""
        notes.append(f"{path.name}: the run's status is '{status}' ({n_samples}{of} samples logged{why}); its "
                     "scores are what was logged, not a finished run's result.")
    if no_usage:
        notes.append(f"{path.name}: {len(no_usage)} scored sample(s) have model calls without token usage "
                     f"({list_ids(no_usage, limit=3)}); their token budget is unknown (NaN), not 0.")
    if errors:
        notes.append(f"{path.name}: {len(errors)} sample(s) ended with an error ({list_ids(errors, limit=3)}); "
                     "their scores are what the scorer gave the unfinished sample.")
    return notes


def _reported(header: dict) -> dict[str, dict[str, float]]:
    """The harness's own headline: ``{scorer: {metric: value}}`` from the log's ``results``."""
    out: dict[str, dict[str, float]] = {}
    for sc in (header.get("results") or {}).get("scores") or []:
        metrics = {k: m.get("value") for k, m in (sc.get("metrics") or {}).items() if isinstance(m, dict)}
        out[str(sc.get("name"))] = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
    return out


def inspect_rows(
    path: Path, *, budget: str = "tokens", scorer: str | None = None, system: str | None = None,
    include_scorer: bool = False, metadata: tuple[str, ...] = (), session_prefix: str | None = None,
) -> FileRows:
    """Rows (one dict per submission), unscored sessions, notes and facts of one Inspect log, sample by sample.

    Every row carries the session's totals (``tokens``, ``tokens_total``, ``cost``, ``time``,
    ``total_time``; NaN where the log does not record them), the run's ``status`` and the sample's
    ``error`` (None when it finished).
    """
    rows, unscored, no_usage, errors = [], [], [], []
    prefix = path.stem if session_prefix is None else session_prefix
    header: dict = {}
    n_samples = 0
    usage_keys: set[str] = set()
    for header, sample in inspect_samples(path):
        ev = header.get("eval") or {}
        n_samples += 1
        task = f"{ev.get('task')}/{sample.get('id')}"
        epoch = sample.get("epoch", 1)
        where = f"in sample {sample.get('id')!r} epoch {epoch} of {path.name}"
        read = inspect_session(sample, budget, scorer, include_scorer, where)
        for u in (sample.get("model_usage") or {}).values():
            usage_keys.update(u or {})
        if not read.subs:
            unscored.append(f"{task}#{epoch}")
        elif read.calls_without_usage:
            no_usage.append(f"{task}#{epoch}")
        if read.error:
            errors.append(f"{task}#{epoch}")
        meta = sample.get("metadata") or {}
        extra = {k: meta.get(k) for k in metadata}
        for b, s in read.subs:
            rows.append({"system": system or ev.get("model"), "task": task, "session": f"{prefix}:{epoch}",
                         "budget": b, "score": s, "source": path.name, "epoch": epoch, "tokens": read.tokens,
                         "tokens_total": read.tokens_total, "cost": read.cost, **read.split, "time": read.time,
                         "total_time": read.total_time, "status": header.get("status") or "success",
                         "error": read.error, "model": ev.get("model"), **extra})
    if not header:
        header = _header_only(path)
    ev = header.get("eval") or {}
    run_key = (ev.get("task_id"), ev.get("run_id"), ev.get("created")) if ev.get("run_id") else None
    info = {"format": "inspect", "model": ev.get("model"), "task": ev.get("task"), "run_key": run_key,
            "status": header.get("status") or "success", "reported": _reported(header), "usage_keys": sorted(usage_keys)}
    return FileRows(rows, unscored, _inspect_notes(path, header, n_samples, no_usage, errors), info)


def _header_only(path: Path) -> dict:
    from evalkit.io._inspect import inspect_header

    return inspect_header(path)


def read_inspect_log(
    path: str | os.PathLike[str],
    *,
    budget: str = "tokens",
    scorer: str | None = None,
    system: str | None = None,
    include_scorer: bool = False,
    metadata: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Read an Inspect AI log (``.json`` or zipped ``.eval``, any version) into a session table.

    Parameters
    ----------
    path : path
    budget : {"tokens", "tokens_total", "cost", "time"}
        Budget unit (see the module table); ``"time"`` is the working time at the end of the
        last model call.
    scorer : str, optional
        Which scorer's value is the score (default: the sample's first scorer).
    system : str, optional
        System name (default: the eval's model).
    include_scorer : bool
        Count model calls made by scorers (model-graded scoring) in the budget. Default
        False: the budget is what the agent spent. Scorer regions are spans (current logs) or
        ``step`` events (logs written before spans existed).
    metadata : tuple of str
        Sample metadata fields to copy into columns of the same name (e.g. a task family to
        cluster on); absent fields are missing values.

    Returns
    -------
    pandas.DataFrame
        One row per submission: intermediate score events at the budget spent so far, and
        the final score at the budget spent by the end. ``task`` is ``<eval task>/<sample
        id>``, ``session`` is ``<file stem>:<epoch>``; then ``epoch``, the session totals
        ``tokens, tokens_total, cost, time, total_time``, ``status`` (the run's) and ``error``
        (the sample's). A run that did not end in ``success`` and a scored sample whose model
        calls lack usage are warned about; samples are read one at a time.

    Raises
    ------
    ValueError
        For a unit the log does not record at all (naming what its usage has), or a log with
        no scored sample.
    """
    _check_unit(budget)
    path = Path(path)
    if not path.exists():
        raise ValueError(f"No such file: {str(path)!r}.")
    got = inspect_rows(path, budget=budget, scorer=scorer, system=system, include_scorer=include_scorer,
                       metadata=tuple(metadata))
    if got.rows and budget == "cost" and all(math.isnan(r["budget"]) for r in got.rows):
        raise ValueError(f"The log records no cost in {path.name}; its usage has {got.meta['usage_keys']}. "
                         "Use budget='tokens', 'tokens_total' or 'time'.")
    for note in got.notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    return finish_rows(got.rows, got.unscored, path.name)


def finish_rows(rows: list[dict], unscored: list[str], source: str) -> pd.DataFrame:
    """Validate reader rows as a session table, warning once about (and counting) unscored sessions."""
    if unscored:
        warnings.warn(f"{len(unscored)} session(s) in {source} have no scored submission and are left out "
                      f"({list_ids(unscored, limit=3)}).", UserWarning, stacklevel=3)
    if not rows:
        raise ValueError(f"{source} has no scored submission.")
    return validate_traces(pd.DataFrame.from_records(rows), source=source, budget_required=False)


def read_swe_agent_traj(
    path: str | os.PathLike[str],
    *,
    budget: str = "tokens",
    resolved: bool | float | Mapping[str, bool] | None = None,
    system: str | None = None,
    session: str = "0",
) -> pd.DataFrame:
    """Read a SWE-agent trajectory (``.traj``): one submission at the session's total budget.

    Parameters
    ----------
    path : path
    budget : {"tokens", "cost"}
        ``tokens_sent + tokens_received`` or ``instance_cost`` from ``info.model_stats``;
        SWE-agent logs neither cache tokens nor time.
    resolved : bool, float or mapping
        The score: SWE-agent does not know whether its patch resolves the issue (that is
        in the SWE-bench report). A value, or a mapping instance id -> resolved.
    system : str, optional
        Default: the name of the folder holding the file (SWE-agent names it after the run).
    session : str
        Session id (default ``"0"``).
    """
    got, path = _one_trajectory(swe_agent_rows, path, budget=budget, resolved=resolved, system=system,
                                session=session)
    if budget not in ("tokens", "cost"):
        raise ValueError(f"SWE-agent's model_stats record no {budget!r} (it has {got.meta['stats_keys']}); "
                         "use budget='tokens' or 'cost'.")
    return finish_rows(got.rows, [], path.name)


def _verdict(instance: str, resolved: bool | float | Mapping[str, bool] | None, path: Path) -> float | None:
    """The score of ``instance``: a value for all, or its entry in a verdict mapping (None when absent)."""
    if resolved is None:
        raise ValueError(
            f"{path.name} carries no score: SWE-agent's result (resolved or not) lives in the "
            "SWE-bench report. Pass resolved=True/False or a mapping instance id -> resolved."
        )
    if isinstance(resolved, Mapping):
        if instance in resolved:
            return float(resolved[instance])
        default = getattr(resolved, "default", None)
        return None if default is None else float(default)
    return float(resolved)


def swe_agent_rows(
    path: Path, *, budget: str = "tokens", resolved: bool | float | Mapping[str, bool] | None = None,
    system: str | None = None, session: str = "0",
) -> FileRows:
    """The one submission of a ``.traj`` file; an instance the ``resolved`` mapping lacks is unscored."""
    traj = read_json(path, "a SWE-agent trajectory")
    info = (traj.get("info") or {}) if isinstance(traj, dict) else {}
    stats = info.get("model_stats")
    if not stats:
        raise ValueError(f"{path.name} has no info.model_stats; is it a SWE-agent trajectory?")
    sent, received = float(stats.get("tokens_sent", NAN)), float(stats.get("tokens_received", NAN))
    usage = {"tokens": sent + received, "tokens_total": NAN,
             "cost": float(stats.get("instance_cost", stats.get("total_cost", NAN))), "time": NAN,
             "input_tokens": sent, "output_tokens": received}
    instance = path.stem
    value = _verdict(instance, resolved, path)
    meta = {"format": "swe_agent", "model": None, "stats_keys": sorted(stats)}
    if value is None:
        return FileRows([], [instance], [], meta)
    name = system or path.parent.name
    return FileRows([{"system": name, "task": instance, "session": session, "budget": usage[budget],
                      "score": value, "source": path.name, **usage, "api_calls": stats.get("api_calls"),
                      "status": info.get("exit_status")}], [], [], meta)


def _mini_usage(traj: Mapping) -> dict[str, float]:
    """Tokens (prompt + completion), every token, and the split for pricing (input without the cache reads
    OpenAI's ``prompt_tokens`` include, output, cache reads from ``prompt_tokens_details.cached_tokens``), summed
    over the model responses a mini-swe-agent trajectory keeps in ``messages[].extra.response.usage`` (NaN when
    a response lacks usage)."""
    out = dict.fromkeys(("tokens", "tokens_total", "input_tokens", "output_tokens", "cache_read_tokens"), 0.0)
    for m in traj.get("messages") or []:
        resp = ((m.get("extra") or {}).get("response") or {}) if isinstance(m, Mapping) else {}
        if not resp:
            continue
        usage = resp.get("usage")
        if not usage:
            return dict.fromkeys(out, NAN)
        prompt, completion = float(usage.get("prompt_tokens") or 0), float(usage.get("completion_tokens") or 0)
        details = usage.get("prompt_tokens_details")
        cached = float((details.get("cached_tokens") if isinstance(details, Mapping) else 0) or 0)
        out["tokens"] += prompt + completion
        out["tokens_total"] += float(usage.get("total_tokens") or 0)
        out["input_tokens"] += prompt - cached
        out["output_tokens"] += completion
        out["cache_read_tokens"] += cached
    return out


def mini_swe_agent_rows(
    path: Path, *, budget: str = "tokens", resolved: bool | float | Mapping[str, bool] | None = None,
    system: str | None = None, session: str = "0",
) -> FileRows:
    """The one submission of a mini-swe-agent ``*.traj.json`` (``trajectory_format: mini-swe-agent-*``).

    Cost and API calls come from ``info.model_stats`` (``instance_cost``, ``api_calls``), tokens
    from the per-response usage the trajectory keeps; the model from ``info.config.model.model_name``;
    ``exit_status`` becomes ``status``. The score, as for SWE-agent, comes from a SWE-bench verdict.
    """
    traj = read_json(path, "a mini-swe-agent trajectory")
    if not isinstance(traj, dict) or not str(traj.get("trajectory_format", "")).startswith("mini-swe-agent"):
        raise ValueError(f"{path.name} is not a mini-swe-agent trajectory (no trajectory_format "
                         "'mini-swe-agent-*').")
    info = traj.get("info") or {}
    stats = info.get("model_stats") or {}
    model = ((info.get("config") or {}).get("model") or {}).get("model_name")
    usage = {**_mini_usage(traj), "cost": float(stats.get("instance_cost", NAN)), "time": NAN}
    instance = str(traj.get("instance_id") or path.name.removesuffix(".traj.json"))
    value = _verdict(instance, resolved, path)
    meta = {"format": "mini_swe_agent", "model": model}
    if value is None:
        return FileRows([], [instance], [], meta)
    name = system or model or path.parent.name
    return FileRows([{"system": name, "task": instance, "session": session, "budget": usage[budget],
                      "score": value, "source": path.name, **usage, "api_calls": stats.get("api_calls"),
                      "status": info.get("exit_status"), "model": model}], [], [], meta)


def read_mini_swe_agent_traj(
    path: str | os.PathLike[str], *, budget: str = "tokens",
    resolved: bool | float | Mapping[str, bool] | None = None, system: str | None = None, session: str = "0",
) -> pd.DataFrame:
    """Read one mini-swe-agent trajectory (``*.traj.json``); see :func:`mini_swe_agent_rows`."""
    got, path = _one_trajectory(mini_swe_agent_rows, path, budget=budget, resolved=resolved, system=system,
                                session=session)
    return finish_rows(got.rows, [], path.name)


def _one_trajectory(reader: Any, path: str | os.PathLike[str], *, budget: str, **kwargs: Any) -> tuple[FileRows, Path]:
    """One trajectory read by ``reader``; an instance its verdicts lack is an error (one file, named)."""
    _check_unit(budget)
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No such file: {str(p)!r}.")
    got = reader(p, budget=budget, **kwargs)
    if got.unscored:
        raise ValueError(f"resolved has no entry for instance {got.unscored[0]!r} ({p.name}).")
    return got, p


_EVENT_ALIASES = {
    "cache_read": ("input_tokens_cache_read", "cache_read_tokens", "cache_read_input_tokens"),
    "cache_write": ("input_tokens_cache_write", "cache_write_tokens", "cache_creation_input_tokens"),
}


def read_event_stream(
    path: str | os.PathLike[str] | pd.DataFrame,
    *,
    budget: str = "tokens",
    columns: Mapping[str, str] | None = None,
    keep: tuple[str, ...] = (),
    strict: bool = True,
) -> pd.DataFrame:
    """Read a generic JSONL event stream: per-event usage, optional scored submissions.

    Each line is one event of a session, in time order, with ``system``, ``task``
    (optional), ``session`` and any of ``input_tokens``, ``output_tokens``,
    ``cache_read_tokens`` / ``cache_write_tokens`` (or Inspect's / Anthropic's names),
    ``total_tokens``, ``cost``, ``time`` (seconds, or ISO-8601 timestamps) and ``score``.
    The budget of a submission (an event with a score) is the session's cumulative usage
    up to and including that event; for ``"time"``, seconds since the session's first event.
    Every row also carries the cumulative ``tokens``, ``tokens_total``, ``cost`` and ``time``
    the stream records (NaN for what it does not).

    Parameters
    ----------
    path : path or pandas.DataFrame
    budget : {"tokens", "tokens_total", "cost", "time"}
    columns : mapping, optional
        Canonical name -> your field name (e.g. ``{"session": "run_id", "score": "reward"}``).
    keep : tuple of str
        Further fields to carry into the table (e.g. a task family to cluster on).
    strict : bool
        Raise when the stream does not record the ``budget`` unit (default); False leaves the
        budget missing (NaN), for analyses that do not use it (``evalkit compare``).
    """
    _check_unit(budget)
    ev, source = _load_events(path, columns)
    key = _session_key(ev)
    for unit in BUDGET_UNITS:
        try:
            amount = _event_amount(ev, unit, source)
        except ValueError:
            if strict and unit == budget:
                raise
            ev[f"_{unit}"] = np.nan
            continue
        ev[f"_{unit}"] = amount.groupby(key).cumsum() if unit != "time" else amount
    ev["budget"] = ev[f"_{budget}"]
    split = _split_columns(ev, key)
    scored = pd.to_numeric(ev["score"], errors="coerce").notna()
    extra = [c for c in keep if c in ev.columns and c not in ("system", "task", "session", "budget", "score")]
    out = ev.loc[scored, ["system", "task", "session", "budget", "score", "line", *extra,
                          *(f"_{u}" for u in (*USAGE_COLUMNS, *split))]]
    out = out.rename(columns={f"_{u}": u for u in (*USAGE_COLUMNS, *split)})
    return finish_rows(out.assign(source=source).to_dict("records"), _unscored_sessions(ev, scored), source)


def _split_columns(ev: pd.DataFrame, key: list[pd.Series]) -> list[str]:
    """Add the cumulative input, output, cache-read and cache-write tokens the stream records (``_<column>``, for
    pricing with --prices); return the columns added."""
    added = []
    for col, names in (("input_tokens", ("input_tokens",)), ("output_tokens", ("output_tokens",)),
                       ("cache_read_tokens", _EVENT_ALIASES["cache_read"]),
                       ("cache_write_tokens", _EVENT_ALIASES["cache_write"])):
        hit = [n for n in names if n in ev.columns]
        if hit:
            ev[f"_{col}"] = pd.to_numeric(ev[hit[0]], errors="coerce").fillna(0.0).groupby(key).cumsum()
            added.append(col)
    return added


def _load_events(path: str | os.PathLike[str] | pd.DataFrame,
                 columns: Mapping[str, str] | None) -> tuple[pd.DataFrame, str]:
    """The events with canonical field names, 1-based ``line``, ``task`` and ``score``; and the source name."""
    if isinstance(path, pd.DataFrame):
        ev, source = path.copy(), "event stream"
    else:
        p = Path(path)
        if not p.exists():
            raise ValueError(f"No such file: {str(p)!r}.")
        import io

        from evalkit.io._json import (
            check_file,  # bytes held, lines and nesting bounded before pandas
        )

        ev, source = pd.read_json(io.BytesIO(check_file(p, "jsonl")), lines=True, dtype=False), p.name
    if columns:
        ev = ev.rename(columns={v: k for k, v in columns.items()})
    ev["line"] = np.arange(1, len(ev) + 1)
    for need in ("system", "session"):
        if need not in ev.columns:
            raise ValueError(f"The event stream {source} lacks the {need!r} field (it has {sorted(map(str, ev.columns))}); "
                             "map yours with columns=.")
    if "task" not in ev.columns:
        ev["task"] = "all"
    if "score" not in ev.columns:
        ev["score"] = np.nan
    return ev, source


def _session_key(ev: pd.DataFrame) -> list[pd.Series]:
    """The (system, task, session) group keys of the events, as strings."""
    return [ev["system"].astype(str), ev["task"].astype(str), ev["session"].astype(str)]


def _event_amount(ev: pd.DataFrame, budget: str, source: str) -> pd.Series:
    """Each event's usage in the ``budget`` unit; for ``"time"``, seconds since the session's first event."""
    num: dict[str, pd.Series] = {
        c: pd.to_numeric(ev[c], errors="coerce").fillna(0.0) for c in ev.columns
        if c in ("input_tokens", "output_tokens", "total_tokens", "cost")}
    for canon, names in _EVENT_ALIASES.items():
        hit = [n for n in names if n in ev.columns]
        num[canon] = pd.to_numeric(ev[hit[0]], errors="coerce").fillna(0.0) if hit else pd.Series(0.0, index=ev.index)
    if budget in ("tokens", "tokens_total"):
        return _token_amount(ev, num, budget, source)
    if budget == "cost":
        if "cost" not in num:
            raise ValueError(f"The event stream {source} has no 'cost' field; it has {list(ev.columns)}.")
        return num["cost"]
    return _elapsed_time(ev, source)


def _token_amount(ev: pd.DataFrame, num: dict, budget: str, source: str) -> pd.Series:
    """Input + output tokens per event, plus cache reads and writes for ``"tokens_total"``."""
    zero = pd.Series(0.0, index=ev.index)
    if "input_tokens" not in num and "output_tokens" not in num and "total_tokens" not in num:
        raise ValueError(f"The event stream {source} has no token fields (input_tokens, output_tokens, total_tokens); it has {list(ev.columns)}.")
    amount = num.get("input_tokens", zero) + num.get("output_tokens", zero)
    if budget == "tokens_total":
        amount = num["total_tokens"] if "total_tokens" in num else amount + num["cache_read"] + num["cache_write"]
    return amount


def _elapsed_time(ev: pd.DataFrame, source: str) -> pd.Series:
    """Seconds since each session's first event, from seconds or ISO-8601 timestamps."""
    if "time" not in ev.columns:
        raise ValueError(f"The event stream {source} has no 'time' field; it has {list(ev.columns)}.")
    t = pd.to_numeric(ev["time"], errors="coerce")
    if t.isna().any():
        stamp = pd.to_datetime(ev["time"], utc=True, errors="coerce")
        t = (stamp - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    if t.isna().any():
        raise ValueError(f"The 'time' field of {source} must be seconds or ISO-8601 timestamps.")
    return t - t.groupby(_session_key(ev)).transform("first")


def _unscored_sessions(ev: pd.DataFrame, scored: pd.Series) -> list[str]:
    """Names ``system/task/session`` of the sessions without any scored event."""
    sess = ev[["system", "task", "session"]].astype(str).agg("\x1f".join, axis=1)
    has = scored.groupby(sess).any()
    return [s.replace("\x1f", "/") for s in has.index[~has.to_numpy()]]


def read_agent_logs(paths: str | os.PathLike[str] | list, *, budget: str = "tokens", **kwargs) -> pd.DataFrame:
    """Read one or several agent logs, choosing the reader from the suffix.

    ``.eval`` / ``.json`` -> :func:`read_inspect_log`, ``.traj`` -> :func:`read_swe_agent_traj`,
    ``.jsonl`` -> :func:`read_event_stream`; extra keyword arguments go to the reader.
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    frames = []
    for item in items:
        p = Path(item)
        suffix = p.suffix.lower()
        if suffix in (".eval", ".json"):
            frames.append(read_inspect_log(p, budget=budget, **kwargs))
        elif suffix == ".traj":
            frames.append(read_swe_agent_traj(p, budget=budget, **kwargs))
        elif suffix in (".jsonl", ".ndjson"):
            frames.append(read_event_stream(p, budget=budget, **kwargs))
        else:
            raise ValueError(f"Cannot tell the log format of {p.name!r}; expected .eval, .json, .traj or .jsonl.")
    return validate_traces(pd.concat(frames, ignore_index=True))
