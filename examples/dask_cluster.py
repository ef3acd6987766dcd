"""
LapSVM on a Dask cluster
========================

The estimators accept a ``dask.array`` as ``X``: the kernel rows (or the Nyström
factor) are computed and kept on the workers of the cluster your
``dask.distributed.Client`` points at, the kNN graph is built there by row blocks,
and the PCG solver on the client sends only (n, C) vectors at each iteration.

Run it with a local cluster (the default here) or point it at yours::

    python examples/dask_cluster.py                          # LocalCluster, 2 workers
    python examples/dask_cluster.py tcp://scheduler:8786     # an existing cluster

Needs ``pip install "semisvm[dask]"``.
"""

import sys

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

from semisvm import LapSVM
from semisvm.datasets import make_two_moons


def main(address: str | None = None) -> None:
    if address:
        client = Client(address)  # the cluster you already run
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    print(client)

    X, y, y_true = make_two_moons(4000, n_labeled_per_class=2, random_state=0)
    # the data lives on the cluster: one row block per chunk
    Xd = client.persist(da.from_array(X, chunks=(1000, 2)))

    clf = LapSVM().fit(Xd, y)  # kernel and graph on the workers, solver on the client
    acc = (clf.transduction_ == y_true)[y == -1].mean()
    print(f"accuracy on the unlabeled points: {acc:.4f}, PCG iterations {clf.n_iter_}")

    # the same estimator in process gives the same model
    local = LapSVM().fit(X, y)
    diff = np.abs(local.decision_function(X[:500]) - clf.decision_function(X[:500])).max()
    print(f"max |f_cluster - f_in_process| on 500 points: {diff:.2e}")
    client.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
