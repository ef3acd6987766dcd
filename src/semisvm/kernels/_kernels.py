"""Kernel functions: Gaussian (RBF), polynomial, linear, callable, precomputed.

The Gaussian kernel follows scikit-learn's parametrisation
``k(x, z) = exp(-gamma * ||x - z||^2)``, i.e. ``gamma = 1 / (2 sigma^2)`` for the
papers' ``exp(-||x - z||^2 / (2 sigma^2))``.

The Gram matrix is built by one matrix product ``X Z^T`` followed by the
elementwise part (squared distances, scaling, ``exp``) done in place, row block by
row block so that each block is still in cache: no n-by-n temporary beyond the
result itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._sample import sample_indices, sample_knn_distances
from .._threads import PARALLEL_MIN_WORK, blas_threads, map_threads
from .._validation import warn_if_unscaled

__all__ = [
    "KERNELS",
    "kernel_matrix",
    "resolve_gamma",
    "median_gamma",
    "knn_gamma",
    "knn_scale_ratio",
    "row_norms_sq",
    "check_memory",
]

KERNELS = ("rbf", "poly", "linear", "precomputed")

# rows per block for the fused elementwise pass
_BLOCK_BYTES = 4 * 2**20


def row_norms_sq(X: Any) -> np.ndarray:
    """Squared Euclidean norm of every row of a dense or sparse matrix."""
    if sp.issparse(X):
        X = X.tocsr()
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    X = np.asarray(X)
    return np.einsum("ij,ij->i", X, X)


def median_gamma(X: Any, *, max_samples: int = 1000, random_state: int = 0) -> float:
    """RBF ``gamma`` from the median-distance rule.

    ``sigma`` is the median Euclidean distance between distinct points (on a random
    subsample of at most ``max_samples`` rows) and ``gamma = 1 / (2 sigma^2)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    max_samples : int, default=1000
    random_state : int, default=0

    Returns
    -------
    gamma : float
    """
    n = X.shape[0]
    rng = np.random.default_rng(random_state)
    idx = rng.choice(n, size=min(n, max_samples), replace=False) if n > 1 else [0]
    Xs = X[np.sort(idx)]
    sq = row_norms_sq(Xs)
    G = Xs @ Xs.T
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    D2 = sq[:, None] + sq[None, :] - 2 * G
    iu = np.triu_indices(D2.shape[0], k=1)
    d2 = np.maximum(D2[iu], 0.0)
    d2 = d2[d2 > 0]
    if d2.size == 0:
        return 1.0
    sigma2 = float(np.median(d2))  # median of squared distances = (median dist)^2
    return 1.0 / (2.0 * sigma2)


def knn_gamma(
    X: Any, n_neighbors: int = 10, *, max_samples: int = 2000, random_state: int = 0
) -> float:
    r"""RBF ``gamma`` from the data's local scale: the kNN-distance rule.

    :math:`\sigma^2` is the mean, over the points of a sample S, of the squared
    distance from a point to its ``n_neighbors``-th nearest neighbour *in S*, and
    ``gamma = 1 / (2 sigma^2)``.  S is all points when
    :math:`n \le` ``max_samples``, else a uniform random sample of
    ``max_samples`` points.  The kernel is then as local as a kNN graph on
    ``min(n, max_samples)`` points, whatever the units of the features (like the
    widths the LapSVM papers tune: two moons sigma = 0.35 with 6 neighbours).

    **Why a fixed-size sample.**  The k-th neighbour distance among n
    points shrinks like :math:`(k/n)^{1/d}`; a kernel that narrow makes the RKHS
    term nearly blind to all but the closest points, so with one label per class
    the minimizer of the LapSVM objective is a bump at each label (its Green's
    function is essentially :math:`k(\cdot, x_i)`) and the graph has nothing
    to spread.  With the width of a fixed-size sample the kernel -- and the
    function class -- converge as n grows (measurements: docs/rules.rst).  For
    :math:`n \le` ``max_samples`` the rule is unchanged.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    n_neighbors : int, default=10
    max_samples : int, default=2000
        Size of the sample S (its kNN distances set the width).
    random_state : int, default=0

    Returns
    -------
    gamma : float
        Falls back to :func:`median_gamma` when every kNN distance is 0 (heavily
        duplicated points).
    """
    D = sample_knn_distances(
        X, n_neighbors, max_samples=max_samples, random_state=random_state
    )
    if D.shape[1] < 1:
        return median_gamma(X)
    sigma2 = float(np.mean(D[:, -1] ** 2))
    if not sigma2 > 0:
        return median_gamma(X)
    return 1.0 / (2.0 * sigma2)


def knn_scale_ratio(
    X: Any,
    n_neighbors: int = 10,
    *,
    max_samples: int = 2000,
    random_state: int = 0,
    knn_dist2: np.ndarray | None = None,
) -> float:
    r"""How much shorter the n-point graph's edges are than the sample's.

    :math:`\rho = \sigma_S^2 / \sigma_n^2`, with :math:`\sigma_S^2` the
    squared kNN length scale of :func:`knn_gamma` (neighbours within the fixed-size
    sample S) and :math:`\sigma_n^2` the same mean over the points of S with their
    neighbours searched among all n points.  :math:`\rho = 1` when
    :math:`n \le` ``max_samples``; it grows like :math:`(n/|S|)^{2/d}` for data of
    intrinsic dimension d.

    The estimators divide the graph term by :math:`\rho^{-p}` (``laplacian_power``
    p): a kNN graph Laplacian measures squared differences across edges of length
    :math:`\sigma_n`, so :math:`\mathbf f^T L^p \mathbf f / (n \bar d^{\,p})`
    shrinks like :math:`\sigma_n^{2p}` as n grows for the same function f; times
    :math:`\rho^p` it converges (to the value at the sample's scale), and
    :math:`\gamma_I` keeps its meaning at every n (without it the graph term
    fades at low label rates and the labels stay isolated bumps).

    ``knn_dist2`` (n, >= k), the squared distances of every point to its nearest
    other points (the graph search's lists, ascending): :math:`\sigma_n^2` is
    read off its rows S instead of a second search of S among all n points
    (2,000 x n x d flops: 46 s at 1M x 784).
    """
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    k = min(int(n_neighbors), n - 1)
    if n <= max_samples or k < 1:
        return 1.0
    q = sample_indices(n, max_samples, random_state)
    d_s = sample_knn_distances(X, k, max_samples=max_samples, random_state=random_state)
    if knn_dist2 is not None and knn_dist2.shape[1] >= k:
        s2_n = float(np.mean(np.asarray(knn_dist2[q, k - 1], dtype=np.float64)))
    else:
        d_n, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X[q])
        s2_n = float(np.mean(d_n[:, k] ** 2))
    s2_s = float(np.mean(d_s[:, -1] ** 2))
    if not (s2_s > 0 and s2_n > 0):
        return 1.0
    return s2_s / s2_n


def resolve_gamma(
    X: Any, gamma: float | str | None, kernel: str, n_neighbors: int = 10
) -> float:
    """Turn the user's ``gamma`` (number, ``"knn"``, ``"median"``, ``"scale"``) into a float."""
    n_features = X.shape[1]
    if gamma == "knn":
        if kernel == "rbf":
            return knn_gamma(X, n_neighbors)
        return 1.0 / n_features
    if gamma is None or gamma == "median":
        if kernel == "rbf":
            return median_gamma(X)
        return 1.0 / n_features
    if gamma == "scale":
        if sp.issparse(X):
            Xd = X.data
            mean = Xd.sum() / (X.shape[0] * X.shape[1])
            var = (Xd**2).sum() / (X.shape[0] * X.shape[1]) - mean**2
        else:
            var = float(np.asarray(X).var())
        return 1.0 / (n_features * var) if var > 0 else 1.0
    return float(gamma)


def _dense(A: Any) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def check_memory(
    n_rows: int, n_cols: int, dtype: Any, what: str = "the kernel matrix"
) -> None:
    """Fail early, with advice, if an ``n_rows x n_cols`` array cannot fit in memory."""
    itemsize = np.dtype(dtype).itemsize
    need = n_rows * n_cols * itemsize
    avail = _available_memory()
    if avail is not None and need > 0.9 * avail:
        raise MemoryError(
            f"Building {what} needs {need / 2**30:.1f} GiB ({n_rows} x {n_cols} "
            f"{np.dtype(dtype).name}) but only {avail / 2**30:.1f} GiB is available. "
            "Use float32 input (halves the memory), or, in LapSVM / LapRLS, "
            "kernel_approximation='nystroem' (low rank) or 'streamed' (exact, K "
            "never stored)."
        )


def _available_memory() -> int | None:
    from .._memory import available_memory

    return available_memory()


# rows x columns of one block of the Gram product (64 MiB)
_GEMM_BLOCK_BYTES = 64 * 2**20


def _gram_in_row_blocks(
    X: np.ndarray, Z: np.ndarray, symmetric: bool, dtype
) -> np.ndarray:
    """``X @ Z.T`` by row blocks of plain GEMM calls (no n-by-n SYRK).

    OpenBLAS's SYRK path of ``X @ X.T`` crashed (segmentation fault) at
    n >= 23,000, d = 784, float64 on two threads on the benchmark machine;
    row blocks of GEMM do not.  For ``Z is X`` only the lower block triangle is
    computed (half the flops) and mirrored, so K is exactly symmetric.
    """
    n, m = X.shape[0], Z.shape[0]
    K = np.empty((n, m), dtype=dtype)
    rows = max(1, _GEMM_BLOCK_BYTES // max(1, m * K.itemsize))
    for s in range(0, n, rows):
        e = min(n, s + rows)
        if symmetric:
            np.matmul(X[s:e], Z[:e].T, out=K[s:e, :e])
        else:
            np.matmul(X[s:e], Z.T, out=K[s:e])
    if symmetric:
        _mirror_lower(K)
    return K


def _mirror_lower(K: np.ndarray, strip: int = 256) -> None:
    """Copy the lower triangle of the square ``K`` onto its upper triangle, in
    place, strip by strip: no n-by-n temporary, cache-sized copies."""
    m = K.shape[0]
    for j in range(0, m, strip):
        e = min(m, j + strip)
        D = K[j:e, j:e]
        up = np.triu_indices(e - j, 1)
        D[up] = D.T[up]
        if e < m:
            K[j:e, e:] = K[e:, j:e].T


def kernel_matrix(
    X: Any,
    Z: Any = None,
    *,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 1.0,
    kernel_params: dict | None = None,
    dtype: Any = None,
    X_norms_sq: np.ndarray | None = None,
    Z_norms_sq: np.ndarray | None = None,
) -> np.ndarray:
    r"""Gram matrix between the rows of ``X`` and ``Z``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    Z : {ndarray, sparse matrix} of shape (m, d), default=None
        ``None`` means ``Z = X`` (the result is then exactly symmetric).
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
        ``rbf``: :math:`\exp(-\gamma\|x-z\|^2)`;
        ``poly``: :math:`(\gamma\, x\cdot z + c_0)^d`;
        ``linear``: :math:`x\cdot z`;
        a callable ``k(X, Z, **kernel_params)`` returning the (n, m) Gram matrix.
    gamma, degree, coef0 : float, int, float
    kernel_params : dict, default=None
        Extra keyword arguments of a callable kernel.
    dtype : dtype, default=None
        Output dtype; defaults to float32 when both inputs are float32, float64
        otherwise.
    X_norms_sq, Z_norms_sq : ndarray, default=None
        Precomputed squared row norms (saves a pass over the data).

    Returns
    -------
    K : ndarray of shape (n, m)

    Warns
    -----
    DataScaleWarning
        For the RBF kernel with ``Z=None`` (a training Gram matrix), when the
        features of a dense ``X`` are on very different scales.
    """
    symmetric = Z is None
    if symmetric:
        Z = X
    if callable(kernel):
        K = np.asarray(kernel(X, Z, **(kernel_params or {})))
        if K.shape != (X.shape[0], Z.shape[0]):
            raise ValueError(
                f"The callable kernel returned shape {K.shape}, expected "
                f"{(X.shape[0], Z.shape[0])}."
            )
        if dtype is not None:
            K = K.astype(dtype, copy=False)
        if not np.isfinite(K).all():
            raise ValueError("The callable kernel returned NaN or infinite values.")
        return K
    if dtype is None:
        dtype = (
            np.float32
            if (X.dtype == np.float32 and Z.dtype == np.float32)
            else np.float64
        )
    if symmetric and kernel == "rbf":  # a training Gram: check the scales once
        warn_if_unscaled(X, "the RBF kernel")
    Xc = X.astype(dtype, copy=False)
    Zc = Xc if symmetric else Z.astype(dtype, copy=False)
    check_memory(X.shape[0], Z.shape[0], dtype)
    if sp.issparse(Xc) or sp.issparse(Zc):
        G = Xc @ Zc.T
        K = _dense(G)
        if K.dtype != dtype:
            K = K.astype(dtype)
        if not K.flags.c_contiguous:
            K = np.ascontiguousarray(K)
    else:
        K = _gram_in_row_blocks(np.asarray(Xc), np.asarray(Zc), symmetric, dtype)
    if kernel == "linear":
        return K
    if kernel == "poly":
        K *= gamma
        K += coef0
        np.power(K, degree, out=K)
        return K
    if kernel != "rbf":  # pragma: no cover - validated upstream
        raise ValueError(f"Unknown kernel {kernel!r}; expected one of {KERNELS}.")
    xx = row_norms_sq(Xc) if X_norms_sq is None else X_norms_sq
    zz = xx if symmetric else (row_norms_sq(Zc) if Z_norms_sq is None else Z_norms_sq)
    xx = np.asarray(xx, dtype=dtype)
    zz = np.asarray(zz, dtype=dtype)
    m = K.shape[1]
    rows = max(1, _BLOCK_BYTES // max(1, m * K.itemsize))
    g2 = dtype(2.0 * gamma)
    ng = dtype(-gamma)
    # one reused buffer a thread: a fresh temporary per block costs page faults
    # (2x slower)
    local = threading.local()

    def block(start: int) -> None:
        blk = K[start : start + rows]
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = np.empty((min(rows, K.shape[0]), m), dtype=dtype)
        tmp = buf[: blk.shape[0]]
        # -gamma * (x^2 + z^2 - 2 xz) = 2 gamma xz - gamma x^2 - gamma z^2
        blk *= g2
        # x_i^2 + z_j^2 is computed in one addition so that K stays exactly symmetric
        np.add(xx[start : start + rows, None], zz[None, :], out=tmp)
        tmp *= ng
        blk += tmp
        np.minimum(blk, 0.0, out=blk)
        np.exp(blk, out=blk)

    # numpy's ufuncs release the GIL: the row blocks on the BLAS's threads
    # (every entry computed as on one thread)
    starts = range(0, K.shape[0], rows)
    threads = blas_threads() if K.size >= PARALLEL_MIN_WORK else 1
    map_threads(block, starts, threads=threads)
    if symmetric:
        np.fill_diagonal(K, 1.0)
    return K


def kernel_power(K: np.ndarray, m: float) -> np.ndarray:
    r""":math:`K^{\circ m}` elementwise (the RBF Gram matrix of ``gamma`` times
    m), by repeated squaring when m is a power of 2 (a new array)."""
    m = float(m)
    if m == 1.0:
        return np.array(K)
    k = int(round(np.log2(m)))
    if 2**k != m:
        return np.power(K, m)
    P = np.multiply(K, K)
    for _ in range(k - 1):
        np.multiply(P, P, out=P)
    return P
