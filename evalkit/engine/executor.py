"""Map a function over independent jobs: in process, on a process pool, or on Dask.

Every executor returns results in job order, so a sweep gives bit-identical output on any
engine as long as each job seeds its own randomness from its arguments (the simulator seeds
each DAG by ``(seed, index)``).

``stage`` is one progress stage for all jobs, or one name per job: then several kinds of work
share one pool (both cores stay busy across them) and progress is still reported per stage.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

from evalkit._progress import ProgressFn, tick

__all__ = ["ENGINES", "Executor", "SerialExecutor", "ProcessExecutor", "DaskExecutor", "get_executor"]

T = TypeVar("T")
R = TypeVar("R")

#: Engines that :func:`get_executor` accepts.
ENGINES: tuple[str, ...] = ("serial", "process", "dask")

#: Environment variable naming a Dask scheduler address (``tcp://host:port``).
SCHEDULER_ENV = "EVALKIT_DASK_SCHEDULER"

_DASK_MISSING = (
    "The Dask engine needs the optional extra: pip install 'evalkit[dask]' "
    "(dask[distributed] is not installed)."
)


class _Ticker:
    """Progress of one ``map``: per stage when ``stage`` names one stage per job."""

    def __init__(self, progress: ProgressFn | None, stage: str | Sequence[str], n: int) -> None:
        if not isinstance(stage, str) and len(stage) != n:
            raise ValueError(f"stage must be a string or one stage name per job ({n}); got {len(stage)} names.")
        self.progress = progress
        self.stages = [stage] * n if isinstance(stage, str) else list(stage)
        self.total = {s: self.stages.count(s) for s in dict.fromkeys(self.stages)}
        self.done = dict.fromkeys(self.total, 0)
        for s, t in self.total.items():
            tick(progress, s, 0, t)

    def __call__(self, k: int) -> None:
        """Job ``k`` finished."""
        s = self.stages[k]
        self.done[s] += 1
        tick(self.progress, s, self.done[s], self.total[s])


class Executor(Protocol):
    """Something that maps a picklable function over jobs and returns results in order."""

    name: str
    workers: int

    def map(
        self, fn: Callable[[T], R], jobs: Iterable[T], *, progress: ProgressFn | None = None,
        stage: str | Sequence[str] = "jobs",
    ) -> list[R]:
        """``[fn(job) for job in jobs]``, possibly in parallel, in job order; progress per
        ``stage`` (one name for all jobs, or one per job)."""
        ...


class SerialExecutor:
    """Run every job in this process, one after another."""

    name = "serial"
    workers = 1

    def map(self, fn, jobs, *, progress=None, stage="jobs"):  # noqa: D102 (see Executor)
        jobs = list(jobs)
        done = _Ticker(progress, stage, len(jobs))
        out = []
        for k, job in enumerate(jobs):
            out.append(fn(job))
            done(k)
        return out


class ProcessExecutor:
    """A local :class:`concurrent.futures.ProcessPoolExecutor` (the default for sweeps)."""

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1; got {workers}.")

    def map(self, fn, jobs, *, progress=None, stage="jobs"):  # noqa: D102 (see Executor)
        jobs = list(jobs)
        if self.workers == 1 or len(jobs) <= 1:
            return SerialExecutor().map(fn, jobs, progress=progress, stage=stage)
        from concurrent.futures import as_completed

        out: list[Any] = [None] * len(jobs)
        done = _Ticker(progress, stage, len(jobs))
        with ProcessPoolExecutor(min(self.workers, len(jobs))) as pool:
            futures = {pool.submit(fn, job): k for k, job in enumerate(jobs)}
            for fut in as_completed(futures):
                out[futures[fut]] = fut.result()
                done(futures[fut])
        return out


def dask_client(scheduler: str | Any | None) -> tuple[Any, bool]:
    """A ``distributed.Client`` for ``scheduler`` (address, client, or ``EVALKIT_DASK_SCHEDULER``)
    and whether this call opened it (then the caller closes it).

    Raises
    ------
    ImportError
        Naming the extra ``evalkit[dask]`` when dask.distributed is not installed.
    ValueError
        When no scheduler is given or set.
    """
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_DASK_MISSING) from exc
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV)
    if scheduler is None:
        raise ValueError(
            f"The Dask engine needs a scheduler: pass --scheduler tcp://HOST:PORT or set {SCHEDULER_ENV}."
        )
    if isinstance(scheduler, Client):
        return scheduler, False
    return Client(scheduler), True


class DaskExecutor:
    """Jobs on a ``dask.distributed`` cluster (``scheduler`` address or an existing client)."""

    name = "dask"

    def __init__(self, scheduler: str | Any | None = None) -> None:
        self.client, self._own = dask_client(scheduler)
        self.workers = max(1, sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values()))

    def map(self, fn, jobs, *, progress=None, stage="jobs"):  # noqa: D102 (see Executor)
        from distributed import as_completed

        jobs = list(jobs)
        done = _Ticker(progress, stage, len(jobs))
        futures = self.client.map(fn, jobs, pure=False)
        index = {f.key: k for k, f in enumerate(futures)}
        out: list[Any] = [None] * len(jobs)
        for fut in as_completed(futures):
            out[index[fut.key]] = fut.result()
            done(index[fut.key])
        return out

    def close(self) -> None:
        """Close the client if this executor opened it."""
        if self._own:
            self.client.close()


def get_executor(
    engine: str | Executor | None = None, *, workers: int | None = None, scheduler: str | Any | None = None
) -> Executor:
    """The executor for ``engine``.

    Parameters
    ----------
    engine : {"serial", "process", "dask"} or Executor, optional
        Default: ``"dask"`` when ``scheduler`` is given or the ``EVALKIT_DASK_SCHEDULER``
        variable is set, ``"serial"`` when ``workers == 1``, else ``"process"``. An executor
        object is returned as is.
    workers : int, optional
        Processes of the local pool (default: all cores).
    scheduler : str or distributed.Client, optional
        The Dask scheduler (``tcp://HOST:PORT``) or a client.
    """
    if engine is not None and not isinstance(engine, str):
        return engine
    if engine is None:
        if scheduler is not None or os.environ.get(SCHEDULER_ENV):
            engine = "dask"
        else:
            engine = "serial" if workers == 1 else "process"
    if engine == "serial":
        return SerialExecutor()
    if engine == "process":
        return ProcessExecutor(workers)
    if engine == "dask":
        return DaskExecutor(scheduler)
    raise ValueError(f"engine must be one of {set(ENGINES)}; got {engine!r} instead.")


