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


def sample_knn_distances(
    X: Any, n_neighbors: int, *, max_samples: int = 2000, random_state: Any = 0
) -> np.ndarray:
    """Distances from every point of the sample (:func:`sample_indices`) to its
    ``k = min(n_neighbors, m - 1)`` nearest other points of the sample, ascending:
    shape (m, k), no column when k < 1."""
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    if n > max_samples:
        X = X[sample_indices(n, max_samples, random_state)]
        n = max_samples
    k = min(int(n_neighbors), n - 1)
    if k < 1:
        return np.zeros((n, 0))
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    return np.asarray(dist[:, 1:], dtype=np.float64)
