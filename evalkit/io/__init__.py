"""Readers and validation: everything that turns files into evalkit's canonical tables."""

from evalkit.io.schema import (
    CANONICAL_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    validate_comparisons,
)

__all__ = [
    "CANONICAL_COLUMNS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "validate_comparisons",
]
