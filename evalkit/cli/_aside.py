"""One piece of a command's output made by a forked child while the command makes the rest.

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

import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Aside", "can_fork", "forks_now"]


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
