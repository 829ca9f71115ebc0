"""JSON in, with a nesting limit, or a ValueError that names the file, the position and what was expected.

Python's decoder recurses once per nested array or object, so JSON nested 10^5 deep would
end in a RecursionError, and deep values later break whatever walks them. :func:`check_depth`
finds the deepest point of a document without recursing (a vectorised scan that tracks
strings and escapes) and refuses one deeper than ``max_depth`` (:mod:`evalkit.io._limits`);
:func:`loads` checks the depth, then parses.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.io._limits import LimitError, ReadLimits, current_limits, read_bytes

__all__ = ["read_json", "loads", "check_depth", "max_depth_at", "check_file", "too_deep_to_parse", "iter_jsonl"]

_SCAN = 1 << 22


def max_depth_at(data: bytes, limit: int) -> int | None:
    """The byte offset at which ``data`` (JSON text) first nests deeper than ``limit``, or None.

    Brackets inside strings do not count; a quote preceded by an odd run of backslashes does
    not end a string. Malformed JSON gives some answer, never an error (the parser says what
    is wrong).
    """
    if data.count(b"[") + data.count(b"{") <= limit:
        return None
    depth, in_string, run = 0, 0, 0  # carried across chunks: depth, inside a string, trailing backslashes
    for start in range(0, len(data), _SCAN):
        a = np.frombuffer(data, dtype=np.uint8, count=min(_SCAN, len(data) - start), offset=start)
        idx = np.arange(len(a))
        bs = a == 92
        last_other = np.maximum.accumulate(np.where(bs, -1, idx))  # last non-backslash at or before i
        prev_other = np.concatenate(([-1], last_other[:-1]))
        runs = idx - 1 - prev_other  # backslashes immediately before i (within the chunk)
        runs = np.where(prev_other < 0, runs + run, runs)  # a run that started in the previous chunk
        quote = (a == 34) & (runs % 2 == 0)
        parity = (np.cumsum(quote) + in_string) % 2  # 1 inside a string (an opening quote counts)
        step = np.where(parity == 1, 0, (a == 91).astype(np.int64) + (a == 123) - (a == 93) - (a == 125))
        level = depth + np.cumsum(step)
        over = np.flatnonzero(level > limit)
        if over.size:
            return start + int(over[0])
        depth = int(level[-1]) if len(level) else depth
        in_string = int(parity[-1]) if len(parity) else in_string
        tail = len(a) - 1 - int(last_other[-1]) if len(a) else 0
        run = tail + run if tail == len(a) else tail
    return None


def check_depth(data: bytes, source: str, limits: ReadLimits | None = None) -> None:
    """Refuse JSON nested deeper than ``max_depth`` (a ValueError naming the line)."""
    lim = limits or current_limits()
    at = max_depth_at(data, int(lim.max_depth))
    if at is not None:
        line = data[:at].count(b"\n") + 1
        raise LimitError(f"{source}: the JSON nests arrays/objects more than {lim.max_depth} deep (line {line}, byte "
                         f"{at + 1}); evalkit's logs are a few levels deep. Raise the limit with --limit max_depth=N "
                         "(EVALKIT_MAX_DEPTH) if the file is genuine.")


def loads(data: bytes | str, source: str, *, expected: str = "JSON", limits: ReadLimits | None = None) -> Any:
    """Parse JSON text after :func:`check_depth`; malformed JSON is a ValueError naming ``source``,
    the line and column, and ``expected``."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_depth(raw, source, limits)
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                         f"expected {expected}.") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source} is not valid UTF-8 JSON ({exc.reason} at byte {exc.start}); "
                         f"expected {expected}.") from None
    except RecursionError:  # max_depth was raised past what Python's parser can follow
        raise too_deep_to_parse(source) from None


def too_deep_to_parse(source: str) -> LimitError:
    """The error for JSON within ``max_depth`` but deeper than Python's recursive parser follows."""
    return LimitError(f"{source}: the JSON nests deeper than Python's JSON parser can follow (about "
                      f"{sys.getrecursionlimit()} levels), even though --limit max_depth (EVALKIT_MAX_DEPTH) allows "
                      "it; flatten the file, or keep max_depth below that.")


def read_json(path: Path, expected: str, *, limits: ReadLimits | None = None) -> object:
    """Parse ``path`` (at most ``max_bytes``, at most ``max_depth`` deep); on malformed JSON say
    where, and that ``expected`` (e.g. "an Inspect AI log") was wanted."""
    data = read_bytes(path, limits=limits, source=path.name)
    return loads(data, path.name, expected=expected, limits=limits)


def check_file(path: Path, kind: str, *, limits: ReadLimits | None = None) -> bytes:
    """The bytes of ``path`` (gunzipped) after the checks a ``kind`` file gets before a parser sees
    it: ``max_bytes`` always, ``max_line_bytes`` for ``"csv"`` and ``"jsonl"``, ``max_depth`` for
    ``"json"`` and ``"jsonl"``. For readers that hand the bytes to pandas."""
    from evalkit.io._limits import check_lines

    data = read_bytes(path, limits=limits)
    if kind in ("csv", "jsonl"):
        check_lines(data, str(path), limits)
    if kind in ("json", "jsonl"):
        check_depth(data, str(path), limits)
    return data


_LINE_END = re.compile(r"\r\n|\r|\n")


def iter_jsonl(path: Path, what: str, *, limits: ReadLimits | None = None,
               advice: str = "") -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of every non-blank line of a JSON Lines file.

    The file is read once (gunzipped when it is gzip), with the checks of :func:`check_file`
    (``max_bytes``, ``max_line_bytes``, ``max_depth``) before any line is parsed. A line that is
    not JSON is a ValueError naming the file, the line and the column, and ``what`` the file
    should hold (e.g. "an lm-evaluation-harness sample"); ``advice`` is appended (how to fix it).
    """
    data = check_file(path, "jsonl", limits=limits)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{path.name} line {where} is not UTF-8 (byte {data[exc.start]:#04x}); JSON Lines files "
                         f"are UTF-8. Re-save it as UTF-8.") from None
    for line_no, line in enumerate(_LINE_END.split(text), start=1):  # as open()'s universal newlines
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} line {line_no}, column {exc.colno} is not JSON ({exc.msg}); expected "
                             f"{what}.{' ' + advice if advice else ''}") from None

