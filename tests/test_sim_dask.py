"""Acceptance test of issue 13: a simulator sweep on a Dask cluster gives bit-identical claim
tables to the process pool (and to a serial run), on a reduced DAG set."""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.sim import GeneratorParams
from evalkit.sim.experiments import SimParams
from evalkit.studies.reproduce import reproduce

distributed = pytest.importorskip("distributed")

SMALL = SimParams(generator=GeneratorParams(n_steps=90.0, n_layers=7.0, cost_law="geometric", cost_growth=8.0))


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _tables(**engine):
    ticks = []
    rep = reproduce(None, params=SMALL, seeds=(0, 1, 2), groups=None, n_dags=2, figures=False,
                    progress=lambda stage, done, total: ticks.append((stage, done, total)), **engine)
    return rep, ticks


def test_dask_sweep_is_bit_identical_to_the_process_pool(client):
    dask_rep, ticks = _tables(engine="dask", scheduler=client)
    pool_rep, _ = _tables(engine="process", workers=2)
    serial_rep, _ = _tables(engine="serial")
    for other in (pool_rep, serial_rep):
        pd.testing.assert_frame_equal(dask_rep.by_seed, other.by_seed, check_exact=True)
        pd.testing.assert_frame_equal(dask_rep.summary, other.summary, check_exact=True)
        pd.testing.assert_frame_equal(dask_rep.broken, other.broken, check_exact=True)
    # one progress stage per sweep part, each ending at its total (3 seeds x 2 DAGs)
    ends = {s: d for s, d, t in ticks if d == t}
    assert set(ends) == {"figures 2-5 and 8 (swarms)", "figure 6 (rules)", "figure 7 (overheads)",
                         "figures 9-10 (width)"}
    assert set(ends.values()) == {6}
