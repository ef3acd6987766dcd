r"""LapSVM / LapRLS in the r-dimensional Nyström feature space (Falkon-style).

With the Nyström factor :math:`K \approx \Phi\Phi^T` (:class:`~semisvm.kernels.
NystroemFactor`), a function of the Nyström RKHS is :math:`f = \Phi\eta + b\,1`
with :math:`\|f\|_{\mathcal H}^2 = \eta^T\eta`, and the objective of one
one-vs-rest column (Melacci & Belkin 2011, Eq. 7, on the low-rank space) reads

.. math::
    \tfrac12\Big[\sum_{i\in\mathcal L}\ell(y_i, \phi_i^T\eta + b)
    + \gamma_A\,\eta^T\eta + \gamma_I\, f_I^T L f_I\Big],
    \qquad f_I = \Phi\eta\ (+\, b1 \text{ with intrinsic\_bias}),

an (r+1)-variable problem whose data enter only through
:math:`M = \gamma_I \tilde\Phi^T L\tilde\Phi` (:math:`\tilde\Phi = [\Phi, 1]`,
or :math:`[\Phi, 0]` without the intrinsic bias), formed once in
O(n r^2 + nnz(L) r) time and O(n b) extra memory (column blocks of L Φ), and the
l labeled rows.  With :math:`\theta = [\eta; b]` and
:math:`R = M + \gamma_A \mathrm{diag}(1,\dots,1,0)`:

* squared loss (LapRLS): :math:`(R + \tilde\Phi_{\mathcal L}^T\tilde\Phi_{\mathcal L})
  \theta = \tilde\Phi_{\mathcal L}^T y` -- one Cholesky solve, exact;
* squared hinge (LapSVM): primal Newton on the error set (Keerthi & DeCoste
  2005; Melacci & Belkin 2011, Sec. 3.1): :math:`E = \{i\in\mathcal L: y_i f_i < 1\}`,
  solve the quadratic restricted to E, take the exact line search
  (:func:`~semisvm.solvers._linesearch.exact_line_search_batch`) along the Newton
  direction, repeat.  When the full step is taken and E does not change, θ
  minimises the quadratic whose active set agrees with θ's own, so the gradient
  of the convex, continuously differentiable objective vanishes at θ: it is the
  global minimiser (``reason='error_vectors'``).  The objective decreases
  monotonically (exact line search), and there are finitely many error sets.

Cost: forming M dominates (n r^2 flops, a float64 GEMM over row blocks).  The
Newton systems of every class and step share one factorisation
(:class:`_ErrorSetSolver`): :math:`A = R + \tilde\Phi_{\mathcal L}^T
\tilde\Phi_{\mathcal L}` is factored once, and the system of an error set E is
A minus the rows outside E, solved by the Woodbury identity in
O(r l + |N|^3) (N: the labeled points outside E); ten classes cost about one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._memory import block_rows
from .._threads import PARALLEL_MIN_WORK, blas_threads, map_threads
from ..kernels._nystroem import accurate_projection
from ..kernels._operators import single_blas_thread
from ._linesearch import exact_line_search_batch
from ._result import SolveResult
from ._targets import as_targets
from ._tolerances import tolerances

__all__ = ["lapsvm_lowrank", "intrinsic_gram", "border_gram"]


def intrinsic_gram(
    Phi: np.ndarray,
    L: Any,
    *,
    intrinsic_bias: bool,
    max_block_bytes: int = 256 * 2**20,
    precision: Any = np.float64,
) -> np.ndarray:
    r""":math:`\tilde\Phi^T L \tilde\Phi` ((r+1) x (r+1), float64), bias last.

    For a sparse L (the graph Laplacian) in row blocks R:
    :math:`G \mathrel{+}= \Phi_R^T (L_{R,:} \Phi)`, the product
    :math:`L_{R,:}\Phi` formed in float64 from the rows of Φ the block's
    columns touch (a kNN graph's row block touches about k times its own rows),
    never an n x r float64 copy of Φ; the r x r update, symmetric once summed,
    is formed on and below the diagonal panels only (:func:`_lower_panels`:
    n r^2 flops in all, half a GEMM's; the fit's largest product at 1M points).
    ``precision=np.float32`` with a float32 Φ (the solvers' aids: the coarse
    start, the preconditioner, the leave-one-out engine on the operator's own
    features, :class:`~semisvm.solvers._landmarks.LandmarkSpace`) forms
    :math:`L_{R,:}\Phi` and the row block's update in float32, summed in
    float64: the Gram of the float32 factor to float32 rounding (relative 5e-8
    at 74,384 x 2,000), 3.1 s there against 8.3 in float64 (no conversion, half
    the bytes, float32 GEMM).
    An even power :math:`L^{2q}` is the Gram of :math:`Q = L^q\tilde\Phi` in the
    same row blocks, :math:`G \mathrel{+}= Q_R^T Q_R`
    (:meth:`~semisvm.graph.LaplacianPower.half`: a symmetric update, half the
    flops, one sparse product per block; n = 200,000, r = 600, p = 2: 11 s
    instead of 19 s).  Any other L that is not sparse (an odd power p > 1 as an
    operator) is applied to column blocks of Φ.
    """
    n, r = Phi.shape
    G = np.zeros((r + 1, r + 1))
    if getattr(L, "power", None) == 1 and sp.issparse(getattr(L, "base", None)):
        L = L.base  # a first power (the estimators' operator form): the sparse L
    S = L.half() if hasattr(L, "half") else None
    if S is not None or sp.issparse(L):
        square = S is not None
        L = sp.csr_array(S if square else L)
        low = Phi.dtype == np.float32 and np.dtype(precision) == np.float32
        if low:
            L = L.astype(np.float32)
        per_row = 2 + L.nnz / max(1, n)  # Phi_R, Q_R and the gathered rows
        rows = block_rows(r, int(8 * per_row), cap_bytes=max_block_bytes, n_rows=n)
        colsum = np.zeros(r)
        for s in range(0, n, rows):
            Lr = L[s : s + rows]
            Q = _block_times(Lr, Phi)  # (rows, r) = L_R Phi
            if square:  # Q_R^T Q_R, the bias column S_R 1 appended
                Q = np.hstack([Q, np.asarray(Lr.sum(axis=1)).reshape(-1, 1)])
                G += Q.T @ Q  # numpy calls syrk for a matrix times its transpose
                continue
            P = Phi[s : s + rows]
            _lower_panels(G, P if low else P.astype(np.float64), Q)
            colsum += Q.sum(axis=0, dtype=np.float64)
        if not square:
            _mirror_panels(G, r)
        if not intrinsic_bias:
            G[r, :] = G[:, r] = 0.0
        elif not square:
            G[r, :r] = G[:r, r] = colsum  # 1^T L Phi
            G[r, r] = float(np.asarray(L @ np.ones(n)).sum())
        return 0.5 * (G + G.T)
    bcols = max(16, min(512, block_rows(n, 16, cap_bytes=256 * 2**20)))
    rrows = block_rows(r, 8, cap_bytes=64 * 2**20, n_rows=n)
    for j0 in range(0, r, bcols):
        j1 = min(r, j0 + bcols)
        P = np.asarray(L @ Phi[:, j0:j1].astype(np.float64))  # (n, b) = L Phi_J
        for s in range(0, n, rrows):
            B = Phi[s : s + rrows, :j1].astype(np.float64)
            G[:j1, j0:j1] += B.T @ P[s : s + rrows]
        if intrinsic_bias:
            G[r, j0:j1] = P.sum(axis=0)  # 1^T L Phi_J
        del P
    iu = np.triu_indices(r, 1)
    G[iu[1], iu[0]] = G[iu]
    if intrinsic_bias:
        G[:r, r] = G[r, :r]
        G[r, r] = float(np.asarray(L @ np.ones(n)).sum())
    return 0.5 * (G + G.T)


#: column panels of the symmetric Gram update (:func:`_lower_panels`)
GRAM_PANEL = 256


def _lower_panels(G: np.ndarray, P: np.ndarray, Q: np.ndarray) -> None:
    r""":math:`G \mathrel{+}= P^TQ` on and below the diagonal panels only, for
    a :math:`P^TQ` known to be symmetric in exact arithmetic (:math:`Q = L_{R,:}
    \Phi`, summed over every row block, is :math:`\Phi^TL\Phi`): half the
    flops of the GEMM; :func:`_mirror_panels` fills the rest."""
    r = P.shape[1]
    for j0 in range(0, r, GRAM_PANEL):
        j1 = min(r, j0 + GRAM_PANEL)
        G[j0:r, j0:j1] += P[:, j0:].T @ Q[:, j0:j1]


def _mirror_panels(G: np.ndarray, r: int) -> None:
    """Copy the panels below the diagonal panels onto those above them."""
    for j0 in range(0, r, GRAM_PANEL):
        j1 = min(r, j0 + GRAM_PANEL)
        G[j0:j1, j1:r] = G[j1:r, j0:j1].T


def _block_times(Lr: sp.csr_array, Phi: np.ndarray) -> np.ndarray:
    r""":math:`L_R\Phi` for a row block :math:`L_R` of a sparse L: in float64 from
    the rows of a float32 Φ its columns touch (converted; a float64 Φ is read in
    place, the same sums without the gathered copy), in float32 for a float32
    :math:`L_R` and Φ (read in place); the block's rows split over
    :func:`~semisvm._threads.blas_threads` threads when the product is large
    (the gather and SciPy's sparse product release the GIL; each row is summed
    as in one product, so the result is the same bit for bit)."""
    work = Lr.nnz * Phi.shape[1]
    threads = min(blas_threads(), Lr.shape[0]) if work >= PARALLEL_MIN_WORK else 1
    bounds = np.linspace(0, Lr.shape[0], max(threads, 1) + 1).astype(int)
    low = Lr.dtype == np.float32 and Phi.dtype == np.float32
    out = np.empty((Lr.shape[0], Phi.shape[1]), dtype=Phi.dtype if low else None)

    def part(i: int) -> None:
        A = Lr[bounds[i] : bounds[i + 1]]
        if low or Phi.dtype == np.float64:  # read in place: no gathered copy
            out[bounds[i] : bounds[i + 1]] = A @ Phi
            return
        cols, local = np.unique(A.indices, return_inverse=True)
        A = sp.csr_array(
            (A.data, local.ravel(), A.indptr), shape=(A.shape[0], cols.size)
        )
        out[bounds[i] : bounds[i + 1]] = A @ Phi[cols].astype(np.float64)

    map_threads(part, range(bounds.size - 1))
    return out


def border_gram(gram: np.ndarray, Phi: Any, L1: np.ndarray) -> np.ndarray:
    r""":math:`[\Phi, 1]^T L [\Phi, 1]` from :math:`B = \Phi^T L \Phi` and
    :math:`L1` (L symmetric): B bordered by :math:`\Phi^T L1` and
    :math:`1^T L 1`, without a second :math:`n r^2` product."""
    L1 = np.asarray(L1, dtype=np.float64).ravel()
    c = accurate_projection(Phi, L1)  # no float64 copy of a float32 Phi
    return np.block([[gram, c[:, None]], [c[None, :], np.array([[L1.sum()]])]])


def _solve_spd(H: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return sla.cho_solve(
            sla.cho_factor(H, check_finite=False), rhs, check_finite=False
        )
    except np.linalg.LinAlgError:
        # semi-definite (e.g. an unregularised bias with no error vector): least squares
        return sla.lstsq(H, rhs, check_finite=False)[0]


class _ErrorSetSolver:
    r"""Solves :math:`(R + P_E^T P_E)\,\theta = P_E^T y_E` for any subset E of the
    labeled rows P (l x (r+1)) from one factorisation shared by every class and
    Newton step.

    :math:`A = R + P^T P` is symmetric positive definite when :math:`\gamma_A > 0`:
    :math:`x^T A x = 0` forces the ambient part of x to 0 (:math:`\gamma_A`), then
    :math:`P x = b\,1 = 0` forces the bias to 0.  It is factored once, with
    :math:`W = A^{-1}P^T` and :math:`G = P W`.  With N the rows outside E and
    :math:`y' = y \odot 1_E`, :math:`R + P_E^T P_E = A - P_N^T P_N`, and the
    Woodbury identity gives

    .. math::
        \theta = W y' + W_{:,N}\,(I - G_{NN})^{-1}\, G_{N,:}\, y',

    where :math:`I - G_{NN}` is positive definite exactly when
    :math:`R + P_E^T P_E` is.  When it is not (an unregularised bias and an empty
    error set), or :math:`\gamma_A = 0`, the system is solved directly
    (:func:`_solve_spd`: Cholesky, else least squares), as before.
    """

    def __init__(self, R: np.ndarray, P: np.ndarray) -> None:
        self.R, self.P = R, P
        self.W: np.ndarray | None = None
        try:
            cf = sla.cho_factor(R + P.T @ P, lower=True, check_finite=False)
            W = sla.cho_solve(cf, P.T, check_finite=False)
            if np.all(np.isfinite(W)):
                self.W, self.G = W, P @ W
        except np.linalg.LinAlgError:
            pass

    def solve(self, E: np.ndarray, y: np.ndarray) -> np.ndarray:
        ye = np.where(E, y, 0.0)
        if self.W is not None:
            N = np.flatnonzero(~E)
            theta = self.W @ ye
            if N.size == 0:
                return theta
            S = -self.G[np.ix_(N, N)]
            S[np.diag_indices_from(S)] += 1.0
            try:
                z = sla.cho_solve(
                    sla.cho_factor(S, lower=True, check_finite=False),
                    self.G[N] @ ye,
                    check_finite=False,
                )
                if np.all(np.isfinite(z)):
                    return theta + self.W[:, N] @ z
            except np.linalg.LinAlgError:
                pass
        PE = self.P[E]
        return _solve_spd(self.R + PE.T @ PE, PE.T @ y[E])


def lapsvm_lowrank(
    Phi: np.ndarray,
    Y: np.ndarray,
    *,
    L: Any = None,
    gamma_a: float = 1.0,
    gamma_i: float = 0.0,
    loss: str = "squared_hinge",
    intrinsic_bias: bool = False,
    max_iter: int = 100,
    M: np.ndarray | None = None,
    T: np.ndarray | None = None,
) -> SolveResult:
    r"""Train C LapSVM / LapRLS columns on Nyström features.

    Parameters
    ----------
    Phi : ndarray of shape (n, r)
        Features with :math:`K \approx \Phi\Phi^T` (float32 or float64).
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`): +1 / -1 on
        labeled rows, 0 on unlabeled rows.
    L : sparse matrix or operator of shape (n, n), default=None
        Graph Laplacian.
    gamma_a, gamma_i : float
    loss : {'squared_hinge', 'squared'}
    intrinsic_bias : bool, default=False
        Include b in :math:`f_I` (as the dense solvers).
    max_iter : int, default=100
        Newton steps per column.
    M : ndarray, default=None
        A precomputed :func:`intrinsic_gram` of ``Phi`` (reused across calls).
    T : ndarray of shape (m, r), default=None
        When given, ``Phi`` holds :math:`C = k(X, Z)` (n x m) and the features are
        :math:`CT`; M is then formed as :math:`\tilde T^T (\tilde C^T L \tilde C)
        \tilde T` (the same matrix, without forming the n x r features).

    Returns
    -------
    SolveResult
        ``alpha`` holds η (r x C), the coefficients of the features.
    """
    if loss not in ("squared_hinge", "squared"):
        raise ValueError(
            f"Unknown loss {loss!r}; expected 'squared_hinge' or 'squared'."
        )
    if L is not None and gamma_i != 0 and M is None:
        # the n r^2 product with the BLAS default threads, the r-space Newton
        # steps on one thread
        M = intrinsic_gram(Phi, L, intrinsic_bias=intrinsic_bias)
        if T is not None:
            Tt = np.zeros((T.shape[0] + 1, T.shape[1] + 1))
            Tt[:-1, :-1] = T
            Tt[-1, -1] = 1.0
            M = Tt.T @ M @ Tt
            M = 0.5 * (M + M.T)
    with single_blas_thread():
        return _lowrank(
            Phi, Y, L, gamma_a, gamma_i, loss, intrinsic_bias, max_iter, M, T
        )


def _lowrank(Phi, Y, L, gamma_a, gamma_i, loss, intrinsic_bias, max_iter, M, T):
    Y = as_targets(Y, Phi.shape[0])
    tols = tolerances(np.float64)  # the Newton systems are solved in float64
    r = Phi.shape[1] if T is None else T.shape[1]
    C = Y.shape[1]
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    Pl = Phi[lab].astype(np.float64)
    if T is not None:
        Pl = Pl @ T
    Pl = np.c_[Pl, np.ones(lab.size)]  # (l, r+1)
    R = np.zeros((r + 1, r + 1))
    if M is not None and gamma_i != 0:
        R += gamma_i * M
    R[np.arange(r), np.arange(r)] += gamma_a
    theta = np.zeros((r + 1, C))
    n_iter = np.zeros(C, dtype=np.intp)
    n_ls = np.zeros(C, dtype=np.intp)
    reason = [""] * C
    converged = np.zeros(C, dtype=bool)
    obj = np.zeros(C)

    def objective(th: np.ndarray, y: np.ndarray) -> float:
        f = Pl @ th
        h = (y - f) if loss == "squared" else np.maximum(0.0, 1.0 - y * f)
        return 0.5 * (float(h @ h) + float(th @ (R @ th)))

    systems = _ErrorSetSolver(R, Pl)
    every = np.ones(lab.size, dtype=bool)
    for c in range(C):
        y = Y[lab, c]
        th = theta[:, c]
        if loss == "squared":
            th = systems.solve(every, y)
            n_iter[c], reason[c], converged[c] = 1, "direct", True
        else:
            E = every.copy()  # at theta = 0 every point violates
            for it in range(1, max_iter + 1):
                th_new = systems.solve(E, y)
                d = th_new - th
                f, fd = Pl @ th, Pl @ d
                Rd = R @ d
                s, nls = exact_line_search_batch(
                    f[:, None],
                    fd[:, None],
                    y[:, None],
                    np.array([th @ Rd]),
                    np.array([d @ Rd]),
                )
                step = float(s[0]) if np.isfinite(s[0]) else 1.0
                n_ls[c] += int(nls[0])
                th = th + step * d
                n_iter[c] = it
                E_new = y * (Pl @ th) < 1.0
                if np.array_equal(E_new, E) and abs(step - 1.0) < tols.unit_step:
                    reason[c], converged[c] = "error_vectors", True
                    break
                if np.linalg.norm(step * d) <= tols.step_floor * max(
                    1.0, float(np.linalg.norm(th))
                ):
                    reason[c], converged[c] = "tol", True
                    break
                E = E_new
            else:
                reason[c] = "max_iter"
        theta[:, c] = th
        obj[c] = objective(th, y)
    return SolveResult(
        alpha=theta[:r],
        b=theta[r].copy(),
        n_iter=n_iter,
        converged=converged,
        reason=reason,
        objective=obj,
        history={},
        n_ls_iter=n_ls,
    )
