"""Atomic, self-describing output folders and files.

Every command that writes a folder builds it with :func:`atomic_output_dir`:

1. an existing non-empty target is refused unless ``force=True``, and even then unless it is a
   folder evalkit wrote (a ``run.json`` manifest listing every file in it): any other folder is
   left byte-identical and the run fails with the reason (exit 2);
2. the files are written into a temporary sibling ``.<name>.partial-<pid>-<random>``, created
   with the process's umask (folders ``0777 & ~umask``, files ``0666 & ~umask``);
3. ``run.json`` is written last: the run's record plus ``files``, every file with its size
   and SHA-256, and ``"complete": true``; its own SHA-256 goes into the sidecar
   ``run.json.sha256``, so that an edit to ``run.json`` is caught by :func:`verify_dir` too;
4. under an exclusive lock on the parent folder, the target is checked again (a concurrent
   run may have written it meanwhile: without ``force`` this run then fails) and the sibling
   is renamed into place (an atomic exchange with the old folder under ``force``, where the
   platform has one).

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
import secrets
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._escape import ColumnTable, is_column_table, neutralize_frame
from evalkit._written import record_written, written

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd  # only the frames passed in: rate --out writes its column table without pandas

__all__ = [
    "MANIFEST", "SIDECAR", "OutputDir", "atomic_output_dir", "atomic_file", "write_csv", "file_record", "verify_dir",
    "check_out_path",
]

#: Name of the manifest every output folder carries.
MANIFEST = "run.json"
#: The manifest's own SHA-256 (``sha256sum`` format), so that verify covers ``run.json`` too.
SIDECAR = "run.json.sha256"
_PARTIAL = ".partial-"


@dataclass
class OutputDir:
    """The folder being built: write into ``path``; fill ``record`` (goes into ``run.json``)."""

    path: Path
    target: Path
    record: dict[str, Any] = field(default_factory=dict)
    raw_csv: bool = False

    def write_csv(self, frame: pd.DataFrame | ColumnTable, name: str, *, index: bool = False) -> Path:
        """Write ``frame`` to ``path / name`` (formula cells neutralised unless ``raw_csv``)."""
        return write_csv(frame, self.path / name, raw=self.raw_csv, index=index)


def check_out_path(out: str | os.PathLike[str], *, force: bool = False, flag: str = "--out") -> Path:
    """Refuse ``-``, an existing non-empty folder without ``force``, and with ``force`` any folder
    evalkit did not write, before any work starts."""
    if str(out) == "-":
        raise ValueError(f"{flag} - is not supported: this command writes a folder of several files. "
                         f"Give a folder name (use --json to print the result table on stdout).")
    target = Path(out)
    if target.is_symlink():
        raise ValueError(f"{flag} {str(target)!r} is a symbolic link; give the folder itself (evalkit replaces "
                         "folders it wrote, never what a link points to).")
    if target.exists() and not target.is_dir():
        raise ValueError(f"{flag} {str(target)!r} exists and is not a folder; choose another name.")
    here = Path.cwd().resolve()
    if target.exists() and (target.resolve() == here or target.resolve() in here.parents):
        raise ValueError(f"{flag} {str(target)!r} is the current folder or one of its parents; give a new folder "
                         f"for the output (it is replaced whole).")
    _check_replaceable(target, force=force, flag=flag)
    return target


def _check_replaceable(target: Path, *, force: bool, flag: str) -> None:
    if not target.is_dir() or not any(target.iterdir()):
        return
    if not force:
        raise ValueError(f"{flag} {str(target)!r} exists and is not empty; pass --force to replace it whole "
                         f"(force=True in Python), or choose another folder.")
    why = _not_ours(target)
    if why:
        raise ValueError(f"{flag} {str(target)!r} was not written by evalkit ({why}); --force replaces only a folder "
                         "that evalkit wrote, and this one is left as it is. Choose another folder, or move its "
                         "files away first.")


def _not_ours(root: Path) -> str | None:
    """Why ``root`` is not a folder evalkit wrote (None: it is): it must hold a complete ``run.json``
    listing every file in it (besides the manifest and its sidecar), and no symbolic link."""
    man = root / MANIFEST
    if not man.is_file() or man.is_symlink():
        return f"it has no {MANIFEST} manifest"
    try:
        data = _load_manifest(man)
    except ValueError as exc:
        return f"its {MANIFEST} is not an evalkit manifest: {exc}"
    listed = {e.get("path") for e in data["files"] if isinstance(e, dict)}
    extra = []
    for rel, is_link in _tree(root):
        if is_link:
            return f"it holds the symbolic link {rel!r}"
        if rel not in listed and rel not in (MANIFEST, SIDECAR):
            extra.append(rel)
    if extra:
        shown = ", ".join(repr(x) for x in extra[:3]) + (" ..." if len(extra) > 3 else "")
        return f"it holds {len(extra)} file(s) its {MANIFEST} does not list: {shown}"
    return None


def _tree(root: Path) -> list[tuple[str, bool]]:
    """``(relative path, is a symlink)`` of every file and symlink below ``root``, links never followed."""
    out = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        for name in sorted(dirs):
            p = base / name
            if p.is_symlink():
                out.append((p.relative_to(root).as_posix(), True))
        for name in sorted(files):
            p = base / name
            out.append((p.relative_to(root).as_posix(), p.is_symlink()))
    return sorted(out)


def _load_manifest(man: Path) -> dict[str, Any]:
    """The parsed manifest; ValueError when it is unreadable, not JSON, or not complete."""
    from evalkit.io._json import loads
    from evalkit.io._limits import read_bytes

    try:
        data = loads(read_bytes(man, source=MANIFEST), MANIFEST, expected="an evalkit manifest")
    except OSError as exc:
        raise ValueError(f"it cannot be read ({exc.strerror or exc})") from None
    if not isinstance(data, dict) or data.get("complete") is not True or not isinstance(data.get("files"), list):
        raise ValueError("it does not mark the folder complete (no 'complete': true and 'files' list)")
    return data


def file_record(path: Path, root: Path) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of one file (path relative to ``root``, with ``/``)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return {"path": path.relative_to(root).as_posix(), "bytes": path.stat().st_size, "sha256": h.hexdigest()}


def _manifest_files(root: Path) -> list[dict[str, Any]]:
    return [file_record(root / rel, root) for rel, is_link in _tree(root)
            if not is_link and rel not in (MANIFEST, SIDECAR)]


def _write_manifest(root: Path, record: Mapping[str, Any]) -> str:
    """Write ``run.json`` and its sidecar; return the manifest's SHA-256."""
    data = {**dict(record), "files": _manifest_files(root), "complete": True}
    body = (json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
    tmp = root / f".{MANIFEST}.tmp"
    digest = hashlib.sha256(body).hexdigest()
    tmp.write_bytes(body)
    (root / SIDECAR).write_text(f"{digest}  {MANIFEST}\n", encoding="ascii")
    os.replace(tmp, root / MANIFEST)
    return digest


def _holds(target: Path, digest: str) -> bool:
    """Whether ``target`` is the folder whose manifest has SHA-256 ``digest`` (never raises)."""
    try:
        return (target / SIDECAR).read_text(encoding="ascii", errors="replace").split()[:1] == [digest]
    except (OSError, ValueError):
        return False


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


@contextlib.contextmanager
def _parent_lock(parent: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the parent folder while the target is checked and replaced: two
    runs into one ``--out`` are serialised there (best effort where the platform has no flock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(parent, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _move_into_place(staging: Path, target: Path, *, force: bool) -> None:
    with _parent_lock(target.parent):
        _check_replaceable(target, force=force, flag="--out")  # again: a concurrent run may have written it
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


def _make_dir(parent: Path, prefix: str) -> Path:
    """A new folder ``parent/prefix<random>``, mode ``0777 & ~umask`` (``mkdtemp`` would make it 0700)."""
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(path, 0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary folder in {parent}")


def _make_file(parent: Path, prefix: str, suffix: str) -> Path:
    """A new empty file, mode ``0666 & ~umask`` (``mkstemp`` would make it 0600)."""
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file in {parent}")


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
    staging = _make_dir(target.parent, f".{target.name}{_PARTIAL}{os.getpid()}-")
    handle = OutputDir(path=staging, target=target, record=dict(record or {}), raw_csv=raw_csv)
    digest = None
    try:
        yield handle
        digest = _write_manifest(staging, handle.record)
        _move_into_place(staging, target, force=force)
        record_written(target)
    except BaseException:
        # interrupted after the folder was moved into place (e.g. while the old one was being
        # removed): the new folder stands, complete, and the record says so
        if digest is not None and _holds(target, digest) and target not in written():
            record_written(target)
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
    if target.is_dir():
        raise ValueError(f"{flag} {str(target)!r} is a folder; give a file name.")
    tmp = _make_file(target.parent, f".{target.name}{_PARTIAL}{os.getpid()}-", target.suffix)
    done = False
    try:
        yield Path(tmp)
        done = True
        os.replace(tmp, target)
        record_written(target)
    except BaseException:
        if done and not tmp.exists() and target not in written():  # replaced before the interruption
            record_written(target)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_csv(frame: pd.DataFrame | ColumnTable, path: str | os.PathLike[str], *, raw: bool = False,
              index: bool = False) -> Path:
    """Write ``frame`` as CSV; text cells a spreadsheet would evaluate get a leading ``'`` unless ``raw``.

    Lines end in ``\\n``; a table with a carriage return inside a text cell is written with
    ``\\r\\n`` line ends instead, so that the cell is quoted and the row stays one row. A column
    table (numpy columns, :func:`evalkit._escape.is_column_table`) is written without pandas,
    the same bytes (:mod:`evalkit._csv`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if is_column_table(frame):
        if not index:
            from evalkit._csv import columns_csv

            path.write_text(columns_csv(frame, raw=raw), encoding="utf-8", newline="")
            return path
        frame = frame.to_frame()
    data = frame.reset_index() if index else frame
    # a CR inside a cell: Python's csv quotes only the characters of its line terminator, so a
    # bare CR would go out unquoted and split the row in a spreadsheet; such a file is written
    # with RFC 4180's CRLF line ends, which quote every cell holding a CR or LF
    crlf = any(isinstance(c, str) and "\r" in c for c in data.columns) or any(  # a header cell too
        data[c].map(lambda v: isinstance(v, str) and "\r" in v).any()
        for c in data.columns if data[c].dtype == object or str(data[c].dtype) in ("string", "str"))
    from evalkit._csv import nul_escapechar

    nul = any(isinstance(c, str) and "\0" in c for c in data.columns) or any(
        data[c].map(lambda v: isinstance(v, str) and "\0" in v).any()
        for c in data.columns if data[c].dtype == object or str(data[c].dtype) in ("string", "str"))
    (data if raw else neutralize_frame(data)).to_csv(path, index=False, lineterminator="\r\n" if crlf else "\n",
                                                     escapechar=nul_escapechar(nul))
    return path


def verify_dir(path: str | os.PathLike[str]) -> list[str]:
    """Check a folder against its ``run.json``; return the problems (empty: the folder is complete).

    A problem is a missing, unreadable or edited manifest (its SHA-256 is in ``run.json.sha256``),
    a manifest not marked complete, an entry that is not an object or names a path outside the
    folder, a listed file missing or with another size or SHA-256, a file the manifest does not
    list, and any symbolic link (to a file or a folder). Never raises for what it finds on disk.
    """
    root = Path(path)
    try:
        return _verify(root)
    except (OSError, ValueError, RecursionError, MemoryError) as exc:  # whatever the folder holds: a problem
        return [f"{str(root)!r} cannot be checked: {exc}"]


def _verify(root: Path) -> list[str]:
    if root.is_symlink():
        return [f"{str(root)!r} is a symbolic link; evalkit writes real folders (verify the folder itself)"]
    if not root.is_dir():
        return [f"{str(root)!r} is not a folder"]
    man = root / MANIFEST
    if man.is_symlink() or not man.is_file():
        return [f"no {MANIFEST} in {str(root)!r}: the run did not finish, or this folder was not written by evalkit"]
    problems = []
    side = root / SIDECAR
    body = man.read_bytes()
    if side.is_symlink() or not side.is_file():
        problems.append(f"no {SIDECAR}: the manifest itself cannot be checked")
    else:
        want = side.read_text(encoding="ascii", errors="replace").split()[:1]
        if want != [hashlib.sha256(body).hexdigest()]:
            problems.append(f"changed: {MANIFEST} (its SHA-256 differs from {SIDECAR})")
    try:
        data = _load_manifest(man)
    except ValueError as exc:
        return problems + [f"{MANIFEST} {exc}"]
    listed: set[str] = set()
    for k, entry in enumerate(data["files"], start=1):
        rel = _entry_path(entry, root)
        if isinstance(rel, tuple):
            problems.append(f"entry {k} of {MANIFEST} {rel[0]}")
            continue
        listed.add(rel)
        p = root / rel
        if p.is_symlink():
            problems.append(f"symbolic link: {rel}")
            continue
        if not p.is_file():
            problems.append(f"missing: {rel}")
            continue
        actual = file_record(p, root)
        if actual["sha256"] != entry.get("sha256") or actual["bytes"] != entry.get("bytes"):
            problems.append(f"changed: {rel} (SHA-256 or size differs from {MANIFEST})")
    for rel, is_link in _tree(root):
        if is_link and rel not in listed:
            problems.append(f"symbolic link: {rel}")
        elif rel not in listed and rel not in (MANIFEST, SIDECAR):
            problems.append(f"not in {MANIFEST}: {rel}")
    return problems


def _entry_path(entry: object, root: Path) -> str | tuple[str]:
    """The entry's relative path, or ``(why it is refused,)``: not an object, no path, a path
    outside the folder (absolute, ``..``, or through a symbolic link)."""
    if not isinstance(entry, dict):
        return (f"is a JSON {type(entry).__name__}, not an object with path, bytes and sha256",)
    rel = entry.get("path")
    if not isinstance(rel, str) or not rel:
        return ("has no 'path' string",)
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts or "\\" in rel or "\x00" in rel:
        return (f"names {rel!r}, outside the folder; refused, not read",)
    try:
        inside = (root / rel).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        return (f"names {rel!r}, which leads outside the folder (a symbolic link); refused, not read",)
    return rel
