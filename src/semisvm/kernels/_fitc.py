r"""The Nyström kernel with its exact diagonal: a low-rank-plus-diagonal K.

With the Nyström factor :math:`\Phi` of m landmarks (:class:`NystroemFactor`),

.. math::
    \hat K = \Phi\Phi^T + \operatorname{diag}(d), \qquad
    d_i = k(x_i, x_i) - \|\Phi_i\|^2 \ge 0,

the approximation of sparse Gaussian processes called FITC (fully independent
training conditional; Snelson & Ghahramani 2006; Quiñonero-Candela & Rasmussen
2005): exact on the diagonal, the landmarks' low-rank kernel between distinct
points.  The Laplacian SVM / RLS objective of the papers is minimised over
:math:`f = \hat K\alpha + b` with :math:`\|f\|^2 = \alpha^T\hat K\alpha`; the
diagonal gives each training point a component of its own, penalized by
:math:`1/d_i` and tied to its neighbours by the graph term.  That is what a
low-rank K lacks: with :math:`\Phi\Phi^T` alone every function lives in the
span of m landmark functions, too few to follow ten classes along the graph,
while :math:`\hat K` is full rank and a product costs :math:`O(nm)`, not
:math:`O(n^2)`.  With every point a landmark, :math:`\hat K = K`.

A new point x has no component of its own (FITC's predictive mean):
:math:`f(x) = k(x, Z)\beta + b`, :math:`\beta = T\Phi^T\alpha` with
:math:`\Phi = k(X, Z)T` -- the Nyström model's form of prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._memory import block_rows
from ._kernels import kernel_matrix, row_norms_sq
from ._nystroem import (
    NystroemFactor,
    NystroemResidual,
    accurate_thin_product,
    landmark_rows,
    thin_product,
)
from ._operators import single_blas_thread

__all__ = ["FITCOperator", "kernel_diagonal"]


def kernel_diagonal(
    X: Any,
    *,
    kernel: Any = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 1.0,
    kernel_params: dict | None = None,
) -> np.ndarray:
    r""":math:`k(x_i, x_i)` for every row of X (float64).

    Closed forms for the built-in kernels (rbf: 1; linear: :math:`\|x\|^2`; poly:
    :math:`(\gamma\|x\|^2 + c_0)^d`); a callable kernel is evaluated on blocks
    of rows and the diagonals kept.
    """
    n = X.shape[0]
    if kernel == "rbf":
        return np.ones(n)
    if kernel == "linear":
        return np.asarray(row_norms_sq(X), dtype=np.float64)
    if kernel == "poly":
        return (gamma * np.asarray(row_norms_sq(X), dtype=np.float64) + coef0) ** degree
    out = np.empty(n)
    for s in range(0, n, 256):
        B = kernel_matrix(
            X[s : s + 256],
            X[s : s + 256],
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
        )
        out[s : s + 256] = np.diagonal(B)
    return out


class FITCOperator(NystroemResidual):
    r"""The operator :math:`\hat K = \Phi\Phi^T + \operatorname{diag}(d)`.

    Parameters
    ----------
    factor : NystroemFactor
        Fitted on the training points X.
    diagonal : ndarray of shape (n,)
        :math:`k(x_i, x_i)` (:func:`kernel_diagonal`).

    Attributes
    ----------
    factor : NystroemFactor
    residual_ : ndarray of shape (n,)
        :math:`d = k(x_i, x_i) - \|\Phi_i\|^2`, clipped at 0 (rounding), and 0
        on the landmark rows (:func:`~semisvm.kernels._nystroem.landmark_rows`).
    shape, dtype
        The solvers' operator interface (products returned in float64).
    """

    def __init__(self, factor: NystroemFactor, diagonal: np.ndarray) -> None:
        self.factor = factor
        Phi = factor.features_
        self.Phi = Phi
        n = Phi.shape[0]
        if diagonal.shape != (n,):
            raise ValueError(
                f"diagonal has shape {diagonal.shape}; the factor has {n} rows."
            )
        low = np.einsum("ij,ij->i", Phi, Phi, dtype=np.float64)
        self.residual_ = np.clip(
            np.asarray(diagonal, dtype=np.float64) - low, 0.0, None
        )
        self.residual_[landmark_rows(factor, n)] = 0.0
        self.shape = (n, n)
        self.dtype = np.dtype(np.float64)
        # products pass through the float32 factor (accurate_matmul does not)
        self.product_dtype = np.dtype(np.float32)
        self.n_products = 0

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        self.n_products += 1 if V.ndim == 1 else V.shape[1]
        P = self.Phi
        # thin products over an n x m matrix, one BLAS thread (LowRankOperator)
        with single_blas_thread():
            low = thin_product(P, V)
        if V.ndim == 1:
            return low + self.residual_ * V
        self._add_residual(low, V)
        return low

    def _add_residual(self, out: np.ndarray, V: np.ndarray) -> None:
        out += self.residual_[:, None] * V

    def accurate_matmul(self, V: np.ndarray) -> np.ndarray:
        """The product in float64 throughout (the PCG's stopping checks)."""
        V = np.asarray(V, dtype=np.float64)
        d = self.residual_ if V.ndim == 1 else self.residual_[:, None]
        return accurate_thin_product(self.Phi, V, self.float64_features()) + d * V

    def rows(self, idx: Any) -> np.ndarray:
        r"""Rows ``idx`` of :math:`\hat K` (float64)."""
        idx = np.asarray(idx)
        R = np.asarray(self.Phi[idx] @ self.Phi.T, dtype=np.float64)
        R[np.arange(idx.size), idx] += self.residual_[idx]
        return R

    def cross(self, X: Any) -> np.ndarray:
        r""":math:`\hat K(X, X_{train}) = \Phi(X)\Phi^T`: new points have no
        diagonal component (float64)."""
        return np.asarray(self.factor.transform(X) @ self.Phi.T, dtype=np.float64)

    def diagonal(self) -> np.ndarray:
        return (
            np.einsum("ij,ij->i", self.Phi, self.Phi, dtype=np.float64) + self.residual_
        )

    def landmark_coef(self, alpha: np.ndarray) -> np.ndarray:
        r""":math:`\beta = T\Phi^T\alpha`: the landmarks' coefficients of
        :math:`f(x) = k(x, Z)\beta`, the prediction at new points."""
        A = np.asarray(alpha, dtype=np.float64)
        eta = np.zeros((self.Phi.shape[1],) + A.shape[1:])
        rows = block_rows(self.Phi.shape[1], 8, cap_bytes=64 * 2**20, n_rows=A.shape[0])
        for s in range(0, A.shape[0], rows):
            eta += self.Phi[s : s + rows].astype(np.float64).T @ A[s : s + rows]
        return self.factor.coef_from_features(eta)

    def toarray(self) -> np.ndarray:
        P = self.Phi.astype(np.float64)
        return P @ P.T + np.diag(self.residual_)
