"""What a reader may spend on one input, whatever the input claims about itself.

Every reader goes through this module to hold bytes in memory: :func:`read_bytes` (a plain or
gzip file, streamed and decompressed with caps), :func:`read_zip_member` (one member of a zip
archive such as an Inspect ``.eval`` log, streamed with the same caps, whatever sizes its
headers claim) and the checks :func:`check_lines` and :func:`check_columns`. JSON depth is
checked in :mod:`evalkit.io._json`, folder walks and globs in :mod:`evalkit.io._walk`.

=================  =========  ====================================================================
limit              default    what it bounds
=================  =========  ====================================================================
``max_bytes``      1 GiB      bytes one file (after decompression) may hold when a reader loads it
                              into memory; DuckDB's streaming scans are not bound by it
``max_ratio``      100        decompressed bytes per compressed byte (gzip, zip members), checked
                              once a member has produced ``ratio_grace`` bytes: a zip or gzip bomb
``ratio_grace``    1 MiB      output a compressed stream may produce before its ratio is checked
``max_line_bytes`` 16 MiB     one line of a CSV/TSV or JSON Lines file (``\\n``, ``\\r\\n`` or ``\\r``)
``max_columns``    10,000     columns of a table (CSV header, JSON keys, Parquet schema)
``max_depth``      200        nesting of JSON arrays and objects
=================  =========  ====================================================================

Limits are overridden, in order of precedence, by the ``limits=`` keyword of a reader (a
:class:`ReadLimits`, or a mapping of its fields), the context manager :func:`read_limits`, the
CLI flag ``--limit NAME=VALUE`` (repeatable) and the environment variables
``EVALKIT_MAX_BYTES``, ``EVALKIT_MAX_RATIO``, ``EVALKIT_RATIO_GRACE``, ``EVALKIT_MAX_LINE_BYTES``,
``EVALKIT_MAX_COLUMNS`` and ``EVALKIT_MAX_DEPTH``. Sizes take the suffixes k, M, G (powers of
1024): ``--limit max_bytes=4G``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import os
import re
import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol


class _Readable(Protocol):
    """Anything with ``read(n) -> bytes`` (a file, or a counting wrapper around one)."""

    def read(self, n: int, /) -> bytes: ...

__all__ = ["ReadLimits", "current_limits", "read_limits", "parse_limit_specs", "read_bytes", "gunzip",
           "check_lines", "check_columns", "read_zip_member", "LimitError", "check_gzip_prefix", "read_digest", "check_declared", "preflight"]

_ENV = {"max_bytes": "EVALKIT_MAX_BYTES", "max_ratio": "EVALKIT_MAX_RATIO", "ratio_grace": "EVALKIT_RATIO_GRACE",
        "max_line_bytes": "EVALKIT_MAX_LINE_BYTES", "max_columns": "EVALKIT_MAX_COLUMNS",
        "max_depth": "EVALKIT_MAX_DEPTH"}
_CHUNK = 1 << 18


class LimitError(ValueError):
    """An input exceeds a :class:`ReadLimits` bound (a ValueError: the CLI exits 2)."""


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what a reader spends on one input (see the module docstring for each field)."""

    max_bytes: int = 1 << 30
    max_ratio: float = 100.0
    ratio_grace: int = 1 << 20
    max_line_bytes: int = 16 << 20
    max_columns: int = 10_000
    max_depth: int = 200

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"The read limit {f.name} must be a positive number; got {value!r}.")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReadLimits:
        """Defaults, overridden by the ``EVALKIT_MAX_*`` environment variables."""
        env = os.environ if environ is None else environ
        given = {name: env[var] for name, var in _ENV.items() if env.get(var)}
        return cls(**{k: _parse_value(k, v, f"the environment variable {_ENV[k]}")  # type: ignore[arg-type]
                      for k, v in given.items()})  # (each value parsed to its field's int or float)

    def replace(self, **changes: Any) -> ReadLimits:
        """A copy with some fields changed (values may be text such as ``"4G"``)."""
        parsed: dict[str, Any] = {k: _parse_value(k, v, "limits") for k, v in _checked(changes).items()}
        return dataclasses.replace(self, **parsed)

    @property
    def flag_hint(self) -> str:
        return "--limit NAME=VALUE (or EVALKIT_MAX_* in the environment, limits= in Python)"


def _checked(changes: Mapping[str, Any]) -> Mapping[str, Any]:
    known = [f.name for f in dataclasses.fields(ReadLimits)]
    unknown = [k for k in changes if k not in known]
    if unknown:
        raise ValueError(f"Unknown read limit(s) {unknown}; the limits are {known}.")
    return changes


_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]i?b?|b)?\s*$", re.I)


def _parse_value(name: str, value: Any, where: str) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    m = _SIZE.match(str(value))
    if not m:
        raise ValueError(f"The read limit {name} from {where} must be a positive number (sizes may end in k, M, G); "
                         f"got {value!r}.")
    number = float(m.group(1))
    unit = (m.group(2) or "").lower()[:1]
    number *= {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit]
    return number if name == "max_ratio" else int(number)


_CURRENT: contextvars.ContextVar[ReadLimits | None] = contextvars.ContextVar("evalkit_read_limits", default=None)


_ENV_CACHE: dict[tuple[str | None, ...], ReadLimits] = {}


def _env_limits() -> ReadLimits:
    """``ReadLimits.from_env()``, built once per set of environment values (readers ask for the
    limits several times per file: parsing them each time cost ~0.1 ms a call)."""
    key = tuple(os.environ.get(var) for var in _ENV.values())
    found = _ENV_CACHE.get(key)
    if found is None:
        if len(_ENV_CACHE) > 64:
            _ENV_CACHE.clear()
        found = _ENV_CACHE[key] = ReadLimits.from_env()
    return found


def current_limits(limits: ReadLimits | Mapping[str, Any] | None = None) -> ReadLimits:
    """``limits`` when given (a mapping changes the current ones), else the innermost
    :func:`read_limits`, else the environment's."""
    base = _CURRENT.get() or _env_limits()
    if limits is None:
        return base
    if isinstance(limits, ReadLimits):
        return limits
    return base.replace(**dict(limits))


@contextlib.contextmanager
def read_limits(limits: ReadLimits | Mapping[str, Any] | None = None, **changes: Any) -> Iterator[ReadLimits]:
    """Run the block with these limits (``read_limits(max_bytes="4G")``); readers inside use them."""
    new = current_limits(limits)
    if changes:
        new = new.replace(**changes)
    token = _CURRENT.set(new)
    try:
        yield new
    finally:
        _CURRENT.reset(token)


def parse_limit_specs(specs: list[str] | tuple[str, ...]) -> dict[str, int | float]:
    """``["max_bytes=4G", ...]`` (the CLI's ``--limit``) -> ``{"max_bytes": 4294967296}``."""
    out: dict[str, int | float] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep:
            raise ValueError(f"--limit must look like NAME=VALUE (e.g. --limit max_bytes=4G); got {spec!r}.")
        name = name.strip().replace("-", "_")
        _checked({name: value})
        out[name] = _parse_value(name, value.strip(), "--limit")
    ReadLimits(**out)  # type: ignore[arg-type]  # positive values (int or float per field, checked there)
    return out


def _size(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("kiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} bytes"


def _too_big(source: str, what: str, limits: ReadLimits) -> LimitError:
    return LimitError(f"{source} {what}, more than the limit max_bytes={_size(limits.max_bytes)} of what a reader "
                      f"holds in memory. Raise it with --limit max_bytes=SIZE (EVALKIT_MAX_BYTES, "
                      f"limits={{'max_bytes': ...}} in Python) if the file is genuine.")


def _bomb(source: str, out: int, consumed: int, limits: ReadLimits) -> LimitError:
    return LimitError(f"{source} decompresses to more than {limits.max_ratio:g} times its compressed size "
                      f"({_size(out)} from {_size(max(consumed, 1))} so far): a decompression bomb, or data far more "
                      f"repetitive than real logs. Refused; if it is genuine, raise --limit max_ratio=N "
                      f"(EVALKIT_MAX_RATIO).")


class _Budget:
    """Counts output against ``max_bytes`` and the output/input ratio of one compressed stream."""

    def __init__(self, source: str, limits: ReadLimits, cap: int | None = None) -> None:
        self.source, self.limits = source, limits
        self.cap = limits.max_bytes if cap is None else cap
        self.out = 0

    def add(self, n: int, consumed: int) -> None:
        self.out += n
        if self.out > self.cap:
            raise _too_big(self.source, f"decompresses to more than {_size(self.cap)}", self.limits)
        if self.out > self.limits.ratio_grace and self.out > self.limits.max_ratio * max(consumed, 1):
            raise _bomb(self.source, self.out, consumed, self.limits)


def gunzip(fh: _Readable, source: str, limits: ReadLimits, *, cap: int | None = None,
           keep: bool = True) -> bytes:
    """Decompress a gzip stream (every member) with the caps of ``limits``; ``keep=False``
    only measures (returns b"")."""
    budget = _Budget(source, limits, cap)
    parts: list[bytes] = []
    d = zlib.decompressobj(31)
    consumed = 0
    pending = b""
    started = False
    while True:
        if pending:
            chunk, pending = pending, b""  # the rest of a chunk already counted: a member ended inside it
        else:
            chunk = fh.read(_CHUNK)
            consumed += len(chunk)
        if not chunk:
            break
        if d.eof:  # a new gzip member, or trailing padding
            if not chunk.strip(b"\x00"):
                continue
            if chunk[:2] != b"\x1f\x8b":
                raise ValueError(f"{source} has data after the end of its gzip stream that is not gzip: "
                                 f"{chunk[:8]!r}. The file is damaged or not gzip.")
            d = zlib.decompressobj(31)
        data = chunk
        while data:
            try:
                out = d.decompress(data, _CHUNK)
            except zlib.error as exc:
                raise ValueError(f"{source} looks gzip-compressed but could not be decompressed ({exc}); "
                                 "the file is damaged or not gzip.") from None
            started = True
            budget.add(len(out), consumed)
            if keep and out:
                parts.append(out)
            if d.eof:
                pending = d.unused_data
                break
            data = d.unconsumed_tail
    if not started or not d.eof:
        raise ValueError(f"{source} is a truncated gzip file (the compressed stream ends early, after "
                         f"{_size(budget.out)} of output). Re-download or re-compress it.")
    return b"".join(parts)


def check_gzip_prefix(path: Path, *, limits: ReadLimits | None = None, prefix: int = 64 << 20) -> None:
    """Decompress (and discard) up to ``prefix`` bytes of a gzip file: a bomb is refused in a
    fraction of a second, before a streaming engine spends minutes on it."""
    lim = limits or current_limits()

    class _Enough(Exception):
        pass

    budget_cap = min(prefix, lim.max_bytes * 64)
    with open(path, "rb") as fh:
        try:
            gunzip(_Prefix(fh, budget_cap, _Enough), str(path), lim, cap=None, keep=False)
        except _Enough:
            return


class _Prefix:
    """A file whose reads stop (raising ``stop``) once ``cap`` bytes have been read: with a ratio
    limit r, at most r * cap bytes of output are ever produced from it."""

    def __init__(self, fh: IO[bytes], cap: int, stop: type[Exception]) -> None:
        self.fh, self.left, self.stop = fh, max(cap // 64, _CHUNK), stop

    def read(self, n: int) -> bytes:
        if self.left <= 0:
            raise self.stop()
        data = self.fh.read(min(n, self.left))
        self.left -= len(data)
        return data


class _Hashing:
    """A file whose reads feed a SHA-256 and a byte count: the digest of exactly what was read."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fh, self.sha, self.n = fh, hashlib.sha256(), 0

    def read(self, n: int = -1, /) -> bytes:
        data = self.fh.read(n)
        self.sha.update(data)
        self.n += len(data)
        return data


# path (resolved) -> what its last read through read_bytes saw: bytes on disk, SHA-256, stat
_DIGESTS: dict[str, dict[str, Any]] = {}
_MAX_DIGESTS = 10_000


def _key(path: Path) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return str(path)


def _remember(path: Path, fh: IO[bytes], hashing: _Hashing) -> None:
    st = os.fstat(fh.fileno())
    if len(_DIGESTS) >= _MAX_DIGESTS:
        _DIGESTS.pop(next(iter(_DIGESTS)))
    _DIGESTS[_key(path)] = {"bytes": hashing.n, "sha256": hashing.sha.hexdigest(),
                            "stat": (st.st_size, st.st_mtime_ns, st.st_ino)}


def read_digest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"bytes", "sha256"}`` of the bytes of ``path`` (as stored on disk, before any gunzip)
    that its last :func:`read_bytes` read and a reader then analysed; ``"hashed": "when read"``.
    A file never read through :func:`read_bytes` (a DuckDB scan, a zip archive read member by
    member) is hashed now (``"hashed": "when recorded"``). ``"changed_since_read": true`` says
    the file on disk is no longer the one read: the digest is still of the bytes analysed."""
    p = Path(path)
    seen = _DIGESTS.get(_key(p))
    if seen is None:
        sha, n = hashlib.sha256(), 0
        with open(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                sha.update(chunk)
                n += len(chunk)
        return {"bytes": n, "sha256": sha.hexdigest(), "hashed": "when recorded"}
    out = {"bytes": seen["bytes"], "sha256": seen["sha256"], "hashed": "when read"}
    try:
        st = p.stat()
        now = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        now = None
    if now != seen["stat"]:
        out["changed_since_read"] = True
    return out


def read_bytes(path: Path, *, limits: ReadLimits | None = None, source: str | None = None) -> bytes:
    """The bytes of ``path``, gunzipped when they are gzip, never more than ``max_bytes`` (a
    ValueError names the file, the limit and the flag that raises it). The SHA-256 of the bytes
    read is kept for :func:`read_digest` (provenance records the input as it was analysed)."""
    lim = limits or current_limits()
    name = source or str(path)
    with open(path, "rb") as raw:
        fh = _Hashing(raw)
        if raw.read(2) == b"\x1f\x8b":
            raw.seek(0)
            data = gunzip(fh, name, lim)
            while fh.read(_CHUNK):  # trailing padding the decompressor skipped: still part of the file
                pass
            _remember(path, raw, fh)
            return data
        raw.seek(0)
        size = os.fstat(raw.fileno()).st_size
        if size > lim.max_bytes:
            raise _too_big(name, f"holds {_size(size)}", lim)
        parts = [fh.read(size)]  # then whatever the file grew by while it is read, still bounded
        total = len(parts[0])
        while chunk := fh.read(_CHUNK):
            total += len(chunk)
            if total > lim.max_bytes:
                raise _too_big(name, "grew past the limit while it was read", lim)
            parts.append(chunk)
        _remember(path, raw, fh)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _line_at(data: bytes, pos: int) -> tuple[int, int]:
    """(1-based line number, length) of the line holding byte ``pos`` (``\\n`` or ``\\r`` ends a line)."""
    start = max(data.rfind(b"\n", 0, pos), data.rfind(b"\r", 0, pos)) + 1
    ends = [i for i in (data.find(b"\n", pos), data.find(b"\r", pos)) if i >= 0]
    end = min(ends) if ends else len(data)
    head = data[:start]
    line = head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1
    return line, end - start


def check_lines(data: bytes, source: str, limits: ReadLimits | None = None) -> None:
    """Refuse a line longer than ``max_line_bytes`` (a 1 GiB single-line CSV, an old-Mac file
    that is one line to a reader that splits at ``\\n`` only is fine: ``\\r`` ends a line here)."""
    lim = limits or current_limits()
    cap = int(lim.max_line_bytes)
    if len(data) <= cap:
        return
    step = max(cap // 2, 1)
    for pos in range(0, len(data) - step + 1, step):  # a line longer than cap covers a whole window
        if data.find(b"\n", pos, pos + step) < 0 and data.find(b"\r", pos, pos + step) < 0:
            line, length = _line_at(data, pos)
            if length > cap:
                raise LimitError(f"{source}: line {line} is {_size(length)} long, more than the limit "
                                 f"max_line_bytes={_size(cap)}. A table or JSON Lines file has one record a line; "
                                 "raise it with --limit max_line_bytes=SIZE (EVALKIT_MAX_LINE_BYTES) if the "
                                 "file is genuine.")


def check_columns(n: int, source: str, limits: ReadLimits | None = None, *, what: str = "columns") -> None:
    """Refuse a table with more than ``max_columns`` columns."""
    lim = limits or current_limits()
    if n > lim.max_columns:
        raise LimitError(f"{source} has {n} {what}, more than the limit max_columns={lim.max_columns}. Raise it "
                         "with --limit max_columns=N (EVALKIT_MAX_COLUMNS) if the table is genuine.")


# ---- zip members ------------------------------------------------------------------------------

_LOCAL = struct.Struct("<4s2B4HL2L2H")
_STORED, _DEFLATED, _ZSTD = 0, 8, 93


class _Raw:
    """At most ``size`` raw bytes of ``fh`` from its current position, counted."""

    def __init__(self, fh: IO[bytes], size: int) -> None:
        self.fh, self.left, self.consumed = fh, size, 0

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n) if n > 0 else b""
        self.left -= len(data)
        self.consumed += len(data)
        return data

    def readable(self) -> bool:
        return True


def _zstd_reader(raw: _Raw) -> Any:
    try:
        import zstandard
    except ImportError:  # pragma: no cover - Python >= 3.14 without the zstandard package
        raise ValueError("This .eval member is compressed with Zstandard; install the 'zstandard' package.") from None
    # _Raw has read/readable, all stream_reader uses; the stubs ask for a full IO[bytes]
    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)  # type: ignore[arg-type]


def _packed_bound(method: int, declared: int) -> int | None:
    """The most compressed bytes that ``declared`` bytes can take with ``method`` (None: unknown method).
    Generous: deflate's stored blocks add 5 bytes per 64 KiB and Zstandard's raw blocks 3 per 128 KiB
    (zlib's deflateBound, ZSTD_compressBound), plus room for headers and a few empty blocks."""
    if method == _STORED:
        return declared
    if method in (_DEFLATED, _ZSTD):
        return declared + declared // 1000 + 1024
    return None


def _lies(source: str, declared: int, packed: int) -> ValueError:
    return ValueError(f"{source}: its zip header claims {_size(declared)} decompressed, but its compressed data "
                      f"take {_size(packed)}, more than {_size(declared)} can compress to: the header lies about the "
                      "size; the archive is corrupt or was tampered with. Nothing of it was decompressed.")


def check_declared(info: Any, source: str, limits: ReadLimits | None = None) -> None:
    """Refuse a zip member (a :class:`zipfile.ZipInfo`) whose header declares more than
    ``max_bytes`` or more than ``max_ratio`` times its compressed size, or less than its
    compressed data can possibly hold (a lying header), before a byte of it is decompressed.
    Headers can lie the other way too (claim a size the data could take, and hold more), so
    :func:`read_zip_member` also stops inflating one byte past the declared size."""
    lim = limits or current_limits()
    declared, packed = int(info.file_size), int(info.compress_size)
    bound = _packed_bound(int(info.compress_type), declared)
    if bound is not None and packed > bound:
        raise _lies(source, declared, packed)
    if declared > lim.ratio_grace and declared > lim.max_ratio * max(packed, 1):
        raise _bomb(source, declared, packed, lim)
    if declared > lim.max_bytes:
        raise _too_big(source, f"declares {_size(declared)} in its zip header", lim)


def _check_local(fields: tuple[Any, ...], info: Any, name: str) -> None:
    """The local header's method, CRC and sizes must be the central directory's (unless a data
    descriptor follows the data: flag bit 3, local CRC and sizes then 0; or ZIP64: 0xFFFFFFFF)."""
    method, crc, packed, size = fields[4], fields[7], fields[8], fields[9]
    if method != info.compress_type:
        raise ValueError(f"{name}: its local header names compression method {method}, the central directory "
                         f"{info.compress_type}; the archive is corrupt or was tampered with.")
    if fields[3] & 0x8 or 0xFFFFFFFF in (packed, size):
        return
    if (crc, packed, size) != (info.CRC, info.compress_size, info.file_size):
        raise ValueError(f"{name}: its local header claims {size} bytes ({packed} compressed, CRC-32 {crc:08x}), the "
                         f"central directory {info.file_size} ({info.compress_size} compressed, CRC-32 "
                         f"{info.CRC:08x}); the archive is corrupt or was tampered with. Nothing of it was "
                         "decompressed.")


def preflight(paths: list[str], limits: ReadLimits | None = None) -> None:
    """Refuse, in milliseconds and with the standard library only, the inputs among ``paths``
    (files; anything else is skipped) that are zip archives whose headers declare a bomb, or gzip
    files whose first compressed bytes already decompress past ``max_ratio``: before the command
    imports its dependencies or reads anything else."""
    import zipfile

    lim = limits or current_limits()
    for spec in paths:
        p = Path(spec)
        try:
            if not p.is_file():
                continue
            with open(p, "rb") as fh:
                magic = fh.read(4)
        except (OSError, ValueError):
            continue
        if magic[:2] == b"\x1f\x8b":
            check_gzip_prefix(p, limits=lim, prefix=max(lim.ratio_grace * 4, 4 << 20))
        elif magic == b"PK\x03\x04":
            try:
                with zipfile.ZipFile(p) as z:
                    infos = z.infolist()
            except (zipfile.BadZipFile, OSError, ValueError, EOFError):
                continue  # the reader says what is wrong with it
            for info in infos:
                check_declared(info, f"{p.name} (member {info.filename!r})", lim)


def read_zip_member(path: Path, info: Any, *, limits: ReadLimits | None = None, source: str | None = None) -> bytes:
    """The bytes of one member (a :class:`zipfile.ZipInfo`) of the zip archive at ``path``.

    Streamed, whatever the sizes the archive's headers claim: a member whose headers disagree
    or declare a size its compressed data cannot hold is refused before it is decompressed;
    decompression stops one byte past the declared size (at most ``max_bytes``, at most
    ``max_ratio`` times the compressed size past ``ratio_grace``); a member whose CRC or size
    differs from its header, an encrypted member and an unknown compression are refused.
    """
    lim = limits or current_limits()
    name = source or f"{path.name} (member {info.filename!r})"
    check_declared(info, name, lim)
    archive = os.path.getsize(path)
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(_LOCAL.size)
        if len(head) != _LOCAL.size or head[:4] != b"PK\x03\x04":
            raise ValueError(f"{name}: the local header is missing or damaged; the archive is corrupt or truncated.")
        fields = _LOCAL.unpack(head)
        _check_local(fields, info, name)
        fh.seek(fields[10] + fields[11], os.SEEK_CUR)  # file name and extra field
        if info.flag_bits & 0x1:
            raise ValueError(f"{name} is encrypted; evalkit reads unencrypted logs only.")
        size = max(0, min(info.compress_size, archive - fh.tell()))
        raw = _Raw(fh, size)
        budget = _Budget(name, lim)
        parts: list[bytes] = []
        crc = 0
        for piece in _decompressed(raw, info.compress_type, name, limit=int(info.file_size) + 1):
            if budget.out + len(piece) > info.file_size:  # more than the header declares: stop here
                raise _longer(name, int(info.file_size), budget.out + len(piece))
            budget.add(len(piece), raw.consumed)
            crc = zlib.crc32(piece, crc)
            parts.append(piece)
    data = b"".join(parts)
    if len(data) != info.file_size or crc != info.CRC:
        what = "size" if len(data) != info.file_size else "CRC-32"
        raise ValueError(f"{name}: its {what} differs from what the archive's header claims ({info.file_size} bytes "
                         f"claimed, {len(data)} read); the archive is corrupt or was tampered with.")
    return data


def _longer(name: str, declared: int, got: int) -> ValueError:
    return ValueError(f"{name}: its data decompress to more than the {declared} bytes its zip header claims (stopped "
                      f"at {got}); the header lies about the size; the archive is corrupt or was tampered with.")


def _decompressed(raw: _Raw, method: int, name: str, *, limit: int) -> Iterator[bytes]:
    """The member's data, decompressed in pieces; at most ``limit`` bytes in all (the caller refuses a
    member that reaches it), so a header that lies costs no more than its declared size."""
    if method == _STORED:
        while limit > 0 and (chunk := raw.read(min(_CHUNK, limit))):
            limit -= len(chunk)
            yield chunk
        return
    if method == _DEFLATED:
        d = zlib.decompressobj(-15)
        while not d.eof and limit > 0:
            data = d.unconsumed_tail or raw.read(_CHUNK)
            if not data:
                raise ValueError(f"{name}: the compressed data ends early; the archive is truncated.")
            try:
                out = d.decompress(data, min(_CHUNK, limit))
            except zlib.error as exc:
                raise ValueError(f"{name} cannot be decompressed ({exc}); the archive is corrupt.") from None
            if out:
                limit -= len(out)
                yield out
        return
    if method == _ZSTD:
        reader = _zstd_reader(raw)
        while limit > 0:
            try:
                out = reader.read(min(_CHUNK, limit))
            except Exception as exc:  # zstandard.ZstdError and friends
                raise ValueError(f"{name} cannot be decompressed ({exc}); the archive is corrupt.") from None
            if not out:
                return
            limit -= len(out)
            yield out
        return
    raise ValueError(f"{name} uses zip compression method {method}; evalkit reads stored, deflate and Zstandard "
                     "members (as Inspect writes them).")
