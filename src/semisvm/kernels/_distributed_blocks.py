r"""The Nyström kernel with the exact kernel on k-means blocks (PIC), on a Dask cluster.

The operator of :class:`~semisvm.kernels.BlockResidualOperator` for a dask-array X,

.. math::
    \hat K = \Phi\Phi^T + \operatorname{blockdiag}_k\big(K_{B_kB_k}
             - \Phi_{B_k}\Phi_{B_k}^T\big), \qquad \Phi = k(X, Z)\,T,

with every block :math:`B_k` whole on one worker.

Blocks.  The k-means centres are fitted on the client, on a uniform sample of
X (:func:`~semisvm._sample.sample_indices`, a fixed seed) of
``max(kmeans_sample, 5 q)`` rows for q = ``n // block_size`` centres: all of X
when n is at most that, and then the centres are the in-process
:func:`~semisvm.kernels.kmeans_blocks` centres.  Each worker assigns the rows of
its partitions to their nearest centre and sends the labels (n integers) to the
client.

Placement: the rows are *shuffled* so that a block lives on one worker.  The
blocks are packed into G groups (G the number of row chunks of X, at most one
per block; largest block first into the group of least work
:math:`\sum |B|(m + |B|)`), the groups spread over the workers the same way,
and each group's rows are sent worker to worker from the partitions that hold
them (n d numbers once; X never passes through the client).  On its worker a
group computes :math:`C_g = k(X_g, Z)`, :math:`\Phi_g = C_g T` (float32, as the
in-process factor) and :math:`R_B = K_{BB} - \Phi_B\Phi_B^T` (float64) for its
blocks, and keeps :math:`X_g`, :math:`\Phi_g` and the :math:`R_B`.  The
alternative, blocks grouped within the partitions they fall in, cuts a block
that spans partitions: its residual would need kernel values between workers
and its products traffic between them at every iteration.  After the shuffle a
product's residual part is local to a worker, and the shuffle is paid once.

What moves per product :math:`\hat K V` (V of shape (n, C)): the client sends
each group its rows :math:`V_g` (n C numbers in all), each worker returns
:math:`\Phi_g^T V_g` (r C numbers), the client sends back the sum
:math:`W = \Phi^T V` (r C per group) and each worker returns
:math:`\Phi_g W + (R_B V_B)_{B \in g}` (n C numbers in all): :math:`2nC + 2GrC`
numbers, as the distributed Nyström operator; the kernel never moves.  The
workers compute in float64 on the float32 factor (the in-process ``@`` rounds V
to float32): the products' cost is their round trips, and exact products spare
PCG the iterations that rounding costs it at small ``gamma_a``.

Prediction (:class:`DistributedBlockDecision`) keeps on each group's worker its
rows :math:`X_g`, coefficients :math:`\alpha_g` and the landmark coefficients
:math:`\beta_B = T(\Phi^T\alpha - \Phi_B^T\alpha_B)` of its blocks; a new point
goes to the worker of its nearest centre's block, which returns
:math:`f(x) = k(x, Z)\beta_B + k(x, X_B)\alpha_B`.  The client holds the
landmarks, the centres and :math:`T\Phi^T\alpha` (for the centres no training
point chose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._dask import _row_block_futures, get_dask_client
from .._dask import is_distributed_array as _is_dask
from .._sample import sample_indices
from ._blocks import _nearest, kmeans_centres
from ._kernels import kernel_matrix, row_norms_sq
from ._nystroem import NystroemFactor, landmark_components, landmark_rows

__all__ = [
    "DistributedBlockDecision",
    "DistributedBlockResidualOperator",
    "landmark_factor",
    "sample_centres",
]

#: Rows of X the client's k-means reads (at least 5 per centre).
KMEANS_SAMPLE = 20_000
_PER_CENTRE = 5
#: Rows of new points sent to the workers per round of a prediction.
_PREDICT_ROWS = 16_384


# ------------------------------------------------------------ client-side set-up
def landmark_factor(
    X: Any,
    n_components: int,
    *,
    landmarks: str = "uniform",
    kernel: Any = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 1.0,
    kernel_params: dict | None = None,
    rcond: float = 1e-6,
    random_state: Any = 0,
    include: Any = None,
) -> NystroemFactor:
    r"""A :class:`~semisvm.kernels.NystroemFactor` of X fitted on its landmarks only.

    The landmarks the in-process factor draws (its own draw, so the same rows
    for the same ``random_state`` and ``include``; only the drawn rows leave
    the workers) and its :math:`T = U_r S_r^{-1/2}`; ``C_`` is not formed (the
    workers compute their rows of it).  ``transform`` works on new points.
    """
    if landmarks != "uniform":
        raise ValueError(
            f"landmarks={landmarks!r} is not available for a dask array X; use "
            "'uniform'."
        )
    m = int(min(n_components, X.shape[0]))
    if m < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}.")
    f = NystroemFactor(
        m,
        kernel=kernel,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
        kernel_params=kernel_params,
        rcond=rcond,
        random_state=random_state,
        **({} if include is None else {"include": include}),
    )
    Z, idx = f._choose_landmarks(X, m)
    f.landmarks_ = np.asarray(Z)
    f.landmark_indices_ = idx
    f.components_ = landmark_components(
        f._k(f.landmarks_, None, dtype=np.float64), rcond
    )
    f.rank_ = int(f.components_.shape[1])
    return f


def sample_centres(
    X: Any,
    block_size: int,
    random_state: int = 0,
    max_samples: int = KMEANS_SAMPLE,
) -> np.ndarray:
    """The k-means centres of ``n // block_size`` blocks (at least one), fitted on
    the client on a uniform sample of ``max(max_samples, 5 q)`` rows of X (all of
    X when n is at most that: then the centres of
    :func:`~semisvm.kernels.kmeans_blocks` on X)."""
    n = X.shape[0]
    q = max(1, n // max(int(block_size), 1))
    idx = sample_indices(n, max(int(max_samples), _PER_CENTRE * q), random_state)
    Xs = X if idx.size == n else X[idx]
    Xs = np.asarray(Xs.compute() if _is_dask(Xs) else Xs)
    return kmeans_centres(Xs, q, random_state)


def _pack(cost: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin of every item: largest first into the bin of least total cost."""
    load = np.zeros(n_bins)
    out = np.empty(cost.size, dtype=np.intp)
    for i in np.argsort(-cost, kind="stable"):
        b = int(np.argmin(load))
        out[i] = b
        load[b] += cost[i]
    return out


# ------------------------------------------------------------------ worker side
@dataclass
class _Group:
    """A group's share of the operator, kept on its worker.

    ``X`` and ``Phi`` hold the group's rows block after block; block k of the
    group is rows ``starts[k]:starts[k+1]`` with residual ``R[k]``.
    """

    X: np.ndarray
    Phi: np.ndarray
    starts: np.ndarray
    R: list[np.ndarray]
    #: rows without residual (landmark_rows), in the group's order
    bare: np.ndarray


@dataclass
class _GroupDecision:
    """A group's share of the predictive function, kept on its worker."""

    X: np.ndarray
    alpha: np.ndarray
    starts: np.ndarray
    beta: np.ndarray  # (blocks of the group, m, C)
    Z: np.ndarray
    params: dict


def _kernel64(A: Any, B: Any, params: dict) -> np.ndarray:
    """The blocks' exact kernel as the in-process operator computes it."""
    return np.asarray(kernel_matrix(A, B, **params), dtype=np.float64)


def _labels(Xb: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return _nearest(Xb, centres)


def _take(Xb: Any, i: np.ndarray) -> Any:
    return Xb[i]


def _build_group(
    Z: np.ndarray,
    T: np.ndarray,
    params: dict,
    order: np.ndarray,
    starts: np.ndarray,
    bare: np.ndarray,
    *pieces: np.ndarray,
) -> _Group:
    r""":math:`X_g` from its pieces, :math:`\Phi_g = k(X_g, Z)T` (float32) and the
    residual of each block, zero on the rows ``bare`` (in group order), as
    :class:`~semisvm.kernels.BlockResidualOperator`."""
    Xg = np.ascontiguousarray(np.vstack(pieces)[order])
    dtype = np.float32 if Xg.dtype == np.float32 else np.float64
    zz = row_norms_sq(Z).astype(dtype) if params["kernel"] == "rbf" else None
    C = kernel_matrix(Xg, Z, **params, dtype=dtype, Z_norms_sq=zz)
    Phi = np.asarray(C @ T.astype(dtype), dtype=np.float32)
    R = []
    for k in range(starts.size - 1):
        s, e = starts[k], starts[k + 1]
        P = Phi[s:e].astype(np.float64)
        Rk = _kernel64(Xg[s:e], Xg[s:e], params) - P @ P.T
        Rk = 0.5 * (Rk + Rk.T)
        z = bare[s:e]
        Rk[z, :] = 0.0
        Rk[:, z] = 0.0
        R.append(Rk)
    return _Group(Xg, Phi, starts, R, bare)


def _held(V: np.ndarray) -> np.ndarray:
    return V


def _slab(Phi: np.ndarray) -> int:
    """Rows of Phi per float64 slab (8 MiB)."""
    return max(1, (8 * 2**20) // (8 * max(1, Phi.shape[1])))


def _phi_t(g: _Group, V: np.ndarray) -> np.ndarray:
    r""":math:`\Phi_g^T V_g` in float64 (slabs of the float32 :math:`\Phi_g`)."""
    W = np.zeros((g.Phi.shape[1], V.shape[1]))
    rows = _slab(g.Phi)
    for s in range(0, g.Phi.shape[0], rows):
        W += g.Phi[s : s + rows].astype(np.float64).T @ V[s : s + rows]
    return W


def _apply(g: _Group, V: np.ndarray, W: np.ndarray) -> np.ndarray:
    r""":math:`\Phi_g W + (R_B V_B)_B` in float64."""
    out = np.empty((g.Phi.shape[0], W.shape[1]))
    rows = _slab(g.Phi)
    for s in range(0, g.Phi.shape[0], rows):
        out[s : s + rows] = g.Phi[s : s + rows].astype(np.float64) @ W
    for k, Rk in enumerate(g.R):
        s, e = g.starts[k], g.starts[k + 1]
        out[s:e] += Rk @ V[s:e]
    return out


def _diagonal(g: _Group) -> np.ndarray:
    d = np.einsum("ij,ij->i", g.Phi, g.Phi, dtype=np.float64)
    for k, Rk in enumerate(g.R):
        d[g.starts[k] : g.starts[k + 1]] += np.diag(Rk)
    return d


def _phi_rows(g: _Group, pos: np.ndarray) -> np.ndarray:
    return g.Phi[pos]


def _rows(g: _Group, P: np.ndarray, own: np.ndarray, pos: np.ndarray) -> np.ndarray:
    r"""Columns g of the rows whose features are P; the rows ``own`` of P are
    the group's own rows ``pos``, which add their residual row."""
    out = P.astype(np.float64) @ g.Phi.T.astype(np.float64)
    blk = np.searchsorted(g.starts, pos, side="right") - 1
    for r, p, k in zip(own, pos, blk, strict=True):
        s, e = g.starts[k], g.starts[k + 1]
        out[r, s:e] += g.R[k][p - s]
    return out


def _cross(
    g: _Group, Px: np.ndarray, Xn: Any, block: np.ndarray, params: dict
) -> np.ndarray:
    r""":math:`\hat k(x, X_g)` of new points: the low-rank kernel, exact on the
    block of their nearest centre when it is one of the group's (``block >= 0``)."""
    out = np.asarray(Px @ g.Phi.T, dtype=np.float64)
    for k in np.unique(block[block >= 0]):
        r = np.flatnonzero(block == k)
        s, e = g.starts[k], g.starts[k + 1]
        cols = s + np.flatnonzero(~g.bare[s:e])  # bare columns keep the low rank
        out[np.ix_(r, cols)] = _kernel64(Xn[r], g.X[cols], params)
    return out


def _toarray_parts(g: _Group) -> tuple[np.ndarray, list[np.ndarray]]:
    return g.Phi, g.R


def _decision_state(
    g: _Group,
    alpha: np.ndarray,
    eta: np.ndarray,
    T: np.ndarray,
    Z: np.ndarray,
    params: dict,
) -> _GroupDecision:
    r""":math:`\beta_B = T(\eta - \Phi_B^T\alpha_B)` of the group's blocks."""
    q = g.starts.size - 1
    beta = np.empty((q, T.shape[0], alpha.shape[1]))
    alpha = np.where(g.bare[:, None], 0.0, alpha)  # the blocks' exact part only
    for k in range(q):
        s, e = g.starts[k], g.starts[k + 1]
        beta[k] = T @ (eta - g.Phi[s:e].T.astype(np.float64) @ alpha[s:e])
    return _GroupDecision(g.X, alpha, g.starts, beta, Z, params)


def _predict(d: _GroupDecision, Xn: Any, block: np.ndarray) -> np.ndarray:
    r""":math:`k(x, Z)\beta_B + k(x, X_B)\alpha_B` for new points in the group's
    blocks ``block``."""
    out = np.empty((Xn.shape[0], d.alpha.shape[1]))
    KZ = _kernel64(Xn, d.Z, d.params)
    for k in np.unique(block):
        r = np.flatnonzero(block == k)
        s, e = d.starts[k], d.starts[k + 1]
        out[r] = KZ[r] @ d.beta[k] + _kernel64(Xn[r], d.X[s:e], d.params) @ d.alpha[s:e]
    return out


def _predict_landmarks(Xn: Any, Z: np.ndarray, beta: np.ndarray, params: dict) -> Any:
    return _kernel64(Xn, Z, params) @ beta


# ------------------------------------------------------------------ the operator
class DistributedBlockResidualOperator:
    r"""The operator :math:`\hat K = \Phi\Phi^T + \operatorname{blockdiag}(K_{BB} -
    \Phi_B\Phi_B^T)` of a dask-array X, each block on one worker (module
    docstring).

    Implements the solver operator interface (``shape``, ``dtype``, ``@`` for
    (n,) and (n, C), ``accurate_matmul``, ``diagonal()``, ``rows``,
    ``columns``), ``cross`` (the kernel rows of new points), ``toarray`` (small
    n) and :meth:`decision_model`.

    Parameters
    ----------
    X : dask.array.Array or ndarray of shape (n, d)
    n_components : int, default=1000
        Landmarks m (uniform rows of X, as the in-process factor draws them).
    landmarks : {'uniform'}, default='uniform'
        k-means landmarks need passes over all of X; not offered on a cluster.
    block_size : int, default=300
        Mean points per block: ``n // block_size`` k-means centres.
    kernel, gamma, degree, coef0, kernel_params
        As in :func:`~semisvm.kernels.kernel_matrix` (``gamma`` a number).
    rcond : float, default=1e-6
    random_state : int, default=0
        The landmark draw.
    include : array-like of int, default=None
        Rows that are landmarks whatever the draw (as the in-process factor's).
    block_random_state : int, default=0
        The k-means sample and seed.
    factor : NystroemFactor, default=None
        Fitted landmarks and T to use (only ``landmarks_``, ``components_``,
        ``rank_`` and the kernel are read); drawn by :func:`landmark_factor`
        when None.
    centres : ndarray of shape (q, d), default=None
        Block centres to use instead of :func:`sample_centres`.
    n_groups : int, default=None
        Groups of blocks (the units of work on the workers); the number of row
        chunks of X when None.
    kmeans_sample : int, default=20000
    client : distributed.Client, default=None

    Attributes
    ----------
    factor : NystroemFactor
    centres_ : ndarray of shape (q, d)
    block_of_ : ndarray of int of shape (n,)
        Centre of every training row.
    group_rows_ : list of ndarray of int
        The training rows of each group, block after block.
    n_products : int
    bytes_sent_, bytes_received_ : int
        Array bytes of the products (the payload).
    """

    def __init__(
        self,
        X: Any,
        *,
        n_components: int = 1000,
        landmarks: str = "uniform",
        block_size: int = 300,
        kernel: Any = "rbf",
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        rcond: float = 1e-6,
        random_state: Any = 0,
        include: Any = None,
        block_random_state: int = 0,
        factor: Any = None,
        centres: Any = None,
        n_groups: int | None = None,
        kmeans_sample: int = KMEANS_SAMPLE,
        client: Any = None,
    ) -> None:
        self.client = get_dask_client(client)
        self.params: dict[str, Any] = dict(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
        )
        if factor is None:
            factor = landmark_factor(
                X,
                n_components,
                landmarks=landmarks,
                rcond=rcond,
                random_state=random_state,
                include=include,
                **self.params,
            )
        self.factor = factor
        if centres is None:
            centres = sample_centres(X, block_size, block_random_state, kmeans_sample)
        self.centres_ = np.asarray(centres)
        n = X.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        self.n_products = 0
        self.bytes_sent_ = 0
        self.bytes_received_ = 0
        self._shuffle(X, n_groups)

    # ---------------------------------------------------------------- set-up
    def _shuffle(self, X: Any, n_groups: int | None) -> None:
        """Blocks assigned, packed into groups and built on the workers."""
        from distributed import wait

        client = self.client
        parts, off = _row_block_futures(X, client, None)
        Cf = client.scatter(self.centres_, broadcast=True, hash=False)
        labels = client.gather(
            [client.submit(_labels, f, Cf, pure=False) for f in parts]
        )
        n = self.shape[0]
        self.block_of_ = np.concatenate(labels).astype(np.intp)
        size = np.bincount(self.block_of_, minlength=len(self.centres_))
        full = np.flatnonzero(size)
        m = self.factor.landmarks_.shape[0]
        G = min(full.size, int(n_groups) if n_groups else len(parts))
        cost = size[full] * (m + size[full]).astype(np.float64)
        group_of_block = _pack(cost, G)
        # group, block (ascending centre) and row: the rows of every group
        self.group_of_centre_ = np.full(len(self.centres_), -1, dtype=np.intp)
        self.local_block_ = np.full(len(self.centres_), -1, dtype=np.intp)
        self.group_rows_: list[np.ndarray] = []
        starts = []
        for g in range(G):
            cs = full[group_of_block == g]
            self.group_of_centre_[cs] = g
            self.local_block_[cs] = np.arange(cs.size)
            rows = np.concatenate([np.flatnonzero(self.block_of_ == c) for c in cs])
            self.group_rows_.append(rows)
            starts.append(np.r_[0, np.cumsum(size[cs])].astype(np.intp))
        self._starts = starts
        self.group_ = np.empty(n, dtype=np.intp)
        self.position_ = np.empty(n, dtype=np.intp)
        for g, rows in enumerate(self.group_rows_):
            self.group_[rows] = g
            self.position_[rows] = np.arange(rows.size)
        workers = sorted(client.scheduler_info().get("workers", {}))
        gcost = np.array([cost[group_of_block == g].sum() for g in range(G)])
        where = _pack(gcost, len(workers)) if workers else np.zeros(G, dtype=int)
        Zf = client.scatter(self.factor.landmarks_, broadcast=True, hash=False)
        T = np.asarray(self.factor.components_, dtype=np.float64)
        bare = landmark_rows(self.factor, n)
        self._groups = []
        for g, rows in enumerate(self.group_rows_):
            srt = np.sort(rows)
            blk = np.searchsorted(off, srt, side="right") - 1
            pieces = []
            for p in np.unique(blk):
                local = srt[blk == p] - off[p]
                if local.size == off[p + 1] - off[p]:
                    pieces.append(parts[p])
                else:
                    pieces.append(client.submit(_take, parts[p], local, pure=False))
            order = np.searchsorted(srt, rows)
            pin = (
                {"workers": [workers[where[g]]], "allow_other_workers": True}
                if workers
                else {}
            )
            self._groups.append(
                client.submit(
                    _build_group,
                    Zf,
                    T,
                    self.params,
                    order,
                    starts[g],
                    bare[rows],
                    *pieces,
                    pure=False,
                    **pin,
                )
            )
        wait(self._groups)
        who = client.who_has(self._groups)
        self._pins = [
            {"workers": list(who[f.key])[:1], "allow_other_workers": False}
            if who.get(f.key)
            else {}
            for f in self._groups
        ]

    # -------------------------------------------------------------- products
    def _submit(self, fn: Any, g: int, *args: Any) -> Any:
        return self.client.submit(
            fn, self._groups[g], *args, pure=False, **self._pins[g]
        )

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        """:math:`\\hat K V` for V of shape (n,) or (n, C), in float64 throughout.

        The float32 factor is read in float64 slabs on the workers: a product's
        cost is its two round trips, not its flops, and float64 products keep
        PCG from the extra iterations float32 rounding costs it at small
        ``gamma_a``.
        """
        V = np.asarray(V, dtype=np.float64)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        return self._product(V)

    def accurate_matmul(self, V: np.ndarray) -> np.ndarray:
        """The product (float64 throughout, as ``@``; the PCG's stopping checks)."""
        return self._product(np.asarray(V, dtype=np.float64))

    def _product(self, V: np.ndarray) -> np.ndarray:
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        if V2.shape[0] != self.shape[1]:
            raise ValueError(f"Cannot multiply a {self.shape} operator by {V.shape}.")
        client = self.client
        held = []
        for g, rows in enumerate(self.group_rows_):
            Vg = np.ascontiguousarray(V2[rows])
            self.bytes_sent_ += Vg.nbytes
            held.append(client.submit(_held, Vg, pure=False, **self._pins[g]))
        parts = client.gather([self._submit(_phi_t, g, v) for g, v in enumerate(held)])
        self.bytes_received_ += sum(p.nbytes for p in parts)
        W = parts[0].copy()
        for p in parts[1:]:
            W += p
        self.bytes_sent_ += W.nbytes * len(held)
        outs = client.gather(
            [self._submit(_apply, g, v, W) for g, v in enumerate(held)]
        )
        out = np.empty(V2.shape)
        for rows, o in zip(self.group_rows_, outs, strict=True):
            self.bytes_received_ += o.nbytes
            out[rows] = o
        return out[:, 0] if vec else out

    def diagonal(self) -> np.ndarray:
        parts = self.client.gather(
            [self._submit(_diagonal, g) for g in range(len(self._groups))]
        )
        d = np.empty(self.shape[0])
        for rows, p in zip(self.group_rows_, parts, strict=True):
            d[rows] = p
        return d

    def _features(self, idx: np.ndarray) -> np.ndarray:
        """The rows ``idx`` of :math:`\\Phi` (float32), gathered."""
        P = np.empty((idx.size, self.factor.rank_), dtype=np.float32)
        g_of = self.group_[idx]
        for g in np.unique(g_of):
            sel = np.flatnonzero(g_of == g)
            P[sel] = self._submit(_phi_rows, int(g), self.position_[idx[sel]]).result()
        return P

    def rows(self, idx: Any) -> np.ndarray:
        r"""Rows ``idx`` of :math:`\hat K` (float64), computed where the blocks are."""
        idx = np.atleast_1d(np.asarray(idx, dtype=np.intp))
        P = self._features(idx)
        g_of = self.group_[idx]
        tasks = []
        for g in range(len(self._groups)):
            own = np.flatnonzero(g_of == g)
            tasks.append(self._submit(_rows, g, P, own, self.position_[idx[own]]))
        out = np.empty((idx.size, self.shape[0]))
        for rows, part in zip(self.group_rows_, self.client.gather(tasks), strict=True):
            out[:, rows] = part
        return out

    def columns(self, idx: Any) -> np.ndarray:
        r"""Columns ``idx`` of :math:`\hat K` (the rows transposed: symmetric)."""
        return np.ascontiguousarray(self.rows(idx).T)

    def cross(self, X: Any) -> np.ndarray:
        r""":math:`\hat k(x, x_j)` for new points x (each in the block of its
        nearest centre; float64), shape (n_new, n): the validation rows.  The
        points go to every group's worker (a dask array through the client)."""
        Xn = np.asarray(X.compute()) if _is_dask(X) else X
        Px = self.factor.transform(Xn)
        near = _nearest(Xn, self.centres_)
        Xf = self.client.scatter(Xn, broadcast=True, hash=False)
        tasks = []
        for g in range(len(self._groups)):
            block = np.where(
                self.group_of_centre_[near] == g, self.local_block_[near], -1
            )
            tasks.append(self._submit(_cross, g, Px, Xf, block, self.params))
        out = np.empty((Xn.shape[0], self.shape[0]))
        for rows, part in zip(self.group_rows_, self.client.gather(tasks), strict=True):
            out[:, rows] = part
        return out

    def toarray(self) -> np.ndarray:
        """The n x n matrix on the client (tests and small n)."""
        parts = self.client.gather(
            [self._submit(_toarray_parts, g) for g in range(len(self._groups))]
        )
        n = self.shape[0]
        P = np.empty((n, self.factor.rank_))
        for rows, (Pg, _) in zip(self.group_rows_, parts, strict=True):
            P[rows] = Pg
        K = P @ P.T
        for g, (_, Rs) in enumerate(parts):
            rows = self.group_rows_[g]
            for k, Rk in enumerate(Rs):
                B = rows[self._starts[g][k] : self._starts[g][k + 1]]
                K[np.ix_(B, B)] += Rk
        return K

    def decision_model(self, alpha: np.ndarray) -> DistributedBlockDecision:
        r""":math:`f(x) = \hat k(x, X)\alpha` at new points, without K:
        :class:`DistributedBlockDecision` of the coefficients ``alpha`` (n, C)."""
        return DistributedBlockDecision(self, alpha)

    def release(self) -> None:
        """Drop the groups from the workers' memory."""
        for f in self._groups:
            f.release()
        self._groups = []


class DistributedBlockDecision:
    r"""The predictive function :math:`f(x) = \hat k(x, X)\alpha` of
    :class:`DistributedBlockResidualOperator`, evaluated on the workers.

    As :class:`~semisvm.kernels._blocks.BlockDecision`: with :math:`B = B(x)` the
    block of the nearest centre,

    .. math::
        f(x) = k(x, Z)\,\beta_B + k(x, X_B)\,\alpha_B, \qquad
        \beta_B = T\big(\Phi^T\alpha - \Phi_B^T\alpha_B\big).

    :math:`\Phi^T\alpha` takes one distributed pass; then each group's worker
    keeps its :math:`X_B`, :math:`\alpha_B` and :math:`\beta_B`.  A call sends
    each new point to the worker of its block and returns its values (a point
    whose nearest centre has no training point gets :math:`k(x, Z)T\Phi^T\alpha`,
    computed where the point is).

    Parameters
    ----------
    operator : DistributedBlockResidualOperator
    alpha : ndarray of shape (n,) or (n, C)

    Attributes
    ----------
    landmarks_ : ndarray of shape (m, d)
    centres_ : ndarray of shape (q, d)
    beta0_ : ndarray of shape (m, C)
        :math:`T\Phi^T\alpha` (the centres without training points).
    """

    def __init__(
        self, operator: DistributedBlockResidualOperator, alpha: np.ndarray
    ) -> None:
        A = np.asarray(alpha, dtype=np.float64)
        A = A[:, None] if A.ndim == 1 else A
        op = operator
        if A.shape[0] != op.shape[0]:
            raise ValueError(
                f"alpha has {A.shape[0]} rows; the operator has {op.shape[0]}."
            )
        client = op.client
        self.client = client
        self.params = dict(op.params)
        self.landmarks_ = op.factor.landmarks_
        self.centres_ = op.centres_
        self.group_of_centre_ = op.group_of_centre_
        self.local_block_ = op.local_block_
        self.n_outputs = A.shape[1]
        self._pins = op._pins
        held = [
            client.submit(
                _held, np.ascontiguousarray(A[rows]), pure=False, **op._pins[g]
            )
            for g, rows in enumerate(op.group_rows_)
        ]
        parts = client.gather([op._submit(_phi_t, g, h) for g, h in enumerate(held)])
        eta = parts[0].copy()
        for p in parts[1:]:
            eta += p
        T = np.asarray(op.factor.components_, dtype=np.float64)
        self.beta0_ = T @ eta
        self._states = [
            op._submit(_decision_state, g, h, eta, T, self.landmarks_, self.params)
            for g, h in enumerate(held)
        ]
        from distributed import wait

        wait(self._states)

    def __call__(self, X: Any) -> np.ndarray:
        """:math:`f(x)` for the rows of X (an array, sparse matrix or dask array),
        shape (n_rows, C) (float64)."""
        if _is_dask(X):
            return self._call_dask(X)
        n = X.shape[0]
        out = np.empty((n, self.n_outputs))
        for s in range(0, n, _PREDICT_ROWS):
            Xs = X[s : s + _PREDICT_ROWS]
            near = _nearest(Xs, self.centres_)
            g_of = self.group_of_centre_[near]
            tasks = []
            for g in np.unique(g_of):
                r = np.flatnonzero(g_of == g)
                if g < 0:
                    out[s + r] = _predict_landmarks(
                        Xs[r], self.landmarks_, self.beta0_, self.params
                    )
                    continue
                block = self.local_block_[near[r]]
                tasks.append((r, self._submit_predict(int(g), Xs[r], block)))
            for (r, _), vals in zip(
                tasks, self.client.gather([t for _, t in tasks]), strict=True
            ):
                out[s + r] = vals
        return out

    def _submit_predict(self, g: int, Xr: Any, block: np.ndarray) -> Any:
        return self.client.submit(
            _predict, self._states[g], Xr, block, pure=False, **self._pins[g]
        )

    def _call_dask(self, X: Any) -> np.ndarray:
        """A dask array's rows go worker to worker to their blocks' workers."""
        client = self.client
        parts, off = _row_block_futures(X, client, None)
        Cf = client.scatter(self.centres_, broadcast=True, hash=False)
        near = np.concatenate(
            client.gather([client.submit(_labels, f, Cf, pure=False) for f in parts])
        )
        g_of = self.group_of_centre_[near]
        tasks = []
        for p, f in enumerate(parts):
            lo, hi = int(off[p]), int(off[p + 1])
            for g in np.unique(g_of[lo:hi]):
                r = np.flatnonzero(g_of[lo:hi] == g)
                piece = client.submit(_take, f, r, pure=False)
                if g < 0:
                    t = client.submit(
                        _predict_landmarks,
                        piece,
                        self.landmarks_,
                        self.beta0_,
                        self.params,
                        pure=False,
                    )
                else:
                    t = self._submit_predict(
                        int(g), piece, self.local_block_[near[lo + r]]
                    )
                tasks.append((lo + r, t))
        out = np.empty((X.shape[0], self.n_outputs))
        for (r, _), vals in zip(
            tasks, client.gather([t for _, t in tasks]), strict=True
        ):
            out[r] = vals
        return out
