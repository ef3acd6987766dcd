"""The small operator interface through which solvers see K (and L).

A solver needs only ``shape``, ``dtype``, ``A @ V`` for a vector or an (n, C)
block of vectors, and ``diagonal()``.  Dense float64, dense float32 (with float64
results), symmetric-half storage, and later streamed or low-rank kernels are
implementations of the same interface, chosen in one place
(:func:`as_operator`); the solvers never learn which one they run on.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from .._config import blas_limits_enabled
from .._threads import blas_controller
from .._validation import plain

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "SINGLE_THREAD_MAX_BYTES",
    "SYMV_MAX_COLUMNS",
    "blas_threads_for",
    "single_blas_thread",
    "on_one_blas_thread",
    "SymmetricOperator",
    "DenseKernelOperator",
    "SparseOperator",
    "as_operator",
]

#: Widest block applied column by column with ``symv``; wider blocks use one
#: ``gemm``.  Measured on the benchmark machine (2 cores, OpenBLAS 0.3.30/0.3.31,
#: n = 12,000): symv 0.16 s, gemv 0.29-0.34 s, gemm with 10 columns 0.69 s,
#: symm with 10 columns 1.5 s (float64); see ``benchmarks/bench_floor.py``.
SYMV_MAX_COLUMNS = 3

#: Products with a matrix of at most this many bytes run on one BLAS thread.
#: Measured on the benchmark machine (2 cores shared with other jobs,
#: ``benchmarks/bench_floor.py``): at every n from 3,000 to 12,000 (1.15 GB), float64
#: and float32, one thread was as fast as two or faster, by 1.3-3x for symv and
#: 1.2-1.9x for a 10-column gemm.  Larger matrices keep the BLAS default.
SINGLE_THREAD_MAX_BYTES = 2 * 2**30

# matrices smaller than this are left to the BLAS's own choice (it already runs
# them on one thread, and limiting costs ~40 microseconds per product)
_MIN_LIMIT_BYTES = 8 * 2**20


def single_blas_thread() -> Any:
    """Context manager running BLAS calls inside it on one thread (or a no-op).

    A no-op under ``semisvm.set_config(blas_threads=None)``: the caller's BLAS
    threads then apply.
    """
    ctl = blas_controller()
    if ctl is None or not blas_limits_enabled():
        return nullcontext()
    return ctl.limit(limits=1, user_api="blas")


def on_one_blas_thread(func: F) -> F:
    """Decorator: run ``func`` with its BLAS calls on one thread.

    For code made of many small dense steps (the LOO engine's l x l solves and
    u x l products, thousands per selection): on the benchmark machine (2 cores,
    OpenBLAS 0.3.31 from numpy 2.4) the BLAS split each of them over both
    threads and the automatic selection of one ``LapSVM()`` fit took 9.2 s
    instead of 2.0 s (d = 784, n = 2,000, 50 labels; ``LapSVMCV()`` on digits
    121 s instead of 44 s).  One limit around the whole step costs ~0.1 ms.
    """

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        with single_blas_thread():
            return func(*args, **kwargs)

    return cast(F, run)


def blas_threads_for(nbytes: int) -> int | None:
    """BLAS threads for a product with a matrix of ``nbytes`` (None: BLAS default;
    always None under ``semisvm.set_config(blas_threads=None)``)."""
    if not blas_limits_enabled():
        return None
    if _MIN_LIMIT_BYTES <= nbytes <= SINGLE_THREAD_MAX_BYTES:
        return 1
    return None


@runtime_checkable
class SymmetricOperator(Protocol):
    """What a solver may ask of K or L."""

    shape: tuple[int, int]
    dtype: np.dtype

    def __matmul__(self, V: np.ndarray) -> np.ndarray: ...  # pragma: no cover

    def diagonal(self) -> np.ndarray: ...  # pragma: no cover


class DenseKernelOperator:
    """A dense symmetric matrix applied with the fastest BLAS product measured.

    A single vector, and a block of at most :data:`SYMV_MAX_COLUMNS` columns, go
    through ``symv`` (one call per column): it reads only one triangle of the
    matrix, so a product streams half of it from memory, and on the benchmark
    machine it beat a two-threaded ``gemv`` by 1.7-2x (float64 and float32,
    ``benchmarks/bench_floor.py``).  A wider block goes through one ``gemm``
    (``K @ V``): OpenBLAS's ``symm`` was 2x slower than ``gemm`` there, and one
    ``gemm`` beats ``C`` separate ``symv`` passes once ``C`` exceeds about three.
    With float32 storage, products are returned in float64 (the accumulation
    inside BLAS is float32, which is enough for a kernel matrix with entries in
    [0, 1]; the solver's vectors stay float64).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric matrix (not copied when C- or F-contiguous).
    use_symmetry : bool, default=True
        Use ``symv`` for vectors and narrow blocks; ``False`` always uses
        ``gemv``/``gemm`` (the full matrix is read).
    blas_threads : int, None or 'auto', default='auto'
        BLAS threads used by a product (through threadpoolctl); ``None`` leaves
        the BLAS default; ``'auto'`` uses :func:`blas_threads_for` (one thread up
        to :data:`SINGLE_THREAD_MAX_BYTES`, measured faster on 2 shared cores).
    """

    def __init__(
        self,
        K: np.ndarray,
        *,
        use_symmetry: bool = True,
        blas_threads: int | str | None = "auto",
    ) -> None:
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
        self._symv = blas.ssymv if K.dtype == np.float32 else blas.dsymv
        if not (
            blas_threads is None
            or (isinstance(blas_threads, str) and blas_threads == "auto")
            or (
                isinstance(blas_threads, numbers.Integral)
                and not isinstance(blas_threads, bool)
                and blas_threads >= 1
            )
        ):
            raise ValueError(
                f"blas_threads must be a positive integer, None or 'auto', "
                f"got {plain(blas_threads)!r}."
            )
        self.blas_threads = (
            int(blas_threads)
            if isinstance(blas_threads, numbers.Integral)
            else blas_threads
        )
        self.n_products = 0

    def _threads(self) -> int | None:
        """The limit of this product: ``'auto'`` is read at each product, so that
        ``semisvm.config_context`` applies to operators built before it."""
        if self.blas_threads is None or isinstance(self.blas_threads, int):
            return self.blas_threads
        return blas_threads_for(self.K.nbytes)  # 'auto'

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        limit = self._threads()
        if limit is not None and (ctl := blas_controller()) is not None:
            with ctl.limit(limits=limit, user_api="blas"):
                return self._product(V)
        return self._product(V)

    def _product(self, V: np.ndarray) -> np.ndarray:
        Vc = V.astype(self.dtype, copy=False)
        if not self.use_symmetry or (V.ndim == 2 and V.shape[1] > SYMV_MAX_COLUMNS):
            if V.ndim == 2:
                # (V^T K)^T: OpenBLAS's gemm with the thin operand first was as
                # fast or faster in float64 on the machines measured, and faster
                # in float32 on one of them (docs/rules.rst); returned C-ordered
                # like V, so that the
                # solver's (n, C) blocks keep one layout (a mixed layout costs a
                # copy in every sparse product with L)
                out = np.empty(V.shape, dtype=np.float64)
                out[...] = (Vc.T @ self.K).T
                return out
            out = self.K @ Vc
            return out.astype(np.float64, copy=False)
        if V.ndim == 1:
            out = self._symv(1.0, self._F, Vc, lower=1)
            return out.astype(np.float64, copy=False)
        out = np.empty(V.shape, dtype=np.float64)
        for j in range(V.shape[1]):
            out[:, j] = self._symv(1.0, self._F, Vc[:, j], lower=1)
        return out

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
