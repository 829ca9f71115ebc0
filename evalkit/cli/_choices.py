"""Choices of a CLI flag that live in a heavy module, loaded only when argparse needs them.

``evalkit --help`` builds every sub-command's parser, so a parser must not import the
command's implementation (pandas, scipy, matplotlib). A flag whose allowed values are a
library constant (``--adjust`` from :mod:`evalkit.stats.multiplicity`, ``--test`` from
:mod:`evalkit.stats.runs`) takes ``choices=LazyChoices("evalkit.stats.runs", "RUN_TESTS")``:
the module is imported the first time argparse checks a value given on the command line or
prints that sub-command's help, never while the parser is built. Add such a flag with
:func:`add_lazy_choice` (argparse's ``add_argument`` formats the choices once to check the
metavar, which would load them).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from importlib import import_module
from typing import Any

__all__ = ["LazyChoices", "add_lazy_choice"]


class LazyChoices(Sequence[str]):
    """The names of ``getattr(import_module(module), name)`` (its keys, for a dict), loaded on
    first use; ``exclude`` leaves some out."""

    def __init__(self, module: str, name: str, *, exclude: Sequence[str] = ()) -> None:
        self.module, self.name, self.exclude = module, name, tuple(exclude)
        self._values: tuple[str, ...] | None = None

    @property
    def values(self) -> tuple[str, ...]:
        """The choices (the module is imported on the first call)."""
        if self._values is None:
            found = getattr(import_module(self.module), self.name)
            self._values = tuple(str(v) for v in found if str(v) not in self.exclude)
        return self._values

    def __getitem__(self, index: Any) -> Any:  # Sequence's int / slice overloads
        return self.values[index]

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.values

    def __repr__(self) -> str:
        return f"LazyChoices({self.module}.{self.name})"


def add_lazy_choice(p: argparse.ArgumentParser | Any, *flags: str, choices: LazyChoices,
                    **kwargs: Any) -> argparse.Action:
    """``p.add_argument(*flags, choices=choices, **kwargs)`` without loading ``choices`` (``p``: a
    parser or an argument group)."""
    action = p.add_argument(*flags, **kwargs)
    action.choices = choices
    return action
