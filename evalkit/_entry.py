"""The ``evalkit`` command's entry point (``[project.scripts]``) and ``python -m evalkit``'s.

It installs the start-up signal handling before the CLI is imported: a SIGTERM while Python
imports the commands exits 143 with one line, a Ctrl-C 130 with one line, never a traceback or
a kill. (The console script used to name ``evalkit.cli:main`` directly, which left that import
without a handler.) ``main()`` of :mod:`evalkit.cli` then installs its own handlers.
"""

from __future__ import annotations

import signal
import sys

__all__ = ["run"]


def _terminated(signum: int, frame: object) -> None:  # SIGTERM while Python imports the CLI: one line, 143
    print("evalkit: terminated.", file=sys.stderr)
    raise SystemExit(128 + signal.SIGTERM)


def run() -> int:
    """Import the CLI under the start-up handlers and run it; the exit code."""
    signal.signal(signal.SIGTERM, _terminated)  # main() installs its own handler (and puts this one back)
    try:
        from evalkit.cli import main
    except KeyboardInterrupt:  # Ctrl-C while Python starts up: one line, as everywhere else
        print("\nevalkit: interrupted.", file=sys.stderr)
        return 130
    return main()
