"""Readers and validation: everything that turns files into evalkit's canonical tables."""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

# exports load on first use (PEP 562): a fast path importing one module of the package
# does not pay for pandas / scipy through the others
_EXPORTS: dict[str, str] = {
    "BUDGET_UNITS": "agent_logs",
    "read_agent_logs": "agent_logs",
    "read_event_stream": "agent_logs",
    "read_inspect_log": "agent_logs",
    "read_swe_agent_traj": "agent_logs",
    "FORMATS": "read",
    "detect_format": "read",
    "read_comparisons": "read",
    "ReadReport": "report",
    "ReadResult": "report",
    "merge_reports": "report",
    "CANONICAL_COLUMNS": "schema",
    "OPTIONAL_COLUMNS": "schema",
    "REQUIRED_COLUMNS": "schema",
    "validate_comparisons": "schema",
    "TRACE_COLUMNS": "traces",
    "read_traces": "traces",
    "validate_traces": "traces",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from evalkit.io.agent_logs import (
        BUDGET_UNITS,
        read_agent_logs,
        read_event_stream,
        read_inspect_log,
        read_swe_agent_traj,
    )
    from evalkit.io.read import FORMATS, detect_format, read_comparisons
    from evalkit.io.report import ReadReport, ReadResult, merge_reports
    from evalkit.io.schema import (
        CANONICAL_COLUMNS,
        OPTIONAL_COLUMNS,
        REQUIRED_COLUMNS,
        validate_comparisons,
    )
    from evalkit.io.traces import TRACE_COLUMNS, read_traces, validate_traces

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "BUDGET_UNITS",
    "TRACE_COLUMNS",
    "read_agent_logs",
    "read_event_stream",
    "read_inspect_log",
    "read_swe_agent_traj",
    "read_traces",
    "validate_traces",
    "CANONICAL_COLUMNS",
    "FORMATS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "ReadReport",
    "ReadResult",
    "detect_format",
    "merge_reports",
    "read_comparisons",
    "validate_comparisons",
]
