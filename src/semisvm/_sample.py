"""The fixed-size random sample that the data-dependent defaults read.

The kNN kernel width (:func:`semisvm.kernels.knn_gamma`), the graph's length
ratio (:func:`semisvm.kernels.knn_scale_ratio`) and the intrinsic dimension
(:func:`semisvm.graph.intrinsic_dimension`) are computed on the same uniform
sample of at most 2,000 rows, in process and on a dask array alike (the same
``random_state`` draws the same rows): what they measure does not drift as n
grows, and the two backends give the same numbers.  A bottom-layer helper (plain
numpy and scikit-learn), shared by :mod:`semisvm.kernels`, :mod:`semisvm.graph`
and :mod:`semisvm.models`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["sample_indices", "sample_knn_distances"]


def sample_indices(n: int, max_samples: int, random_state: Any = 0) -> np.ndarray:
    """Sorted indices of a uniform sample of ``max_samples`` of ``n`` rows drawn
    with ``np.random.default_rng(random_state)``; all rows (no draw) when
    ``n <= max_samples``."""
    if n <= max_samples:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n, size=max_samples, replace=False))


#: The last few samples' neighbour distances, keyed by a digest of the sample's
#: bytes (the same rows give the same distances, whatever array they came from).
_CACHE: dict[bytes, np.ndarray] = {}
_CACHE_SIZE = 4


def _digest(Xs: np.ndarray) -> bytes:
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    h.update(str((Xs.shape, Xs.dtype.str)).encode())
    h.update(np.ascontiguousarray(Xs).tobytes())
    return h.digest()


def sample_knn_distances(
    X: Any, n_neighbors: int, *, max_samples: int = 2000, random_state: Any = 0
) -> np.ndarray:
    """Distances from every point of the sample (:func:`sample_indices`) to its
    ``k = min(n_neighbors, m - 1)`` nearest other points of the sample, ascending:
    shape (m, k), no column when k < 1.

    A default fit reads the sample three times (width, length ratio, dimension);
    the search runs once: the distances of a dense sample are kept (keyed by a
    digest of its rows, the last four samples) with their largest k, and a smaller
    k reads their first columns (the same ascending distances).
    """
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    if n > max_samples:
        X = X[sample_indices(n, max_samples, random_state)]
        n = max_samples
    k = min(int(n_neighbors), n - 1)
    if k < 1:
        return np.zeros((n, 0))
    key = _digest(X) if isinstance(X, np.ndarray) else None
    hit = _CACHE.get(key) if key is not None else None
    if hit is not None and hit.shape[1] >= k:
        return hit[:, :k].copy()
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    out = np.asarray(dist[:, 1:], dtype=np.float64)
    if key is not None:
        _CACHE.pop(key, None)
        while len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = out
    return out.copy()
