"""lm-evaluation-harness per-sample logs (``--log_samples``): ``samples_<task>_<date>.jsonl``.

Each line is one document of one task: ``doc_id``, ``doc``, ``target``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` (the metric names) and one field per metric with
the document's value (``"acc": 1.0``, ``"exact_match": 0.0``...). The harness writes the file
into a folder named after the model (``output_path/<model name with / as __>/``) beside a
``results_<date>.json`` whose ``model_name`` names it.

The harness records no token usage, cost or time, so the budget of every row is 0: these
logs feed paired comparisons and reliability (``evalkit compare``), not Elo per budget.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from evalkit.io._json import check_file, read_json

__all__ = ["lm_eval_rows", "LM_EVAL_SAMPLES", "is_lm_eval_record"]

LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9\-.:]+)\.jsonl$")


def is_lm_eval_record(record: object) -> bool:
    """Whether a parsed JSONL record looks like an lm-eval sample (``doc_id`` and ``resps``/``metrics``)."""
    return isinstance(record, dict) and "doc_id" in record and ("resps" in record or "metrics" in record)


def _model_name(path: Path) -> str:
    """``model_name`` of a ``results_*.json`` beside the file, else the folder name."""
    for res in sorted(path.parent.glob("results_*.json")):
        try:
            name = read_json(res, "an lm-eval results file").get("model_name")  # type: ignore[attr-defined]
        except (ValueError, OSError, AttributeError):
            continue
        if name:
            return str(name)
    return path.parent.name


def _task_name(path: Path) -> str:
    m = LM_EVAL_SAMPLES.match(path.name)
    return m.group("task") if m else path.stem


def lm_eval_rows(
    path: str | os.PathLike[str], *, metric: str | None = None, system: str | None = None,
    session: str | None = None, metadata: tuple[str, ...] = (),
) -> tuple[list[dict], list[str]]:
    """Rows of the session table from one ``samples_*.jsonl`` file, one per document.

    Parameters
    ----------
    path : path
    metric : str, optional
        Which metric is the score (default: the first name in each record's ``metrics``).
    system : str, optional
        Default: ``model_name`` from a ``results_*.json`` beside the file, else the folder name.
    session : str, optional
        Run id (default: the file's date stamp, so re-runs of one task are separate runs).
    metadata : tuple of str
        ``doc`` fields to copy into columns (e.g. a subject to cluster on).

    Returns
    -------
    rows, unscored
        ``task`` is ``<lm-eval task>/<doc_id>``; budget 0 (the harness records no usage);
        ``line`` the 1-based line. Documents without the metric are returned as unscored.

    Raises
    ------
    ValueError
        On a line that is not JSON or not an lm-eval sample, or a metric no record has.
    """
    p = Path(path)
    task = _task_name(p)
    m = LM_EVAL_SAMPLES.match(p.name)
    run = session or (m.group("date") if m else p.stem)
    name = system or _model_name(p)
    rows: list[dict] = []
    unscored: list[str] = []
    seen_metrics: set[str] = set()
    check_file(p, "jsonl")  # bounded size, line length and nesting before the lines are parsed
    with open(p, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"Line {line_no} of {p.name} is not JSON ({exc.msg}).") from None
            if not is_lm_eval_record(rec):
                raise ValueError(f"Line {line_no} of {p.name} is not an lm-evaluation-harness sample (no 'doc_id' "
                                 f"with 'resps' or 'metrics'); it has {sorted(rec)[:8] if isinstance(rec, dict) else rec!r}.")
            names = list(rec.get("metrics") or [])
            if not names:  # older harness versions list no metric names: the numeric fields are the metrics
                names = [k for k, v in rec.items() if k != "doc_id" and isinstance(v, (bool, int, float))]
                if metric is None and len(names) > 1:
                    raise ValueError(f"Line {line_no} of {p.name} has several metrics {sorted(names)} and lists "
                                     "none as the metric; pass metric= to choose one.")
            seen_metrics.update(names)
            key = metric or (names[0] if names else None)
            value = rec.get(key) if key is not None else None
            doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
            item = f"{task}/{rec['doc_id']}"
            if isinstance(value, bool) or isinstance(value, (int, float)):
                rows.append({"system": name, "task": item, "session": run, "budget": 0.0, "score": float(value),
                             "source": p.name, "line": line_no, **{k: doc.get(k) for k in metadata}})
            else:
                unscored.append(item)
    if metric is not None and not rows and seen_metrics:
        raise ValueError(f"No record of {p.name} has the metric {metric!r}; its records have {sorted(seen_metrics)}.")
    return rows, unscored
