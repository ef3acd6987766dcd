r"""kNN graphs of points partitioned over a Dask cluster.

``method='exact'``: a partitioned search with candidate exchange.  For every pair
of row blocks (b, c) (chunks of a ``dask.array``) a task finds the exact k nearest
rows of :math:`X_c` of each row of :math:`X_b`, holding only those two blocks;
block b's P candidate lists are merged pairwise on the workers and the client
gathers only the final (n, k) neighbour indices and squared distances, from which
it builds the sparse symmetric graph exactly as :func:`semisvm.graph.knn_graph`
does in process (same weights).  No worker ever holds all of X: a task holds two
blocks and (n_b, k) candidates; each block travels to the workers that pair it
(:math:`O(n d)` per worker in all, never at once).  The
Laplacian of the gathered graph (:math:`O(n k)` numbers) is small next to the
kernel and stays on the client, where the solver applies it.

``method='approx'``: each worker builds an HNSW index (hnswlib, Malkov & Yashunin
2018; ``pip install semisvm[approx]``) over its own block :math:`X_c` and answers
the k+1 nearest of every point among :math:`X_c`; the client keeps, for every
point, the k+1 best of the P candidate lists (the cross-partition merge).  A
point's true neighbour in block c is found whenever block c's index finds it, so
the recall is that of hnswlib on blocks of n/P points (the benchmark measures it);
each worker holds one index of :math:`O(n d / P)` plus all of X for the queries,
and the client receives :math:`P n (k+1)` candidates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._dask import _all_rows_future, _row_block_futures, get_dask_client
from ._graph import (
    _drop_self,
    _graph_from_kernel_values,
    _local_scales,
    _symmetrize,
    _to_weights,
)

__all__ = ["knn_graph_distributed", "knn_graph_from_distributed_kernel"]


def knn_graph_from_distributed_kernel(
    K: Any,
    gamma: float,
    n_neighbors: int = 10,
    *,
    weight: str = "binary",
    t: float | None = None,
) -> sp.csr_array:
    """:func:`~semisvm.graph.knn_graph_from_kernel` of kernel rows on a cluster.

    ``K`` is a :class:`~semisvm.kernels.DistributedKernelOperator` with stored
    RBF rows: each worker selects the k+1 largest values of its rows, the client
    builds the graph from the (n, k+1) lists exactly as the in-process function.
    """
    from .._validation import check_n_neighbors

    n = K.shape[0]
    check_n_neighbors(int(n_neighbors), n)
    k = int(n_neighbors)
    ind, kv = K.top_columns(k + 1)
    return _graph_from_kernel_values(ind, kv, n, k, gamma, weight, t)


def _pair_neighbours(
    Xb: np.ndarray, Xc: np.ndarray, offset: int, k: int, algorithm: str
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest rows of Xc (global indices) of every row of Xb, exact."""
    from sklearn.neighbors import NearestNeighbors

    kk = min(k, Xc.shape[0])
    nn = NearestNeighbors(n_neighbors=kk, algorithm=algorithm).fit(Xc)
    dist, ind = nn.kneighbors(Xb)
    return dist**2, ind.astype(np.int64) + offset


def _merge_two(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k best of two candidate lists per row (ties: the lower index first)."""
    d2 = np.hstack([a[0], b[0]])
    ind = np.hstack([a[1], b[1]])
    order = np.lexsort((ind, d2), axis=1)[:, :k]
    return np.take_along_axis(d2, order, axis=1), np.take_along_axis(ind, order, axis=1)


def _partitioned_exact(
    client: Any, futures: list, offsets: np.ndarray, k: int, algorithm: str
) -> tuple[np.ndarray, np.ndarray]:
    """Exact kNN of every row block among all blocks, never all of X on a worker.

    For every pair of blocks (b, c), the task of the pair finds the k nearest rows
    of :math:`X_c` for each row of :math:`X_b` (it holds two blocks); the P
    candidate lists of block b are merged pairwise on the workers (the candidate
    exchange: :math:`O(n_b k)` numbers per merge), and only the final (n_b, k)
    lists reach the client.  The k nearest among all points are among the union of
    the per-block k nearest, so the result is the exact search's (exact ties
    broken by the lower index).
    """
    out = []
    for Xb in futures:
        parts = [
            client.submit(
                _pair_neighbours, Xb, Xc, int(offsets[c]), k, algorithm, pure=False
            )
            for c, Xc in enumerate(futures)
        ]
        while len(parts) > 1:
            nxt = [
                client.submit(_merge_two, parts[i], parts[i + 1], k, pure=False)
                for i in range(0, len(parts) - 1, 2)
            ]
            if len(parts) % 2:
                nxt.append(parts[-1])
            parts = nxt
        out.append(parts[0])
    res = client.gather(out)
    return np.vstack([r[0] for r in res]), np.vstack([r[1] for r in res])


def _block_index_query(
    Xc: np.ndarray, offset: int, X: np.ndarray, k: int, ef: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of every row of X among the rows of Xc (an HNSW index of Xc)."""
    import hnswlib

    Xc = np.ascontiguousarray(Xc, dtype=np.float32)
    kk = min(k, Xc.shape[0])
    index = hnswlib.Index(space="l2", dim=Xc.shape[1])
    index.init_index(
        max_elements=Xc.shape[0], ef_construction=ef, M=16, random_seed=seed
    )
    index.set_num_threads(1)
    index.add_items(Xc, np.arange(Xc.shape[0]))
    index.set_ef(max(ef, kk))
    lab, d2 = index.knn_query(np.ascontiguousarray(X, dtype=np.float32), k=kk)
    return d2.astype(np.float64), lab.astype(np.int64) + offset


def _merge_candidates(
    parts: list[tuple[np.ndarray, np.ndarray]], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k smallest distances over the blocks' candidate lists."""
    d2 = np.hstack([p[0] for p in parts])
    ind = np.hstack([p[1] for p in parts])
    top = (
        np.argpartition(d2, k - 1, axis=1)[:, :k]
        if d2.shape[1] > k
        else (np.broadcast_to(np.arange(d2.shape[1]), d2.shape))
    )
    d2 = np.take_along_axis(d2, top, axis=1)
    ind = np.take_along_axis(ind, top, axis=1)
    order = np.argsort(d2, axis=1, kind="stable")
    return np.take_along_axis(d2, order, axis=1), np.take_along_axis(ind, order, axis=1)


def knn_graph_distributed(
    X: Any,
    n_neighbors: int = 10,
    *,
    weight: str = "binary",
    t: float | None = None,
    algorithm: str = "auto",
    client: Any = None,
    block_rows: int | None = None,
    method: str = "exact",
    ef: int | None = None,
    random_state: int = 0,
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
    method : {'exact', 'approx'}, default='exact'
        Exact search by row blocks, or an HNSW index per block merged across blocks.
    ef : int, default=None
        hnswlib construction/search breadth (default ``max(100, 2 k)``).
    random_state : int, default=0
        Seed of the HNSW indexes.

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
    if method not in ("exact", "approx"):
        raise ValueError(f"method must be 'exact' or 'approx', got {method!r}.")
    futures, offsets = _row_block_futures(X, client, block_rows)
    if method == "exact":
        dist2, ind = _partitioned_exact(client, futures, offsets, k + 1, algorithm)
    else:
        Xf = _all_rows_future(futures, client)
        try:
            import hnswlib  # noqa: F401
        except ImportError:
            raise ImportError(
                "method='approx' needs hnswlib: pip install 'semisvm[approx]'."
            ) from None
        e = int(ef) if ef is not None else max(100, 2 * (k + 1))
        parts = client.gather(
            [
                client.submit(
                    _block_index_query,
                    f,
                    int(offsets[c]),
                    Xf,
                    k + 1,
                    e,
                    random_state + c,
                    pure=False,
                )
                for c, f in enumerate(futures)
            ]
        )
        dist2, ind = _merge_candidates(parts, k + 1)
    dist2, ind = _drop_self(dist2, ind, k)
    return _to_weights(_symmetrize(ind, dist2, n), weight, t, _local_scales(dist2))
