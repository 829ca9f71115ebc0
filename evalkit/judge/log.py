"""The crash-safe, append-only verdict log, and the judge cache.

Every judge answer is appended to ``verdicts.jsonl`` as one JSON line the moment it arrives: a
single ``write`` of the whole line, flushed, then ``fsync``-ed (every line by default, so a power
cut loses nothing acknowledged; ``fsync_every=N`` groups them). A process killed with ``kill -9``
loses at most the calls still in flight, whose verdicts were never written; a line cut by a kill in
the middle of its write is dropped (the file is truncated to its last complete line) when the log
is opened again. Re-opening reads every record and keeps the first one per key, so a resumed run
reuses what is there and never asks the judge the same thing twice.

A record's ``key`` is the SHA-256 of what decides the answer: the two transcripts' hashes in the
order shown, the task statement's hash, the prompt template's hash, the judge's name and the
repeat index. The same key in another task, another file or another output folder (``cache=``, a
shared JSONL file of the same records) is the same question, answered once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["VerdictLog", "call_key", "VERDICTS", "LOG_NAME"]

#: What a record's ``verdict`` may be: the first-shown transcript won, the second, a tie, an
#: answer the strict parser could not read, or no answer (the judge failed after its retries).
VERDICTS = ("first", "second", "tie", "unparseable", "error")
LOG_NAME = "verdicts.jsonl"


def call_key(first_sha: str, second_sha: str, task_sha: str, prompt_sha: str, judge: str, repeat: int) -> str:
    """The cache key of one judge call (see the module notes)."""
    text = "\n".join((first_sha, second_sha, task_sha, prompt_sha, judge, str(int(repeat))))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _repair(path: Path) -> int:
    """Truncate a partial last line (a write cut by a kill); return the bytes dropped."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return 0
        step, pos = 4096, size
        while pos > 0:
            start = max(0, pos - step)
            fh.seek(start)
            chunk = fh.read(pos - start)
            k = chunk.rfind(b"\n")
            if k >= 0:
                keep = start + k + 1
                fh.truncate(keep)
                return size - keep
            pos = start
        fh.truncate(0)
        return size


class VerdictLog:
    """An append-only JSONL log of judge calls, keyed by :func:`call_key`.

    Parameters
    ----------
    path : path
        The log file (created if missing).
    fsync_every : int
        ``fsync`` after this many appended lines (1: every line, the default).
    cache : path, optional
        A second JSONL file of records shared across runs: read for hits, appended to as well.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync_every: int = 1,
                 cache: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        self.fsync_every = max(1, int(fsync_every))
        self.records: dict[str, dict[str, Any]] = {}
        self.duplicates = 0
        self.dropped_bytes = 0
        self._pending = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self.dropped_bytes = _repair(self.path)
            for rec in self._read(self.path):
                self._keep(rec)
        self.cache_path = Path(cache) if cache is not None else None
        self.cache: dict[str, dict[str, Any]] = {}
        if self.cache_path is not None and self.cache_path.exists():
            _repair(self.cache_path)
            for rec in self._read(self.cache_path):
                if rec.get("verdict") != "error":
                    self.cache.setdefault(rec["key"], rec)
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8")
        self._cache_fh: IO[str] | None = (open(self.cache_path, "a", encoding="utf-8")
                                          if self.cache_path is not None else None)

    @staticmethod
    def _read(path: Path) -> Iterator[dict[str, Any]]:
        from evalkit.io._json import iter_jsonl

        for line_no, rec in iter_jsonl(path, "a verdict record", advice="The verdict log is append-only: restore "
                                       "it, or start a new --out folder."):
            if not isinstance(rec, dict) or "key" not in rec or rec.get("verdict") not in VERDICTS:
                raise ValueError(f"{path} line {line_no} is not a verdict record (needs 'key' and a 'verdict' "
                                 f"of {VERDICTS}).")
            yield rec

    def _keep(self, rec: dict[str, Any]) -> None:
        old = self.records.get(rec["key"])
        if old is None or (old.get("verdict") == "error" and rec.get("verdict") != "error"):
            self.records[rec["key"]] = rec
        else:
            self.duplicates += 1

    def get(self, key: str) -> dict[str, Any] | None:
        """The logged (or cached) answer to this call, unless it was an error (errors are retried)."""
        rec = self.records.get(key)
        if rec is not None and rec.get("verdict") != "error":
            return rec
        hit = self.cache.get(key)
        return None if hit is None else {**hit, "cached": True}

    def append(self, rec: dict[str, Any]) -> None:
        """Append ``rec`` as one line (written whole, flushed, fsync-ed per ``fsync_every``)."""
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._fh.write(line)
        self._fh.flush()
        self._pending += 1
        if self._pending >= self.fsync_every:
            os.fsync(self._fh.fileno())
            self._pending = 0
        self._keep(rec)
        if self._cache_fh is not None and rec.get("verdict") != "error" and rec["key"] not in self.cache:
            self._cache_fh.write(line)
            self._cache_fh.flush()
            self.cache[rec["key"]] = rec

    def close(self) -> None:
        if self._pending:
            os.fsync(self._fh.fileno())
            self._pending = 0
        self._fh.close()
        if self._cache_fh is not None:
            self._cache_fh.close()

    def __enter__(self) -> VerdictLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
