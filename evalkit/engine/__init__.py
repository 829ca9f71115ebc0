"""The one room where the engine is chosen: what runs the work, behind one interface.

- :func:`get_executor` maps a function over independent jobs (simulator sweeps, seeds,
  replicates) in this process, a local process pool, or a Dask cluster.
- :func:`aggregate_comparisons` reduces a source of comparisons to counts where the rows
  live: DuckDB (default), pandas, or a Dask cluster.

Nothing above this package knows which engine ran: callers ask for an executor (or pass
``engine=``) and get the same ordered results, bit for bit, whichever it is.
"""

from evalkit.engine.aggregate import AGGREGATION_ENGINES, aggregate_comparisons
from evalkit.engine.executor import (
    ENGINES,
    DaskExecutor,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    get_executor,
)

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
