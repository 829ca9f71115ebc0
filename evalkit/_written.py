"""The outputs this process has put in place (a leaf module: no imports beyond the standard library).

:mod:`evalkit._output` records every folder and file it has moved into place; the CLI reads the
record when a run is interrupted, so that its one line says truthfully whether an output was
already replaced ("no output folder was changed" only when none was).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["record_written", "written", "forget_written"]

_WRITTEN: list[Path] = []


def record_written(path: Path) -> None:
    """Note that ``path`` now holds this process's complete output."""
    _WRITTEN.append(path)


def written() -> list[Path]:
    """The outputs put in place since the last :func:`forget_written`, in order."""
    return list(_WRITTEN)


def forget_written() -> None:
    """Start a new record (the CLI calls this as each command starts)."""
    _WRITTEN.clear()
