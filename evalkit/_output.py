"""Atomic, self-describing output folders and files.

Every command that writes a folder builds it with :func:`atomic_output_dir`:

1. an existing non-empty target is refused unless ``force=True`` (then it is replaced whole);
2. the files are written into a temporary sibling ``.<name>.partial-<pid>-<random>``;
3. ``run.json`` is written last: the run's record plus ``files``, every file with its size
   and SHA-256, and ``"complete": true``;
4. the sibling is renamed into place (an atomic exchange with the old folder under
   ``force``, where the platform has one).

An interrupted run (Ctrl-C, kill, crash) leaves the previous folder untouched and at most a
``.partial`` sibling without a manifest, which :func:`verify_dir` rejects and the next run
into the same target removes. :func:`verify_dir` (CLI: ``evalkit verify DIR``) checks a
folder against its manifest: no file missing, changed or unlisted.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._escape import neutralize_frame

__all__ = [
    "MANIFEST", "OutputDir", "atomic_output_dir", "atomic_file", "write_csv", "file_record", "verify_dir",
    "check_out_path",
]

#: Name of the manifest every output folder carries.
MANIFEST = "run.json"
_PARTIAL = ".partial-"


@dataclass
class OutputDir:
    """The folder being built: write into ``path``; fill ``record`` (goes into ``run.json``)."""

    path: Path
    target: Path
    record: dict[str, Any] = field(default_factory=dict)
    raw_csv: bool = False

    def write_csv(self, frame: pd.DataFrame, name: str, *, index: bool = False) -> Path:
        """Write ``frame`` to ``path / name`` (formula cells neutralised unless ``raw_csv``)."""
        return write_csv(frame, self.path / name, raw=self.raw_csv, index=index)


def check_out_path(out: str | os.PathLike[str], *, force: bool = False, flag: str = "--out") -> Path:
    """Refuse ``-`` and an existing non-empty folder (without ``force``) before any work starts."""
    if str(out) == "-":
        raise ValueError(f"{flag} - is not supported: this command writes a folder of several files. "
                         f"Give a folder name (use --json to print the result table on stdout).")
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ValueError(f"{flag} {str(target)!r} exists and is not a folder; choose another name.")
    here = Path.cwd().resolve()
    if target.exists() and (target.resolve() == here or target.resolve() in here.parents):
        raise ValueError(f"{flag} {str(target)!r} is the current folder or one of its parents; give a new folder "
                         f"for the output (it is replaced whole).")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise ValueError(f"{flag} {str(target)!r} exists and is not empty; pass --force to replace it whole "
                         f"(force=True in Python), or choose another folder.")
    return target


def file_record(path: Path, root: Path) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of one file (path relative to ``root``, with ``/``)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return {"path": path.relative_to(root).as_posix(), "bytes": path.stat().st_size, "sha256": h.hexdigest()}


def _manifest_files(root: Path) -> list[dict[str, Any]]:
    return [file_record(p, root) for p in sorted(root.rglob("*")) if p.is_file() and p.relative_to(root).as_posix()
            != MANIFEST]


def _write_manifest(root: Path, record: Mapping[str, Any]) -> None:
    data = {**dict(record), "files": _manifest_files(root), "complete": True}
    tmp = root / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, root / MANIFEST)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    try:
        fn = ctypes.CDLL(libc_name, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


def _remove_stale_partials(target: Path) -> None:
    for p in target.parent.glob(f".{target.name}{_PARTIAL}*"):
        try:
            pid = int(p.name[len(target.name) + len(_PARTIAL) + 1:].split("-", 1)[0])
            os.kill(pid, 0)  # still running: leave it alone
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
        except (ValueError, PermissionError):
            continue


def _move_into_place(staging: Path, target: Path) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    if not any(target.iterdir()):
        target.rmdir()
        os.rename(staging, target)
        return
    if _exchange(staging, target):  # staging now holds the old folder
        shutil.rmtree(staging, ignore_errors=True)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.rename(target, old)
    os.rename(staging, target)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_output_dir(
    out: str | os.PathLike[str], *, force: bool = False, raw_csv: bool = False,
    record: Mapping[str, Any] | None = None,
) -> Iterator[OutputDir]:
    """Build an output folder in a temporary sibling and rename it into place when done.

    Parameters
    ----------
    out : path
        The folder to create. An existing non-empty folder is refused unless ``force``.
    force : bool
        Replace an existing folder whole (never file by file).
    raw_csv : bool
        :meth:`OutputDir.write_csv` writes cells verbatim instead of neutralising formulas.
    record : mapping, optional
        Initial content of ``run.json`` (the body may add to ``OutputDir.record``).

    Yields
    ------
    OutputDir
        Write into ``.path``. On normal exit ``run.json`` is written last (``files`` with
        SHA-256 and ``complete``) and the folder is moved to ``out``; on any exception,
        including KeyboardInterrupt, the temporary folder is removed and ``out`` is untouched.
    """
    target = check_out_path(out, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}{_PARTIAL}{os.getpid()}-", dir=target.parent))
    handle = OutputDir(path=staging, target=target, record=dict(record or {}), raw_csv=raw_csv)
    try:
        yield handle
        _write_manifest(staging, handle.record)
        _move_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_file(out: str | os.PathLike[str], *, force: bool = True, flag: str = "--out") -> Iterator[Path]:
    """Write one file atomically: yield a temporary sibling path, rename it to ``out`` on success."""
    target = Path(out)
    if str(out) == "-":
        raise ValueError(f"{flag} - is not supported here; the result table goes to stdout already "
                         f"(--json for JSON).")
    if target.exists() and not force:
        raise ValueError(f"{flag} {str(target)!r} exists; pass --force to replace it.")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{_PARTIAL}{os.getpid()}-", suffix=target.suffix,
                               dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_csv(frame: pd.DataFrame, path: str | os.PathLike[str], *, raw: bool = False, index: bool = False) -> Path:
    """Write ``frame`` as CSV; text cells a spreadsheet would evaluate get a leading ``'`` unless ``raw``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = frame.reset_index() if index else frame
    (data if raw else neutralize_frame(data)).to_csv(path, index=False)
    return path


def verify_dir(path: str | os.PathLike[str]) -> list[str]:
    """Check a folder against its ``run.json``; return the problems (empty: the folder is complete).

    A problem is a missing or unreadable manifest, a manifest not marked complete, a listed
    file missing or with another size or SHA-256, or a file the manifest does not list.
    """
    root = Path(path)
    if not root.is_dir():
        return [f"{str(root)!r} is not a folder"]
    man = root / MANIFEST
    if not man.is_file():
        return [f"no {MANIFEST} in {str(root)!r}: the run did not finish, or this folder was not written by evalkit"]
    try:
        data = json.loads(man.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{MANIFEST} is not valid JSON ({exc})"]
    if not isinstance(data, dict) or data.get("complete") is not True or not isinstance(data.get("files"), list):
        return [f"{MANIFEST} does not mark the folder complete (no 'complete': true and 'files' list)"]
    problems = []
    listed = {}
    for entry in data["files"]:
        rel = str(entry.get("path", ""))
        listed[rel] = entry
        p = root / rel
        if not p.is_file():
            problems.append(f"missing: {rel}")
            continue
        actual = file_record(p, root)
        if actual["sha256"] != entry.get("sha256") or actual["bytes"] != entry.get("bytes"):
            problems.append(f"changed: {rel} (SHA-256 or size differs from {MANIFEST})")
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and rel != MANIFEST and rel not in listed:
            problems.append(f"not in {MANIFEST}: {rel}")
    return problems
