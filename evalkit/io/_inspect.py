"""Inspect AI log internals shared by the readers: opening (Zstandard) ``.eval`` zips sample by sample,
and turning one sample's events into submissions (budget spent so far, score)."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from evalkit.io._json import loads, read_json
from evalkit.io._limits import read_zip_member

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
    """Yield (eval header, sample) pairs from a ``.json`` or zipped ``.eval`` Inspect log, one sample at a time.

    Each zip member is streamed with the caps of :mod:`evalkit.io._limits` (bytes, compression
    ratio, JSON depth), whatever sizes the archive claims; a damaged archive is a ValueError."""
    if zipfile.is_zipfile(path):
        try:
            with _open_zip(path) as z:
                infos = {i.filename: i for i in z.infolist()}
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise ValueError(f"{path.name} is a damaged zip archive ({exc}); not a readable Inspect .eval log.") from None

        def member(name: str) -> dict:
            data = read_zip_member(path, infos[name])
            obj = loads(data, f"{path.name} (member {name!r})", expected="an Inspect log member")
            if not isinstance(obj, dict):
                raise ValueError(f"{path.name} (member {name!r}) holds a JSON {type(obj).__name__}, not an object; "
                                 "not an Inspect .eval log.")
            return obj

        if "header.json" in infos:
            header = member("header.json").get("eval")
        elif "_journal/start.json" in infos:  # a log still being written
            header = member("_journal/start.json").get("eval")
        else:
            raise ValueError(f"{path.name} is a zip file without header.json: not an Inspect .eval log.")
        if not isinstance(header, dict):
            raise ValueError(f"{path.name}: header.json has no 'eval' object; not an Inspect .eval log.")
        for n in sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json")):
            yield header, member(n)
        return
    log = read_json(path, "an Inspect AI log")
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise ValueError(f"{path.name} is not an Inspect AI log (no 'eval' header).")
    samples = log.get("samples") or []
    if not isinstance(samples, list) or not all(isinstance(x, dict) for x in samples):
        raise ValueError(f"{path.name}: 'samples' must be a list of objects; not an Inspect AI log.")
    for sample in samples:
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
