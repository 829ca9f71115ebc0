"""Pieces of a command's output made by forked children while the command makes the rest.

Drawing a figure is Python-bound (matplotlib holds the GIL), so two figures drawn in threads take
as long as one after the other; in a forked child, which starts with the parent's imported
matplotlib and data (copy-on-write, no re-import), the second figure is drawn on the other core.
On a busy machine with no free core this gains nothing, and costs the fork (a few ms).

Safety:

- the child runs only the given function and leaves by ``os._exit``: it never runs the parent's
  ``finally`` blocks, ``atexit`` handlers or stdio flushes, whatever happens (an exception, a
  signal);
- :meth:`Aside.result` returns the function's value; if the child failed (an error, a signal),
  the function is run again here, so that any error is this process's own, with its message;
- :meth:`Aside.cancel` kills and reaps the child: a command that fails or is interrupted calls it
  before its output folder is removed, so no child writes into it afterwards;
- only on Linux (``fork`` without ``exec`` is unsafe on macOS), only from the main thread and only
  while no other Python thread is alive (a thread holding a lock at the fork would leave the child
  waiting on it for ever, and :meth:`Aside.result` with it); elsewhere the function runs in
  :meth:`Aside.result`, in this process.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Aside", "Standby", "can_fork", "forks_now"]


def can_fork() -> bool:
    """Whether :class:`Aside` can fork here at all (Linux, the main thread)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.current_thread() is threading.main_thread()


def forks_now() -> bool:
    """Whether :class:`Aside` forks by default now: :func:`can_fork`, and this is the only Python thread."""
    return can_fork() and threading.active_count() == 1


class Aside:
    """``fn()`` (returning a JSON-serialisable value) run in a forked child from now on.

    ``fork=None`` forks where :func:`forks_now`; ``True`` wherever :func:`can_fork` (other
    threads or not: for tests of the mechanism); ``False`` never."""

    def __init__(self, fn: Callable[[], Any], *, fork: bool | None = None) -> None:
        self._fn = fn
        self._pid: int | None = None
        self._fd = -1
        if not (forks_now() if fork is None else fork and can_fork()):
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: fn, its result down the pipe, and out, nothing else
            code = 1
            try:
                _short_lived()
                os.close(read)
                data = json.dumps(fn()).encode("utf-8")
                while data:
                    data = data[os.write(write, data):]
                code = 0
            except BaseException:  # noqa: BLE001 - the parent runs fn itself and reports its error
                pass
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._fd = pid, read

    def result(self) -> Any:
        """The value of ``fn()``: the child's, or, where it failed or there was none, run here."""
        if self._pid is None:
            return self._fn()
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
        if os.waitstatus_to_exitcode(status) != 0:
            return self._fn()
        return json.loads(b"".join(chunks).decode("utf-8"))

    def cancel(self) -> None:
        """Kill and reap the child, if it is still there (never raises)."""
        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self._pid, 0)
        except OSError:
            pass
        try:
            os.close(self._fd)
        except OSError:
            pass
        self._pid = None


class Standby:
    """A child forked now that runs ``prepare()`` at once (imports, a warm-up) and, later, the one
    function given to :meth:`submit`, as ``fn(receive)``: ``receive()`` returns the objects given
    to :meth:`send`, in order, waiting for each. :meth:`result` returns the function's value.

    A command whose input takes a while to read starts its figures' process this way before it
    reads: ``prepare`` imports matplotlib on the core that the start-up leaves idle instead of
    beside DuckDB's threads, and the process that draws later is small (no DuckDB, no rows), so
    its own forks are cheap. What it draws is sent as soon as it is known (one figure's data
    before another's). The function is pickled by name, the objects and the value by pickle.

    The safety rules are :class:`Aside`'s: the child runs only ``prepare`` and the function and
    leaves by ``os._exit``; an error in ``prepare`` is ignored (the function meets it again);
    where the child failed or did not fork (``fork`` as for :class:`Aside`), :meth:`result` runs
    the function here, on the objects sent; :meth:`cancel` kills and reaps the child, and a child
    whose parent exits or stops sending reads end-of-file and leaves. Where it does not fork,
    ``prepare`` runs in a thread of this process, started now and joined before the function
    runs here (imports beside a reader that releases the GIL, such as DuckDB).
    """

    def __init__(self, prepare: Callable[[], None], *, fork: bool | None = None) -> None:
        self._fn: Callable[[Callable[[], Any]], Any] | None = None
        self._sent: list[Any] = []
        self._pid: int | None = None
        self._send = self._receive = -1
        self._thread: threading.Thread | None = None
        if not (forks_now() if fork is None else fork and can_fork()):
            self._thread = threading.Thread(target=_quietly, args=(prepare,), name="evalkit-standby", daemon=True)
            self._thread.start()
            return
        job_read, job_write = os.pipe()
        result_read, result_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: prepare, wait for the function, run it, send its value, out
            code = 1
            try:
                _short_lived()
                os.close(job_write)
                os.close(result_read)
                _quietly(prepare)
                fn = _read_message(job_read)
                value = fn(lambda: _read_message(job_read))
                _write_all(result_write, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
            except BaseException:  # noqa: BLE001 - the parent runs the function itself and reports its error
                pass
            finally:
                os._exit(code)
        os.close(job_read)
        os.close(result_write)
        self._pid, self._send, self._receive = pid, job_write, result_read

    @property
    def forked(self) -> bool:
        """Whether a child is standing by (or running the function)."""
        return self._pid is not None

    def submit(self, fn: Callable[[Callable[[], Any]], Any]) -> None:
        """Give the child ``fn`` (a function importable by name), to run as ``fn(receive)``."""
        if self._fn is not None:
            raise RuntimeError("Standby runs one function; it was given one already")
        self._fn = fn
        self._post(fn)

    def send(self, obj: Any) -> None:
        """The next object for ``receive()`` (after :meth:`submit`)."""
        if self._fn is None:
            raise RuntimeError("submit the function before sending it anything")
        self._sent.append(obj)
        self._post(obj)

    def _post(self, obj: Any) -> None:
        """``obj`` down the pipe; where that fails (the child is gone, ``obj`` does not pickle)
        the child is stopped and :meth:`result` runs the function here."""
        if self._pid is None:
            return
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(self._send, len(data).to_bytes(8, "little") + data)
        except (OSError, pickle.PicklingError, AttributeError, TypeError):
            self.cancel()

    def result(self) -> Any:
        """The function's value: the child's, or, where it failed or there was none, run here."""
        if self._fn is None:
            raise RuntimeError("nothing was submitted to this Standby")
        if self._thread is not None:
            self._thread.join()  # prepare() done before the function runs here (matplotlib is not thread-safe)
            self._thread = None
        if self._pid is not None:
            _close(self._send)  # no more objects: a child still receiving reads end-of-file
            self._send = -1
            try:
                data = _read_all(self._receive)
            finally:
                _close(self._receive)
                self._receive = -1
                _, status = os.waitpid(self._pid, 0)
                self._pid = None
            if os.waitstatus_to_exitcode(status) == 0:
                return pickle.loads(data)
        queue = iter(self._sent)
        return self._fn(lambda: next(queue))

    def cancel(self) -> None:
        """Kill and reap the child, if it is still there (never raises)."""
        if self._pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            self._pid = None
        for fd in (self._send, self._receive):
            _close(fd)
        self._send = self._receive = -1


def _short_lived() -> None:
    """A forked child ends by ``os._exit`` within seconds: its garbage never needs collecting, and
    the collector's passes would write to every tracked object's header, copying the parent's
    pages (copy-on-write) for nothing. Off in the child only."""
    gc.disable()


def _quietly(prepare: Callable[[], None]) -> None:
    """``prepare()``, any error ignored: the job meets it again, or does without."""
    with contextlib.suppress(Exception):
        prepare()


def _read_message(fd: int) -> Any:
    """One length-prefixed pickle from ``fd`` (EOFError at end-of-file)."""
    head = _read_exactly(fd, 8)
    return pickle.loads(_read_exactly(fd, int.from_bytes(head, "little")))


def _read_exactly(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the parent stopped sending")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_all(fd: int) -> bytes:
    """Everything from ``fd`` up to end-of-file (``fd`` is closed by the caller)."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _close(fd: int) -> None:
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
