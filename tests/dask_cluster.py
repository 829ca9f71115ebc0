"""A session-wide ``distributed.LocalCluster`` (two worker processes, loopback only) for the Dask tests.

Test modules import the ``dask_client`` fixture from here (``from dask_cluster import dask_client``).
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def dask_client():
    distributed = pytest.importorskip("distributed")  # the optional extra evalkit[dask]
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
