"""Inspect AI log internals shared by the readers: opening (Zstandard) ``.eval`` zips sample by sample,
and turning one sample's events into submissions (budget spent so far, score)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from evalkit.io._json import read_json

__all__ = ["inspect_samples", "inspect_session"]

_GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def _score_value(value: object, where: str) -> float:
    """Inspect score values: C/I/P/N grades, numbers or booleans."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value in _GRADES:
            return _GRADES[value]
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError(
        f"Cannot read the score {value!r} {where} as a number; allowed: numbers, booleans or "
        f"the grades {sorted(_GRADES)} (C=1, P=0.5, I=N=0)."
    )


def _usage_amount(usage: Mapping, budget: str, where: str) -> float:
    if budget == "tokens":
        return float(usage.get("input_tokens", 0) + usage.get("output_tokens", 0))
    if budget == "tokens_total":
        if "total_tokens" in usage:
            return float(usage["total_tokens"])
        return float(sum(usage.get(k, 0) for k in ("input_tokens", "output_tokens",
                                                    "input_tokens_cache_read", "input_tokens_cache_write")))
    for key in ("total_cost", "cost"):
        if usage.get(key) is not None:
            return float(usage[key])
    raise ValueError(
        f"The log records no cost {where}; its usage has {sorted(usage)}. "
        "Use budget='tokens', 'tokens_total' or 'time'."
    )


def _open_zip(path: Path) -> zipfile.ZipFile:
    """Open a zipped ``.eval`` log; current Inspect versions compress members with Zstandard."""
    z = zipfile.ZipFile(path)
    if any(i.compress_type == 93 for i in z.infolist()) and not hasattr(zipfile, "ZIP_ZSTANDARD"):
        try:  # Python < 3.14: zipfile-zstd (a dependency of evalkit and of inspect_ai) patches zipfile
            import zipfile_zstd  # noqa: F401
        except ImportError:
            z.close()
            raise ValueError(
                f"{path.name} is an Inspect .eval log compressed with Zstandard, which this Python's "
                "zipfile cannot read; install the 'zipfile-zstd' package (or use Python >= 3.14)."
            ) from None
    return z


def inspect_samples(path: Path) -> Iterator[tuple[dict, dict]]:
    """Yield (eval header, sample) pairs from a ``.json`` or zipped ``.eval`` Inspect log, one sample at a time."""
    if zipfile.is_zipfile(path):
        with _open_zip(path) as z:
            names = z.namelist()
            if "header.json" in names:
                header = json.loads(z.read("header.json"))["eval"]
            elif "_journal/start.json" in names:  # a log still being written
                header = json.loads(z.read("_journal/start.json"))["eval"]
            else:
                raise ValueError(f"{path.name} is a zip file without header.json: not an Inspect .eval log.")
            for n in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
                yield header, json.loads(z.read(n))
        return
    log = read_json(path, "an Inspect AI log")
    if not isinstance(log, dict) or "eval" not in log:
        raise ValueError(f"{path.name} is not an Inspect AI log (no 'eval' header).")
    for sample in log.get("samples") or []:
        yield log["eval"], sample


def inspect_session(sample: dict, budget: str, scorer: str | None, include_scorer: bool,
                     where: str) -> tuple[list[tuple[float, float]], str]:
    """Submissions (budget, score) of one sample and the scorer used."""
    scores = sample.get("scores") or {}
    if scorer is None and scores:
        scorer = next(iter(scores))
    span_type: dict[str, str] = {}
    spent, subs = 0.0, []
    for ev in sample.get("events") or []:
        kind = ev.get("event")
        if kind == "span_begin":
            span_type[ev.get("id")] = ev.get("type") or ""
            continue
        in_scorer = span_type.get(ev.get("span_id"), "") in ("scorer", "scorers")
        if kind == "model" and (include_scorer or not in_scorer):
            if budget == "time":
                spent = max(spent, float(ev.get("working_start", 0.0)) + float(ev.get("working_time") or 0.0))
            else:
                usage = (ev.get("output") or {}).get("usage") or {}
                spent += _usage_amount(usage, budget, where)
        elif kind == "score":
            sc = ev.get("score") or {}
            if ev.get("intermediate"):
                subs.append((spent, _score_value(sc.get("value"), where)))
    if scorer is not None and scorer in scores:
        subs.append((spent, _score_value(scores[scorer].get("value"), f"{where} (scorer {scorer!r})")))
    elif scores and scorer is not None:
        raise ValueError(f"No scorer {scorer!r} {where}; the sample has {sorted(scores)}.")
    return subs, scorer or ""
