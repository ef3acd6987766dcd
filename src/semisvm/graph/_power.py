r"""The iterated Laplacian :math:`L^p` as an operator.

:math:`L^p` of a kNN-graph Laplacian fills in quickly (p = 5 on 500 points is
dense), while applying the sparse :math:`L` p times costs only
:math:`p\,\mathrm{nnz}(L)` per vector.  :class:`LaplacianPower` applies whichever
is cheaper, and forms the explicit power only when asked (``toarray``/``tocsr``)
or when it is the cheaper of the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._threads import PARALLEL_MIN_WORK, blas_threads, map_threads
from .._validation import plain

__all__ = ["LaplacianPower", "product_operand"]


class LaplacianPower:
    """:math:`L^p` applied as p products with the sparse :math:`L`.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric (plain or normalized) Laplacian.
    power : int
        Integer ``p >= 1``.

    Notes
    -----
    Implements the solvers' operator interface (``shape``, ``dtype``, ``@`` on a
    vector or an (n, C) block, ``diagonal()``), plus ``toarray()``/``tocsr()``.
    """

    def __init__(self, L: Any, power: int) -> None:
        if int(power) != power or power < 1:
            raise ValueError(
                f"laplacian_power must be an integer >= 1, got {plain(power)!r}."
            )
        self.base = sp.csr_array(L, dtype=np.float64)
        self.power = int(power)
        self.shape = self.base.shape
        self.dtype = self.base.dtype
        self._explicit: sp.csr_array | None = None
        self._row_blocks: dict[tuple[str, int], list] = {}

    @property
    def nnz(self) -> int:
        """Stored entries of the explicit power (forms it)."""
        return self.tocsr().nnz

    def tocsr(self) -> sp.csr_array:
        """The explicit sparse matrix :math:`L^p` (computed once, symmetrised)."""
        if self._explicit is None:
            P = self.base
            for _ in range(self.power - 1):
                P = sp.csr_array(P @ self.base)
            P = sp.csr_array((P + P.T) * 0.5)
            P.eliminate_zeros()
            self._explicit = P
        return self._explicit

    def toarray(self) -> np.ndarray:
        return self.tocsr().toarray()

    def half(self) -> sp.csr_array | None:
        r"""The sparse :math:`S = L^{p/2}` of an even power, else None.

        L is symmetric, so :math:`V^T L^p V = (SV)^T (SV)`: the Gram of a second
        power over a tall V is one sparse product with L and a symmetric
        rank-k update (:func:`~semisvm.solvers._lowrank.intrinsic_gram`), where
        applying :math:`L^2` costs two sparse products and a GEMM against V.
        """
        if self.power % 2:
            return None
        if self.power == 2:
            return self.base
        return LaplacianPower(self.base, self.power // 2).tocsr()

    def diagonal(self) -> np.ndarray:
        return self.tocsr().diagonal()

    def __matmul__(self, V: Any) -> np.ndarray:
        if self.power == 1:
            return self._product("base", V)
        if (
            self._explicit is not None
            and self._explicit.nnz < self.power * self.base.nnz
        ):
            return self._product("explicit", V)
        out = self._product("base", V)
        for _ in range(self.power - 1):
            out = self._product("base", out)
        return out

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_row_blocks"] = {}  # copies of rows of L: rebuilt on first use
        return state

    def _product(self, which: str, V: Any) -> np.ndarray:
        """``A @ V``, its row blocks on :func:`~semisvm._threads.blas_threads`
        threads when the product is large enough (SciPy's sparse product runs
        on one thread and releases the GIL; every row is summed as in the
        serial product, so the result is the same bit for bit).  ``which``:
        ``'base'`` (L) or ``'explicit'`` (the formed power)."""
        A = self.base if which == "base" else self._explicit
        assert A is not None
        V = np.asarray(V)
        cols = 1 if V.ndim == 1 else V.shape[1]
        threads = blas_threads() if A.nnz * cols >= PARALLEL_MIN_WORK else 1
        if threads < 2:
            return np.asarray(A @ V)
        key = (which, threads)
        if key not in self._row_blocks:
            bounds = np.linspace(0, A.shape[0], threads + 1).astype(int)
            self._row_blocks[key] = [
                (int(a), int(b), A[a:b])
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
        blocks = self._row_blocks[key]
        out = np.empty(
            (A.shape[0],) + V.shape[1:], dtype=np.result_type(A.dtype, V.dtype)
        )

        def run(block: tuple) -> None:
            a, b, Ab = block
            out[a:b] = Ab @ V

        map_threads(run, blocks)
        return out

    def __rmatmul__(self, V: Any) -> np.ndarray:  # symmetric: V @ L^p = (L^p V^T)^T
        return np.asarray(self @ np.asarray(V).T).T

    @property
    def T(self) -> LaplacianPower:
        return self


def product_operand(L: Any, dense_fraction: float = 0.1) -> Any:
    """L in the form that makes ``L @ M`` cheapest for a dense n-by-n ``M``.

    A dense array when :math:`L^p` has more than ``dense_fraction`` of its entries
    non-zero (a dense GEMM then beats a sparse product), else a sparse matrix or a
    :class:`LaplacianPower` applying the sparse L p times, whichever stores fewer
    entries.  Used by the O(n^3) solvers (dual, Newton), which form ``L K``.
    """
    if L is None:
        return None
    if isinstance(L, np.ndarray):
        return L
    n = L.shape[0]
    if isinstance(L, LaplacianPower):
        P = L.tocsr()
        if P.nnz > dense_fraction * n * n:
            return P.toarray()
        return P if P.nnz <= L.power * L.base.nnz else L
    if sp.issparse(L):
        return L.toarray() if L.nnz > dense_fraction * n * n else L
    return L
