r"""Exact kernel products without storing K: cache-sized tiles computed on the fly.

:math:`K V` is computed tile by tile.  A tile :math:`K_{R,S}` (``tile_rows`` x
``tile_cols`` float32, sized to stay in the L2 cache) is one float32 GEMM, a
sign pass and an in-place ``exp``, then it is applied to V while still in cache and
dropped.  K is symmetric, so only the tiles with :math:`S \ge R` are formed and
each gives both :math:`K_{RS} V_S` and :math:`K_{RS}^T V_R`: half the GEMM and
half the ``exp`` of the full matrix.

For the RBF kernel the exponent comes out of the GEMM itself: with the data
centred (distances do not change) and scaled by :math:`s = \sqrt{2\gamma}`,

.. math::

    a_i = (s x_i,\ -\gamma\|x_i\|^2,\ 1), \qquad
    b_j = (s x_j,\ 1,\ -\gamma\|x_j\|^2), \qquad
    a_i \cdot b_j = -\gamma\|x_i - x_j\|^2,

so no separate pass adds the squared norms.  One product costs about
:math:`n^2 d` GEMM flops plus :math:`n^2/2` exponentials and :math:`2 n^2 C`
flops for the products with V; the benchmark
(``benchmarks/scale/bench_streamed.py``) measures it against the bare GEMM
:math:`X X^T` of all n x n entries.  Memory: one tile plus an
:math:`n \times (d + 2)` float32 copy of the data.  For large n the Nyström
operator is the practical choice.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._memory import block_rows
from ._kernels import kernel_matrix, row_norms_sq
from ._operators import single_blas_thread

__all__ = ["GEMV_MAX_COLUMNS", "StreamedKernelOperator", "cache_bytes"]

#: Widest tile (columns); rows follow from the tile's bytes (1 MiB: 256 x 1024).
_MAX_TILE_COLS = 1024

#: Widest block of columns applied one column at a time (gemv) on a tile.  On
#: the benchmark machine (OpenBLAS 0.3.31 Haswell kernel, one thread, a 256 x
#: 1024 float32 tile in cache) a GEMM with 2, 4, 8, 10 columns cost 5, 6, 7-9,
#: 9.5-13 gemv; whole products at n = 20,000: 6 columns 12% faster by gemv,
#: 10 the same, 16 25% slower, d = 50.
GEMV_MAX_COLUMNS = 8

#: Row tiles of the fallback path (sparse data, callable kernels), as before.
_FALLBACK_TILE_BYTES = 256 * 2**20


def cache_bytes(level: int = 2, default: int = 2**20) -> int:
    """Size in bytes of the CPU's data (or unified) cache of one level.

    Read from ``/sys/devices/system/cpu/cpu0/cache`` (Linux), else from
    ``os.sysconf``; ``default`` when neither knows.
    """
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for idx in sorted(base.glob("index*")):
            if (idx / "level").read_text().strip() != str(level):
                continue
            if (idx / "type").read_text().strip() not in ("Data", "Unified"):
                continue
            text = (idx / "size").read_text().strip().upper()
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            return int(text.rstrip("KMG")) * mult
    except (OSError, ValueError):
        pass
    name = f"SC_LEVEL{level}_CACHE_SIZE" if level > 1 else "SC_LEVEL1_DCACHE_SIZE"
    try:
        value = int(os.sysconf(name))
    except (ValueError, OSError, AttributeError):
        value = 0
    return value if value > 0 else default


def _tile_shape(n: int, tile_bytes: int) -> tuple[int, int]:
    """(rows, columns) of a float32 tile of about ``tile_bytes``, 1 row : 4 columns."""
    entries = max(1, tile_bytes // 4)
    cols = max(1, min(n, _MAX_TILE_COLS, math.isqrt(4 * entries)))
    rows = max(1, min(n, entries // cols))
    return rows, cols


class StreamedKernelOperator:
    r"""Exact Gram-matrix operator :math:`K = k(X, X)` applied tile by tile.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
        Training points (kept by reference; converted to float32).
    kernel : {'rbf', 'poly', 'linear'} or callable, default='rbf'
    gamma, degree, coef0, kernel_params
        As in :func:`~semisvm.kernels.kernel_matrix` (``gamma`` a number).
    tile_bytes : int, default=None
        Bytes of one float32 tile (default: the L2 cache of one core, between
        256 KiB and 4 MiB).  Sparse data and callable kernels use row tiles of
        at most 256 MiB (and of at most ``tile_bytes`` when it is given) through
        :func:`~semisvm.kernels.kernel_matrix`.

    Attributes
    ----------
    tile_rows, tile_cols : int
        Shape of one tile.
    n_products : int
        Columns multiplied so far (a solver's cost counter).

    Notes
    -----
    Entries are computed in float32 (the RBF exponent from the centred data,
    made :math:`\le 0`, the diagonal set to 1), and each tile's products are added
    into float64 results, so ``op @ V`` matches
    ``kernel_matrix(X, dtype=float32) @ V`` to float32 rounding, and the
    operator is exactly symmetric off its diagonal tiles.
    """

    def __init__(
        self,
        X: Any,
        *,
        kernel: Any = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        tile_bytes: int | None = None,
    ) -> None:
        X = X.astype(np.float32) if sp.issparse(X) else np.asarray(X, dtype=np.float32)
        self.X = X
        n = X.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.sq = row_norms_sq(X).astype(np.float32)
        user_tile = tile_bytes
        if tile_bytes is None:
            tile_bytes = min(4 * 2**20, max(2**18, cache_bytes(2)))
        self.tile_rows, self.tile_cols = _tile_shape(n, tile_bytes)
        self.n_products = 0
        self._fast = not sp.issparse(X) and kernel in ("rbf", "poly", "linear")
        self._fallback_rows = block_rows(
            n, 4, cap_bytes=user_tile or _FALLBACK_TILE_BYTES, n_rows=n
        )
        self._A = self._features() if self._fast else None

    # -- tiles --------------------------------------------------------------

    def _features(self) -> np.ndarray:
        """The GEMM's left operand: ``a_i`` (RBF, see the module notes) or X."""
        X = self.X
        if self.kernel != "rbf":
            return np.ascontiguousarray(X)
        n, d = X.shape
        mean = X.mean(axis=0, dtype=np.float64)
        A = np.empty((n, d + 2), dtype=np.float32)
        s = math.sqrt(2.0 * float(self.gamma))
        step = max(1, 2**22 // max(1, d))
        for i in range(0, n, step):  # centred and scaled in float64, by blocks
            a = A[i : i + step, :d]
            a[...] = s * (X[i : i + step].astype(np.float64) - mean)
            a64 = a.astype(np.float64)  # norms of the stored values, in float64
            A[i : i + step, d] = -0.5 * np.einsum("ij,ij->i", a64, a64)
        A[:, d + 1] = 1.0
        return A

    def _right(self, c0: int, c1: int, buf: np.ndarray) -> np.ndarray:
        """The GEMM's right operand for columns ``c0:c1`` (``b_j``: a_j, last two swapped)."""
        A = self._A
        assert A is not None
        if self.kernel != "rbf":
            return A[c0:c1]
        d = A.shape[1] - 2
        B = buf[: c1 - c0]
        B[:, :d] = A[c0:c1, :d]
        B[:, d] = 1.0
        B[:, d + 1] = A[c0:c1, d]
        return B

    def _tile(self, Ar: np.ndarray, B: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``k`` between the rows of ``Ar`` and of ``B``, in place in ``out``."""
        np.matmul(Ar, B.T, out=out)
        if self.kernel == "rbf":
            # exponent -|e|: an e > 0 is float32 rounding at (near-)duplicate
            # points; reflecting it keeps k <= 1 as clipping would, and abs and
            # negative are 6x faster than minimum (numpy 2.4, float32)
            np.abs(out, out=out)
            np.negative(out, out=out)
            np.exp(out, out=out)
        elif self.kernel == "poly":
            out *= np.float32(self.gamma)
            out += np.float32(self.coef0)
            np.power(out, self.degree, out=out)
        return out

    def rows(self, idx: Any) -> np.ndarray:
        """Rows ``idx`` of K (a slice or index array), float32."""
        if not self._fast:
            return self._rows_fallback(idx)
        assert self._A is not None
        n = self.shape[0]
        Ar = self._A[idx]
        Kb = np.empty((Ar.shape[0], n), dtype=np.float32)
        Bbuf = np.empty((min(n, self.tile_cols), self._A.shape[1]), np.float32)
        for c0 in range(0, n, self.tile_cols):
            c1 = min(n, c0 + self.tile_cols)
            self._tile(Ar, self._right(c0, c1, Bbuf), Kb[:, c0:c1])
        if self.kernel == "rbf":
            r = np.arange(n)[idx]
            Kb[np.arange(r.size), r] = 1.0
        return Kb

    def _rows_fallback(self, idx: Any) -> np.ndarray:
        Xr = self.X[idx]
        Kb = kernel_matrix(
            Xr,
            self.X,
            kernel=self.kernel,
            gamma=self.gamma,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            dtype=np.float32,
            X_norms_sq=self.sq[idx],
            Z_norms_sq=self.sq,
        )
        if self.kernel == "rbf":
            r = np.arange(self.X.shape[0])[idx]
            Kb[np.arange(r.size), r] = 1.0
        return Kb

    # -- products -----------------------------------------------------------

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        n = self.shape[0]
        V32 = np.ascontiguousarray(V, dtype=np.float32)
        with single_blas_thread():  # 2nd core: < 10% on a GEMM here, shared machine
            if not self._fast:
                out = np.empty((n,) + V.shape[1:], dtype=np.float64)
                for s in range(0, n, self._fallback_rows):
                    sl = slice(s, min(n, s + self._fallback_rows))
                    out[sl] = self._rows_fallback(sl) @ V32
                return out
            return self._symmetric_product(V32)

    def _symmetric_product(self, V32: np.ndarray) -> np.ndarray:
        r""":math:`K V` from the tiles :math:`K_{RS}`, :math:`S \ge R`, each used twice.

        In the tiles of row block R, the columns of R itself make the full
        square :math:`K_{RR}` (both triangles: applied once); the columns past R
        also give :math:`K_{RS}^T V_R` for the rows S.  Up to
        :data:`GEMV_MAX_COLUMNS` columns are applied one by one (gemv: a
        2-column GEMM on a tile cost 5 gemv), wider blocks by one GEMM each way.
        """
        A = self._A
        assert A is not None
        n = self.shape[0]
        R, S = self.tile_rows, self.tile_cols
        narrow = V32.ndim == 1 or V32.shape[1] <= GEMV_MAX_COLUMNS
        # narrow: columns as contiguous rows of W (C, n); wide: W = V (n, C)
        W = V32.reshape(1, n) if V32.ndim == 1 else V32
        if narrow and V32.ndim == 2:
            W = np.ascontiguousarray(V32.T)
        C = W.shape[0] if narrow else W.shape[1]
        out = np.zeros(W.shape, dtype=np.float64)
        buf = np.empty((R, S), dtype=np.float32)
        Bbuf = np.empty((S, A.shape[1]), dtype=np.float32)
        tR = np.empty((C, R) if narrow else (R, C), dtype=np.float32)
        tS = np.empty((C, S) if narrow else (S, C), dtype=np.float32)
        rbf = self.kernel == "rbf"
        for r0 in range(0, n, R):
            r1 = min(n, r0 + R)
            Ar = A[r0:r1]
            for c0 in range(r0, n, S):
                c1 = min(n, c0 + S)
                K = self._tile(Ar, self._right(c0, c1, Bbuf), buf[: r1 - r0, : c1 - c0])
                w = max(0, min(r1, c1) - c0)  # columns inside the row block
                if rbf and w:
                    i = np.arange(c0, c0 + w)
                    K[i - r0, i - c0] = 1.0
                Kt = K[:, w:]  # the tile's columns past R: K^T V_R too
                if narrow:
                    t, t2 = tR[:, : r1 - r0], tS[:, : c1 - c0 - w]
                    for j in range(C):
                        np.matmul(K, W[j, c0:c1], out=t[j])
                        if t2.shape[1]:
                            np.matmul(W[j, r0:r1], Kt, out=t2[j])
                    out[:, r0:r1] += t
                    out[:, c0 + w : c1] += t2
                else:
                    t, t2 = tR[: r1 - r0], tS[: c1 - c0 - w]
                    np.matmul(K, W[c0:c1], out=t)
                    out[r0:r1] += t
                    if t2.shape[0]:
                        np.matmul(Kt.T, W[r0:r1], out=t2)
                        out[c0 + w : c1] += t2
        if V32.ndim == 1:
            return out[0]
        return np.ascontiguousarray(out.T) if narrow else out

    def diagonal(self) -> np.ndarray:
        if self.kernel == "rbf":
            return np.ones(self.shape[0])
        n = self.shape[0]
        d = np.empty(n)
        step = 4096
        for s in range(0, n, step):
            Xs = self.X[s : s + step]
            d[s : s + step] = np.diagonal(
                kernel_matrix(
                    Xs,
                    Xs,
                    kernel=self.kernel,
                    gamma=self.gamma,
                    degree=self.degree,
                    coef0=self.coef0,
                    kernel_params=self.kernel_params,
                    dtype=np.float64,
                )
            )
        return d

    def toarray(self) -> np.ndarray:
        return self.rows(slice(None)).astype(np.float64)
