"""Inspect AI log internals shared by the readers: opening (Zstandard) ``.eval`` zips sample by sample,
and turning one sample's events into submissions (budget spent so far, score) and its totals.

Inspect has changed its log format several times; every version here is read the same way:

* events live in ``sample.events`` (0.3.42 and later) or ``sample.transcript.events`` (0.3.4x JSON);
* scorer regions are ``span_begin`` events of type ``scorer``/``scorers`` (with nested spans, from
  about 0.3.80), or ``step`` events of type ``scorer`` with ``action`` ``begin``/``end`` (before
  spans existed, late 2024). Model calls inside a scorer region are the judge's, not the agent's;
* the log's ``status`` (``success``, ``cancelled``, ``error``, ``started``) and each sample's
  ``error`` are carried through, so the caller can say what a score rests on.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.io._json import loads, read_json
from evalkit.io._limits import read_zip_member

__all__ = ["inspect_samples", "inspect_session", "inspect_header", "SampleRead", "sample_events"]

_GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_SCORER_TYPES = ("scorer", "scorers")
NAN = float("nan")


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


#: The token split each session also carries, for pricing (evalkit.metrics.cost.apply_prices): our column ->
#: Inspect's ModelUsage field; ``input_tokens`` is the fresh input (without cache reads and writes) in every version
#: (:func:`_fresh_input`).
SPLIT_FIELDS: tuple[tuple[str, str], ...] = (
    ("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
    ("cache_read_tokens", "input_tokens_cache_read"), ("cache_write_tokens", "input_tokens_cache_write"))
SPLIT_COLUMNS: tuple[str, ...] = tuple(col for col, _ in SPLIT_FIELDS)


def _fresh_input(usage: Mapping) -> float:
    """A call's ``input_tokens`` without its cache reads and writes, in every Inspect version.

    Inspect now logs ``input_tokens`` without the cached tokens (``ModelUsage``'s docstring), but
    before 0.3.184 (#3341, February 2026) the OpenAI-compatible, o1, Responses and Grok providers
    logged ``prompt_tokens`` with the cache reads inside, and the Google provider did until April
    2026 (5120cd87e). The call's ``total_tokens`` tells the two apart, whatever the provider: the
    current convention (and Anthropic's in every version) is ``total = input + cache + output``; a
    call that reports cache tokens and whose total is ``input + output`` has them inside its input.
    """
    inp = float(usage.get("input_tokens") or 0)
    cache = float(usage.get("input_tokens_cache_read") or 0) + float(usage.get("input_tokens_cache_write") or 0)
    total = usage.get("total_tokens")
    if cache > 0 and isinstance(total, (int, float)) and inp >= cache and \
            float(total) == inp + float(usage.get("output_tokens") or 0):
        return inp - cache
    return inp


def _usage_amounts(usage: Mapping) -> dict[str, float]:
    """Tokens (fresh input + output), every token incl. cache (total_tokens), and cost of one model call."""
    fresh = _fresh_input(usage)
    tokens = fresh + float(usage.get("output_tokens") or 0)
    if usage.get("total_tokens") is not None:
        total = float(usage["total_tokens"])
    else:
        total = tokens + sum(float(usage.get(k) or 0) for k in ("input_tokens_cache_read", "input_tokens_cache_write"))
    cost = next((float(usage[k]) for k in ("total_cost", "cost") if usage.get(k) is not None), NAN)
    split = {col: float(usage.get(key) or 0) for col, key in SPLIT_FIELDS}  # what prices differ by (--prices)
    split["input_tokens"] = fresh
    return {"tokens": tokens, "tokens_total": total, "cost": cost, **split}


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


def _zip_reader(path: Path) -> tuple[dict[str, zipfile.ZipInfo], Callable[[str], dict]]:
    """The members of an ``.eval`` archive and a bounded reader of one member as a JSON object.

    Each member is streamed with the caps of :mod:`evalkit.io._limits` (bytes, compression
    ratio, JSON depth), whatever sizes the archive claims; a damaged archive is a ValueError."""
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

    return infos, member


def _zip_header(path: Path, infos: Mapping[str, zipfile.ZipInfo], member: Callable[[str], dict]) -> dict:
    if "header.json" in infos:
        header = member("header.json")
    elif "_journal/start.json" in infos:  # a log still being written (or killed before it finished)
        header = {"status": "started", **member("_journal/start.json")}
    else:
        raise ValueError(f"{path.name} is a zip file without header.json: not an Inspect .eval log.")
    if not isinstance(header.get("eval"), dict):
        raise ValueError(f"{path.name}: header.json has no 'eval' object; not an Inspect .eval log.")
    return header


def inspect_header(path: Path) -> dict:
    """The log header: ``eval`` (task, model, ids, dataset), ``status``, ``results`` and ``stats``."""
    if zipfile.is_zipfile(path):
        infos, member = _zip_reader(path)
        return _zip_header(path, infos, member)
    log = read_json(path, "an Inspect AI log")
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise ValueError(f"{path.name} is not an Inspect AI log (no 'eval' header).")
    return {k: v for k, v in log.items() if k != "samples"}


def inspect_samples(path: Path) -> Iterator[tuple[dict, dict]]:
    """Yield (log header, sample) pairs from a ``.json`` or zipped ``.eval`` Inspect log, one sample at a
    time. The header is the whole log minus its samples: ``header["eval"]`` is the eval spec."""
    if zipfile.is_zipfile(path):
        infos, member = _zip_reader(path)
        header = _zip_header(path, infos, member)
        for n in sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json")):
            yield header, member(n)
        return
    log = read_json(path, "an Inspect AI log")
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise ValueError(f"{path.name} is not an Inspect AI log (no 'eval' header).")
    samples = log.get("samples") or []
    if not isinstance(samples, list) or not all(isinstance(x, dict) for x in samples):
        raise ValueError(f"{path.name}: 'samples' must be a list of objects; not an Inspect AI log.")
    header = {k: v for k, v in log.items() if k != "samples"}
    for sample in samples:
        yield header, sample


def sample_events(sample: Mapping) -> list:
    """A sample's events: ``events`` (current) or ``transcript.events`` (0.3.4x JSON logs)."""
    events = sample.get("events")
    if events:
        return list(events)
    transcript = sample.get("transcript")
    if isinstance(transcript, Mapping):
        return list(transcript.get("events") or [])
    return []


@dataclass
class SampleRead:
    """What one sample says: its submissions at the budget so far, the scorer used, and its totals.

    ``tokens``, ``tokens_total``, ``cost`` and ``split`` (input, output, cache read and cache write
    tokens: :data:`SPLIT_COLUMNS`) are the agent's own model calls (scorers excluded unless asked);
    NaN when a call lacks the record (never a silent 0). ``time`` is the
    sample's ``working_time`` (else the end of its last model call), ``total_time`` its wall
    time, ``error`` the sample's error message (None if it ran to the end).
    """

    subs: list[tuple[float, float]] = field(default_factory=list)
    scorer: str = ""
    tokens: float = 0.0
    tokens_total: float = 0.0
    cost: float = 0.0
    split: dict[str, float] = field(default_factory=dict)
    time: float = NAN
    total_time: float = NAN
    model_calls: int = 0
    calls_without_usage: int = 0
    error: str | None = None


class _Regions:
    """Which events are inside a scorer: nested spans (``span_begin``/``parent_id``) or, before spans
    existed, ``step`` events of type scorer between ``begin`` and ``end``."""

    def __init__(self) -> None:
        self.span_scorer: dict[object, bool] = {}
        self.step_depth = 0

    def update(self, ev: Mapping) -> bool:
        """Record ``ev`` if it opens or closes a region; True when ``ev`` itself is a region marker."""
        kind = ev.get("event")
        if kind == "span_begin":
            parent = self.span_scorer.get(ev.get("parent_id"), False)
            self.span_scorer[ev.get("id")] = parent or (ev.get("type") or "") in _SCORER_TYPES
            return True
        if kind == "step" and (ev.get("type") or "") in _SCORER_TYPES:
            self.step_depth += 1 if ev.get("action") == "begin" else -1 if ev.get("action") == "end" else 0
            self.step_depth = max(self.step_depth, 0)
            return True
        return kind in ("span_end", "step")

    def in_scorer(self, ev: Mapping) -> bool:
        return self.step_depth > 0 or self.span_scorer.get(ev.get("span_id"), False)


def inspect_session(sample: dict, budget: str, scorer: str | None, include_scorer: bool,
                    where: str) -> SampleRead:
    """Submissions ``(budget, score)`` of one sample, the scorer used and the sample's totals.

    The budget of a submission is the agent's spend up to it in the unit ``budget``; a unit the
    log does not record (cost in most logs) is NaN, and so is a token count when a model call
    lacks its usage.
    """
    scores = sample.get("scores") or {}
    if scorer is None and scores:
        scorer = next(iter(scores))
    out = SampleRead(scorer=scorer or "")
    regions = _Regions()
    spent = {"tokens": 0.0, "tokens_total": 0.0, "cost": 0.0, "time": 0.0, **dict.fromkeys(SPLIT_COLUMNS, 0.0)}
    for ev in sample_events(sample):
        if regions.update(ev):
            continue
        kind = ev.get("event")
        if kind == "model" and (include_scorer or not regions.in_scorer(ev)):
            out.model_calls += 1
            if ev.get("working_time") is not None:  # logs before about 0.3.6x time no model call
                end = float(ev.get("working_start") or 0.0) + float(ev["working_time"])
                spent["time"] = max(spent["time"], end)
            else:
                spent["time"] = NAN
            usage = (ev.get("output") or {}).get("usage")
            if not usage:
                out.calls_without_usage += 1
                for k in ("tokens", "tokens_total", "cost", *SPLIT_COLUMNS):
                    spent[k] = NAN
                continue
            for k, v in _usage_amounts(usage).items():
                spent[k] += v
        elif kind == "score" and ev.get("intermediate"):
            sc = ev.get("score") or {}
            out.subs.append((spent[budget], _score_value(sc.get("value"), where)))
    if scorer is not None and scorer in scores:
        out.subs.append((spent[budget], _score_value(scores[scorer].get("value"), f"{where} (scorer {scorer!r})")))
    elif scores and scorer is not None:
        raise ValueError(f"No scorer {scorer!r} {where}; the sample has {sorted(scores)}.")
    out.tokens, out.tokens_total, out.cost = spent["tokens"], spent["tokens_total"], spent["cost"]
    out.split = {k: spent[k] for k in SPLIT_COLUMNS}
    wt = sample.get("working_time")
    out.time = float(wt) if isinstance(wt, (int, float)) else (spent["time"] if out.model_calls else NAN)
    if budget == "time" and is_nan(spent["time"]):
        out.subs = [(NAN, s) for _, s in out.subs]
    tt = sample.get("total_time")
    out.total_time = float(tt) if isinstance(tt, (int, float)) else NAN
    err = sample.get("error")
    if err:
        out.error = str(err.get("message") if isinstance(err, Mapping) else err)[:300]
    return out


def is_nan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)
