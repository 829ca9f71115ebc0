"""Hostile inputs built byte by byte, for the tests and scripts/hostile_bombs.py: zip and gzip bombs,
archives whose headers lie, deep JSON. Each builder is instant (no gigabytes compressed to make them)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

__all__ = ["zstd_zeros", "deflate_zeros", "write_zip", "eval_bomb", "gzip_bomb", "deep_json", "small_eval"]

_BLOCK = 1 << 17  # zstd's largest block


def zstd_zeros(n_blocks: int) -> bytes:
    """A Zstandard frame of ``n_blocks`` RLE blocks of 128 KiB zeros: 4 bytes of input per 128 KiB of output
    (RFC 8878: frame header without content size, window log 17)."""
    head = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 7 << 3])
    block = ((_BLOCK << 3) | (1 << 1)).to_bytes(3, "little") + b"\x00"
    last = ((_BLOCK << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"\x00"
    return head + block * (n_blocks - 1) + last


def deflate_zeros(n: int, chunk: int = 1 << 20) -> bytes:
    """Raw deflate of ``n`` zero bytes (about 1000:1)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    parts = [c.compress(zeros) for _ in range(n // chunk)]
    parts.append(c.compress(bytes(n % chunk)))
    return b"".join(parts) + c.flush()


def write_zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> Path:
    """A zip of ``(name, method, compressed bytes, crc, claimed size)`` members, the sizes as claimed."""
    local, central = [], []
    offset = 0
    for name, method, data, crc, size in members:
        raw = name.encode()
        head = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, crc, len(data), size, len(raw), 0)
        local.append(head + raw + data)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0, crc, len(data), size,
                                   len(raw), 0, 0, 0, 0, 0, offset) + raw)
        offset += len(local[-1])
    cd = b"".join(central)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(cd), offset, 0)
    path.write_bytes(b"".join(local) + cd + end)
    return path


def _stored(name: str, obj: object) -> tuple[str, int, bytes, int, int]:
    data = json.dumps(obj).encode()
    return name, 0, data, zlib.crc32(data), len(data)


def small_eval(path: Path, *, model: str = "m", samples: int = 2) -> Path:
    """A minimal valid Inspect .eval log (stored members): one model call and a score per sample."""
    members = [_stored("header.json", {"eval": {"task": "t", "model": model}})]
    for i in range(samples):
        members.append(_stored(f"samples/{i}_epoch_1.json", {
            "id": i, "epoch": 1, "scores": {"s": {"value": i % 2}},
            "events": [{"event": "model", "output": {"usage": {"input_tokens": 10, "output_tokens": 5}}}]}))
    return write_zip(path, members)


def eval_bomb(path: Path, *, n_blocks: int = 17_000, claimed: int | None = None, method: int = 93) -> Path:
    """An Inspect .eval whose sample member is a Zstandard (93) or deflate (8) bomb of zeros: with the default
    17,000 blocks, a 68 kB file that claims (``claimed``, default the truth) and holds 2.2 GB."""
    size = n_blocks * _BLOCK
    data = zstd_zeros(n_blocks) if method == 93 else deflate_zeros(size)
    crc = zlib.crc32(bytes(size)) if size <= 1 << 24 else 0
    header = _stored("header.json", {"eval": {"task": "t", "model": "m"}})
    return write_zip(path, [header, ("samples/1_epoch_1.json", method, data, crc,
                                     size if claimed is None else claimed)])


def gzip_bomb(path: Path, size: int) -> Path:
    """One gzip member of ``size`` zero bytes (about 1000:1: 4 GB in a 4 MB file)."""
    body = deflate_zeros(size)
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    crc = 0
    zeros = bytes(1 << 20)
    for _ in range(size >> 20):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(bytes(size & ((1 << 20) - 1)), crc)
    path.write_bytes(head + body + struct.pack("<2L", crc, size & 0xFFFFFFFF))
    return path


def deep_json(depth: int, *, kind: str = "[") -> str:
    """JSON nested ``depth`` deep: ``[[[...]]]`` or ``{"a": {"a": ...}}``."""
    if kind == "[":
        return "[" * depth + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth
