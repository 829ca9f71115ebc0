"""The ``evalkit`` command line: a thin shell over the library.

Each sub-command lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence

__all__ = ["main", "build_parser"]

# Sub-command modules, in the order ``evalkit --help`` lists them.
_COMMANDS: tuple[str, ...] = (
    "demo",
    "summary",
    "rate",
    "simulate",
    "curve",
    "report",
    "compare",
)


def build_parser(commands: Sequence[str] = _COMMANDS) -> argparse.ArgumentParser:
    """The top-level parser with ``commands`` (default: every sub-command) registered."""
    from evalkit import __version__

    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Statistical evaluation of AI agents: ratings, significance, Elo per budget, simulation.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"evalkit.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalkit`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    # only the named sub-command's module is imported (each pulls in its own dependencies)
    parser = build_parser((first,) if first in _COMMANDS else _COMMANDS)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            try:
                return int(args.func(args) or 0)
            finally:  # library warnings as one plain line each, not Python's source-line dump
                for w in caught:
                    if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
                        print(f"evalkit {args.command}: warning: {w.message}", file=sys.stderr)
    except ValueError as exc:  # validation errors: one clear line, no traceback
        print(f"evalkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # missing input, unwritable or existing output: also one line
        name = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"evalkit {args.command}: error: {exc.strerror or exc}{name}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
