"""The ``evalkit`` command line: a thin shell over the library.

Each sub-command lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code). Shared flags, output,
progress and input handling are in :mod:`evalkit.cli._common`.

Exit codes: 0 success; 1 a check failed (``evalkit verify``); 2 bad input or usage (one line
on stderr, naming the file, the line and the flag that fixes it); 130 interrupted by Ctrl-C
(143 by SIGTERM); 3 an internal error (a bug: the traceback is printed).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from evalkit._escape import label
from evalkit._written import forget_written, written
from evalkit.cli._common import UI, Inputs

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAILED_CHECK", "EXIT_BAD_INPUT", "EXIT_INTERRUPTED"]

EXIT_OK, EXIT_FAILED_CHECK, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# Sub-command modules, in the order ``evalkit --help`` lists them.
_COMMANDS: tuple[str, ...] = (
    "demo",
    "summary",
    "score",
    "rate",
    "simulate",
    "curve",
    "report",
    "compare",
    "judge",
    "horizon",
    "frontier",
    "verify",
)
# library keyword -> CLI flag, where the names differ (others: --keyword with - for _)
_FLAG_OF = {"columns": "--score-col", "budget": "--budget-unit", "n_boot": "--n-boot", "confidence_level":
            "--confidence", "score_columns": "--score-col", "rng": "--seed"}


class _Terminated(BaseException):
    """SIGTERM, turned into an exception so that temporary output is cleaned up."""


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for a in subs for p in a.choices.values() for leaf in _leaf_parsers(p)]


def build_parser(commands: Sequence[str] = _COMMANDS) -> argparse.ArgumentParser:
    """The top-level parser with ``commands`` (default: every sub-command) registered."""
    from evalkit import __version__

    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Statistical evaluation of AI agents: ratings, significance, Elo per budget, simulation.",
        epilog="Exit codes: 0 ok, 1 a check failed (verify), 2 bad input, 130 interrupted (Ctrl-C).",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"evalkit.cli.{name}").register(sub)
    for leaf in _leaf_parsers(parser):
        leaf.set_defaults(_options=frozenset(s for a in leaf._actions for s in a.option_strings))
    return parser


def cli_remedies(message: str, options: frozenset[str]) -> str:
    """Name the CLI flag where a library message suggests a Python keyword: ``... l2=0.01 ...``
    gets ``On the command line: --l2 0.01.`` appended (for flags the command has)."""
    flags: list[str] = []
    for m in re.finditer(r"(?<![\w.-])([a-z][a-z0-9_]*)=('[^']*'|\"[^\"]*\"|<[^>]*>|[^\s,;)]*?)(?=[\s,;)]|\.(?:\s|$)|$)",
                         message):
        key, value = m.group(1), m.group(2)
        flag = _FLAG_OF.get(key, "--" + key.replace("_", "-"))
        shown = f"{flag} {value.strip(chr(39) + chr(34))}" if value and not value.startswith("<") else flag
        if flag in options and shown not in flags and flag not in message:
            flags.append(shown)
    return f"{message.rstrip()} On the command line: {', '.join(flags)}." if flags else message


class _Named:
    """The one file a decode error is about (for :func:`_decode_error`)."""

    def __init__(self, name: str) -> None:
        self.names = {name: name}


def _decode_error(exc: UnicodeDecodeError, inputs: Inputs | _Named) -> str:
    data = exc.object if isinstance(exc.object, bytes) else b""
    line = data[:exc.start].count(b"\n") + 1
    files = sorted(set(inputs.names.values()))
    where = files[0] if len(files) == 1 else "an input file"
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[1:200:2].count(0) > 50
    hint = "--encoding utf-16" if utf16 else "--encoding latin-1 (or cp1252, the Windows default)"
    if not data:
        return f"{where} could not be decoded ({exc}). Pass --encoding NAME (e.g. latin-1, utf-16)."
    return (f"{where} is not valid {exc.encoding.upper()}: byte {data[exc.start]:#04x} at line {line} "
            f"cannot be decoded. Save it as UTF-8, or pass {hint}.")


def _decode_hint(inputs: Inputs) -> str:
    """Where the first input that is not valid UTF-8 breaks, and the flag that reads it."""
    from pathlib import Path

    for resolved, typed in inputs.names.items():
        path = Path(resolved)
        if not path.is_file() or inputs.encoding is not None:
            continue
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return " " + _decode_error(exc, _Named(typed))
    return ""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _on_sigint(signum: int, frame: Any) -> None:
    """Ctrl-C: raise :class:`KeyboardInterrupt`, except inside Python's import machinery. There the
    handler may be running in an import-lock callback, where Python prints the exception as
    "ignored" with a traceback and drops it, so the command would carry on; the signal is sent again
    a few milliseconds later instead, when the import is done."""
    code = getattr(frame, "f_code", None)
    if code is not None and code.co_filename.startswith("<frozen importlib"):
        threading.Timer(0.005, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalkit`` console script."""
    main_thread = _main_thread()  # the handlers first: a signal while the parser is built is one line too
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    previous_int = signal.signal(signal.SIGINT, _on_sigint) if main_thread else None
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C while starting up or while reporting another error
        print("\nevalkit: interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _Terminated:
        print("evalkit: terminated.", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    # only the named sub-command's module is imported (each pulls in its own dependencies)
    parser = build_parser((first,) if first in _COMMANDS else _COMMANDS)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    name = " ".join(x for x in (args.command, getattr(args, "action", None)) if x)
    ui = UI(name, quiet=getattr(args, "quiet", False), verbose=getattr(args, "verbose", False),
            json_out=getattr(args, "json", False))
    args.ui = ui
    args.progress = ui.progress  # what commands hand to the library's progress= keyword
    inputs = None
    forget_written()
    try:
        args.inputs = inputs = Inputs(getattr(args, "encoding", None))
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = ui.show_warning  # each warning as one line, when it happens
            from evalkit.io._limits import parse_limit_specs, preflight, read_limits

            try:
                with read_limits(parse_limit_specs(getattr(args, "limit", None) or [])):
                    preflight([a for a in argv if a != args.command and not a.startswith("-")])  # bombs: before imports
                    return int(args.func(args) or 0)
            finally:
                ui.held_warnings()
    except KeyboardInterrupt:
        ui.close_bar()
        print(f"\nevalkit {name}: interrupted; {_what_changed()}.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _Terminated:
        ui.close_bar()
        print(f"evalkit {name}: terminated; {_what_changed()}.", file=sys.stderr)
        return 128 + signal.SIGTERM
    except UnicodeDecodeError as exc:
        ui.close_bar()
        print(f"evalkit {name}: error: {label(_decode_error(exc, inputs or Inputs()))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:  # validation errors: one clear line, no traceback
        ui.close_bar()
        msg = cli_remedies(str(exc), getattr(args, "_options", frozenset()))
        if "can't decode" in msg and inputs is not None:  # a reader's decode error: say where, and the flag
            msg += _decode_hint(inputs)
        print(f"evalkit {name}: error: {label(inputs.display(msg) if inputs else msg)}", file=sys.stderr)
        if ui.verbose:
            traceback.print_exc()
        return EXIT_BAD_INPUT
    except OSError as exc:  # missing input, unwritable output: also one line
        ui.close_bar()
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"evalkit {name}: error: {label(f'{exc.strerror or exc}{where}')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError as exc:  # the data need more memory than this process may have: one line, exit 2
        ui.close_bar()
        print(f"evalkit {name}: error: out of memory{': ' + str(exc) if str(exc) else ''}. Raise the process's "
              "memory limit (ulimit -v), or reduce what is kept per row (e.g. fewer --cluster values); "
              "nothing was written.", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:  # a bug: say so, with the traceback
        ui.close_bar()
        traceback.print_exc()
        print(f"evalkit {name}: internal error (a bug in evalkit; please report it with the traceback above).",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if inputs is not None:
            inputs.close()


def _what_changed() -> str:
    """The interrupted run's outputs, as the one line says them: none changed, or which were
    already put in place, complete (an interruption while the old folder was being removed)."""
    done = written()
    if not done:
        return "no output folder was changed"
    shown = ", ".join(repr(str(p)) for p in done)
    return f"{shown} had already been written in full (complete; evalkit verify accepts it)"


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
