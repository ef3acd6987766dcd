"""The small operator interface through which solvers see K (and L).

A solver needs only ``shape``, ``dtype``, ``A @ V`` for a vector or an (n, C)
block of vectors, and ``diagonal()``.  Dense float64, dense float32 (with float64
results), symmetric-half storage, and later streamed or low-rank kernels are
implementations of the same interface, chosen in one place
(:func:`as_operator`); the solvers never learn which one they run on.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

__all__ = [
    "SymmetricOperator",
    "DenseKernelOperator",
    "SparseOperator",
    "as_operator",
]


@runtime_checkable
class SymmetricOperator(Protocol):
    """What a solver may ask of K or L."""

    shape: tuple[int, int]
    dtype: np.dtype

    def __matmul__(self, V: np.ndarray) -> np.ndarray: ...  # pragma: no cover

    def diagonal(self) -> np.ndarray: ...  # pragma: no cover


class DenseKernelOperator:
    """A dense symmetric matrix, applied with BLAS ``symv``/``symm``.

    ``symv``/``symm`` read only one triangle of the matrix, so a product streams
    half of it from memory.  With float32 storage, products are returned in
    float64 (the accumulation inside BLAS is float32, which is enough for a
    kernel matrix with entries in [0, 1]; the solver's vectors stay float64).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric matrix (not copied when C- or F-contiguous).
    use_symmetry : bool, default=True
        Use ``symv``/``symm`` instead of ``gemv``/``gemm``.
    """

    def __init__(self, K: np.ndarray, *, use_symmetry: bool = True) -> None:
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"Kernel matrix must be square, got shape {K.shape}.")
        self.K = K
        self.shape = K.shape
        self.dtype = K.dtype
        self.use_symmetry = use_symmetry and K.dtype in (np.float32, np.float64)
        # a C-contiguous symmetric matrix is its own Fortran transpose
        self._F = K.T if K.flags.c_contiguous else K
        if self.use_symmetry and not self._F.flags.f_contiguous:
            self.use_symmetry = False
        if K.dtype == np.float32:
            self._symv, self._symm = blas.ssymv, blas.ssymm
        else:
            self._symv, self._symm = blas.dsymv, blas.dsymm
        self.n_products = 0

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        if not self.use_symmetry:
            out = self.K @ V.astype(self.dtype, copy=False)
            return out.astype(np.float64, copy=False)
        Vc = np.asarray(V, dtype=self.dtype)
        if V.ndim == 1:
            out = self._symv(1.0, self._F, Vc, lower=1)
        else:
            out = self._symm(1.0, self._F, np.asfortranarray(Vc), side=0, lower=1)
        return out.astype(np.float64, copy=False)

    def diagonal(self) -> np.ndarray:
        return np.diagonal(self.K).astype(np.float64)

    def toarray(self) -> np.ndarray:
        return np.asarray(self.K, dtype=np.float64)


class SparseOperator:
    """A scipy sparse matrix (e.g. the graph Laplacian) behind the same interface."""

    def __init__(self, A: Any) -> None:
        self.A = sp.csr_array(A)
        self.shape = self.A.shape
        self.dtype = self.A.dtype

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        return np.asarray(self.A @ V)

    def diagonal(self) -> np.ndarray:
        return self.A.diagonal()

    def toarray(self) -> np.ndarray:
        return self.A.toarray()


def as_operator(A: Any) -> Any:
    """Wrap an array, sparse matrix or operator in the solver interface."""
    if isinstance(A, DenseKernelOperator | SparseOperator):
        return A
    if sp.issparse(A):
        return SparseOperator(A)
    if isinstance(A, np.ndarray):
        return DenseKernelOperator(A)
    if isinstance(A, SymmetricOperator):
        return A
    raise TypeError(f"Cannot use an object of type {type(A).__name__} as an operator.")
