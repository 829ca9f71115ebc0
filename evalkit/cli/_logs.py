"""What ``curve``, ``report`` and ``compare`` share about harness logs: the flags, reading files /
folders / globs, and error messages that name the CLI flag instead of the library keyword.
"""

from __future__ import annotations

import argparse
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the readers (pandas) load when a command reads logs, not while its parser is built
    import pandas as pd

    from evalkit.io.logs import LogOptions

__all__ = ["add_log_arguments", "log_options", "looks_like_logs", "read_log_inputs", "cli_remedies",
           "parse_mapping", "parse_floats"]

# library remedy (regex) -> the same remedy as CLI flags
_REMEDIES: tuple[tuple[str, str], ...] = (
    (r"Pass resolved=True/False or a mapping instance id -> resolved\.",
     "Pass --resolved REPORT.json (SWE-bench's evaluation report) or --resolved-ids FILE (one resolved id a line)."),
    (r"map yours with columns=\.", "map yours with --map NAME=FIELD (e.g. --map session=run_id)."),
    (r"Use the `columns` mapping of read_traces to rename yours\.", "Map yours with --map NAME=COLUMN."),
    (r"Pass a smaller grid ratio, explicit budgets, or start/stop\.",
     "Pass a smaller --grid ratio (e.g. --grid 1.1), explicit --budgets B1,B2,..., or --start/--stop."),
    (r"pass explicit budgets\.", "pass explicit --budgets B1,B2,..."),
    (r"[Uu]se budget='tokens', 'tokens_total' or 'time'\.", "Use --budget-unit tokens, tokens_total or time."),
    (r"use budget='tokens' or 'cost'\.", "use --budget-unit tokens or cost."),
    (r"Pass missing_score='drop' to drop unscored submissions", "Pass --drop-unscored to drop unscored submissions"),
    (r"pass order='sort' if rows are merely shuffled", "pass --sort-budgets if rows are merely shuffled"),
    (r"pass threshold= to count", "pass --pass-threshold T to count"),
    (r"(No scorer '[^']*' .*?; the sample has \[[^\]]*\])\.", r"\1; choose one with --scorer NAME."),
    (r"(has the metric '[^']*'; its records have \[[^\]]*\])\.", r"\1; choose one with --metric NAME."),
    (r"pass metric= to choose one\.", "choose one with --metric NAME."),
    (r"pass filter= to choose another\.", "choose another with --filter NAME."),
    (r"The cluster column '([^']*)'", r"The --cluster column '\1'"),
    (r"consider prior=\.\.\.", "consider --prior N"),
    (r"pass prior=\.\.\.", "pass --prior N"),
    (r"add an L2 prior \(e\.g\. fit_bt\(\.\.\., l2=[0-9.]+\), which shrinks the ratings and always exists\)",
     "add symmetric pseudo-games with --prior N (ratings then always exist)"),
    (r"start the grid later", "start the grid later (--start)"),
    (r"^n_tasks must be", "--tasks must be"),
    (r"^n_sessions must be", "--sessions must be"),
    (r"^bootstrap must be an integer", "--bootstrap must be an integer"),
    (r"real_data '([^']*)' is not a file; pass real_data=None to skip the second report\.",
     r"--real-data '\1' is not a file; pass --no-real-data to skip the second report."),
)


def _translate(msg: str) -> str:
    for pattern, repl in _REMEDIES:
        msg = re.sub(pattern, repl, msg)
    return msg


#: Remedies that are no advice once their flag is given (the message would loop back to it).
_GIVEN_REMEDIES = {"--missing lose": "missing='lose' (CLI --missing lose), "}


def _without_absent_flags(msg: str, options: frozenset[str] | None, given: Sequence[str] = ()) -> str:
    """Drop a remedy clause that names a flag the command does not have, or one the user already gave
    (advice that cannot be followed, or that loops)."""
    for flag in given:
        if flag in _GIVEN_REMEDIES:
            msg = msg.replace(_GIVEN_REMEDIES[flag], "")
    if not options:
        return msg
    for flag in ("--sort-budgets", "--drop-unscored", "--missing", "--grid", "--budgets", "--prior", "--start"):
        if flag in msg and flag not in options:
            msg = re.sub(r"[;,]? ?(?:pass|Pass|or pass)? ?[^;.]*" + re.escape(flag) + r"[^;.]*", "", msg)
    return msg


@contextmanager
def cli_remedies(options: frozenset[str] | None = None, given: Sequence[str] = ()) -> Iterator[None]:
    """Re-raise library ValueErrors (and re-issue warnings) with every remedy phrased as the CLI flag
    that applies it; with ``options`` (the command's flags), advice naming a flag it lacks is dropped,
    and so is advice to pass a flag the user gave (``given``, e.g. ``["--missing lose"]``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except ValueError as exc:
            msg = _without_absent_flags(_translate(str(exc)), options, given)
            if msg == str(exc):
                raise
            raise ValueError(msg) from None
    for w in caught:
        warnings.warn(_without_absent_flags(_translate(str(w.message)), options, given), w.category, stacklevel=3)


def parse_mapping(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """``["system=agent", ...]`` -> ``{"system": "agent"}``; a ValueError naming ``flag`` otherwise."""
    out = {}
    for spec in pairs:
        if "=" not in spec:
            raise ValueError(f"{flag} must look like NAME=COLUMN (e.g. {flag} system=model); got {spec!r}.")
        k, v = spec.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def parse_floats(text: str | None, flag: str) -> list[float] | None:
    """``"1,2,4"`` -> ``[1.0, 2.0, 4.0]``."""
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{flag} must be comma-separated numbers (e.g. {flag} 1000,2000,4000); got {text!r}.") from None


def add_log_arguments(p: argparse.ArgumentParser) -> None:
    """Flags that tell the log readers what the logs do not say themselves."""
    g = p.add_argument_group("harness logs (Inspect .eval/.json, SWE-agent .traj, mini-swe-agent .traj.json, SWE-bench "
                             "verdict files, lm-eval samples_*.jsonl, MT-bench single judgments, outcome tables, "
                             "JSONL events)")
    g.add_argument("--budget-unit", choices=["tokens", "tokens_total", "cost", "time"], default="tokens",
                   help="budget unit read from the logs (default tokens = input + output)")
    g.add_argument("--resolved", default=None, metavar="REPORT.json",
                   help="SWE-bench evaluation report (run report with resolved_ids, or per-instance report.json, "
                        "or a folder of them) scoring .traj files")
    g.add_argument("--resolved-ids", default=None, metavar="FILE",
                   help="file of resolved SWE-bench instance ids (one a line, or a JSON list); other .traj score 0")
    g.add_argument("--map", action="append", default=[], metavar="NAME=FIELD",
                   help="map a field of JSONL events or a session table, e.g. --map system=agent (repeatable)")
    g.add_argument("--scorer", default=None, help="Inspect scorer whose value is the score (default: the first)")
    g.add_argument("--metric", default=None, help="lm-eval metric that is the score (default: the first listed)")
    g.add_argument("--filter", default=None, metavar="NAME",
                   help="lm-eval filter of the score when a task logs several (default: the first in the file)")
    g.add_argument("--include-scorer-calls", action="store_true",
                   help="count model calls made by Inspect scorers in the budget")


def log_options(args: argparse.Namespace, metadata: Sequence[str] = ()) -> LogOptions:
    """The :class:`LogOptions` the flags ask for (reading the SWE-bench report / id list here)."""
    from evalkit.io.logs import LogOptions
    from evalkit.io.swe_bench import read_resolved_ids, read_swe_bench_report

    if args.resolved and args.resolved_ids:
        raise ValueError("Give --resolved REPORT.json or --resolved-ids FILE, not both.")
    return LogOptions(
        budget=args.budget_unit, scorer=args.scorer, include_scorer=args.include_scorer_calls,
        resolved=read_swe_bench_report(args.resolved) if args.resolved else None,
        resolved_ids=frozenset(read_resolved_ids(args.resolved_ids)) if args.resolved_ids else None,
        columns=parse_mapping(args.map, "--map") or None, metric=args.metric, filter=getattr(args, "filter", None),
        metadata=tuple(m for m in metadata if m),
    )


def looks_like_logs(paths: Sequence[str], mapping: dict[str, str] | None = None) -> bool:
    """True unless ``paths`` is a single session-table file (CSV/TSV/Parquet, or JSONL with a
    ``budget`` field, itself or mapped with --map)."""
    if len(paths) != 1:
        return True
    p = Path(paths[0])
    if not p.is_file():
        return True  # a folder or a glob
    from evalkit.io.logs import LOG_FORMATS, log_format

    fmt = log_format(p)
    if fmt == "table":  # a session table (with budgets) read as such
        return False
    if fmt != "events":
        return fmt in LOG_FORMATS
    budget = (mapping or {}).get("budget", "budget")
    with open(p, encoding="utf-8", errors="replace") as fh:
        first = next((ln for ln in fh if ln.strip()), "")
    return f'"{budget}"' not in first


def read_log_inputs(args: argparse.Namespace, paths: Sequence[str], *, metadata: Sequence[str] = (),
                    progress: object = None) -> pd.DataFrame:
    """Read files / folders / globs of logs with the flags' options (errors name the flags); a
    bar per file read on a terminal (``progress``, else the command's ``args.progress``)."""
    from evalkit.io.logs import read_logs

    if progress is None:
        progress = getattr(args, "progress", None)
    try:
        with cli_remedies(getattr(args, "_options", None)):
            return read_logs(list(paths), log_options(args, metadata), progress=progress)  # type: ignore[arg-type]
    finally:
        ui = getattr(args, "ui", None)
        if ui is not None:
            ui.close_bar()


