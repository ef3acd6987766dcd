r"""Exact kernel products without storing K: row tiles computed on the fly.

:math:`K V` is computed tile by tile: for a block of rows :math:`R`,
:math:`K_{R,:} = k(X_R, X)` is built (one float32 GEMM :math:`X_R X^T` and the
fused in-place elementwise pass of :func:`~semisvm.kernels.kernel_matrix`), then
multiplied by V and dropped.  Memory: one tile (rows x n float32, sized from
available memory) instead of n x n.  Time per product: the GEMM
:math:`2 n^2 d` flops of the tiles plus :math:`2 n^2 C` for the products -- so
exact streamed products are for moderate n (the benchmark measures the ratio to
the bare GEMM), and for large n the Nyström operator is the practical choice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._memory import block_rows
from ._kernels import kernel_matrix, row_norms_sq
from ._operators import single_blas_thread

__all__ = ["StreamedKernelOperator"]


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
        Bytes of one tile (default: from available memory, at most 256 MiB).

    Notes
    -----
    Entries are computed in float32 exactly as the dense float32 kernel (same
    formula, diagonal set to 1 for the RBF kernel), and the products are
    accumulated in float64 across tiles, so ``op @ V`` matches
    ``kernel_matrix(X, dtype=float32) @ V`` to float32 rounding.
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
        self.tile_rows = block_rows(n, 4, cap_bytes=tile_bytes or 256 * 2**20, n_rows=n)
        self.n_products = 0

    def rows(self, idx: Any) -> np.ndarray:
        """Rows ``idx`` of K (a slice or index array), float32."""
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

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        n = self.shape[0]
        V32 = V.astype(np.float32)
        out = np.empty((n,) + V.shape[1:], dtype=np.float64)
        with single_blas_thread():  # 2nd core: < 10% on a GEMM here, shared machine
            for s in range(0, n, self.tile_rows):
                sl = slice(s, min(n, s + self.tile_rows))
                out[sl] = self.rows(sl) @ V32
        return out

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
