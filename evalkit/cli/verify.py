"""``evalkit verify DIR``: check an output folder against its ``run.json`` manifest."""

from __future__ import annotations

import argparse

from evalkit.cli._common import add_common

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``verify`` sub-command."""
    p = subparsers.add_parser(
        "verify",
        help="check that an output folder is complete and unchanged (run.json manifest)",
        description="Check every file listed in DIR/run.json (size and SHA-256), and that no file is missing "
                    "or unlisted. Exit 0 when the folder is complete, 1 when a check fails.",
    )
    p.add_argument("dir", nargs="+", help="output folder(s) written by evalkit")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``evalkit verify``."""
    from evalkit._output import verify_dir

    ui = args.ui
    results = {d: verify_dir(d) for d in args.dir}
    if ui.json:
        ui.result({d: {"ok": not p, "problems": p} for d, p in results.items()})
    for d, problems in results.items():
        if problems:
            for p in problems:
                ui.warn(f"{d}: {p}") if ui.json else print(f"{d}: FAILED: {p}")
        elif not ui.json:
            print(f"{d}: ok")
    return 1 if any(results.values()) else 0
