"""Flags that share their library keyword's name, with the old spellings kept for one release.

``--confidence-level``, ``--n-resamples`` and ``--rng`` are the keywords ``confidence_level``,
``n_resamples`` and ``rng``. An old spelling (``--level``, ``--bootstrap``, ``--seed``, ...) still
works and prints one note on stderr naming the new flag.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from evalkit._deprecate import REMOVAL

__all__ = ["add_renamed", "add_confidence_level", "add_n_resamples", "add_rng"]


class _RenamedFlag(argparse.Action):
    """``store`` that notes on stderr when the value came through a deprecated option string."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, old: Sequence[str] = (), **kwargs: Any) -> None:
        self.old = tuple(old)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if option_string in self.old:
            new = next(s for s in self.option_strings if s not in self.old)
            print(f"{parser.prog}: note: {option_string} is deprecated and will be removed in evalkit {REMOVAL}; "
                  f"use {new}.", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: argparse.ArgumentParser, new: str, *old: str, **kwargs: Any) -> argparse.Action:
    """``parser.add_argument(new, *old, ...)`` where each ``old`` spelling is deprecated (hidden from
    ``--help``'s usage line, named in the help text)."""
    help_text = kwargs.pop("help", None)
    if old and help_text is not argparse.SUPPRESS:
        help_text = f"{help_text or ''} (formerly {', '.join(old)})".strip()
    return parser.add_argument(new, *old, action=_RenamedFlag, old=old, help=help_text, **kwargs)


def add_confidence_level(parser: argparse.ArgumentParser, *old: str, default: float = 0.95,
                         help: str = "confidence level of the intervals") -> argparse.Action:
    return add_renamed(parser, "--confidence-level", *old, type=float, default=default, metavar="P",
                       help=f"{help} (default {default})")


def add_n_resamples(parser: argparse.ArgumentParser, *old: str, default: int, help: str) -> argparse.Action:
    return add_renamed(parser, "--n-resamples", *old, type=int, default=default, metavar="N",
                       help=f"{help} (default {default})")


def add_rng(parser: argparse.ArgumentParser, *old: str, default: int = 0,
            help: str = "seed of every random step") -> argparse.Action:
    return add_renamed(parser, "--rng", *old, type=int, default=default, metavar="SEED",
                       help=f"{help} (default {default})")
