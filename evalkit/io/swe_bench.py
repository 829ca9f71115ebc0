"""SWE-bench's verdicts: which instances a run resolved, from the evaluation report or an id list.

SWE-agent's ``.traj`` files record what the agent spent, not whether its patch works; that is
in the report SWE-bench's harness writes (``python -m swebench.harness.run_evaluation``):

* the run report ``<model>.<run_id>.json``: ``resolved_ids``, ``unresolved_ids``,
  ``empty_patch_ids``, ``error_ids`` (and ``submitted_ids``, ``completed_ids``);
* a per-instance ``report.json``: ``{instance_id: {"resolved": true, ...}}``, or a folder or
  list of them.

:func:`read_swe_bench_report` turns either into ``{instance_id: resolved}``: resolved ids
are 1, every other id the report lists (unresolved, empty patch, error, submitted) is 0, and
instances the report does not mention are absent (the trajectory reader counts and skips
them). :func:`read_resolved_ids` reads a plain list of resolved ids (one per line, or a JSON
list) together with the trajectories it applies to.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.io._json import loads, read_json
from evalkit.io._limits import read_bytes
from evalkit.io._walk import walk_files

__all__ = ["read_swe_bench_report", "read_resolved_ids"]

_FAILED_LISTS = ("unresolved_ids", "empty_patch_ids", "error_ids", "incomplete_ids", "submitted_ids",
                 "completed_ids")


def _load_json(path: Path) -> object:
    return read_json(path, "a SWE-bench evaluation report")


def _from_object(obj: object, name: str) -> dict[str, bool]:
    if isinstance(obj, dict) and "resolved_ids" in obj:
        out: dict[str, bool] = {}
        for key in _FAILED_LISTS:
            for i in obj.get(key) or []:
                out.setdefault(str(i), False)
        for i in obj["resolved_ids"] or []:
            out[str(i)] = True
        return out
    if isinstance(obj, dict) and obj and all(isinstance(v, dict) and "resolved" in v for v in obj.values()):
        return {str(k): bool(v["resolved"]) for k, v in obj.items()}
    keys = sorted(obj)[:8] if isinstance(obj, dict) else type(obj).__name__
    raise ValueError(
        f"{name} is not a SWE-bench evaluation report: expected a run report with 'resolved_ids' "
        f"(and 'unresolved_ids', 'empty_patch_ids', 'error_ids') or a per-instance report "
        f"{{instance_id: {{'resolved': ...}}}}; found {keys}."
    )


def read_swe_bench_report(path: str | os.PathLike[str]) -> dict[str, bool]:
    """``{instance_id: resolved}`` from a SWE-bench run report, a per-instance ``report.json``, or a
    folder of per-instance reports (searched recursively for ``report.json``).

    Raises
    ------
    ValueError
        If the file is missing, is not JSON, or has neither report shape; or if two
        per-instance reports in a folder disagree about one instance.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No such SWE-bench report: {str(p)!r}.")
    if p.is_dir():
        out: dict[str, bool] = {}
        files = [f for f in walk_files(p) if f.name == "report.json"]
        if not files:
            raise ValueError(f"The folder {str(p)!r} holds no report.json (SWE-bench's per-instance reports).")
        for f in files:
            for k, v in _from_object(_load_json(f), str(f)).items():
                if k in out and out[k] != v:
                    raise ValueError(f"Instance {k!r} is resolved={out[k]} in one report and {v} in {f}.")
                out[k] = v
        return out
    return _from_object(_load_json(p), p.name)


def read_resolved_ids(path: str | os.PathLike[str]) -> set[str]:
    """The resolved instance ids listed in a file: one per line (blank lines and ``#`` comments
    skipped) or a JSON list of strings."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No such file of resolved ids: {str(p)!r}.")
    text = read_bytes(p).decode("utf-8", errors="replace")
    if text.lstrip().startswith("["):
        obj = loads(text, p.name, expected="a JSON list of resolved instance ids")
        if not all(isinstance(x, str) for x in obj):
            raise ValueError(f"{p.name} must be a JSON list of instance id strings.")
        return set(obj)
    return {line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")}
