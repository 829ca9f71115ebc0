"""Readers and validation: everything that turns files into evalkit's canonical tables."""

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
