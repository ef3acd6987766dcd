r"""kNN graphs of points partitioned over a Dask cluster.

Each row block :math:`X_b` (a chunk of a ``dask.array``) finds its exact k nearest
neighbours among all n points on the worker that holds it; the client gathers
only the (n, k) neighbour indices and squared distances and builds the sparse
symmetric graph from them, exactly as :func:`semisvm.graph.knn_graph` does in
process (same tie handling, same weights).  Every worker receives X once
(:math:`O(n d)`), and a block's search runs in row chunks through scikit-learn's
brute-force :class:`~sklearn.neighbors.NearestNeighbors` (memory
:math:`O(\text{chunk} \cdot n)` per worker, never :math:`n_b \times n`).  The
Laplacian of the gathered graph (:math:`O(n k)` numbers) is small next to the
kernel and stays on the client, where the solver applies it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..kernels._distributed import _all_rows_future, _row_block_futures, get_dask_client
from ._graph import _drop_self, _symmetrize, _to_weights

__all__ = ["knn_graph_distributed"]


def _block_neighbours(
    Xb: np.ndarray, X: np.ndarray, k: int, algorithm: str
) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k + 1, algorithm=algorithm).fit(X)
    dist, ind = nn.kneighbors(Xb)
    return dist**2, ind


def knn_graph_distributed(
    X: Any, n_neighbors: int = 10, *, weight: str = "binary", t: float | None = None,
    algorithm: str = "auto", client: Any = None, block_rows: int | None = None,
) -> sp.csr_array:
    """Symmetric kNN adjacency of the rows of a dask array, built on the cluster.

    Parameters
    ----------
    X : dask.array.Array or ndarray of shape (n_samples, n_features)
    n_neighbors : int, default=10
        Neighbours of each point (itself excluded); must be below n_samples.
    weight : {'binary', 'heat'}, default='binary'
    t : float, default=None
        Heat width; ``None``: the mean edge length (as :func:`knn_graph`).
    algorithm : str, default='auto'
        Exact search of :class:`sklearn.neighbors.NearestNeighbors` on each worker.
    client : distributed.Client, default=None
        The current client when None.
    block_rows : int, default=None
        Rows per task (default: the dask chunks).

    Returns
    -------
    W : scipy.sparse.csr_array of shape (n_samples, n_samples)
        Equal to ``knn_graph(X.compute(), ...)`` (same neighbours up to exact ties).
    """
    client = get_dask_client(client)
    n = X.shape[0]
    k = int(n_neighbors)
    if not 1 <= k < n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be at least 1 and below n_samples={n}."
        )
    futures, _ = _row_block_futures(X, client, block_rows)
    Xf = _all_rows_future(futures, client)
    parts = client.gather([
        client.submit(_block_neighbours, f, Xf, k, algorithm, pure=False) for f in futures
    ])
    dist2 = np.vstack([p[0] for p in parts])
    ind = np.vstack([p[1] for p in parts])
    dist2, ind = _drop_self(dist2, ind, k)
    return _to_weights(_symmetrize(ind, dist2, n), weight, t)
