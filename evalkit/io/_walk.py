"""Folder walks and globs that end: every directory is entered once, whatever its symlinks say.

``Path.rglob`` and ``glob.glob(recursive=True)`` follow symlinks to directories, so a link to
a parent makes the walk go round; two such links make it exponential. :func:`walk_files` and
:func:`glob_files` follow a symlinked directory once (it may hold the user's data) but never
enter a directory that is already being walked or was walked (by device and inode), so a
loop ends at its first repetition. Results are sorted, like the readers expect.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

__all__ = ["walk_files", "glob_files", "has_magic"]

_MAGIC = re.compile(r"[*?[]")


def has_magic(text: str) -> bool:
    return _MAGIC.search(text) is not None


def _walk(root: Path, seen: set[tuple[int, int]], out: list[Path]) -> None:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = folder.stat()
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue
        seen.add(key)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir():  # follows a symlink; the inode check above stops loops
                    stack.append(Path(entry.path))
                elif entry.is_file():
                    out.append(Path(entry.path))
            except OSError:
                continue


def walk_files(root: str | os.PathLike[str]) -> list[Path]:
    """Every file below ``root`` (recursively, symlinked folders entered once), sorted."""
    out: list[Path] = []
    _walk(Path(root), set(), out)
    return sorted(out)


def _segment(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def glob_files(pattern: str) -> list[Path]:
    """Files matching a glob (``**`` matches any number of folders), sorted; a matched folder
    contributes every file below it. Names starting with ``.`` match only a pattern that does."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if has_magic(part):
            break
        fixed.append(part)
    base = Path(*fixed) if fixed else Path(".")
    rest = parts[len(fixed):]
    if not rest:
        return walk_files(base) if base.is_dir() else ([base] if base.is_file() else [])
    regexes = [None if p == "**" else (_segment(p), p.startswith(".")) for p in rest]
    hits: set[Path] = set()
    seen: set[tuple[Path, int]] = set()
    visited: set[tuple[int, int, int]] = set()
    stack: list[tuple[Path, int]] = [(base, 0)]
    while stack:
        where, k = stack.pop()
        if (where, k) in seen:
            continue
        seen.add((where, k))
        if k == len(regexes):
            hits.add(where)
            continue
        rx = regexes[k]
        if rx is None:  # "**": zero folders, or one more folder and still at "**"
            stack.append((where, k + 1))
            try:
                st = where.stat()
            except OSError:
                continue
            key = (st.st_dev, st.st_ino, k)
            if key in visited:
                continue
            visited.add(key)
            for entry in _entries(where):
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir():
                        stack.append((Path(entry.path), k))
                except OSError:
                    continue
            continue
        regex, dot = rx
        for entry in _entries(where):
            if entry.name.startswith(".") and not dot:
                continue
            if regex.match(entry.name):
                stack.append((Path(entry.path) if str(where) != "." or fixed else Path(entry.name), k + 1))
    files: set[Path] = set()
    for hit in hits:
        if hit.is_dir():
            files.update(walk_files(hit))
        elif hit.is_file():
            files.add(hit)
    return sorted(files)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    if not folder.is_dir():
        return []
    try:
        return list(os.scandir(folder))
    except OSError:
        return []
