r"""Kernel operators whose row blocks live on the workers of a Dask cluster.

The solvers see a kernel only through the operator interface of
:mod:`semisvm.kernels._operators` (``shape``, ``dtype``, ``A @ V`` for a vector or
an (n, C) block, ``diagonal()``).  The classes here implement that interface with
the rows of the matrix partitioned over the workers of a ``dask.distributed``
cluster, so that the solver loop is the one used in-process, unchanged:

* :class:`DistributedRowBlocks` -- a general (n, m) matrix ``A`` stored as row
  blocks ``A_b`` (one Dask future each).  ``A @ V`` broadcasts ``V`` (an
  (m, C) block) once to the workers, each worker returns ``A_b V`` and the client
  stacks them: the client sends :math:`m C` numbers per worker and receives
  :math:`n C`.  ``A.T @ V`` sends each worker its own rows ``V_b`` and sums the
  (m, C) partial products :math:`A_b^T V_b` on the client.
* :class:`DistributedKernelOperator` -- the symmetric n x n Gram matrix of the
  training points, ``K_b = k(X_b, X)``, either stored on the worker that owns
  block ``b`` (``store='dense'``: :math:`n^2` numbers over all workers) or
  recomputed tile by tile at every product (``store='streamed'``: only X is kept,
  :math:`O(n d)` per worker).
* :class:`DistributedNystroemOperator` -- the low-rank approximation
  :math:`\tilde K = C W^{+} C^T` with ``C = k(X, Z)`` for m landmarks Z, stored as
  the row blocks ``C_b`` (:math:`n m` numbers over all workers); a product costs
  two distributed passes, :math:`C^T V` then :math:`C (W^{+} C^T V)`, and moves
  :math:`2 n C + 2 P m C` numbers for P blocks.

In every case one solver iteration (one product with K for all one-vs-rest
classes at once) moves :math:`O(n C)` numbers between the client and the workers;
the kernel itself never leaves them.  Which worker holds which block is Dask's
choice; the client only keeps futures.

Dask is an optional dependency (``pip install semisvm[dask]``): this module
imports it lazily, and :func:`is_distributed_array` recognises a ``dask.array``
without importing Dask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._dask import (
    _INLINE_BYTES,
    _all_rows_future,
    _n_workers,
    _row_block_futures,
    get_dask_client,
    is_distributed_array,
)
from .._sample import sample_indices
from ._kernels import kernel_matrix, knn_gamma, median_gamma, resolve_gamma

__all__ = [
    "DistributedRowBlocks",
    "DistributedKernelOperator",
    "DistributedNystroemOperator",
    "DistributedNystroemFactor",
    "check_distributed_input",
    "distributed_gamma",
    "distributed_kernel",
    "resolve_distributed_operator",
    "distributed_row_blocks",
    "distributed_kernel_dot",
    "distributed_kernel_columns",
    "get_dask_client",
    "is_distributed_array",
]


# ---------------------------------------------------------------- worker tasks
def _kernel_block(Xb: np.ndarray, Z: np.ndarray, params: dict) -> np.ndarray:
    return kernel_matrix(Xb, Z, **params)


def _block_matmul(A: np.ndarray, V: np.ndarray) -> np.ndarray:
    return np.asarray(A @ V.astype(A.dtype, copy=False), dtype=np.float64)


def _block_rmatmul(A: np.ndarray, Vb: np.ndarray) -> np.ndarray:
    return np.asarray(A.T @ Vb.astype(A.dtype, copy=False), dtype=np.float64)


def _streamed_matmul(
    Xb: np.ndarray, Z: np.ndarray, V: np.ndarray, params: dict, tile: int
) -> np.ndarray:
    """``k(Xb, Z) @ V`` computed over column tiles of Z, never storing k(Xb, Z)."""
    out = np.zeros((Xb.shape[0], V.shape[1]), dtype=np.float64)
    for s in range(0, Z.shape[0], tile):
        Kt = kernel_matrix(Xb, Z[s : s + tile], **params)
        out += Kt @ V[s : s + tile].astype(Kt.dtype, copy=False)
    return out


def _block_matmul_accurate(A: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``A @ V`` accumulated in float64 (8 MiB row slices of a float32 A)."""
    if A.dtype == np.float64:
        return A @ V
    rows = max(1, (8 * 2**20) // (8 * max(1, A.shape[1])))
    out = np.empty((A.shape[0], V.shape[1]))
    for i in range(0, A.shape[0], rows):
        out[i : i + rows] = A[i : i + rows].astype(np.float64) @ V
    return out


def _block_top_columns(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of A, the k largest entries' columns and values (unsorted)."""
    from .._topk import _top_columns

    rows = max(1, min(2048, (32 * 2**20) // max(1, A.shape[1])))
    ind = np.empty((A.shape[0], k), dtype=np.intp)
    val = np.empty((A.shape[0], k), dtype=np.float64)
    for s in range(0, A.shape[0], rows):
        blk = A[s : s + rows]
        part = _top_columns(blk, k)
        ind[s : s + rows] = part
        val[s : s + rows] = np.take_along_axis(blk, part, axis=1)
    return ind, val


def _kernel_diagonal(Xb: np.ndarray, params: dict) -> np.ndarray:
    return np.asarray(
        [kernel_matrix(Xb[i : i + 1], **params)[0, 0] for i in range(Xb.shape[0])],
        dtype=np.float64,
    )


def _take_rows(A: np.ndarray, i: np.ndarray) -> np.ndarray:
    return np.asarray(A[i])


def _cross_dot(
    Xt: np.ndarray, Xb: np.ndarray, coef_b: np.ndarray, params: dict
) -> np.ndarray:
    return np.asarray(kernel_matrix(Xt, Xb, **params) @ coef_b, dtype=np.float64)


def _sum(parts: list[np.ndarray]) -> np.ndarray:
    out = parts[0].copy()
    for p in parts[1:]:
        out += p
    return out


class DistributedRowBlocks:
    """An (n, m) matrix stored as row blocks on Dask workers.

    Parameters
    ----------
    futures : list of distributed.Future
        The row blocks, each an ndarray of shape (n_b, m), in row order.
    offsets : ndarray of shape (n_blocks + 1,)
        Row offsets: block b holds rows ``offsets[b]:offsets[b+1]``.
    shape : tuple of int
        (n, m).
    dtype : numpy dtype
        Storage dtype of the blocks (products are returned in float64).
    client : distributed.Client

    Attributes
    ----------
    n_products : int
        Columns multiplied so far (one per column of V, as the in-process operator).
    bytes_sent_, bytes_received_ : int
        Array bytes the client sent to and received from the workers for products
        (the payload; Dask's own messages come on top).
    """

    def __init__(
        self,
        futures: list,
        offsets: np.ndarray,
        shape: tuple[int, int],
        dtype: Any,
        client: Any,
    ) -> None:
        self.futures = futures
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.client = client
        self.n_workers = _n_workers(client)
        self.n_products = 0
        self.bytes_sent_ = 0
        self.bytes_received_ = 0
        self._where: list[dict] | None = None

    @property
    def n_blocks(self) -> int:
        return len(self.futures)

    def _pin(self, b: int) -> dict:
        """Submit options that run block b's task where block b is.

        The blocks are large (a kernel row block is :math:`4 n_b n` bytes) and a
        product's work per block small: without the pin, the scheduler's work
        stealing sometimes moves a task to an idle worker, which then fetches the
        whole block (seconds per product, measured on a loaded 2-core machine).
        """
        if self._where is None:
            from distributed import wait

            wait(self.futures)
            who = self.client.who_has(self.futures)
            self._where = [
                {"workers": list(who.get(f.key, ()))[:1], "allow_other_workers": False}
                if who.get(f.key)
                else {}
                for f in self.futures
            ]
        return self._where[b]

    def _broadcast(self, V: np.ndarray) -> Any:
        """V for every block's task: inline when small, else scattered once."""
        if V.nbytes <= _INLINE_BYTES:
            self.bytes_sent_ += V.nbytes * self.n_blocks
            return V
        self.bytes_sent_ += V.nbytes * min(self.n_workers, self.n_blocks)
        return self.client.scatter(V, broadcast=True)

    def _collect(self, futures: list) -> list[np.ndarray]:
        parts = self.client.gather(futures)
        self.bytes_received_ += sum(p.nbytes for p in parts)
        return parts

    def matmul(self, V: np.ndarray) -> np.ndarray:
        """``A @ V`` for V of shape (m,) or (m, C), returned in float64."""
        V = np.asarray(V, dtype=np.float64)
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        if V2.shape[0] != self.shape[1]:
            raise ValueError(f"Cannot multiply a {self.shape} operator by {V.shape}.")
        self.n_products += V2.shape[1]
        Vf = self._broadcast(V2)
        parts = self._collect(
            [
                self.client.submit(_block_matmul, f, Vf, pure=False, **self._pin(b))
                for b, f in enumerate(self.futures)
            ]
        )
        out = np.vstack(parts)
        return out[:, 0] if vec else out

    def rmatmul(self, V: np.ndarray) -> np.ndarray:
        """``A.T @ V`` for V of shape (n,) or (n, C): each worker gets its own rows."""
        V = np.asarray(V, dtype=np.float64)
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        if V2.shape[0] != self.shape[0]:
            raise ValueError(
                f"Cannot multiply the transpose of {self.shape} by {V.shape}."
            )
        tasks = []
        for b, f in enumerate(self.futures):
            Vb = np.ascontiguousarray(V2[self.offsets[b] : self.offsets[b + 1]])
            self.bytes_sent_ += Vb.nbytes
            tasks.append(
                self.client.submit(_block_rmatmul, f, Vb, pure=False, **self._pin(b))
            )
        parts = self._collect(tasks)
        out = _sum(parts)
        return out[:, 0] if vec else out

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        return self.matmul(V)

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """The rows ``A[idx]`` gathered to the client (e.g. the labeled rows)."""
        idx = np.asarray(idx, dtype=np.int64)
        blk = np.searchsorted(self.offsets, idx, side="right") - 1
        out = np.empty((idx.size, self.shape[1]), dtype=np.float64)
        for b in np.unique(blk):
            sel = np.flatnonzero(blk == b)
            local = idx[sel] - self.offsets[b]
            out[sel] = self.client.submit(
                lambda A, i: A[i], self.futures[b], local
            ).result()
        return out

    def __getitem__(self, idx: Any) -> np.ndarray:
        """Rows by an integer index array (gathered); other indexing is refused."""
        arr = np.asarray(idx)
        if arr.dtype.kind not in "iu":
            raise TypeError(
                "A distributed matrix can be indexed by an integer array of rows only."
            )
        return self.rows(arr)

    def toarray(self) -> np.ndarray:
        """The whole matrix on the client (for tests and small n)."""
        return np.vstack(self.client.gather(self.futures)).astype(np.float64)

    def release(self) -> None:
        """Drop the blocks from the workers' memory."""
        for f in self.futures:
            f.release()
        self.futures = []


def distributed_row_blocks(
    X: Any,
    Z: Any = None,
    *,
    client: Any = None,
    block_rows: int | None = None,
    kernel: str | Callable = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 1.0,
    kernel_params: dict | None = None,
    dtype: Any = np.float32,
) -> DistributedRowBlocks:
    """The (n, m) kernel matrix ``k(X, Z)`` computed and kept on the workers.

    ``Z`` (in memory, e.g. Nyström landmarks) is broadcast once; ``Z=None`` uses
    the whole of X (then every worker receives X once).
    """
    client = get_dask_client(client)
    futures, offsets = _row_block_futures(X, client, block_rows)
    if Z is None:
        Zf = _all_rows_future(futures, client)
        m = X.shape[0]
    else:
        Zm = np.asarray(Z)
        Zf = client.scatter(Zm, broadcast=True)
        m = Zm.shape[0]
    params = dict(
        kernel=kernel,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
        kernel_params=kernel_params,
        dtype=dtype,
    )
    blocks = [client.submit(_kernel_block, f, Zf, params, pure=False) for f in futures]
    return DistributedRowBlocks(blocks, offsets, (X.shape[0], m), dtype, client)


class DistributedKernelOperator:
    r"""The n x n training Gram matrix, partitioned by rows over a Dask cluster.

    Implements the solver operator interface (``shape``, ``dtype``, ``@``,
    ``diagonal``): PCG runs on it unchanged, with one distributed product per
    iteration for all classes (an (n, C) block).

    Parameters
    ----------
    X : dask.array.Array or ndarray of shape (n, d)
        Training points; a dask array keeps its row chunks as the blocks.
    store : {'dense', 'streamed'}, default='dense'
        ``'dense'`` keeps :math:`K_b = k(X_b, X)` (float32) on the worker of block
        b: :math:`4 n^2 / P` bytes per worker for P equal blocks, one
        :math:`O(n_b n C)` product per iteration.  ``'streamed'`` keeps only X on
        each worker (:math:`O(n d)`) and recomputes :math:`k(X_b, X)` in column
        tiles of ``tile`` rows at every product (exact, :math:`O(n_b n d)` work).
    client : distributed.Client, default=None
        The current client when None.
    block_rows : int, default=None
        Rows per block (default: the dask chunks, or two blocks per worker).
    kernel, gamma, degree, coef0, kernel_params :
        As in :func:`semisvm.kernels.kernel_matrix`.
    dtype : dtype, default=float32
        Storage/compute dtype of the kernel blocks; products are float64.
    tile : int, default=4096
        Column tile of the streamed products.
    """

    def __init__(
        self,
        X: Any,
        *,
        store: str = "dense",
        client: Any = None,
        block_rows: int | None = None,
        kernel: str | Callable = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        dtype: Any = np.float32,
        tile: int = 4096,
    ) -> None:
        if store not in ("dense", "streamed"):
            raise ValueError(f"store must be 'dense' or 'streamed', got {store!r}.")
        self.client = get_dask_client(client)
        self._n_workers = _n_workers(self.client)
        self.store = store
        self.params = dict(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            dtype=dtype,
        )
        self.tile = int(tile)
        n = X.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(dtype)
        self._x_blocks, offsets = _row_block_futures(X, self.client, block_rows)
        self._x_all = _all_rows_future(self._x_blocks, self.client)
        if store == "dense":
            blocks = [
                self.client.submit(
                    _kernel_block, f, self._x_all, self.params, pure=False
                )
                for f in self._x_blocks
            ]
            self.blocks: DistributedRowBlocks | None = DistributedRowBlocks(
                blocks, offsets, self.shape, dtype, self.client
            )
        else:
            self.blocks = None
        self.offsets = offsets
        self.n_products = 0
        self.bytes_sent_ = 0
        self.bytes_received_ = 0

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        if self.blocks is not None:
            s0, r0 = self.blocks.bytes_sent_, self.blocks.bytes_received_
            out = self.blocks.matmul(V)
            self.bytes_sent_ += self.blocks.bytes_sent_ - s0
            self.bytes_received_ += self.blocks.bytes_received_ - r0
            return out
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        if V2.shape[0] != self.shape[1]:
            raise ValueError(f"Cannot multiply a {self.shape} operator by {V.shape}.")
        if V2.nbytes <= _INLINE_BYTES:
            self.bytes_sent_ += V2.nbytes * len(self._x_blocks)
            Vf = V2
        else:
            self.bytes_sent_ += V2.nbytes * min(self._n_workers, len(self._x_blocks))
            Vf = self.client.scatter(V2, broadcast=True)
        parts = self.client.gather(
            [
                self.client.submit(
                    _streamed_matmul,
                    f,
                    self._x_all,
                    Vf,
                    self.params,
                    self.tile,
                    pure=False,
                )
                for f in self._x_blocks
            ]
        )
        self.bytes_received_ += sum(p.nbytes for p in parts)
        out = np.vstack(parts)
        return out[:, 0] if vec else out

    def diagonal(self) -> np.ndarray:
        parts = self.client.gather(
            [
                self.client.submit(_kernel_diagonal, f, self.params, pure=False)
                for f in self._x_blocks
            ]
        )
        return np.concatenate(parts)

    def dot_cross(self, X_test: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``k(X_test, X) @ coef``: each worker multiplies its own columns.

        ``X_test`` (in memory) is broadcast; worker b returns
        :math:`k(X_{test}, X_b)\\,\\mathrm{coef}_b` and the client sums them.
        """
        Xt = self.client.scatter(np.asarray(X_test), broadcast=True)
        coef = np.asarray(coef, dtype=np.float64)
        tasks = [
            self.client.submit(
                _cross_dot,
                Xt,
                f,
                coef[self.offsets[b] : self.offsets[b + 1]],
                self.params,
                pure=False,
            )
            for b, f in enumerate(self._x_blocks)
        ]
        return _sum(self.client.gather(tasks))

    def rows(self, idx: Any) -> np.ndarray:
        """Rows ``K[idx]`` on the client (e.g. validation rows), float64."""
        return self[idx]

    def columns(self, idx: Any) -> np.ndarray:
        """Columns ``K[:, idx]`` (n, len(idx)) on the client, float64.

        Read from the stored rows (K is symmetric) with ``store='dense'``, else
        computed on the workers as :math:`k(X_b, X_{idx})`; never through
        products with unit vectors (the Nystroem preconditioner's landmarks, the
        LOO features and the coarse start read columns).
        """
        idx = np.atleast_1d(np.arange(self.shape[0])[idx])
        if self.blocks is not None:
            return np.ascontiguousarray(self.blocks.rows(idx).T)
        Z = self._x_rows(idx)
        Zf = self.client.scatter(Z, broadcast=True)
        parts = self.client.gather(
            [
                self.client.submit(_kernel_block, f, Zf, self.params, pure=False)
                for f in self._x_blocks
            ]
        )
        return np.vstack(parts).astype(np.float64)

    def _x_rows(self, idx: np.ndarray) -> np.ndarray:
        blk = np.searchsorted(self.offsets, idx, side="right") - 1
        Z = None
        for b in np.unique(blk):
            sel = np.flatnonzero(blk == b)
            part = self.client.submit(
                _take_rows, self._x_blocks[b], idx[sel] - self.offsets[b], pure=False
            ).result()
            if Z is None:
                Z = np.empty((idx.size, part.shape[1]), dtype=part.dtype)
            Z[sel] = part
        assert Z is not None, "no rows requested"
        return Z

    def accurate_matmul(self, V: np.ndarray) -> np.ndarray:
        """``K @ V`` accumulated in float64 on the workers (a float32 K included).

        The counterpart of the in-process solver's accurate product (its stopping
        check and the refresh of ``K alpha``), so that both take the same decisions.
        """
        if self.blocks is None or self.dtype == np.float64:
            return np.asarray(self @ V, dtype=np.float64)
        V = np.asarray(V, dtype=np.float64)
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        Vf = self.blocks._broadcast(V2)
        parts = self.blocks._collect(
            [
                self.client.submit(
                    _block_matmul_accurate, f, Vf, pure=False, **self.blocks._pin(b)
                )
                for b, f in enumerate(self.blocks.futures)
            ]
        )
        out = np.vstack(parts)
        return out[:, 0] if vec else out

    def top_columns(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the k largest kernel values and their columns (stored rows).

        What :func:`semisvm.graph.knn_graph_from_kernel` reads off an in-process
        K, computed where the rows are; only (n, k) numbers reach the client.
        """
        if self.blocks is None:
            raise ValueError("top_columns needs the stored rows (store='dense').")
        parts = self.client.gather(
            [
                self.client.submit(
                    _block_top_columns, f, int(k), pure=False, **self.blocks._pin(b)
                )
                for b, f in enumerate(self.blocks.futures)
            ]
        )
        return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts])

    def power(self, m: float) -> DistributedKernelOperator:
        r"""The operator of :math:`K^{\circ m}` elementwise: for the RBF kernel the
        Gram matrix of ``gamma`` times m (the extension check's narrower width,
        :mod:`semisvm.models._extension`).  Stored rows are raised where they are
        (``kernel_power``, as the in-process K is);
        streamed rows are computed at ``gamma`` times m.  A new operator; this one
        is unchanged."""
        import copy

        from ._kernels import kernel_power

        if self.params["kernel"] != "rbf":
            raise ValueError("power() is the narrower width of the RBF kernel only.")
        out = copy.copy(self)
        out.params = dict(self.params, gamma=float(self.params["gamma"]) * m)
        out.n_products, out.bytes_sent_, out.bytes_received_ = 0, 0, 0
        if self.blocks is not None:
            b = self.blocks
            out.blocks = DistributedRowBlocks(
                [
                    self.client.submit(kernel_power, f, m, pure=False, **b._pin(i))
                    for i, f in enumerate(b.futures)
                ],
                b.offsets,
                b.shape,
                b.dtype,
                self.client,
            )
        return out

    def __getitem__(self, idx: Any) -> np.ndarray:
        """Rows ``K[idx]`` on the client (e.g. validation rows), float64."""
        idx = np.atleast_1d(np.arange(self.shape[0])[idx])
        if self.blocks is not None:
            return self.blocks.rows(idx)
        E = np.zeros((self.shape[0], idx.size))
        E[idx, np.arange(idx.size)] = 1.0
        return (self @ E).T

    def toarray(self) -> np.ndarray:
        if self.blocks is not None:
            return self.blocks.toarray()
        return self @ np.eye(self.shape[0])


class DistributedNystroemOperator:
    r"""Low-rank :math:`\tilde K = C W^{+} C^T` with the rows of ``C`` on the workers.

    ``C = k(X, Z)`` for m landmarks Z (rows of X chosen uniformly at random, or
    given), ``W = k(Z, Z)``; :math:`W^{+}` is applied through the eigenvectors of W
    with eigenvalues above ``rcond`` times the largest (the pseudo-inverse, so a
    rank-deficient W gives no NaN).  A product :math:`\tilde K V` is two
    distributed passes, :math:`S = C^T V` (each worker sends an (m, C) partial
    sum) and :math:`C (W^{+} S)`.

    Parameters
    ----------
    X : dask.array.Array or ndarray of shape (n, d)
    n_components : int, default=1000
        Number of landmarks m (at most n).
    landmarks : ndarray of shape (m, d), default=None
        Landmarks to use instead of a uniform sample.
    random_state : int, default=0
    rcond : float, default=1e-6
    client, block_rows, kernel, gamma, degree, coef0, kernel_params, dtype :
        As in :class:`DistributedKernelOperator`.
    """

    def __init__(
        self,
        X: Any,
        *,
        n_components: int = 1000,
        landmarks: Any = None,
        random_state: int = 0,
        rcond: float = 1e-6,
        client: Any = None,
        block_rows: int | None = None,
        kernel: str | Callable = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        dtype: Any = np.float32,
    ) -> None:
        client = get_dask_client(client)
        n = X.shape[0]
        if landmarks is None:
            m = min(int(n_components), n)
            rng = np.random.default_rng(random_state)
            idx = np.sort(rng.choice(n, size=m, replace=False))
            Z = np.asarray(X[idx].compute() if is_distributed_array(X) else X[idx])
        else:
            Z = np.asarray(landmarks)
        self.landmarks_ = Z
        params: dict[str, Any] = dict(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
        )
        self._params = params
        W = kernel_matrix(Z, **params, dtype=np.float64)
        w, U = np.linalg.eigh(W)
        keep = w > rcond * max(w.max(), 0.0)
        if not keep.any():
            raise ValueError(
                "The landmark kernel matrix W is zero: choose other landmarks."
            )
        self._U = U[:, keep]
        self._winv = 1.0 / w[keep]
        self.rank_ = int(keep.sum())
        self.C = distributed_row_blocks(
            X, Z, client=client, block_rows=block_rows, dtype=dtype, **params
        )
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        self.client = client
        self.n_products = 0

    @property
    def bytes_sent_(self) -> int:
        return self.C.bytes_sent_

    @property
    def bytes_received_(self) -> int:
        return self.C.bytes_received_

    def apply_winv(self, S: np.ndarray) -> np.ndarray:
        """:math:`W^{+} S` for S of shape (m,) or (m, C)."""
        return (
            self._U @ (self._winv[:, None] * (self._U.T @ S))
            if S.ndim == 2
            else (self._U @ (self._winv * (self._U.T @ S)))
        )

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        return self.C.matmul(self.apply_winv(self.C.rmatmul(V)))

    def diagonal(self) -> np.ndarray:
        # diag(C W+ C^T)_i = || diag(w)^{-1/2} U^T c_i ||^2, computed per block
        M = self._U * np.sqrt(self._winv)[None, :]
        Mf = self.client.scatter(M, broadcast=True)
        parts = self.client.gather(
            [
                self.client.submit(
                    lambda A, M: ((A @ M) ** 2).sum(axis=1), f, Mf, pure=False
                )
                for f in self.C.futures
            ]
        )
        return np.concatenate(parts).astype(np.float64)

    def dot_cross(self, X_test: np.ndarray, coef: np.ndarray) -> np.ndarray:
        r""":math:`k(X_{test}, Z)\, W^{+} C^T \mathrm{coef}` (the low-rank test kernel)."""
        S = self.apply_winv(self.C.rmatmul(np.asarray(coef, dtype=np.float64)))
        return (
            kernel_matrix(
                np.asarray(X_test), self.landmarks_, **self._params, dtype=np.float64
            )
            @ S
        )

    def toarray(self) -> np.ndarray:
        Cm = self.C.toarray()
        return Cm @ self.apply_winv(Cm.T)


def distributed_kernel_dot(
    X_test: np.ndarray,
    X_train: Any,
    coef: np.ndarray,
    *,
    client: Any = None,
    block_rows: int | None = None,
    **params: Any,
) -> np.ndarray:
    """``k(X_test, X_train) @ coef`` with X_train a dask array, block by block."""
    client = get_dask_client(client)
    futures, offsets = _row_block_futures(X_train, client, block_rows)
    Xt = client.scatter(np.asarray(X_test), broadcast=True)
    coef = np.asarray(coef, dtype=np.float64)
    tasks = [
        client.submit(
            _cross_dot, Xt, f, coef[offsets[b] : offsets[b + 1]], params, pure=False
        )
        for b, f in enumerate(futures)
    ]
    return _sum(client.gather(tasks))


def distributed_graph_gram(C: DistributedRowBlocks, L: Any) -> np.ndarray:
    r""":math:`\tilde C^T L \tilde C` ((m+1) x (m+1), float64) with :math:`\tilde C =
    [C, 1]` and C as row blocks on the workers.

    :math:`\sum_g \tilde C_g^T P_g` with :math:`P_g = \sum_c L_{gc} \tilde C_c`
    over the partitions g = the blocks one worker holds (:func:`worker_groups`):
    for each partition, the rows of every block c that g's rows of L reach (and
    only those) go to g's worker, where :math:`P_g` is accumulated one block at a
    time; then :math:`\tilde C_b^T P_g` for g's blocks there and a pairwise sum
    on the workers.  An even power :math:`L^{2q}` (``LaplacianPower.half``) is
    :math:`\sum_g P_g^T P_g` with :math:`P_g` the rows g of :math:`L^q\tilde C`:
    the same traffic, a symmetric update instead of the block products, and no
    explicit :math:`L^{2q}`.  The flops are the in-process :math:`2 n m^2 +
    \mathrm{nnz}(L)\, m` (a product per block pair would cost P times that); the
    traffic is, per worker, the rows its edges reach (at most the other workers'
    rows, :math:`8 n m` bytes in all with random row order); a worker holds its
    blocks, its :math:`P_g` (n_g x (m+1) doubles) and one block's rows at a time;
    the sparse rows of L (O(n k) numbers in all) go out from the client and only
    the (m+1)^2 sums come back.
    """
    import scipy.sparse as sp

    from .._dask import pin, worker_groups

    client = C.client
    S = L.half() if hasattr(L, "half") else None  # an even power: (S C~)^T (S C~)
    square = S is not None
    Ls = sp.csr_array(S if square else L.tocsr() if hasattr(L, "tocsr") else L)
    off = C.offsets
    grams = []
    for w, bs in worker_groups(client, C.futures):
        rows = np.concatenate([np.arange(off[b], off[b + 1]) for b in bs])
        Lg = Ls[rows]
        J = np.unique(Lg.indices)
        blk = np.searchsorted(off, J, side="right") - 1
        Pg = None
        for c in np.unique(blk):
            Jc = J[blk == c]
            if Jc.size == off[c + 1] - off[c]:
                part = C.futures[c]  # every row of block c: no copy
            else:
                part = client.submit(
                    _take_rows, C.futures[c], Jc - off[c], pure=False, **C._pin(c)
                )
            Pg = client.submit(
                _accumulate_lc, Pg, part, Lg[:, Jc], True, pure=False, **pin(w)
            )
        if Pg is not None and square:
            grams.append(client.submit(_self_gram, Pg, pure=False, **pin(w)))
        elif Pg is not None:
            blocks = [C.futures[b] for b in bs]
            grams.append(
                client.submit(_group_gram, Pg, True, *blocks, pure=False, **pin(w))
            )
    m = C.shape[1]
    return _tree_sum(client, grams) if grams else np.zeros((m + 1, m + 1))


def _group_gram(Pg: np.ndarray, with_ones: bool, *blocks: np.ndarray) -> np.ndarray:
    """:math:`\\sum_b \tilde C_b^T P_g[b]` over a partition's blocks (rows in order)."""
    G = np.zeros((Pg.shape[1], Pg.shape[1]))
    r0 = 0
    for Cb in blocks:
        nb = Cb.shape[0]
        G += _block_gram(Cb, Pg[r0 : r0 + nb], with_ones)
        r0 += nb
    return G


def _self_gram(Pg: np.ndarray) -> np.ndarray:
    """:math:`P_g^T P_g` (numpy's symmetric rank-k update)."""
    return Pg.T @ Pg


def _block_features(Cb: np.ndarray, T: np.ndarray) -> np.ndarray:
    return np.asarray(Cb, dtype=np.float64) @ T


class DistributedFeatures:
    r"""LOO features :math:`\Phi = k(X, X_I)\,T` (n x r, float64) kept as row blocks.

    The distributed twin of :func:`semisvm.solvers._loo.loo_features` above its
    exact-root size: :math:`\Phi` is formed on the workers, block by block, as in
    process (the float64 kernel columns times T), and stays there (:math:`n r`
    numbers that a gathered :math:`\Phi` would hold on the client: 48 GB at
    n = 10M, r = 600).  The LOO engine reads only what it uses: the rows of the
    labeled and sampled unlabeled points (``Phi[idx]``) and
    :math:`\Phi^T L \Phi` (:meth:`graph_gram`, by :func:`distributed_graph_gram`:
    the in-process numbers up to the order of the sums).  :meth:`with_ones` is
    :math:`[\Phi, 1]`, the intrinsic-bias engine's features, sharing one gram.
    """

    def __init__(self, Phi: DistributedRowBlocks, *, ones: bool = False) -> None:
        self.Phi = Phi
        self.ones = bool(ones)
        self.shape = (Phi.shape[0], Phi.shape[1] + int(self.ones))
        self._gram: dict = {}

    def __getitem__(self, idx: Any) -> np.ndarray:
        F = self.Phi.rows(np.asarray(idx, dtype=np.int64))
        return np.c_[F, np.ones(F.shape[0])] if self.ones else F

    def with_ones(self) -> DistributedFeatures:
        out = DistributedFeatures(self.Phi, ones=True)
        out._gram = self._gram  # one block gram for both
        return out

    def graph_gram(self, L: Any) -> np.ndarray:
        # one gram per Laplacian object; the cache holds L itself, so an identity
        # test cannot match a new L that reuses a freed one's address
        if self._gram.get("L") is not L:
            self._gram.clear()
            self._gram.update(L=L, G=distributed_graph_gram(self.Phi, L))
        G = self._gram["G"]
        r = self.Phi.shape[1]
        M = G if self.ones else G[:r, :r]
        return 0.5 * (M + M.T)


class DistributedKernelColumns:
    """``idx -> k(X, X_idx)`` of a dask array X, for the LOO features.

    Called, it gathers the columns to the client (:func:`distributed_kernel_columns`);
    :meth:`features` keeps them on the workers (:class:`DistributedFeatures`).
    """

    def __init__(self, X: Any, *, client: Any = None, **params: Any) -> None:
        self.X, self.client, self.params = X, client, params

    def __call__(self, idx: Any) -> np.ndarray:
        return distributed_kernel_columns(
            self.X, idx, client=self.client, **self.params
        )

    def features(self, idx: Any, transform: Callable) -> DistributedFeatures:
        r""":math:`\Phi = k(X, X_{idx})\,T` with ``T = transform(K_{idx, idx})``, formed
        and kept on the workers; the landmark block is read off the workers' rows
        (the in-process numbers)."""
        idx = np.asarray(idx, dtype=np.int64)
        X = self.X
        Z = X[idx]
        Z = np.asarray(Z.compute() if is_distributed_array(Z) else Z)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        C = distributed_row_blocks(X, Z, client=self.client, dtype=dtype, **self.params)
        W = C.rows(idx)
        T = transform(0.5 * (W + W.T))
        client = C.client
        Tf = client.scatter(T, broadcast=True)
        blocks = [
            client.submit(_block_features, f, Tf, pure=False, **C._pin(b))
            for b, f in enumerate(C.futures)
        ]
        Phi = DistributedRowBlocks(
            blocks, C.offsets, (C.shape[0], T.shape[1]), np.float64, client
        )
        from distributed import wait

        wait(blocks)
        C.release()
        return DistributedFeatures(Phi)


def distributed_kernel_columns(
    X: Any, idx: Any, *, client: Any = None, **params: Any
) -> np.ndarray:
    """Kernel columns :math:`k(X, X_{idx})` (n, len(idx)) of a dask array, float64.

    Computed on the workers in X's precision, as
    ``kernel_matrix(X, X[idx])`` in process; only the columns reach the client.
    """
    idx = np.asarray(idx, dtype=np.int64)
    Z = X[idx]
    Z = np.asarray(Z.compute() if is_distributed_array(Z) else Z)
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    C = distributed_row_blocks(X, Z, client=client, dtype=dtype, **params)
    try:
        return C.toarray()
    finally:
        C.release()


def check_distributed_input(X: Any, y: Any, *, kernel: Any) -> tuple[Any, np.ndarray]:
    """Validate a dask-array X (2-D, float, not precomputed) and gather y.

    Returns X cast to float64 unless it is float32, and y as an ndarray.
    """
    if kernel == "precomputed":
        raise ValueError(
            "kernel='precomputed' needs the Gram matrix in memory; pass the points X as "
            "a dask array with a kernel name or callable instead."
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
    if not np.issubdtype(X.dtype, np.number):
        raise ValueError(f"X must be numeric, got a dask array of dtype {X.dtype}.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    y = np.asarray(y.compute() if is_distributed_array(y) else y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must be 1-D with one entry per row of X ({X.shape[0]}), got shape {y.shape}."
        )
    return X, y


def _worker_memory(client: Any) -> tuple[int, int | None]:  # noqa: D103
    """(number of workers, smallest worker memory limit in bytes or None)."""
    workers = client.scheduler_info().get("workers", {})
    limits = [w.get("memory_limit") or 0 for w in workers.values()]
    limits = [v for v in limits if v > 0]
    return max(1, len(workers)), (min(limits) if limits else None)


def choose_store(n: int, client: Any, dtype: Any = np.float32) -> str:
    """'dense' when the kernel's row blocks fit in half of each worker's memory."""
    n_workers, limit = _worker_memory(client)
    need = n * n * np.dtype(dtype).itemsize / n_workers
    if limit is None or need <= 0.5 * limit:
        return "dense"
    return "streamed"


def _block_query_neighbours(Xb: np.ndarray, Q: np.ndarray, k: int) -> np.ndarray:
    """Squared distances from each query to its k nearest rows of Xb (sorted)."""
    from sklearn.neighbors import NearestNeighbors

    kk = min(k, Xb.shape[0])
    dist, _ = NearestNeighbors(n_neighbors=kk).fit(Xb).kneighbors(Q)
    return dist**2


def distributed_scale_ratio(X: Any, n_neighbors: int = 10, client: Any = None) -> float:
    """:func:`~semisvm.kernels.knn_scale_ratio` of a dask array, equal to in process.

    The sample's own scale is computed on the client (the same rows); the n-point
    scale by a blockwise search: each worker finds the sample's k+1 nearest rows
    in its block, the client keeps the k+1 best per query.
    """
    n = X.shape[0]
    k = min(int(n_neighbors), n - 1)
    if n <= 2000 or k < 1:
        return 1.0
    q = sample_indices(n, 2000)
    Q = np.asarray(X[q].compute())
    s2_s = float(np.mean(_block_query_neighbours(Q, Q, k + 1)[:, k]))
    client = get_dask_client(client)
    futures, _ = _row_block_futures(X, client, None)
    parts = client.gather(
        [
            client.submit(_block_query_neighbours, f, Q, k + 1, pure=False)
            for f in futures
        ]
    )
    s2_n = float(np.mean(np.sort(np.hstack(parts), axis=1)[:, k]))
    return s2_s / s2_n if (s2_s > 0 and s2_n > 0) else 1.0


def distributed_gamma(
    X: Any, gamma: Any, kernel: Any, n_neighbors: int = 10, client: Any = None
) -> float | None:
    """``gamma`` resolved as in process, from the same rows (see resolve_gamma).

    ``'knn'`` draws the sample :func:`~semisvm.kernels.knn_gamma` draws (the same
    rows) and computes it there: the width is that of a fixed-size sample, so
    only those rows leave the cluster.
    """
    if callable(kernel) or kernel == "linear":
        return None
    n = X.shape[0]
    if kernel == "rbf" and gamma == "knn":
        q = sample_indices(n, 2000)
        return knn_gamma(np.asarray(X[q].compute()), n_neighbors)
    if kernel == "rbf" and (gamma is None or gamma == "median"):
        # the rows median_gamma would draw in process, so the result is identical
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(n, size=min(n, 1000), replace=False))
        return median_gamma(np.asarray(X[idx].compute()))
    if gamma == "scale":
        var = float(X.var().compute())
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return resolve_gamma(X[:1].compute(), gamma, kernel)


def distributed_kernel(
    X: Any,
    *,
    kernel: Any,
    gamma: Any,
    degree: int,
    coef0: float,
    kernel_params: dict | None,
    store: str = "auto",
    client: Any = None,
    n_neighbors: int = 10,
) -> tuple[DistributedKernelOperator, float | None]:
    """The training kernel of a dask-array X as a distributed operator, and gamma.

    The blocks have X's precision (float32 for float32 X, else float64), as
    in process.  ``store='auto'`` keeps dense row blocks when they fit in half of each
    worker's memory limit and streams them otherwise (:func:`choose_store`).
    """
    client = get_dask_client(client)
    g = distributed_gamma(X, gamma, kernel, n_neighbors, client)
    # the in-process rule of kernel_matrix: float32 only for float32 data
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    if store == "auto":
        store = choose_store(X.shape[0], client, dtype)
    op = DistributedKernelOperator(
        X,
        store=store,
        client=client,
        kernel=kernel,
        gamma=g if g is not None else 1.0,
        degree=degree,
        coef0=coef0,
        kernel_params=kernel_params,
        dtype=dtype,
    )
    return op, g


# ------------------------------------------------------------ Nyström factor
def _accumulate_lc(
    Pb: np.ndarray | None,
    Cpart: np.ndarray,
    Lpart: Any,
    with_ones: bool,
    slab: int = 256,
) -> np.ndarray:
    r""":math:`P_b \mathrel{+}= L_{b,J} \tilde C_J` (float64), in slabs of columns.

    ``Cpart`` holds the rows J of one block of C that block b's rows of L reach
    (``Lpart`` is :math:`L_{b,J}`, its columns compressed to J); the float64 copy
    is made ``slab`` columns at a time, so the extra memory is
    :math:`8 |J|\,\text{slab}` bytes.
    """
    m = Cpart.shape[1]
    M = m + 1 if with_ones else m
    if Pb is None:
        Pb = np.zeros((Lpart.shape[0], M))
    for j0 in range(0, m, slab):
        j1 = min(m, j0 + slab)
        Pb[:, j0:j1] += Lpart @ np.asarray(Cpart[:, j0:j1], dtype=np.float64)
    if with_ones:
        Pb[:, m] += np.asarray(Lpart.sum(axis=1)).ravel()
    return Pb


def _block_gram(
    Cb: np.ndarray, Pb: np.ndarray, with_ones: bool, rows: int = 16384
) -> np.ndarray:
    r""":math:`\tilde C_b^T P_b` with :math:`\tilde C = [C, 1]`, in row chunks (float64)."""
    m = Cb.shape[1]
    G = np.zeros((Pb.shape[1], Pb.shape[1]))
    for r0 in range(0, Cb.shape[0], rows):
        P = Pb[r0 : r0 + rows]
        G[:m] += np.asarray(Cb[r0 : r0 + rows], dtype=np.float64).T @ P
        if with_ones:
            G[m] += P.sum(axis=0)
    return G


def _tree_sum(client: Any, futures: list) -> np.ndarray:
    """Sum of the arrays behind ``futures``, reduced pairwise on the workers."""
    while len(futures) > 1:
        nxt = [
            client.submit(np.add, futures[i], futures[i + 1], pure=False)
            for i in range(0, len(futures) - 1, 2)
        ]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0].result()


class DistributedNystroemFactor:
    r"""The Nyström factor of :class:`~semisvm.kernels.NystroemFactor` with C on a cluster.

    Same landmarks (the same uniform draw from the same ``random_state``), the same
    :math:`T = U_r S_r^{-1/2}` and rank, so the m-space solver
    (:func:`semisvm.solvers._lowrank.lapsvm_lowrank`) gives the in-process model;
    only :math:`C = k(X, Z)` is kept as row blocks on the workers.  The solver
    needs two things from C, both computed where C lives:

    * the labeled rows ``C_[lab]`` (l x m, gathered once);
    * the intrinsic Gram :math:`\tilde C^T L \tilde C` ((m+1) x (m+1),
      :meth:`feature_gram`), summed where C lives by :func:`distributed_graph_gram`
      (in-process flops; only the (m+1)^2 sums reach the client).

    The transduction :math:`C\beta + b` is one distributed product.

    Parameters
    ----------
    n_components : int, default=1000
    landmarks : {'uniform'}, default='uniform'
        k-means landmarks need passes over all of X; not offered on a cluster.
    kernel, gamma, degree, coef0, kernel_params, rcond, random_state, include
        As in :class:`~semisvm.kernels.NystroemFactor`.
    client : distributed.Client, default=None
    """

    def __init__(
        self,
        n_components: int = 1000,
        *,
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        rcond: float = 1e-6,
        random_state: Any = 0,
        client: Any = None,
        include: Any = None,
    ) -> None:
        if landmarks != "uniform":
            raise ValueError(
                f"landmarks={landmarks!r} is not available for a dask array X; use "
                "'uniform'."
            )
        self.n_components = n_components
        self.landmarks = landmarks
        self.params = dict(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
        )
        self.rcond = rcond
        self.random_state = random_state
        self.client = client
        self.include = include

    def fit(self, X: Any) -> DistributedNystroemFactor:
        from sklearn.utils import check_random_state

        from ._nystroem import landmark_components, uniform_landmark_rows

        client = get_dask_client(self.client)
        self.client = client
        n = X.shape[0]
        m = int(min(self.n_components, n))
        if m < 1:
            raise ValueError(f"n_components must be >= 1, got {self.n_components}.")
        # the in-process factor's draw, so that both use the same landmarks
        idx = uniform_landmark_rows(
            n, m, check_random_state(self.random_state), self.include
        )
        Z = X[idx]
        Z = np.asarray(Z.compute() if is_distributed_array(Z) else Z)
        self.landmarks_ = Z
        self.landmark_indices_ = idx
        self.components_ = landmark_components(
            kernel_matrix(Z, **self.params, dtype=np.float64), self.rcond
        )
        self.rank_ = int(self.components_.shape[1])
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        self.C_ = distributed_row_blocks(
            X, Z, client=client, dtype=dtype, **self.params
        )
        from distributed import wait

        wait(self.C_.futures)  # C is built here, so that fit_times_['kernel'] holds it
        return self

    def coef_from_features(self, eta: np.ndarray) -> np.ndarray:
        r""":math:`\beta = T\eta`: coefficients on the landmarks."""
        return self.components_ @ eta

    def training_decision(self, beta: np.ndarray) -> np.ndarray:
        r""":math:`C\beta` on the training points (one distributed product)."""
        return self.C_.matmul(beta)

    def feature_gram(self, L: Any, *, intrinsic_bias: bool) -> np.ndarray:
        r"""The m-space intrinsic matrix :math:`\tilde T^T \tilde C^T L \tilde C \tilde T`.

        The same matrix as :func:`semisvm.solvers._lowrank.intrinsic_gram` on the
        features (bias last; without ``intrinsic_bias`` the bias row and column
        are zero).
        """
        G = distributed_graph_gram(self.C_, L)
        m = self.landmarks_.shape[0]
        if not intrinsic_bias:
            G[m, :] = 0.0
            G[:, m] = 0.0
        G = 0.5 * (G + G.T)
        r = self.rank_
        Tt = np.zeros((m + 1, r + 1))
        Tt[:-1, :-1] = self.components_
        Tt[-1, -1] = 1.0
        M = Tt.T @ G @ Tt
        return 0.5 * (M + M.T)


def resolve_distributed_operator(
    requested: str,
    *,
    n: int,
    solver: str,
    client: Any = None,
    verbose: Any = 0,
    name: str = "estimator",
) -> str:
    """The kernel operator for a dask-array X, from the workers' memory limits.

    ``'auto'``: the dense kernel rows when they fit in half of each worker's memory
    (:func:`choose_store`), else the Nyström factor (the exact streamed products
    recompute K at every iteration: chosen only on request).  ``'dense'``,
    ``'streamed'`` and ``'blocks'`` (the Nyström kernel plus the exact kernel
    within k-means blocks, :mod:`semisvm.kernels._distributed_blocks`) need
    ``solver='pcg'`` (the other solvers factorise K in one process);
    ``'nystroem'`` works with every primal solver (the m-space problem is solved
    on the client).  ``'fitc'`` has no distributed operator and is refused.
    """
    client = get_dask_client(client)
    fits = choose_store(n, client) == "dense"
    kind = ("dense" if fits else "nystroem") if requested == "auto" else requested
    if kind == "dense" and not fits:
        n_workers, limit = _worker_memory(client)
        raise MemoryError(
            f"The dense kernel rows of n={n} points need "
            f"{4 * n * n / n_workers / 2**30:.1f} GiB per worker ({n_workers} workers, "
            f"limit {(limit or 0) / 2**30:.1f} GiB): use kernel_approximation='nystroem' "
            "(or 'streamed', exact but recomputed at every iteration), or add workers."
        )
    if kind == "fitc":
        raise ValueError(
            "kernel_approximation='fitc' is not available for a dask array X fitted "
            "on the cluster's workers; use kernel_approximation='blocks' (the exact "
            "kernel within k-means blocks, solver='pcg') or 'nystroem'."
        )
    if kind in ("dense", "streamed", "blocks") and solver != "pcg":
        raise ValueError(
            f"solver={solver!r} needs the whole kernel matrix in one process; with a "
            f"dask array X and kernel_approximation={kind!r} use solver='pcg', or "
            "kernel_approximation='nystroem' (any primal solver)."
        )
    if kind == "nystroem" and solver == "dual":
        raise ValueError(
            "solver='dual' needs the dense kernel matrix; use another solver."
        )
    if verbose:
        print(
            f"{name}: X is a dask array; kernel operator {kind!r} on the cluster's "
            "workers"
        )
    return kind
