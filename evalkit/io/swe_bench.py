"""SWE-bench's verdicts: which instances a run resolved, from every verdict file the harnesses publish.

SWE-agent's ``.traj`` and mini-swe-agent's ``.traj.json`` record what the agent spent, not
whether its patch works; that is in a verdict file. :func:`read_swe_bench_report` reads each
shape into :class:`Verdicts` (``{instance_id: resolved}``):

===========================  ===================================================================
shape                        where it comes from
===========================  ===================================================================
run report                   ``python -m swebench.harness.run_evaluation`` (``<model>.<run_id>.json``)
                             and ``sb-cli`` reports: ``resolved_ids``, ``unresolved_ids``,
                             ``empty_patch_ids``, ``error_ids`` (and ``submitted_ids``,
                             ``completed_ids``, ``total_instances``)
per-instance report          ``logs/run_evaluation/<run>/<model>/<id>/report.json``:
                             ``{instance_id: {"resolved": true, ...}}``, or the flat form
                             ``{"resolved": true, "tests_status": ...}`` whose instance is its folder
``results_summary.json``     ``{"total", "passed", "pass_rate", "instances": [{instance_id, resolved}]}``
``{instance_id: bool}``      SWE-bench Pro's published ``eval_results.json``
``results/results.json``     SWE-bench/experiments: ``{"resolved": [...], "no_generation": [...],
                             "no_logs": [...]}``; every instance it does not list as resolved is
                             unresolved (``Verdicts.default`` is False)
===========================  ===================================================================

Resolved ids are 1, every other id the file lists is 0, and instances the file does not
mention are absent (the trajectory reader counts and skips them), except in the
experiments shape. :func:`read_resolved_ids` reads a plain list of resolved ids.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evalkit._errors import list_ids
from evalkit.io._json import loads, read_json
from evalkit.io._limits import read_bytes
from evalkit.io._walk import walk_files

__all__ = ["Verdicts", "read_swe_bench_report", "read_resolved_ids", "verdict_shape", "verdict_system"]

_FAILED_LISTS = ("unresolved_ids", "empty_patch_ids", "error_ids", "incomplete_ids", "submitted_ids",
                 "completed_ids")
#: Lists of SWE-bench/experiments' results.json other than "resolved" (all unresolved).
_EXPERIMENT_LISTS = ("no_generation", "no_logs", "generated", "with_logs", "install_fail", "reset_failed",
                     "no_apply", "applied", "test_errored", "test_timeout")
_FLAT_KEYS = ("patch_is_None", "patch_exists", "patch_successfully_applied", "tests_status")


class Verdicts(dict):
    """``{instance_id: resolved}`` plus what the file says about instances it does not list.

    Attributes
    ----------
    default : bool or None
        The verdict of an instance the file does not name: False for SWE-bench/experiments'
        ``results.json`` (it lists only the resolved ones), None otherwise (not evaluated).
    shape : str
        Which verdict shape the file has (see the module table).
    reported : dict
        The file's own counts (``resolved``, ``total`` and the rate where it states them),
        the number a score of this run must reproduce.
    """

    default: bool | None = None
    shape: str = ""
    reported: dict

    def __init__(self, *args: object, default: bool | None = None, shape: str = "",
                 reported: Mapping[str, float] | None = None) -> None:
        super().__init__(*args)
        self.default = default
        self.shape = shape
        self.reported = dict(reported or {})


def verdict_shape(obj: object) -> str | None:
    """The verdict shape of a parsed JSON file, or None when it is none of them."""
    if isinstance(obj, dict) and "resolved_ids" in obj:
        return "run_report"
    if isinstance(obj, dict) and isinstance(obj.get("instances"), list) and "passed" in obj:
        return "results_summary"
    if isinstance(obj, dict) and "resolved" in obj and any(k in obj for k in _FLAT_KEYS):
        return "flat_report"
    if isinstance(obj, dict) and isinstance(obj.get("resolved"), list) and set(obj) <= {"resolved", *_EXPERIMENT_LISTS}:
        return "experiments"
    if isinstance(obj, dict) and obj and all(isinstance(v, dict) and "resolved" in v for v in obj.values()):
        return "instance_report"
    if isinstance(obj, dict) and obj and all(isinstance(v, bool) for v in obj.values()):
        return "instance_bools"
    return None


def _from_object(obj: object, name: str, path: Path | None = None) -> Verdicts:
    shape = verdict_shape(obj)
    if shape is None:
        keys = list_ids(sorted(map(str, obj))[:12], limit=8) if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(
            f"{name} is not a SWE-bench evaluation report: expected a run report with 'resolved_ids' "
            f"(and 'unresolved_ids', 'empty_patch_ids', 'error_ids'), a per-instance report "
            f"{{instance_id: {{'resolved': ...}}}} or its flat form, results_summary.json, SWE-bench Pro's "
            f"{{instance_id: true/false}} or SWE-bench/experiments' results.json; found {keys}."
        )
    assert isinstance(obj, dict)
    if shape == "run_report":
        out = Verdicts(shape=shape)
        for key in _FAILED_LISTS:
            for i in obj.get(key) or []:
                out.setdefault(str(i), False)
        for i in obj["resolved_ids"] or []:
            out[str(i)] = True
        total = obj.get("total_instances", obj.get("submitted_instances"))
        out.reported = {"resolved": len(obj["resolved_ids"] or []),
                        **({"total": int(total)} if isinstance(total, int) else {})}
        return out
    if shape == "results_summary":
        out = Verdicts({str(i["instance_id"]): bool(i["resolved"]) for i in obj["instances"]}, shape=shape)
        out.reported = {k: obj[k] for k in ("passed", "total", "pass_rate") if isinstance(obj.get(k), (int, float))}
        return out
    if shape == "flat_report":
        instance = path.parent.name if path is not None else name
        return Verdicts({instance: bool(obj["resolved"])}, shape=shape)
    if shape == "experiments":
        out = Verdicts(default=False, shape=shape)
        for key in _EXPERIMENT_LISTS:
            for i in obj.get(key) or []:
                out.setdefault(str(i), False)
        for i in obj["resolved"]:
            out[str(i)] = True
        out.reported = {"resolved": len(obj["resolved"])}
        return out
    if shape == "instance_report":
        return Verdicts({str(k): bool(v["resolved"]) for k, v in obj.items()}, shape=shape)
    out = Verdicts({str(k): bool(v) for k, v in obj.items()}, shape=shape)
    out.reported = {"resolved": sum(out.values()), "total": len(out)}
    return out


def read_swe_bench_report(path: str | os.PathLike[str]) -> Verdicts:
    """``{instance_id: resolved}`` from any SWE-bench verdict file (see the module table), or a folder of
    per-instance reports (searched recursively for ``report.json``).

    Raises
    ------
    ValueError
        If the file is missing, is not JSON, or has none of the shapes; or if two
        per-instance reports in a folder disagree about one instance.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No such SWE-bench report: {str(p)!r}.")
    if p.is_dir():
        out = Verdicts(shape="instance_report")
        files = sorted(f for f in walk_files(p) if f.name == "report.json")  # symlink-safe walk
        if not files:
            raise ValueError(f"The folder {str(p)!r} holds no report.json (SWE-bench's per-instance reports).")
        for f in files:
            for k, v in _from_object(read_json(f, "a SWE-bench evaluation report"), str(f), f).items():
                if k in out and out[k] != v:
                    raise ValueError(f"Instance {k!r} is resolved={out[k]} in one report and {v} in {f}.")
                out[k] = v
        return out
    return _from_object(read_json(p, "a SWE-bench evaluation report"), p.name, p)


def verdict_system(path: Path, verdicts: Verdicts) -> str:
    """The system a verdict file read on its own is named after: the run id of a run report
    (``<model>.<run_id>.json``, sb-cli's ``<split>__<run_id>.json``), else the folder holding it
    (SWE-bench Pro's ``traj/<model>/eval_results.json``; a per-instance report's run folder)."""
    if verdicts.shape == "run_report":
        stem = path.name.removesuffix(".json")
        return stem.split("__")[-1] if "__" in stem else stem.split(".")[0]
    if verdicts.shape == "flat_report":  # <model>/<instance>/report.json, or <run>/logs/<instance>/report.json
        up = path.parent.parent
        return (up.parent.name if up.name == "logs" else up.name) or path.parent.name
    return path.parent.name or path.stem


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
