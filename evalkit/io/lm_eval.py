"""lm-evaluation-harness per-sample logs (``--log_samples``): ``samples_<task>_<date>.jsonl``.

Each line is one document of one task: ``doc_id``, ``doc``, ``target``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` (the metric names) and one field per metric with
the document's value (``"acc": 1.0``, ``"exact_match": 0.0``...). Versions before about 0.4.2
write no ``filter`` and no ``metrics``: the numeric fields are the metrics. The harness writes
the file into a folder named after the model (``output_path/<model name with / as __>/``)
beside the ``results_<date>.json`` **of the same run** (the same ``<date>`` stamp), whose
``model_name`` (or ``config.model_args``' ``pretrained=``) names the model and whose
``results[task]["<metric>,<filter>"]`` and ``"<metric>_stderr,<filter>"`` are the harness's
own headline. A folder often holds several runs, of several models: each samples file is
paired with its own results file by the stamp, never with the first one in the folder.

A task evaluated under several filters (``get-answer``, ``strict-match``...) logs each document
once per filter. One filter is the score: the one asked for (``filter=``, CLI ``--filter``),
else the first in the file, and the choice is named in a note. Versions around 0.4.2 log the
repeats without a ``filter`` field (the harness writes one block of documents per filter); the
k-th record of a document then belongs to the k-th filter the run's results list for the
metric (``<metric>,<filter>`` keys, in order), and the note says the names were inferred.

The harness records no token usage, cost or time, so the budget of every row is missing
(NaN): these logs feed paired comparisons, scores and reliability (``evalkit compare``,
``evalkit score``), not Elo per budget.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit._errors import list_ids
from evalkit.io._json import iter_jsonl, read_json

__all__ = ["lm_eval_rows", "LM_EVAL_SAMPLES", "is_lm_eval_record", "results_for"]

LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9\-.:]+)\.jsonl$")


def is_lm_eval_record(record: object) -> bool:
    """Whether a parsed JSONL record looks like an lm-eval sample (``doc_id`` and ``resps``/``metrics``)."""
    return isinstance(record, dict) and "doc_id" in record and ("resps" in record or "metrics" in record)


def results_for(path: Path) -> tuple[dict | None, Path | None]:
    """The ``results_<date>.json`` of the same run as the samples file ``path`` (same stamp), parsed."""
    m = LM_EVAL_SAMPLES.match(path.name)
    if not m:
        return None, None
    res = path.parent / f"results_{m.group('date')}.json"
    if not res.is_file():
        return None, None
    try:  # bounded: size, nesting and encoding checked as for every JSON file
        obj = read_json(res, "an lm-eval results file")
    except (ValueError, OSError):
        return None, res
    return (obj if isinstance(obj, dict) else None), res


def _model_name(results: dict | None, path: Path) -> str:
    """``model_name`` of the run's results, else ``pretrained=`` of its model_args, else the folder."""
    if results:
        if results.get("model_name"):
            return str(results["model_name"])
        args = str((results.get("config") or {}).get("model_args") or "")
        hit = re.search(r"(?:^|,)\s*(?:pretrained|model)=([^,]+)", args)
        if hit:
            return hit.group(1).strip()
    return path.parent.name


def _task_name(path: Path) -> str:
    m = LM_EVAL_SAMPLES.match(path.name)
    return m.group("task") if m else path.stem


def _reported(results: dict | None, task: str, metric: str | None, filt: str | None) -> dict[str, Any]:
    """The harness's own value and stderr of ``metric`` under ``filt`` for ``task``, where it logged them."""
    if not results or metric is None:
        return {}
    table = (results.get("results") or {}).get(task) or {}
    key = f"{metric},{filt or 'none'}"
    value, se = table.get(key, table.get(metric)), table.get(f"{metric}_stderr,{filt or 'none'}",
                                                              table.get(f"{metric}_stderr"))
    n = ((results.get("n-samples") or {}).get(task) or {}).get("effective")
    out: dict[str, Any] = {"metric": key}
    if isinstance(value, (int, float)):
        out["value"] = float(value)
    if isinstance(se, (int, float)):
        out["stderr"] = float(se)
    if isinstance(n, int):
        out["n"] = n
    return out if "value" in out else {}


def _filter_names(results: dict | None, task: str, metric: str | None) -> list[str]:
    """The filters the run's results list for ``metric`` of ``task``, in the order logged."""
    table = ((results or {}).get("results") or {}).get(task) or {}
    return [k.split(",", 1)[1] for k in table if metric and k.startswith(f"{metric},") and "_stderr" not in k]


def _record_metric(rec: dict, metric: str | None, where: str) -> tuple[list[str], str | None]:
    names = list(rec.get("metrics") or [])
    if not names:  # older harness versions list no metric names: the numeric fields are the metrics
        names = [k for k, v in rec.items() if k != "doc_id" and isinstance(v, (bool, int, float))]
        if metric is None and len(names) > 1:
            raise ValueError(f"{where} has several metrics {sorted(names)} and lists none as the metric; pass "
                             "metric= to choose one.")
    return names, metric or (names[0] if names else None)


def lm_eval_rows(
    path: str | os.PathLike[str], *, metric: str | None = None, system: str | None = None,
    session: str | None = None, metadata: tuple[str, ...] = (), filter: str | None = None,  # noqa: A002
) -> tuple[list[dict], list[str], list[str], dict]:
    """Rows of the session table from one ``samples_*.jsonl`` file, one per document.

    Parameters
    ----------
    path : path
    metric : str, optional
        Which metric is the score (default: the first name in each record's ``metrics``).
    system : str, optional
        Default: the model of the ``results_<date>.json`` with the file's own stamp, else the folder.
    session : str, optional
        Run id (default: the file's date stamp, so re-runs of one task are separate runs).
    metadata : tuple of str
        ``doc`` fields to copy into columns (e.g. a subject to cluster on).
    filter : str, optional
        The filter whose value is the score when the task logs several (default: the first).

    Returns
    -------
    rows, unscored, notes, meta
        ``task`` is ``<lm-eval task>/<doc_id>``; budget NaN (the harness records no usage);
        ``line`` the 1-based line, ``filter`` the filter. Documents without the metric are
        unscored. ``meta["reported"]`` holds the harness's own value and stderr.

    Raises
    ------
    ValueError
        On a line that is not JSON or not an lm-eval sample, a metric no record has, or a
        filter the file does not log.
    """
    p = Path(path)
    task = _task_name(p)
    m = LM_EVAL_SAMPLES.match(p.name)
    results, res_path = results_for(p)
    name = system or _model_name(results, p)
    row = {"system": name, "session": session or (m.group("date") if m else p.stem)}
    blocks = _read_blocks(p, task, row, metric=metric, metadata=metadata)
    notes = _name_blocks(blocks, results, task, p.name)
    use = _chosen_filter(blocks, p.name, filter, notes)
    if results is None:
        notes.append(f"{p.name} has no results_{m.group('date') if m else '<date>'}.json of its own run beside it"
                     f" ({'unreadable' if res_path else 'absent'}): the system is named after its folder, {name!r}.")
    meta = {"format": "lm_eval", "model": name, "task": task, "filter": use,
            "reported": _reported(results, task, blocks.chosen, use)}
    return blocks.by_filter.get(use, []), blocks.unscored, notes, meta


@dataclass
class _Blocks:
    """What one pass over a samples file found: scored rows per filter (``#k`` for the k-th block of
    an unnamed filter), unscored documents, the metric names seen and the one chosen."""

    by_filter: dict[str | None, list[dict]] = field(default_factory=dict)
    unscored: list[str] = field(default_factory=list)
    seen_metrics: set[str] = field(default_factory=set)
    chosen: str | None = None
    unnamed_repeats: bool = False


def _read_blocks(p: Path, task: str, row: dict, *, metric: str | None, metadata: tuple[str, ...]) -> _Blocks:
    """One read of ``p`` (located errors): every document's score, filed under its filter."""
    out = _Blocks()
    seen_docs: dict[object, int] = {}
    for line_no, rec in iter_jsonl(p, "an lm-evaluation-harness sample"):
        if not is_lm_eval_record(rec):
            raise ValueError(f"Line {line_no} of {p.name} is not an lm-evaluation-harness sample (no 'doc_id' "
                             f"with 'resps' or 'metrics'); it has {sorted(rec)[:8] if isinstance(rec, dict) else rec!r}.")
        names, key = _record_metric(rec, metric, f"Line {line_no} of {p.name}")
        out.seen_metrics.update(names)
        out.chosen = out.chosen or key
        value = rec.get(key) if key is not None else None
        doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
        item = f"{task}/{rec['doc_id']}"
        filt = rec.get("filter")
        k = seen_docs.get(rec["doc_id"], 0)
        seen_docs[rec["doc_id"]] = k + 1
        if filt is None and k:  # the k-th block of an unnamed filter (older harness versions)
            out.unnamed_repeats = True
        if filt is None:
            filt = f"#{k + 1}"
        if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
            out.by_filter.setdefault(filt, []).append(
                {"system": row["system"], "task": item, "session": row["session"], "budget": float("nan"),
                 "score": float(value), "source": p.name, "line": line_no, "filter": filt, "model": row["system"],
                 **{k: doc.get(k) for k in metadata}})
        else:
            out.unscored.append(item)
    if metric is not None and not out.by_filter and out.seen_metrics:
        raise ValueError(f"No record of {p.name} has the metric {metric!r}; its records have "
                         f"{sorted(out.seen_metrics)}.")
    return out


def _name_blocks(blocks: _Blocks, results: dict | None, task: str, source: str) -> list[str]:
    """Replace ``#k`` block names by the filters the run's results list (in order), where they can
    be matched; the notes say how the blocks were named."""
    notes: list[str] = []
    if not (blocks.unnamed_repeats or all(str(f).startswith("#") for f in blocks.by_filter)):
        return notes
    names = _filter_names(results, task, blocks.chosen)
    order = sorted(blocks.by_filter, key=lambda f: int(str(f)[1:]))
    named: dict[str | None, str | None] = dict(zip(order, names, strict=False)) if len(names) == len(order) else {}
    if not blocks.unnamed_repeats:
        named = {order[0]: names[0]} if len(names) == 1 else {order[0]: None}
    blocks.by_filter = {named.get(b, b): [{**r, "filter": named.get(b, b)} for r in blocks.by_filter[b]]
                        for b in order}
    if blocks.unnamed_repeats:
        how = (f"named from the results file's order ({list_ids([str(v) for v in named.values()])})" if named
               else "not named by the run's results (#1, #2...)")
        notes.append(f"{source} logs every document {len(order)} times without a 'filter' field (one block per "
                     f"filter, as lm-eval ~0.4.2 writes); the blocks are {how}.")
    return notes


def _chosen_filter(blocks: _Blocks, source: str, filter: str | None, notes: list[str]) -> str | None:  # noqa: A002
    """The filter whose value is the score: ``filter`` if given (checked), else the first logged;
    a note names the choice when there are several."""
    filters = list(blocks.by_filter)
    use = filters[0] if filters else None
    if filter is not None and filters != [None]:
        if filter not in blocks.by_filter:
            raise ValueError(f"{source} logs no filter {filter!r}; its filters are {[f for f in filters if f]}.")
        use = filter
    if len(filters) > 1:
        notes.append(f"{source} logs {len(filters)} filters ({list_ids([str(f) for f in filters])}); the score "
                     f"is the {use!r} filter's; pass filter= to choose another.")
    return use
