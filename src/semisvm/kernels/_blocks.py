r"""The Nyström kernel with the exact kernel on blocks of nearby points (PIC).

With the Nyström factor :math:`\Phi` of m landmarks (:class:`NystroemFactor`) and
a partition of the training points into blocks :math:`B_1, \dots, B_q`,

.. math::
    \hat K = \Phi\Phi^T + \operatorname{blockdiag}_k\big(K_{B_kB_k}
             - \Phi_{B_k}\Phi_{B_k}^T\big),

the partially independent conditional approximation of sparse Gaussian
processes (PIC; Snelson & Ghahramani, AISTATS 2007): the exact kernel between
points of one block, the landmarks' low-rank kernel between blocks.  It is
positive semi-definite: each block is a principal submatrix of the Schur
complement :math:`K - \Phi\Phi^T \succeq 0`.  Where the factor drops
eigen-directions of the landmark kernel, the residual is kept off the landmark
rows and columns (:func:`~semisvm.kernels._nystroem.landmark_rows`), so that
:math:`\hat K_{:Z}T = \Phi` holds as when it keeps them all.  FITC
(:mod:`._fitc`) is the case of one point per block; one block holding every
point gives K (up to those directions).  The blocks are
k-means clusters of X, so that a point's near neighbours -- the kernel values
the low-rank part underestimates most, and the ones the graph term ties
together -- tend to share its block.  A product costs :math:`2nm + \sum_k
|B_k|^2` per column.

A new point x takes the block of its nearest centre:
:math:`\hat k(x, x_j) = \Phi(x)\Phi_j^T + [j \in B(x)]\,(k(x, x_j) -
\Phi(x)\Phi_j^T)` (PIC's predictive kernel; j outside those landmark rows),
which for a training point (not one of them) gives its row of :math:`\hat K`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._memory import block_rows
from ._kernels import kernel_matrix
from ._nystroem import (
    NystroemFactor,
    NystroemResidual,
    accurate_thin_product,
    landmark_rows,
    thin_product,
)
from ._operators import single_blas_thread

__all__ = ["BlockDecision", "BlockResidualOperator", "kmeans_blocks", "kmeans_centres"]


def kmeans_centres(X: Any, n_clusters: int, random_state: int = 0) -> np.ndarray:
    """Mini-batch k-means centres of the rows of X (float64).

    Random initial centres and ten passes: blocks only need to keep near
    neighbours together, not the lowest inertia (k-means++ and more passes cost
    three times as much for a few percent of inertia).  The same X and seed
    give the same centres.
    """
    from sklearn.cluster import MiniBatchKMeans

    if n_clusters <= 1:
        return np.asarray(X.mean(axis=0), dtype=np.float64).reshape(1, -1)
    km = MiniBatchKMeans(
        n_clusters=n_clusters,
        random_state=random_state,
        n_init=1,
        batch_size=4096,
        init="random",
        max_iter=10,
    ).fit(X)
    return np.asarray(km.cluster_centers_, dtype=np.float64)


def kmeans_blocks(
    X: Any, block_size: int, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Centres and block index of every row of X: :func:`kmeans_centres` with
    ``n // block_size`` clusters (at least one), each row in the block of its
    nearest centre."""
    n = X.shape[0]
    k = max(1, n // max(int(block_size), 1))
    centres = kmeans_centres(X, k, random_state)
    if k == 1:
        return centres, np.zeros(n, dtype=np.intp)
    return centres, _nearest(X, centres)


def _nearest(X: Any, centres: np.ndarray) -> np.ndarray:
    from sklearn.metrics import pairwise_distances_argmin

    return np.asarray(pairwise_distances_argmin(X, centres), dtype=np.intp)


class BlockResidualOperator(NystroemResidual):
    r"""The operator :math:`\hat K = \Phi\Phi^T + \operatorname{blockdiag}(K_{BB} -
    \Phi_B\Phi_B^T)` (module docstring).

    Parameters
    ----------
    factor : NystroemFactor
        Fitted on the training points X.
    X : {array-like, sparse matrix} of shape (n, d)
        The training points (kept for the blocks' kernel at new points).
    block_size : int, default=300
        Mean points per block: ``n // block_size`` k-means clusters.
    random_state : int, default=0

    Attributes
    ----------
    centres_ : ndarray of shape (q, d)
    block_of_ : ndarray of int of shape (n,)
    blocks_ : list of ndarray of int
        The rows of each nonempty block.
    residuals_ : list of ndarray
        :math:`K_{BB} - \Phi_B\Phi_B^T` per block (float64, symmetric).
    """

    def __init__(
        self,
        factor: NystroemFactor,
        X: Any,
        *,
        block_size: int = 300,
        random_state: int = 0,
    ) -> None:
        self.factor = factor
        self.Phi = factor.features_
        n = self.Phi.shape[0]
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows; the factor has {n}.")
        self.X = X
        self.centres_, self.block_of_ = kmeans_blocks(X, block_size, random_state)
        self.blocks_ = [
            B
            for B in (
                np.flatnonzero(self.block_of_ == c) for c in range(len(self.centres_))
            )
            if B.size
        ]
        self._position = np.empty(n, dtype=np.intp)
        self._index = np.full(len(self.centres_), -1, dtype=np.intp)
        #: landmark rows: no residual there (landmark_rows)
        self.is_landmark_ = landmark_rows(factor, n)
        self.residuals_ = []
        for k, B in enumerate(self.blocks_):
            self._position[B] = np.arange(B.size)
            self._index[self.block_of_[B[0]]] = k
            P = self.Phi[B].astype(np.float64)
            R = self._kernel(X[B], X[B]) - P @ P.T
            R = 0.5 * (R + R.T)
            z = self.is_landmark_[B]
            R[z, :] = 0.0
            R[:, z] = 0.0
            self.residuals_.append(R)
        # the rows in block order: each block one contiguous slice there, so
        # that a product reads V once in that order (no gather per block)
        self._order = np.concatenate(self.blocks_)
        # and back: a gather (out += R[inverse]) is cheaper than a scatter-add
        self._inverse = np.empty_like(self._order)
        self._inverse[self._order] = np.arange(self._order.size)
        self._bounds = np.cumsum([0] + [B.size for B in self.blocks_])
        # float32 copies for the products, whose low-rank part is float32 too
        self._residuals32 = [R.astype(np.float32) for R in self.residuals_]
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        # products pass through the float32 factor (accurate_matmul does not)
        self.product_dtype = np.dtype(np.float32)
        self.n_products = 0

    def _kernel(self, A: Any, B: Any) -> np.ndarray:
        f = self.factor
        return np.asarray(
            kernel_matrix(
                A,
                B,
                kernel=f.kernel,
                gamma=f.gamma,
                degree=f.degree,
                coef0=f.coef0,
                kernel_params=f.kernel_params,
            ),
            dtype=np.float64,
        )

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        with single_blas_thread():
            out = thin_product(self.Phi, V)
            self._add_residual(out, V)
        return out

    def _block_product(self, V: np.ndarray) -> np.ndarray:
        """The block-diagonal residual times an (n, C) block, float32, rows in
        V's order (cast, then gathered into block order: half the bytes moved)."""
        Vo = np.asarray(V, dtype=np.float32)[self._order]
        with single_blas_thread():
            return self._residual_product(Vo, self._residuals32)[self._inverse]

    def _add_residual(self, out: np.ndarray, V: np.ndarray) -> None:
        out += self._block_product(V)

    def residual(self, V: np.ndarray) -> np.ndarray:
        """``R V`` for an (n, C) block, float64 (no zero block to add into)."""
        return self._block_product(V).astype(np.float64)

    def _residual_product(self, Vo: np.ndarray, residuals: list) -> np.ndarray:
        """The block-diagonal residual times ``Vo`` (rows in block order)."""
        res = np.empty_like(Vo)
        b = self._bounds
        for k, R in enumerate(residuals):
            np.matmul(R, Vo[b[k] : b[k + 1]], out=res[b[k] : b[k + 1]])
        return res

    def columns(self, idx: Any) -> np.ndarray:
        r"""Columns ``idx`` of :math:`\hat K` (its rows: it is symmetric)."""
        return self.rows(idx).T

    def accurate_matmul(self, V: np.ndarray) -> np.ndarray:
        """The product in float64 throughout (the PCG's stopping checks)."""
        V = np.asarray(V, dtype=np.float64)
        out = accurate_thin_product(self.Phi, V, self.float64_features())
        out += self._residual_product(V[self._order], self.residuals_)[self._inverse]
        return out

    def rows(self, idx: Any) -> np.ndarray:
        r"""Rows ``idx`` of :math:`\hat K` (float64)."""
        idx = np.asarray(idx, dtype=np.intp)
        out = np.asarray(self.Phi[idx] @ self.Phi.T, dtype=np.float64)
        for r, i in enumerate(idx):
            k = self._index[self.block_of_[i]]
            out[r, self.blocks_[k]] += self.residuals_[k][self._position[i]]
        return out

    def cross(self, X: Any) -> np.ndarray:
        r""":math:`\hat k(x, x_j)` for new points x (each in the block of its
        nearest centre; float64)."""
        out = np.asarray(self.factor.transform(X) @ self.Phi.T, dtype=np.float64)
        near = _nearest(X, self.centres_)
        for c in np.unique(near):
            k = self._index[c]
            if k < 0:  # an empty block: the low-rank part only
                continue
            rows = np.flatnonzero(near == c)
            B = self.blocks_[k]
            B = B[~self.is_landmark_[B]]  # landmark columns keep the low rank
            # low rank plus the residual on the block: the exact kernel there
            out[np.ix_(rows, B)] = self._kernel(X[rows], self.X[B])
        return out

    def diagonal(self) -> np.ndarray:
        d = np.einsum("ij,ij->i", self.Phi, self.Phi, dtype=np.float64)
        for B, R in zip(self.blocks_, self.residuals_, strict=True):
            d[B] += np.diag(R)
        return d

    def toarray(self) -> np.ndarray:
        P = self.Phi.astype(np.float64)
        K = P @ P.T
        for B, R in zip(self.blocks_, self.residuals_, strict=True):
            K[np.ix_(B, B)] += R
        return K

    def decision_model(self, alpha: np.ndarray) -> BlockDecision:
        r""":math:`f(x) = \hat k(x, X)\alpha` at new points, without K:
        :class:`BlockDecision` of the coefficients ``alpha`` (n, C)."""
        return BlockDecision(self, alpha)


class BlockDecision:
    r"""The predictive function :math:`f(x) = \hat k(x, X)\alpha` of the block
    operator, evaluated without the n-column kernel rows.

    With :math:`\Phi(x) = k(x, Z)T` and :math:`B = B(x)` the block of the
    nearest centre,

    .. math::
        f(x) = k(x, Z)\,\beta_B + k(x, X_B)\,\alpha_B, \qquad
        \beta_B = T\big(\Phi^T\alpha - \Phi_B^T\alpha_B\big),

    so a point costs :math:`O((m + |B|) d)` kernel values: the landmarks' and
    its block's.  At a training point it is that point's row of :math:`\hat K`
    times :math:`\alpha` (its nearest centre is its block's).

    Parameters
    ----------
    operator : BlockResidualOperator
    alpha : ndarray of shape (n,) or (n, C)

    Attributes
    ----------
    landmarks_ : ndarray of shape (m, d)
    centres_ : ndarray of shape (q, d)
    beta_ : ndarray of shape (q, m, C)
        :math:`\beta_B` of every centre's block (:math:`T\Phi^T\alpha` for an
        empty block).
    """

    def __init__(self, operator: BlockResidualOperator, alpha: np.ndarray) -> None:
        A = np.asarray(alpha, dtype=np.float64)
        A = A[:, None] if A.ndim == 1 else A
        if A.shape[0] != operator.shape[0]:
            raise ValueError(
                f"alpha has {A.shape[0]} rows; the operator has {operator.shape[0]}."
            )
        f = operator.factor
        self.kernel_params = dict(
            kernel=f.kernel,
            gamma=f.gamma,
            degree=f.degree,
            coef0=f.coef0,
            kernel_params=f.kernel_params,
        )
        self.landmarks_ = f.landmarks_
        self.centres_ = operator.centres_
        self.X = operator.X
        Phi = operator.Phi
        T = np.asarray(f.components_, dtype=np.float64)
        q = len(operator.centres_)
        self.blocks_: list[np.ndarray] = [np.empty(0, dtype=np.intp)] * q
        self.alpha_: list[np.ndarray] = [np.empty((0, A.shape[1]))] * q
        C = A.shape[1]
        # each block's own points' share Phi_B^T alpha_B (landmark rows apart:
        # low rank only); their sum and the landmark rows' is Phi^T alpha, with
        # no float64 copy of Phi
        own, centres = [], []
        for B in operator.blocks_:
            c = int(operator.block_of_[B[0]])
            B = B[~operator.is_landmark_[B]]
            self.blocks_[c] = B
            self.alpha_[c] = A[B]
            own.append(Phi[B].astype(np.float64).T @ A[B])
            centres.append(c)
        Z = np.flatnonzero(operator.is_landmark_)
        eta = Phi[Z].astype(np.float64).T @ A[Z]
        for O in own:
            eta += O
        self.beta_ = np.repeat((T @ eta)[None], q, axis=0)
        # the shares removed: T times the blocks' shares side by side, one GEMM
        # per group of blocks (T read once per group, not once per block)
        group = max(1, (64 * 2**20) // (8 * T.shape[0] * C))
        for g in range(0, len(own), group):
            TS = T @ np.concatenate(own[g : g + group], axis=1)
            for j, c in enumerate(centres[g : g + group]):
                self.beta_[c] -= TS[:, j * C : (j + 1) * C]
        self.n_outputs = C

    def __call__(self, X: Any) -> np.ndarray:
        """:math:`f(x)` for the rows of X, shape (n_rows, C) (float64)."""
        n = X.shape[0]
        out = np.empty((n, self.n_outputs))
        m = self.landmarks_.shape[0]
        rows = block_rows(max(m, 1), 8, cap_bytes=64 * 2**20, n_rows=n)
        for s in range(0, n, rows):
            Xs = X[s : s + rows]
            KZ = self._kernel(Xs, self.landmarks_)
            near = _nearest(Xs, self.centres_)
            for c in np.unique(near):
                r = np.flatnonzero(near == c)
                F = KZ[r] @ self.beta_[c]
                B = self.blocks_[c]
                if B.size:
                    F += self._kernel(Xs[r], self.X[B]) @ self.alpha_[c]
                out[s + r] = F
        return out

    def _kernel(self, A: Any, B: Any) -> np.ndarray:
        return np.asarray(kernel_matrix(A, B, **self.kernel_params), dtype=np.float64)
