"""Progress reporting without printing: the library calls a callback, the CLI draws it.

A *progress callback* is any callable ``progress(stage, done, total)``:

- ``stage`` names the step (``"read"``, ``"aggregate"``, ``"bootstrap"``, ``"simulate"``, ...);
- ``done`` is how many units of the step are finished;
- ``total`` is how many there are, or ``None`` when unknown.

Library functions take ``progress: ProgressFn | None = None`` as a keyword and call
:func:`tick`; they never print. :mod:`evalkit.cli` passes a renderer that writes to stderr
when stderr is a terminal and stays silent when piped or under ``--quiet``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = ["ProgressFn", "tick", "track"]

ProgressFn = Callable[[str, int, "int | None"], None]
T = TypeVar("T")


def tick(progress: ProgressFn | None, stage: str, done: int, total: int | None = None) -> None:
    """Report ``done`` of ``total`` units of ``stage`` to ``progress`` (a no-op when ``None``)."""
    if progress is not None:
        progress(stage, int(done), None if total is None else int(total))


def track(
    items: Iterable[T], progress: ProgressFn | None, stage: str, *, total: int | None = None
) -> Iterator[T]:
    """Yield ``items`` and report each one done (first ``0`` of ``total``, last ``total``)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    tick(progress, stage, 0, total)
    n = 0
    for item in items:
        yield item
        n += 1
        tick(progress, stage, n, total)
