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

``method='approx'``: the same partitioned plan with an HNSW index (hnswlib, Malkov &
Yashunin 2018; ``pip install semisvm[approx]``) in place of the exact pair search.
Each worker builds one index over its own block :math:`X_b`, once; for every pair
(b, c) a task queries the rows of :math:`X_c` against block b's index, and block
c's P candidate lists are merged pairwise on the workers as above.  A point's true
neighbour in block b is found whenever block b's index finds it, so the recall is
that of hnswlib on blocks of n/P points (the tests and the benchmark measure it).
Wide rows (``pca_components``, ``'auto'`` as in process: 64 principal directions
above 128 features) are searched on their projection, the directions computed once
on the client from the same sample as :func:`semisvm.graph.pca_project`; each pair
task takes ``CANDIDATE_FACTOR`` (k+1) candidates on the projection and keeps the
k+1 nearest in exact distance, from the two full blocks it holds, so the returned
distances are exact, as in process.  As for the exact search, a task holds an index
and two blocks, never all of X.

With random row blocks every partition's index answers every query: the query work
is P n, a worker answers n queries whatever the number of workers P.  From 16
workers on (``partitioning='auto'``) the partitions are clustered instead: k-means
centres on a sample, each row moved once to the partition of its nearest centre and
searched for only in the partitions of its 6 nearest centres (at most 6n queries;
recall 0.98-0.999 against the exact search in the tests, a little below hnswlib's
own on the blocks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._dask import _n_workers, _row_block_futures, get_dask_client
from ._graph import (
    _drop_self,
    _graph_from_kernel_values,
    _local_scales,
    _symmetrize,
    _to_weights,
)
from ._knn import CANDIDATE_FACTOR, auto_pca_components

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
        out.append(_merge_tree(client, parts, k))
    res = client.gather(out)
    return np.vstack([r[0] for r in res]), np.vstack([r[1] for r in res])


def _block_index(
    Xb: np.ndarray, mean: np.ndarray | None, Vt: np.ndarray | None, ef: int, seed: int
) -> Any:
    """An HNSW index over the rows of Xb (on their projection when Vt is given)."""
    import hnswlib

    Pb = _project(Xb, mean, Vt)
    index = hnswlib.Index(space="l2", dim=Pb.shape[1])
    index.init_index(
        max_elements=Pb.shape[0], ef_construction=ef, M=16, random_seed=seed
    )
    index.set_num_threads(1)
    index.add_items(Pb, np.arange(Pb.shape[0]))
    return index


def _project(
    X: np.ndarray, mean: np.ndarray | None, Vt: np.ndarray | None
) -> np.ndarray:
    if Vt is None:
        return np.ascontiguousarray(X, dtype=np.float32)
    return np.ascontiguousarray(((X - mean) @ Vt.T).astype(np.float32, copy=False))


def _pair_index_query(
    index: Any,
    Xb: np.ndarray,
    ids: np.ndarray,
    Xc: np.ndarray,
    mean: np.ndarray | None,
    Vt: np.ndarray | None,
    k: int,
    ef: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest rows of Xb (global indices ``ids``) of every row of Xc, by the
    index of Xb.

    On a projection (Vt given) ``CANDIDATE_FACTOR * k`` candidates are re-ranked by
    their exact squared distance in the full rows (:func:`rerank_pair`).
    """
    nb = Xb.shape[0]
    kk = min(k if Vt is None else CANDIDATE_FACTOR * k, nb)
    index.set_num_threads(1)
    index.set_ef(max(ef, kk))
    lab, d2 = index.knn_query(_project(Xc, mean, Vt), k=kk)
    lab = lab.astype(np.int64)
    if Vt is None:
        return d2.astype(np.float64), ids[lab]
    d2, lab = _rerank_pair(Xb, Xc, lab, min(k, nb))
    return d2, ids[lab]


def _rerank_pair(
    Xb: np.ndarray, Xc: np.ndarray, cand: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of Xc, the k candidates (rows of Xb) nearest in exact squared distance."""
    Xb = np.asarray(Xb, dtype=np.float64)
    Xc = np.asarray(Xc, dtype=np.float64)
    sqb = np.einsum("ij,ij->i", Xb, Xb)
    sqc = np.einsum("ij,ij->i", Xc, Xc)
    n, c = cand.shape
    rows = max(1, (32 * 2**20) // max(1, 8 * c * Xb.shape[1]))
    d2 = np.empty((n, k))
    ind = np.empty((n, k), dtype=np.int64)
    for s in range(0, n, rows):
        e = min(n, s + rows)
        cs = cand[s:e]
        G = np.matmul(Xb[cs], Xc[s:e, :, None])[:, :, 0]
        D = np.maximum(sqc[s:e, None] + sqb[cs] - 2.0 * G, 0.0)
        order = np.argsort(D, axis=1, kind="stable")[:, :k]
        d2[s:e] = np.take_along_axis(D, order, axis=1)
        ind[s:e] = np.take_along_axis(cs, order, axis=1)
    return d2, ind


def _pca_directions(
    X: Any, n_components: int, random_state: int
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and principal directions of :func:`~semisvm.graph.pca_project`, same sample."""
    from sklearn.utils.extmath import randomized_svd

    from .._dask import is_distributed_array

    n = X.shape[0]
    rng = np.random.default_rng(random_state)
    idx = np.sort(rng.choice(n, size=min(n, 20_000), replace=False))
    sub = X[idx]
    sub = np.asarray(sub.compute() if is_distributed_array(sub) else sub)
    if sub.dtype not in (np.float32, np.float64):
        sub = sub.astype(np.float64)
    mean = sub.mean(axis=0)
    _, _, Vt = randomized_svd(sub - mean, n_components, random_state=random_state)
    return mean, Vt


def _indexes(
    client: Any,
    parts: list,
    where: list[dict],
    mean: Any,
    Vt: Any,
    ef: int,
    random_state: int,
) -> list:
    """One HNSW index per partition future, built on the partition's worker."""
    return [
        client.submit(
            _block_index, f, mean, Vt, ef, random_state + q, pure=False, **where[q]
        )
        for q, f in enumerate(parts)
    ]


def _partitioned_approx(
    client: Any,
    futures: list,
    offsets: np.ndarray,
    k: int,
    ef: int,
    random_state: int,
    pca: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The approximate twin of :func:`_partitioned_exact`: one HNSW index per
    partition, queried by every partition; candidates merged on the workers.

    A partition is the row blocks one worker holds (:func:`worker_groups`, stacked
    there: no data moves to form it).  Every partition's index answers all n
    queries, so the query work grows with the number of partitions: with one per
    worker each worker answers n queries, as one in-process index would.
    """
    from .._dask import _stack, pin, worker_groups

    mean, Vt = pca if pca is not None else (None, None)
    if Vt is not None:
        mean, Vt = (
            client.scatter(mean, broadcast=True),
            client.scatter(Vt, broadcast=True),
        )
    groups = worker_groups(client, futures)
    parts_x, ids, where = [], [], []
    for w, bs in groups:
        fs = [futures[b] for b in bs]
        parts_x.append(
            client.submit(_stack, *fs, pure=False, **pin(w)) if len(fs) > 1 else fs[0]
        )
        ids.append(np.concatenate([np.arange(offsets[b], offsets[b + 1]) for b in bs]))
        where.append(pin(w))
    indexes = _indexes(client, parts_x, where, mean, Vt, ef, random_state)
    out = []
    for Xc in parts_x:
        parts = [
            client.submit(
                _pair_index_query,
                indexes[g],
                Xb,
                ids[g],
                Xc,
                mean,
                Vt,
                k,
                ef,
                pure=False,
                **where[g],
            )
            for g, Xb in enumerate(parts_x)
        ]
        out.append(_merge_tree(client, parts, k))
    res = client.gather(out)
    n = int(offsets[-1])
    dist2 = np.empty((n, res[0][0].shape[1]))
    ind = np.empty((n, res[0][1].shape[1]), dtype=np.int64)
    for g, r in enumerate(res):
        dist2[ids[g]], ind[ids[g]] = r
    return dist2, ind


#: Clustered partitions: k-means centres per partition, and the nearest centres
#: whose partitions each row visits (its own is the nearest's).  Measured on a
#: 10-d manifold in 30 and 784 features (8 and 16 partitions, 8,000-20,000
#: points): 2 centres and 6 visits keep a recall of 0.981-0.999 against the exact
#: search (3 visits: 0.88-0.98; 8 centres and 8 visits: 0.967-0.998).
CENTRES_PER_PARTITION = 2
VISIT = 6
#: ``partitioning='auto'`` clusters from this many workers on: the query work is
#: at most ``VISIT`` n instead of P n (16 workers: 2.7x less), for a recall a
#: little below the blocks' (which is hnswlib's own).
CLUSTERED_MIN_PARTITIONS = 16


def _nearest_centres(
    Xb: np.ndarray,
    mean: np.ndarray | None,
    Vt: np.ndarray | None,
    centres: np.ndarray,
    t: int,
) -> np.ndarray:
    """Indices of the t centres nearest to each row (on the search's projection)."""
    P = _project(Xb, mean, Vt).astype(np.float64)
    d2 = (
        np.einsum("ij,ij->i", P, P)[:, None]
        - 2.0 * P @ centres.T
        + np.einsum("ij,ij->i", centres, centres)[None, :]
    )
    t = min(t, centres.shape[0])
    top = np.argpartition(d2, t - 1, axis=1)[:, :t]
    order = np.argsort(np.take_along_axis(d2, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1).astype(np.int64)


def _rows(X: np.ndarray, i: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X[i])


def _query_rows(index, Xp, ids, Xb, rows, mean, Vt, k, ef):
    """:func:`_pair_index_query` for the rows ``rows`` of Xb only."""
    return _pair_index_query(index, Xp, ids, Xb[rows], mean, Vt, k, ef)


def _merge_visits(n_b: int, k: int, rows: list, *results) -> tuple:
    """Per row of a block, the k best over the partitions it visited."""
    D = np.full((n_b, k), np.inf)
    I = np.full((n_b, k), -1, dtype=np.int64)
    for r, (d2, ind) in zip(rows, results, strict=True):
        if d2.shape[1] < k:  # a partition smaller than k: pad
            pad = k - d2.shape[1]
            d2 = np.c_[d2, np.full((d2.shape[0], pad), np.inf)]
            ind = np.c_[ind, np.full((ind.shape[0], pad), -1, dtype=np.int64)]
        D[r], I[r] = _merge_two((D[r], I[r]), (d2, ind), k)
    return D, I


def _clustered_approx(
    client: Any,
    futures: list,
    offsets: np.ndarray,
    k: int,
    ef: int,
    random_state: int,
    pca: tuple[np.ndarray, np.ndarray] | None,
    n_partitions: int,
    visit: int = VISIT,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Approximate kNN on clustered partitions: each row queries a few of them.

    k-means (:class:`sklearn.cluster.KMeans`) on a sample of at most 20,000 rows
    (on the search's projection) gives ``CENTRES_PER_PARTITION * n_partitions``
    centres, dealt to the partitions largest first to the lightest partition
    (balanced sizes); each row moves once to the partition of its nearest centre
    (:math:`n d` numbers in all) and is searched for in the indexes of the
    partitions of its ``visit`` nearest centres.  The query work is at most
    ``visit * n`` instead of ``n_partitions * n`` for the random row blocks, and no
    task holds more than a partition and a block.  A neighbour is missed when it
    lies in a partition none of the row's nearest centres belong to: the recall is
    measured (tests, benchmark), not guaranteed.  Returns None (the caller falls
    back to :func:`_partitioned_approx`) when a partition would hold fewer than
    k points.
    """
    from sklearn.cluster import KMeans

    from .._dask import _stack, pin, worker_groups
    from .._sample import sample_indices

    n = int(offsets[-1])
    mean, Vt = pca if pca is not None else (None, None)
    # the sample, projected as the search is, and its k-means centres
    idx = sample_indices(n, 20_000, random_state)
    blk = np.searchsorted(offsets, idx, side="right") - 1
    S = np.vstack(
        [
            client.submit(_rows, futures[b], idx[blk == b] - offsets[b]).result()
            for b in np.unique(blk)
        ]
    )
    S = _project(S, mean, Vt)
    n_centres = min(CENTRES_PER_PARTITION * n_partitions, S.shape[0])
    km = KMeans(n_centres, n_init=1, random_state=random_state).fit(S)
    centres = km.cluster_centers_.astype(np.float64)
    counts = np.bincount(km.labels_, minlength=n_centres)
    owner = np.empty(n_centres, dtype=np.int64)
    load = np.zeros(n_partitions)
    for c in np.argsort(-counts, kind="stable"):
        owner[c] = int(np.argmin(load))
        load[owner[c]] += counts[c]
    mf = client.scatter(mean, broadcast=True) if Vt is not None else None
    vf = client.scatter(Vt, broadcast=True) if Vt is not None else None
    cf = client.scatter(centres, broadcast=True)
    near = client.gather(
        [client.submit(_nearest_centres, f, mf, vf, cf, visit) for f in futures]
    )
    home = [owner[t[:, 0]] for t in near]
    sizes = np.bincount(np.concatenate(home), minlength=n_partitions)
    if sizes.min() < k:
        return None
    # move each row to its home partition, spread over the workers
    workers = [w for w, _ in worker_groups(client, futures)] or [None]
    parts_x, ids, where = [], [], []
    for q in range(n_partitions):
        w = workers[q % len(workers)]
        pieces, gid = [], []
        for b, f in enumerate(futures):
            loc = np.flatnonzero(home[b] == q)
            if loc.size:
                pieces.append(client.submit(_rows, f, loc, pure=False))
                gid.append(loc + offsets[b])
        parts_x.append(client.submit(_stack, *pieces, pure=False, **pin(w)))
        ids.append(np.concatenate(gid))
        where.append(pin(w))
    indexes = _indexes(client, parts_x, where, mf, vf, ef, random_state)
    out = []
    for b, f in enumerate(futures):
        visits = owner[near[b]]  # (n_b, visit) partitions
        rows, res = [], []
        for q in np.unique(visits):
            r = np.flatnonzero((visits == q).any(axis=1))
            rows.append(r)
            res.append(
                client.submit(
                    _query_rows,
                    indexes[q],
                    parts_x[q],
                    ids[q],
                    f,
                    r,
                    mf,
                    vf,
                    k,
                    ef,
                    pure=False,
                    **where[q],
                )
            )
        n_b = int(offsets[b + 1] - offsets[b])
        out.append(client.submit(_merge_visits, n_b, k, rows, *res, pure=False))
    res_all = client.gather(out)
    return np.vstack([r[0] for r in res_all]), np.vstack([r[1] for r in res_all])


def _merge_tree(client: Any, parts: list, k: int) -> Any:
    """Merge candidate-list futures pairwise on the workers; one future remains."""
    while len(parts) > 1:
        nxt = [
            client.submit(_merge_two, parts[i], parts[i + 1], k, pure=False)
            for i in range(0, len(parts) - 1, 2)
        ]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


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
    pca_components: int | str | None = None,
    partitioning: str = "auto",
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
        Seed of the HNSW indexes and of the PCA sample.
    pca_components : int or 'auto', default=None
        ``method='approx'`` only: search on this many principal directions and
        re-rank the candidates by exact distance (``'auto'``: as
        :func:`semisvm.graph.knn_search`, 64 directions above 128 features).
    partitioning : {'auto', 'blocks', 'clustered'}, default='auto'
        ``method='approx'`` only.  ``'blocks'``: one index per worker's row blocks,
        every partition queried by every row (the query work grows with the
        number of workers P); ``'clustered'``: k-means partitions, each row
        queries the partitions of its ``VISIT`` = 6 nearest centres (at most 6n
        queries, recall 0.98-0.999 in the tests; :func:`_clustered_approx`);
        ``'auto'``: clustered from 16 workers on.

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
        try:
            import hnswlib  # noqa: F401
        except ImportError:
            raise ImportError(
                "method='approx' needs hnswlib: pip install 'semisvm[approx]'."
            ) from None
        if pca_components == "auto":
            pca_components = auto_pca_components(X.shape[1], "approx")
        pca = None
        if pca_components is not None and int(pca_components) < X.shape[1]:
            pca = _pca_directions(X, int(pca_components), random_state)
        e = int(ef) if ef is not None else max(100, 2 * (k + 1))
        if partitioning not in ("auto", "blocks", "clustered"):
            raise ValueError(
                "partitioning must be 'auto', 'blocks' or 'clustered', got "
                f"{partitioning!r}."
            )
        n_part = _n_workers(client)
        res = None
        if partitioning == "clustered" or (partitioning == "auto" and n_part > VISIT):
            res = _clustered_approx(
                client, futures, offsets, k + 1, e, random_state, pca, max(n_part, 2)
            )
        dist2, ind = (
            res
            if res is not None
            else _partitioned_approx(
                client, futures, offsets, k + 1, e, random_state, pca
            )
        )
    dist2, ind = _drop_self(dist2, ind, k)
    return _to_weights(_symmetrize(ind, dist2, n), weight, t, _local_scales(dist2))
