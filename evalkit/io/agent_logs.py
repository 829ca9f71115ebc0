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

import os
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.io._inspect import inspect_samples, inspect_session
from evalkit.io._json import read_json
from evalkit.io.traces import validate_traces

__all__ = [
    "BUDGET_UNITS", "read_inspect_log", "read_swe_agent_traj", "read_event_stream", "read_agent_logs",
    "inspect_rows", "swe_agent_rows", "finish_rows",
]

BUDGET_UNITS: tuple[str, ...] = ("tokens", "tokens_total", "cost", "time")
def _check_unit(budget: str) -> None:
    if budget not in BUDGET_UNITS:
        raise ValueError(f"budget must be one of {BUDGET_UNITS}; got {budget!r}.")


def inspect_rows(
    path: Path, *, budget: str = "tokens", scorer: str | None = None, system: str | None = None,
    include_scorer: bool = False, metadata: tuple[str, ...] = (), session_prefix: str | None = None,
) -> tuple[list[dict], list[str]]:
    """Rows (one dict per submission) and unscored session names of one Inspect log, sample by sample."""
    rows, unscored = [], []
    prefix = path.stem if session_prefix is None else session_prefix
    for ev, sample in inspect_samples(path):
        task = f"{ev.get('task')}/{sample.get('id')}"
        epoch = sample.get("epoch", 1)
        where = f"in sample {sample.get('id')!r} epoch {epoch} of {path.name}"
        subs, _ = inspect_session(sample, budget, scorer, include_scorer, where)
        if not subs:
            unscored.append(f"{task}#{epoch}")
        meta = sample.get("metadata") or {}
        extra = {k: meta.get(k) for k in metadata}
        for b, s in subs:
            rows.append({"system": system or ev.get("model"), "task": task, "session": f"{prefix}:{epoch}",
                         "budget": b, "score": s, "source": path.name, "epoch": epoch, **extra})
    return rows, unscored


def read_inspect_log(
    path: str | os.PathLike[str],
    *,
    budget: str = "tokens",
    scorer: str | None = None,
    system: str | None = None,
    include_scorer: bool = False,
    metadata: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Read an Inspect AI log (``.json`` or zipped ``.eval``) into a session table.

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
        False: the budget is what the agent spent.
    metadata : tuple of str
        Sample metadata fields to copy into columns of the same name (e.g. a task family to
        cluster on); absent fields are missing values.

    Returns
    -------
    pandas.DataFrame
        One row per submission: intermediate score events at the budget spent so far, and
        the final score at the budget spent by the end. ``task`` is ``<eval task>/<sample
        id>``, ``session`` is ``<file stem>:<epoch>``; an ``epoch`` column follows the
        canonical ones. Samples are read one at a time (a ``.eval`` zip is never loaded whole).
    """
    _check_unit(budget)
    path = Path(path)
    if not path.exists():
        raise ValueError(f"No such file: {str(path)!r}.")
    rows, unscored = inspect_rows(path, budget=budget, scorer=scorer, system=system,
                                  include_scorer=include_scorer, metadata=tuple(metadata))
    return finish_rows(rows, unscored, path.name)


def finish_rows(rows: list[dict], unscored: list[str], source: str) -> pd.DataFrame:
    """Validate reader rows as a session table, warning once about (and counting) unscored sessions."""
    if unscored:
        shown = ", ".join(unscored[:3]) + (" ..." if len(unscored) > 3 else "")
        warnings.warn(f"{len(unscored)} session(s) in {source} have no scored submission and are left out ({shown}).",
                      UserWarning, stacklevel=3)
    if not rows:
        raise ValueError(f"{source} has no scored submission.")
    return validate_traces(pd.DataFrame.from_records(rows), source=source)


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
    _check_unit(budget)
    path = Path(path)
    if not path.exists():
        raise ValueError(f"No such file: {str(path)!r}.")
    rows, unscored = swe_agent_rows(path, budget=budget, resolved=resolved, system=system, session=session)
    if unscored:
        raise ValueError(f"resolved has no entry for instance {unscored[0]!r} ({path.name}).")
    return finish_rows(rows, [], path.name)


def swe_agent_rows(
    path: Path, *, budget: str = "tokens", resolved: bool | float | Mapping[str, bool] | None = None,
    system: str | None = None, session: str = "0",
) -> tuple[list[dict], list[str]]:
    """The one submission of a ``.traj`` file; an instance the ``resolved`` mapping lacks is unscored."""
    traj = read_json(path, "a SWE-agent trajectory")
    stats = (traj.get("info") or {}).get("model_stats") if isinstance(traj, dict) else None
    if not stats:
        raise ValueError(f"{path.name} has no info.model_stats; is it a SWE-agent trajectory?")
    if budget == "tokens":
        spent = float(stats["tokens_sent"]) + float(stats["tokens_received"])
    elif budget == "cost":
        spent = float(stats.get("instance_cost", stats.get("total_cost")))
    else:
        raise ValueError(
            f"SWE-agent's model_stats record no {budget!r} (it has {sorted(stats)}); use budget='tokens' or 'cost'."
        )
    instance = path.stem
    if resolved is None:
        raise ValueError(
            f"{path.name} carries no score: SWE-agent's result (resolved or not) lives in the "
            "SWE-bench report. Pass resolved=True/False or a mapping instance id -> resolved."
        )
    value: bool | float
    if isinstance(resolved, Mapping):
        if instance not in resolved:
            return [], [instance]
        value = resolved[instance]
    else:
        value = resolved
    name = system or path.parent.name
    return [{"system": name, "task": instance, "session": session, "budget": spent, "score": float(value),
             "source": path.name}], []


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
) -> pd.DataFrame:
    """Read a generic JSONL event stream: per-event usage, optional scored submissions.

    Each line is one event of a session, in time order, with ``system``, ``task``
    (optional), ``session`` and any of ``input_tokens``, ``output_tokens``,
    ``cache_read_tokens`` / ``cache_write_tokens`` (or Inspect's / Anthropic's names),
    ``total_tokens``, ``cost``, ``time`` (seconds, or ISO-8601 timestamps) and ``score``.
    The budget of a submission (an event with a score) is the session's cumulative usage
    up to and including that event; for ``"time"``, seconds since the session's first event.

    Parameters
    ----------
    path : path or pandas.DataFrame
    budget : {"tokens", "tokens_total", "cost", "time"}
    columns : mapping, optional
        Canonical name -> your field name (e.g. ``{"session": "run_id", "score": "reward"}``).
    keep : tuple of str
        Further fields to carry into the table (e.g. a task family to cluster on).
    """
    _check_unit(budget)
    ev, source = _load_events(path, columns)
    amount = _event_amount(ev, budget, source)
    ev["budget"] = amount.groupby(_session_key(ev)).cumsum() if budget != "time" else amount
    scored = pd.to_numeric(ev["score"], errors="coerce").notna()
    extra = [c for c in keep if c in ev.columns and c not in ("system", "task", "session", "budget", "score")]
    out = ev.loc[scored, ["system", "task", "session", "budget", "score", "line", *extra]]
    return finish_rows(out.assign(source=source).to_dict("records"), _unscored_sessions(ev, scored), source)


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
