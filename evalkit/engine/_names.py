"""Names of the engines, in a leaf module: the CLI's parsers list them without importing numpy."""

from __future__ import annotations

__all__ = ["AGGREGATION_ENGINES"]

#: Engines of :func:`~evalkit.engine.aggregate_comparisons`.
AGGREGATION_ENGINES: tuple[str, ...] = ("duckdb", "pandas", "dask")
