r"""The fitting core's exact solve for many fits on one kernel and one graph.

:class:`~semisvm.LapRLS` (``solver='direct'``) and :class:`~semisvm.LapSVM`
(``solver='newton'``) solve, for :math:`z = [b; \alpha]`, the system of
:func:`semisvm.solvers.lapsvm_newton` (Melacci & Belkin 2011, Eq. 11/15)

.. math::
    \begin{bmatrix} s & a^T \\ P_E w + \beta g & M + P_E W K_{E\cdot}\end{bmatrix}
    \begin{bmatrix} b \\ \alpha\end{bmatrix} =
    \begin{bmatrix} w_E^T y_E \\ P_E W y_E\end{bmatrix},\qquad
    M = \gamma_A I + \gamma_I L K = \gamma_A (I + rLK),\ r = \gamma_I/\gamma_A,

with E the points in the loss (all labeled points for LapRLS, the error vectors
for LapSVM), W their loss weights, :math:`g = \gamma_I L\mathbf 1`,
:math:`a = K_{E\cdot}^T w_E + \beta K g`, :math:`s = \sum w_E + \beta
\mathbf 1^T g` (:math:`\beta = 1` with ``intrinsic_bias``).  Only the rank-|E|
block :math:`P_E W K_{E\cdot}` depends on the labels; M depends on the weights
through r alone.  A cross-validation fits the same (kernel, graph) for every fold
and every :math:`(\gamma_A, \gamma_I)`: with one LU factorization of
:math:`I + rLK` per ratio and the columns :math:`Z = (I + rLK)^{-1} P_Q` of
every labeled point Q (of any fold), the Woodbury identity

.. math::
    (M + UV)^{-1} x = M^{-1}x - M^{-1}U\,(I + VM^{-1}U)^{-1}\,VM^{-1}x,\qquad
    U = P_E W,\ V = K_{E\cdot},

gives :math:`\alpha` and b at :math:`O(n|E| + |E|^3)` per fit (and
:math:`V x = (I + VM^{-1}U)^{-1} V M^{-1} x` for the bias row).  LapSVM repeats
the solve on the new error set until it stops changing: that point is the exact
minimiser (the solution of the system on E has :math:`y_i o_i \ge 1` off E and
the gradient of the squared loss on E vanishes), the same one
:func:`~semisvm.solvers.lapsvm_newton` reaches; a run that cycles or reaches
``max_iter`` returns None and the caller runs the plain solver.  The
estimators' ``fit`` calls it (``_solve_factorized`` of
:class:`~semisvm.models._base.ManifoldClassifierMixin`) when an
:class:`~semisvm.models._base.OperatorCache` with a labeled superset is attached (the cross-validation of
:mod:`semisvm.model_selection`); every other step of ``fit`` is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from ..graph._power import product_operand
from ..solvers._newton import _objective
from ..solvers._result import SolveResult

__all__ = ["RatioFactors", "factorized_solve"]


class RatioFactors:
    r"""Per (K, L): :math:`Z = (I + rLK)^{-1}P_Q`, :math:`(I + rLK)^{-1}\ell` and
    their products with :math:`K_{Q\cdot}`, one LU factorization per ratio r."""

    def __init__(self, K: np.ndarray, L: Any, Q: np.ndarray) -> None:
        self.K = K
        self.L = L
        self.Q = np.asarray(Q)
        n = K.shape[0]
        self.pos = np.full(n, -1, dtype=np.intp)
        self.pos[self.Q] = np.arange(self.Q.size)
        self.KQ = K[self.Q]
        self.ell = np.asarray(L @ np.ones(n), dtype=np.float64).ravel()
        self.Kell = K @ self.ell
        self._LK: np.ndarray | None = None
        self._ratios: dict[float, tuple] = {}
        self.n_factorizations = 0

    def ratio(self, r: float) -> tuple:
        """``(Z, z_ell, KQ Z, KQ z_ell)`` for the ratio r (cached).

        Ratios equal to 12 significant digits share a factorization: the
        normalized weights give gamma_i_ / gamma_a_ through products whose last
        bits depend on the fold's labeled weight sum.
        """
        key = float(f"{float(r):.12g}")
        hit = self._ratios.get(key)
        if hit is None:
            n = self.K.shape[0]
            if self._LK is None:
                self._LK = np.asarray(product_operand(self.L) @ self.K)
            A = r * self._LK
            A[np.diag_indices(n)] += 1.0
            lu = sla.lu_factor(A, overwrite_a=True, check_finite=False)
            self.n_factorizations += 1
            rhs = np.zeros((n, self.Q.size + 1))
            rhs[self.Q, np.arange(self.Q.size)] = 1.0
            rhs[:, -1] = self.ell
            S = sla.lu_solve(lu, rhs, check_finite=False)
            KS = self.KQ @ S
            hit = (S[:, :-1], S[:, -1], KS[:, :-1], KS[:, -1])
            self._ratios[key] = hit
        return hit


def _solve_on(
    F: RatioFactors,
    parts: tuple,
    idx: np.ndarray,
    wE: np.ndarray,
    YE: np.ndarray,
    gamma_a: float,
    bg: float,
) -> tuple[np.ndarray, np.ndarray] | None:
    """alpha (n, C) and b (C,) of the system with the loss on ``idx``."""
    Z, zl, KZ, Kzl = parts
    p = F.pos[idx]
    ZE = Z[:, p]
    KZE = KZ[np.ix_(p, p)]
    MU = ZE * (wE / gamma_a)[None, :]
    cap = KZE * (wE / gamma_a)[None, :]
    cap[np.diag_indices_from(cap)] += 1.0
    try:
        lu = sla.lu_factor(cap, check_finite=False)
    except (sla.LinAlgError, ValueError):  # pragma: no cover - the plain solver
        return None
    wY = wE[:, None] * YE
    R0y = ZE @ wY / gamma_a
    VR0y = KZE @ wY / gamma_a
    R0b = (ZE @ wE + bg * zl) / gamma_a
    VR0b = (KZE @ wE + bg * Kzl[p]) / gamma_a
    Vy = sla.lu_solve(lu, VR0y, check_finite=False)  # K_E x_y
    Vb = sla.lu_solve(lu, VR0b[:, None], check_finite=False)[:, 0]  # K_E x_b
    x_y = R0y - MU @ Vy
    x_b = R0b - MU @ Vb
    s = wE.sum() + bg * F.ell.sum()
    den = s - (wE @ Vb + bg * (F.Kell @ x_b))
    if not abs(den) > 0:
        return None
    b = (wY.sum(axis=0) - (wE @ Vy + bg * (F.Kell @ x_y))) / den
    return x_y - x_b[:, None] * b[None, :], b


def factorized_solve(
    F: RatioFactors,
    Y: np.ndarray,
    *,
    gamma_a: float,
    gamma_i: float,
    intrinsic_bias: bool,
    sample_weight: np.ndarray | None,
    loss: str,
    max_iter: int,
) -> SolveResult | None:
    """LapRLS (``loss='squared'``) or LapSVM (``'squared_hinge'``) from the shared
    factors; None when a labeled point is outside F's labeled set or LapSVM's
    error set does not settle (the caller then runs the plain solver)."""
    n, C = Y.shape
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    if lab.size == 0 or (F.pos[lab] < 0).any():
        return None
    w = np.ones(lab.size) if sample_weight is None else sample_weight[lab]
    parts = F.ratio(gamma_i / gamma_a)
    bg = gamma_i if intrinsic_bias else 0.0
    L = F.L
    if loss == "squared":
        out = _solve_on(F, parts, lab, w, Y[lab], gamma_a, bg)
        if out is None:
            return None
        alpha, b = out
        n_iter = np.ones(C, dtype=np.intp)
        reason = ["direct"] * C
    else:
        alpha = np.empty((n, C))
        b = np.empty(C)
        n_iter = np.empty(C, dtype=np.intp)
        reason = ["error_vectors"] * C
        KL = F.KQ[F.pos[lab]]
        for c in range(C):
            y_l = Y[lab, c]
            E = np.ones(lab.size, dtype=bool)
            seen: set[bytes] = set()
            for it in range(1, max_iter + 1):
                n_iter[c] = it
                key = E.tobytes()
                if not E.any() or key in seen:
                    return None
                seen.add(key)
                out = _solve_on(F, parts, lab[E], w[E], y_l[E][:, None], gamma_a, bg)
                if out is None:
                    return None
                a_c, b_c = out[0][:, 0], float(out[1][0])
                E_new = y_l * (KL @ a_c + b_c) < 1.0
                if np.array_equal(E_new, E):
                    break
                E = E_new
            else:
                return None
            alpha[:, c], b[c] = a_c, b_c
    Ka = F.K @ alpha
    w_full = None if sample_weight is None else w
    objective = np.array(
        [
            _objective(
                Ka[:, c],
                alpha[:, c],
                float(b[c]),
                Y[lab, c],
                lab,
                L,
                gamma_a,
                gamma_i,
                squared=loss == "squared",
                intrinsic_bias=intrinsic_bias,
                w=w_full,
            )
            for c in range(C)
        ]
    )
    return SolveResult(
        alpha=alpha,
        b=np.asarray(b, dtype=np.float64),
        n_iter=n_iter,
        converged=np.ones(C, dtype=bool),
        reason=reason,
        objective=objective,
    )
