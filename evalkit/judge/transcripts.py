"""Transcripts to judge: the text of each agent run, read from the logs evalkit reads.

Files, folders and globs are expanded and recognised as :func:`evalkit.io.logs.read_logs` does
(:func:`evalkit.io.logs.expand_paths`, :func:`evalkit.io.logs.log_format`), and every run is named
as the session table names it, so that a judged transcript and the same run in ``evalkit compare``
agree:

=============  =================================  ======================  =========================
format         system                             task                    run
=============  =================================  ======================  =========================
``inspect``    the eval's model                   ``<eval task>/<id>``    ``<file stem>:<epoch>``
``swe_agent``  the folder holding the ``.traj``   the instance id (stem)  the folder
``lm_eval``    ``model_name`` of the results      ``<task>/<doc_id>``     the file's date stamp
``events``     the ``system`` field               the ``task`` field      the ``session`` field
table          ``system`` column                  ``task`` column         ``run`` column (or row)
=============  =================================  ======================  =========================

The text is what the agent saw and did: Inspect's messages (role: content, tool calls included),
SWE-agent's thought / action / observation steps and its submission, lm-eval's prompt and
responses, the events' ``text`` / ``content`` / ``transcript`` fields in order. A *transcript
table* (CSV, JSONL or Parquet with ``system``, ``task`` and ``transcript`` columns; optional ``run``
and ``task_text``) is read as is. Each transcript is cut to ``max_chars`` (the middle is dropped
and marked), and hashed (SHA-256 of the text) for the judge cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Transcript", "read_transcripts", "TABLE_SUFFIXES", "DEFAULT_MAX_CHARS"]

#: Transcripts longer than this are cut in the middle (judges have finite context windows).
DEFAULT_MAX_CHARS = 24_000
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
_TEXT_FIELDS = ("transcript", "text", "content", "completion", "response", "output", "message")


@dataclass(frozen=True)
class Transcript:
    """One agent run on one task, as text.

    Attributes
    ----------
    id : str
        ``system | task | run``, unique among the transcripts read.
    system, task, run : str
    text : str
        The rendered transcript (cut to ``max_chars``).
    sha256 : str
        Hash of ``text``: the cache key of every judgement it enters.
    task_text : str
        The task's statement when the log records it (the first user message), else ``""``.
    source : str
        The file it came from.
    truncated : bool
    """

    id: str
    system: str
    task: str
    run: str
    text: str
    sha256: str
    task_text: str = ""
    source: str = ""
    truncated: bool = False


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, dict):
                kind = c.get("type")
                if kind in ("text", None):
                    parts.append(str(c.get("text", "")))
                elif kind == "reasoning":
                    parts.append(f"(reasoning) {c.get('reasoning', '')}")
                else:
                    parts.append(f"[{kind}]")
            else:
                parts.append(str(c))
        return "\n".join(p for p in parts if p)
    return str(content)


def _inspect_text(sample: dict) -> tuple[str, str]:
    lines, task_text = [], ""
    for m in sample.get("messages") or []:
        role = m.get("role", "?")
        body = _content_text(m.get("content"))
        if role == "user" and not task_text:
            task_text = body
        calls = m.get("tool_calls") or []
        for call in calls:
            body += f"\n[tool call {call.get('function')}] {json.dumps(call.get('arguments'), ensure_ascii=False)}"
        lines.append(f"{role}: {body}")
    if not lines:  # very old logs: input and output only
        task_text = _content_text(sample.get("input"))
        out = ((sample.get("output") or {}).get("choices") or [{}])[0].get("message", {})
        lines = [f"user: {task_text}", f"assistant: {_content_text(out.get('content'))}"]
    return "\n\n".join(lines), task_text


def _swe_agent_text(traj: dict) -> tuple[str, str]:
    steps = traj.get("trajectory") or []
    lines = []
    for k, s in enumerate(steps, start=1):
        lines.append(f"step {k}\nthought: {s.get('thought', '')}\naction: {s.get('action', '')}\n"
                     f"observation: {s.get('observation', '')}")
    sub = (traj.get("info") or {}).get("submission")
    if sub:
        lines.append(f"submission:\n{sub}")
    task_text = ""
    for m in traj.get("history") or []:
        if m.get("role") == "user":
            task_text = _content_text(m.get("content"))
            break
    if not steps:
        lines = [f"{m.get('role')}: {_content_text(m.get('content'))}" for m in traj.get("history") or []]
    return "\n\n".join(lines), task_text


def _cut(text: str, max_chars: int) -> tuple[str, bool]:
    if max_chars <= 0 or len(text) <= max_chars:
        return text, False
    keep = max_chars // 2
    dropped = len(text) - 2 * keep
    return f"{text[:keep]}\n\n[... {dropped} characters cut by evalkit judge ...]\n\n{text[-keep:]}", True


def _make(system: str, task: str, run: str, text: str, task_text: str, source: str, max_chars: int) -> Transcript:
    body, cut = _cut(text, max_chars)
    return Transcript(id=f"{system}|{task}|{run}", system=str(system), task=str(task), run=str(run), text=body,
                      sha256=hashlib.sha256(body.encode("utf-8")).hexdigest(), task_text=task_text,
                      source=source, truncated=cut)


def _inspect(path: Path, max_chars: int) -> Iterator[Transcript]:
    from evalkit.io._inspect import inspect_samples

    prefix = path.with_suffix("").as_posix()  # as read_logs names Inspect sessions
    for header, sample in inspect_samples(path):
        ev = header.get("eval") or {}
        text, task_text = _inspect_text(sample)
        yield _make(str(ev.get("model")), f"{ev.get('task')}/{sample.get('id')}", f"{prefix}:{sample.get('epoch', 1)}",
                    text, task_text, path.name, max_chars)


def _swe_agent(path: Path, max_chars: int) -> Iterator[Transcript]:
    from evalkit.io._json import read_json

    traj = read_json(path, "a SWE-agent trajectory")
    if not isinstance(traj, dict):
        raise ValueError(f"{path.name} is not a SWE-agent trajectory (a JSON object with 'trajectory').")
    text, task_text = _swe_agent_text(traj)
    yield _make(path.parent.name, path.stem, path.parent.as_posix(), text, task_text, path.name, max_chars)


def _lm_eval(path: Path, max_chars: int) -> Iterator[Transcript]:
    from evalkit.io.lm_eval import LM_EVAL_SAMPLES, _model_name, _task_name, results_for

    task, system = _task_name(path), _model_name(results_for(path)[0], path)  # the run with the same timestamp
    m = LM_EVAL_SAMPLES.match(path.name)
    run = m.group("date") if m else path.stem
    from evalkit.io._json import iter_jsonl

    for _, rec in iter_jsonl(path, "an lm-evaluation-harness sample"):  # one read: size, lines, nesting checked
        if not isinstance(rec, dict):
            raise ValueError(f"{path.name} holds a JSON {type(rec).__name__} where an lm-evaluation-harness sample "
                             "(an object) belongs.")
        args = rec.get("arguments")
        prompt = ""
        if isinstance(args, dict):
            first: object = next(iter(args.values()), {})
            prompt = str(first.get("arg_0", "")) if isinstance(first, dict) else str(first)
        elif isinstance(args, list) and args:
            prompt = str(args[0][0] if isinstance(args[0], list) else args[0])
        resps = rec.get("filtered_resps", rec.get("resps"))
        text = f"user: {prompt}\n\nassistant: {json.dumps(resps, ensure_ascii=False)}"
        yield _make(system, f"{task}/{rec.get('doc_id')}", run, text, prompt, path.name, max_chars)


def _events(path: Path, max_chars: int) -> Iterator[Transcript]:
    runs: dict[tuple[str, str, str], list[str]] = {}
    from evalkit.io._json import iter_jsonl

    for line_no, ev in iter_jsonl(path, "a JSONL event"):  # one read: size, lines, nesting checked
        if not isinstance(ev, dict) or "system" not in ev or "session" not in ev:
            raise ValueError(f"{path.name} line {line_no}: a JSONL event needs 'system' and 'session' fields "
                             f"(and 'task'); found {sorted(ev) if isinstance(ev, dict) else type(ev).__name__}.")
        key = (str(ev["system"]), str(ev.get("task", "task")), str(ev["session"]))
        text = next((ev[f] for f in _TEXT_FIELDS if ev.get(f) not in (None, "")), None)
        if text is not None:
            role = ev.get("role") or ev.get("type") or "event"
            runs.setdefault(key, []).append(f"{role}: {_content_text(text)}")
        else:
            runs.setdefault(key, [])
    for (system, task, session), lines in runs.items():
        yield _make(system, task, session, "\n\n".join(lines), "", path.name, max_chars)


def _table(path: Path, max_chars: int) -> Iterator[Transcript]:
    from evalkit.io._files import load_records

    frame, _ = load_records(path)
    cols = set(frame.columns)
    missing = [c for c in ("system", "task", "transcript") if c not in cols]
    if missing:
        raise ValueError(f"{path.name}: a transcript table needs the columns system, task and transcript (optional "
                         f"run, task_text); it lacks {missing} (it has {sorted(c for c in cols if c != '_line')}).")
    for k, row in enumerate(frame.to_dict("records")):
        run = row.get("run")
        run = str(k) if run is None or (isinstance(run, float) and run != run) else str(run)
        task_text = row.get("task_text")
        yield _make(str(row["system"]), str(row["task"]), run, str(row["transcript"]),
                    "" if task_text is None or task_text != task_text else str(task_text), path.name, max_chars)


def read_transcripts(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *, max_chars: int = DEFAULT_MAX_CHARS,
    names: Sequence[str] | None = None,
) -> list[Transcript]:
    """Read the transcripts of agent runs from harness logs or a transcript table.

    Parameters
    ----------
    inputs : path, glob, folder, or a list of them
    max_chars : int
        Longer transcripts are cut in the middle (0: never).
    names : sequence of str, optional
        One system name per input, replacing the logged names (like ``compare --names``).

    Returns
    -------
    list of Transcript
        In file order. Files of no known format inside folders are skipped.

    Raises
    ------
    ValueError
        On a file named explicitly that is no known log, a run read twice, or no transcript at all.
    """
    from evalkit.io.logs import expand_paths, log_format

    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    if names is not None and len(names) != len(items):
        raise ValueError(f"--names gives {len(names)} names for {len(items)} inputs.")
    out: list[Transcript] = []
    seen: dict[str, str] = {}
    for k, item in enumerate(items):
        for _, path, explicit in expand_paths(item):
            fmt = "table" if path.suffix.lower() in TABLE_SUFFIXES else log_format(path)
            if fmt is None and path.suffix.lower() in (".jsonl", ".json"):
                fmt = "table" if _looks_like_table(path) else None
            if fmt is None:
                if explicit:
                    raise ValueError(f"Cannot tell the format of {path.name!r}: expected an Inspect log, a SWE-agent "
                                     ".traj, lm-eval samples_*.jsonl, JSONL events or a transcript table (system, "
                                     "task, transcript columns).")
                continue
            if fmt == "events" and _looks_like_table(path):
                fmt = "table"
            reader = {"inspect": _inspect, "swe_agent": _swe_agent, "lm_eval": _lm_eval, "events": _events,
                      "table": _table}.get(fmt)
            if reader is None:  # a judgment log, lm-eval results, a verdict file...: no transcripts in it
                if explicit:
                    raise ValueError(f"{path.name!r} is read as a {fmt.replace('_', ' ')} file, which holds no "
                                     "transcripts: expected an Inspect log, a SWE-agent .traj, lm-eval "
                                     "samples_*.jsonl, JSONL events or a transcript table (system, task, transcript "
                                     "columns).")
                continue
            for t in reader(path, max_chars):
                if names is not None:
                    t = _make(names[k], t.task, t.run, t.text, t.task_text, t.source, 0)
                if t.id in seen:
                    raise ValueError(f"The run {t.id!r} is read twice ({seen[t.id]} and {path.name}); give each run "
                                     "once (an .eval and its converted .json are the same run).")
                seen[t.id] = path.name
                out.append(t)
    if not out:
        raise ValueError("No transcript found in " + ", ".join(repr(str(i)) for i in items[:3]) + ".")
    return out


def _looks_like_table(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    first = next((ln for ln in head.splitlines() if ln.strip()), b"")
    if first.count(b"[") + first.count(b"{") > 64:  # deeply nested: no table row (the reader says what is wrong)
        return False
    try:
        rec = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(rec, dict) and {"system", "task", "transcript"} <= set(rec)
