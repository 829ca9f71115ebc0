"""What every ``evalkit`` command shares: flags, output, progress, stdin and encodings.

Conventions (README, "Scripting: exit codes, JSON, progress"):

- stdout carries the result only (a table, or JSON with ``--json``); everything else
  (what was read, warnings, progress, "wrote ...") goes to stderr;
- ``--quiet`` silences stderr except warnings and errors; ``--verbose`` adds tracebacks;
- a progress bar (tqdm, on stderr) appears for any step that lasts over 2 s, only when
  stderr is a terminal and not under ``--quiet``; piped, progress is silent, or one line per
  completed stage under ``--verbose`` (for CI logs). ``EVALKIT_PROGRESS_DELAY`` (seconds, default
  2) sets how long a step runs before its bar appears; ``0`` draws every bar at once and every
  update (tqdm's ``delay`` and ``mininterval`` both 0), for tests and screen recordings;
- ``-`` as an input path reads stdin (spooled to a temporary file);
- ``--encoding`` decodes text inputs (passed to the reader as ``encoding=`` when it takes
  one, otherwise the file is re-encoded to UTF-8 first).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._escape import ascii_fast_path, is_column_table, label, markdown_table, terminal_json
from evalkit._lazy import is_dataframe

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["add_common", "UI", "Inputs", "call", "to_json", "report_headline", "progress_delay", "one_blas_thread",
           "BLAS_THREAD_VARIABLES"]

#: Environment variables that set the BLAS thread count; when any is set, :func:`one_blas_thread` leaves it alone.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                         "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")


def one_blas_thread() -> bool:
    """Run BLAS/LAPACK on one thread in this process, unless the user set a thread count
    (:data:`BLAS_THREAD_VARIABLES`) or numpy is already loaded (then it cannot change, and the
    environment is left as it is). Returns whether it did.

    A command's fits are small dense problems (a 200 x 200 LU or eigen-decomposition) that
    threads slow down: on a 2-core machine with other work running, OpenBLAS's second thread
    waits for a core on every call, so ``rate``'s fit and intervals took 0.46-0.95 s wall at 200
    models against 0.19-0.22 s on one thread, and 4.6-6.4 s against 2.5-2.9 s at 2,000 models
    (load 4-5). The environment variable is read once, when numpy loads its BLAS.
    """
    if "numpy" in sys.modules or any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    return True

PROGRESS_DELAY = 2.0  # seconds a step runs before its bar appears (README, "Scripting")
WARN_REPEATS = 3  # warnings of one category printed in full before the rest are counted


def progress_delay() -> float:
    """Seconds before a progress bar appears: ``$EVALKIT_PROGRESS_DELAY`` or
    :data:`PROGRESS_DELAY` (a value that is not a number ≥ 0 is ignored)."""
    try:
        value = float(os.environ.get("EVALKIT_PROGRESS_DELAY", PROGRESS_DELAY))
    except ValueError:
        return PROGRESS_DELAY
    return value if value >= 0 else PROGRESS_DELAY


def add_common(p: argparse.ArgumentParser, *, table: bool = True, writes: bool = False,
               reads: bool = False) -> None:
    """Add the shared flags to a sub-command parser."""
    g = p.add_argument_group("common options")
    g.add_argument("-q", "--quiet", action="store_true", help="only the result on stdout; no progress or notes")
    g.add_argument("-v", "--verbose", action="store_true", help="more detail on stderr (tracebacks on errors)")
    g.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="raise a read limit (repeatable): max_bytes, max_ratio, ratio_grace, max_line_bytes, "
                        "max_columns, max_depth, e.g. --limit max_bytes=4G (also EVALKIT_MAX_*)")
    if table:
        g.add_argument("--json", action="store_true", help="print the result table(s) as JSON on stdout")
    if writes:
        g.add_argument("--force", action="store_true",
                       help="replace an existing non-empty --out whole (default: refuse it)")
        g.add_argument("--raw-csv", action="store_true",
                       help="write CSV cells verbatim (default: a text cell starting with = + - @ gets a "
                            "leading ' so spreadsheets do not run it as a formula)")
    if reads:
        g.add_argument("--encoding", default=None, metavar="NAME",
                       help="text encoding of the input files, e.g. latin-1, utf-16, cp1252 (default: UTF-8)")


def to_json(obj: Any) -> Any:
    """Frames as lists of records (NaN as null), dicts and lists recursively; other values as is."""
    import pandas as pd

    if isinstance(obj, pd.DataFrame):
        frame = obj.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return json.loads(frame.to_json(orient="records", force_ascii=False, double_precision=15))
    if isinstance(obj, Mapping):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    return obj


class UI:
    """Where a command's output goes, honouring ``--quiet``, ``--verbose`` and ``--json``."""

    def __init__(self, command: str, *, quiet: bool = False, verbose: bool = False, json_out: bool = False,
                 stderr: Any = None) -> None:
        self.command = command
        self.quiet, self.verbose, self.json = quiet, verbose, json_out
        self._err = stderr
        self._bar: Any = None
        self._stage: str | None = None
        self._t0 = time.perf_counter()
        self.bars = not quiet and self.err.isatty() and os.environ.get("TERM") != "dumb"
        self.delay = progress_delay()
        self._seen: dict[str, int] = {}  # warnings shown (and held back) per category

    @property
    def err(self) -> Any:
        return self._err if self._err is not None else sys.stderr

    def _write(self, text: str) -> None:
        if self._bar is not None:
            from tqdm import tqdm

            tqdm.write(text, file=self.err)
        else:
            print(text, file=self.err, flush=True)

    def info(self, text: str) -> None:
        """A note on stderr (silent under ``--quiet``)."""
        if not self.quiet:
            self._write(label(text))

    def warn(self, text: str) -> None:
        """A warning on stderr, printed now: one line, whatever names from the data it quotes
        (a newline, an ANSI escape or a bidi control in a name is shown escaped, by :func:`label`)."""
        self._write(f"evalkit {self.command}: warning: {label(text)}")

    def show_warning(self, message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                     line: Any = None) -> None:
        """``warnings.showwarning`` replacement: one plain line per warning, as it happens; past
        :data:`WARN_REPEATS` of one category (the per-task Wilson intervals of a report, say) the rest
        are counted, and :meth:`held_warnings` says how many (``--verbose`` shows every one)."""
        if issubclass(category, (DeprecationWarning, PendingDeprecationWarning)):
            return
        name = getattr(category, "__name__", "Warning")
        self._seen[name] = self._seen.get(name, 0) + 1
        if self.verbose or self._seen[name] <= WARN_REPEATS:
            self.warn(str(message))

    def held_warnings(self) -> None:
        """One line per category of warnings held back by :meth:`show_warning`: how many."""
        for name, n in self._seen.items():
            if not self.verbose and n > WARN_REPEATS:
                self.warn(f"{n - WARN_REPEATS} more {name} warnings ({WARN_REPEATS} shown above; "
                          "--verbose shows every one)")

    def result(self, tables: pd.DataFrame | Mapping[str, Any], *, title: str = "", floatfmt: str = ".4g") -> None:
        """The command's result on stdout: JSON with ``--json``, else Markdown table(s).

        ``tables``: a DataFrame, a column table (:func:`~evalkit._escape.is_column_table`) or
        a mapping of titles to either."""
        if self.json:
            print(terminal_json(to_json(tables.to_frame() if is_column_table(tables) else tables)))
            return
        single = is_column_table(tables) or not isinstance(tables, Mapping)
        items = [(title, tables)] if single else tables.items()
        for name, table in items:
            if name:
                print(f"\n{label(name)}\n")
            if is_column_table(table) or is_dataframe(table):
                print(markdown_table(table, floatfmt=floatfmt, text=terminal_cell))
            else:
                print(label(table))

    def headline(self, headline: Any, *, titles: Any = ()) -> None:
        """The headline first on stdout (a :class:`evalkit.report.headline.Headline`, or the
        ``"headline"`` records of a ``run.json``, whose ``titles`` name the sections); under
        ``--json`` it is part of the JSON instead. Prints nothing when there is no finding."""
        if self.json or not headline:
            return
        from evalkit.report.headline import Headline, section_id

        if not isinstance(headline, Headline):
            headline = Headline.from_records(headline)
        text = headline.to_text(titles={section_id(t): t for t in titles})
        if text:
            print(text, flush=True)

    # ---- progress ------------------------------------------------------------------------

    def progress(self, stage: str, done: int, total: int | None) -> None:
        """A :data:`evalkit._progress.ProgressFn` drawing one tqdm bar per stage on stderr (on a
        terminal); elsewhere, under ``--verbose`` only, one line when a stage completes."""
        if not self.bars:
            if self.verbose and total and done >= total:
                self.info(f"{label(stage)}: {done}/{total} ({time.perf_counter() - self._t0:.1f} s)")
            return
        from tqdm import tqdm

        if stage != self._stage or self._bar is None:
            self.close_bar()
            fmt = None if total else "{desc}: {elapsed}"
            size = _unsized_terminal(self.err)
            self._bar = tqdm(total=total, desc=label(stage), file=self.err, delay=self.delay, leave=False,
                             mininterval=min(0.25, self.delay), miniters=0 if self.delay == 0 else None,
                             bar_format=fmt, ncols=size[0] if size else None, nrows=size[1] if size else None,
                             dynamic_ncols=size is None)
            self._stage = stage
        if total:
            self._bar.update(max(done - self._bar.n, 0))
        else:
            self._bar.refresh()

    def close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._stage = None, None

    @contextlib.contextmanager
    def step(self, stage: str) -> Iterator[None]:
        """A bar with the elapsed time for a step that reports no progress of its own."""
        if not self.bars:
            yield
            return
        stop = threading.Event()

        def beat() -> None:
            t0 = time.monotonic()
            self.progress(stage, 0, None)
            while not stop.wait(0.5):
                self.progress(stage, int(time.monotonic() - t0), None)

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.close_bar()


def _unsized_terminal(stream: Any) -> tuple[int, int] | None:
    """``None`` for a terminal that reports its size (tqdm follows it), else 80 × 24: a
    pseudo-terminal whose size was never set reports 0 × 0, where tqdm would draw nothing."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 80, 24
    return None if size.columns > 0 and size.lines > 0 else (80, 24)


def report_headline(ui: UI, out: Path) -> None:
    """Print the headline of the report folder ``out`` (from its ``run.json``) on stdout."""
    try:
        record = json.loads((Path(out) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    ui.headline(record.get("headline") or [], titles=record.get("sections") or [])


def terminal_cell(value: object) -> str:
    """A cell for a table printed on the terminal: control and bidi characters shown escaped,
    ``|`` escaped so that it cannot split a column."""
    return label(value).replace("|", "\\|")


ascii_fast_path(terminal_cell, "|")


def call(ui: UI, stage: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with ``progress=ui.progress`` when ``fn`` takes it, else inside
    ``ui.step(stage)`` (a bar with the elapsed time)."""
    try:
        takes = "progress" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = False
    if takes:
        try:
            return fn(*args, progress=ui.progress, **kwargs)
        finally:
            ui.close_bar()
    with ui.step(stage):
        return fn(*args, **kwargs)


def _sniff_suffix(head: bytes) -> str:
    if head[:4] == b"PAR1":
        return ".parquet"
    if head[:2] == b"\x1f\x8b":
        return ".csv.gz"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] == b"[":
        return ".json"
    if text[:1] == b"{":
        return ".jsonl" if b"\n{" in text else ".json"
    return ".csv"


class Inputs:
    """Resolves input paths: ``-`` to a spooled copy of stdin, ``--encoding`` to UTF-8 copies
    (when the reader has no ``encoding=``). Remembers the files for error messages."""

    def __init__(self, encoding: str | None = None, *, stdin: Any = None) -> None:
        self.encoding = encoding
        self._stdin = stdin
        self._tmp: Path | None = None
        self.names: dict[str, str] = {}  # resolved path -> what the user typed
        if encoding is not None:
            import codecs

            try:
                codecs.lookup(encoding)
            except LookupError:
                raise ValueError(f"--encoding {encoding!r} is not a known text encoding; use e.g. utf-8, latin-1, "
                                 "cp1252, utf-16.") from None

    def _dir(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="evalkit-input-"))
        return self._tmp

    def path(self, value: str, *, reader: Callable[..., Any] | None = None) -> str:
        """The path to give the reader for the user's ``value``."""
        resolved = value
        if value == "-":
            if "-" in self.names.values():
                raise ValueError("stdin ('-') can be read only once; give the other inputs as files.")
            stream = self._stdin if self._stdin is not None else sys.stdin.buffer
            data = stream.read()
            target = self._dir() / f"stdin{_sniff_suffix(data[:4096])}"
            target.write_bytes(data)
            resolved = str(target)
        if self.encoding is not None and not _takes_encoding(reader) and Path(resolved).is_file():
            resolved = self._reencode(Path(resolved))
        self.names[resolved] = "<stdin>" if value == "-" else value
        return resolved

    def _reencode(self, path: Path) -> str:
        raw = path.read_bytes()
        if raw[:4] == b"PAR1":
            return str(path)
        try:
            text = raw.decode(self.encoding or "utf-8")
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + 1
            raise ValueError(f"{self.names.get(str(path), path)} cannot be decoded as {self.encoding}: byte "
                             f"{raw[exc.start]:#04x} at line {line}. Check --encoding.") from None
        target = self._dir() / f"utf8-{len(list(self._dir().iterdir()))}-{path.name}"
        target.write_text(text.lstrip("\ufeff"), encoding="utf-8")
        return str(target)

    def kwargs(self, reader: Callable[..., Any]) -> dict[str, Any]:
        """``{"encoding": ...}`` for a reader that takes it and was given ``--encoding``."""
        return {"encoding": self.encoding} if self.encoding is not None and _takes_encoding(reader) else {}

    def display(self, text: str) -> str:
        """``text`` with the temporary paths replaced by what the user typed."""
        for resolved, typed in self.names.items():
            text = text.replace(resolved, typed)
        return text

    def close(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def _takes_encoding(reader: Callable[..., Any] | None) -> bool:
    if reader is None:
        return False
    try:
        return "encoding" in inspect.signature(reader).parameters
    except (TypeError, ValueError):
        return False
