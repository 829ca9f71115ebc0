"""The one room where the engine is chosen: what runs the work, behind one interface.

- :func:`get_executor` maps a function over independent jobs (simulator sweeps, seeds,
  replicates) in this process, a local process pool, or a Dask cluster.
- :func:`aggregate_comparisons` reduces a source of comparisons to counts where the rows
  live: DuckDB (default), pandas, or a Dask cluster.

Nothing above this package knows which engine ran: callers ask for an executor (or pass
``engine=``) and get the same ordered results, bit for bit, whichever it is.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

# exports load on first use (PEP 562): a fast path importing one module of the package
# does not pay for pandas / scipy through the others
_EXPORTS: dict[str, str] = {
    "AGGREGATION_ENGINES": "aggregate",
    "aggregate_comparisons": "aggregate",
    "ENGINES": "executor",
    "DaskExecutor": "executor",
    "Executor": "executor",
    "ProcessExecutor": "executor",
    "SerialExecutor": "executor",
    "get_executor": "executor",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from evalkit.engine.aggregate import AGGREGATION_ENGINES, aggregate_comparisons
    from evalkit.engine.executor import (
        ENGINES,
        DaskExecutor,
        Executor,
        ProcessExecutor,
        SerialExecutor,
        get_executor,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "AGGREGATION_ENGINES",
    "aggregate_comparisons",
    "ENGINES",
    "Executor",
    "SerialExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "get_executor",
]
