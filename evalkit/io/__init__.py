"""Readers and validation: everything that turns files into evalkit's canonical tables."""

from evalkit.io.read import FORMATS, detect_format, read_comparisons
from evalkit.io.report import ReadReport, ReadResult, merge_reports
from evalkit.io.schema import (
    CANONICAL_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    validate_comparisons,
)

__all__ = [
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
