r"""Exact LapRLS / LapSVM fits for many labeled sets and weights from one factorization.

All the fits of a cross-validation over :math:`(\gamma_A, \gamma_I)` share the
kernel K and the Laplacian L; only the set of labeled points that enter the loss
(the fold) and the two weights change.  Writing the model as
:math:`o = f + b\mathbf 1` with :math:`f = K\alpha`, the objective of
:class:`~semisvm.LapRLS` / :class:`~semisvm.LapSVM` (Melacci & Belkin 2011, Eq. 7
and 14) restricted to the set E of points that enter the loss is

.. math::
    \tfrac12\Big[\sum_{i\in E}(o_i-y_i)^2 + \gamma_A f^T K^{-1} f
    + \gamma_I\, o_I^T L\, o_I\Big],\qquad
    o_I = f + \beta b\mathbf 1 ,

(:math:`\beta = 1` with ``intrinsic_bias``).  Its stationarity conditions are

.. math::
    (M + J_E) f = J_E y - b\,(J_E\mathbf 1 + \beta\gamma_I \ell),\qquad
    M = \gamma_A K^{-1} + \gamma_I L,\quad \ell = L\mathbf 1,

    \mathbf 1^T J_E (f + b\mathbf 1 - y) + \beta\gamma_I \ell^T (f + b\mathbf 1) = 0 .

With :math:`G = M^{-1}` the Woodbury identity gives
:math:`(M + J_E)^{-1} = G - G_{:,E}(I + G_{EE})^{-1}G_{E,:}`, so f on the labeled
points and :math:`\ell^T f` need only :math:`G_{QQ}` (Q: all labeled points),
:math:`(G\ell)_Q` and :math:`\ell^T G \ell`.  Since

.. math::
    G P_Q = K\,(\gamma_A I + \gamma_I L K)^{-1} P_Q
          = \tfrac1{\gamma_A} K\,(I + r L K)^{-1} P_Q,\qquad r = \gamma_I/\gamma_A,

one LU factorization of :math:`I + rLK` per distinct ratio r (the same matrix as
the direct LapRLS solve, Eq. 15) serves every :math:`\gamma_A` with that ratio and
every fold, at :math:`O(|Q|^2 n)` per weight pair and :math:`O(|Q|^3)` per fold;
:math:`\gamma_I = 0` needs no factorization (:math:`G = K/\gamma_A`).  Grids of
:math:`\gamma_A` and :math:`\gamma_I` that are geometric with a common step share
most ratios (5 x 5 values: 8 factorizations).  LapRLS is one such solve (E = the
fold's labeled points).  LapSVM (squared hinge) is solved by the primal Newton
method of Melacci & Belkin (2011, Eq. 11), each step being the LapRLS solve on the
current error-vector set E; when E repeats, the point satisfies the optimality
conditions of the convex objective (the gradient of the squared hinge loss is
that of the squared loss on E, which vanishes by construction, and
:math:`y_i o_i \ge 1` off E), so it is the exact minimiser.  A run that does not
settle within ``max_iter`` steps (or cycles) is reported as not converged and the
caller solves that case with :func:`~semisvm.solvers.lapsvm_newton`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla

from ..graph._power import product_operand

__all__ = ["SharedLaplacianSystem"]


class SharedLaplacianSystem:
    """Factorizations of one (kernel, graph) pair shared by many fits.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of all training points.
    L : sparse matrix or operator of shape (n, n) or None
        Graph Laplacian (``None``: no intrinsic term).
    labeled : ndarray of int
        Indices Q of every point that is labeled in any fold.
    intrinsic_bias : bool
        Whether the intrinsic term acts on :math:`K\\alpha + b` (True) or on
        :math:`K\\alpha` only.
    """

    def __init__(
        self, K: Any, L: Any, labeled: np.ndarray, intrinsic_bias: bool
    ) -> None:
        self.K = np.asarray(
            K.toarray() if hasattr(K, "toarray") else K, dtype=np.float64
        )
        n = self.K.shape[0]
        self.Q = np.asarray(labeled)
        self.KQ = self.K[self.Q]
        self.KQQ = self.KQ[:, self.Q]
        self.L = L
        self.has_L = L is not None
        if self.has_L:
            self.LK = np.asarray(product_operand(L) @ self.K)
            self.ell = np.asarray(L @ np.ones(n)).ravel()
            self.Kell = self.K @ self.ell
            self.one_ell = float(self.ell.sum())
        self.beta = 1.0 if (intrinsic_bias and self.has_L) else 0.0
        self._cache: dict[float, tuple] = {}
        self.n_factorizations = 0

    def _ratio(self, r: float, full: bool) -> tuple:
        r"""Unscaled :math:`G_{QQ}`, :math:`(G\ell)_Q`, :math:`\ell^TG\ell` (and the
        rows of every point, ``full``) for the ratio :math:`r = \gamma_I/\gamma_A`."""
        key = round(float(np.log(r)), 9)
        hit = self._cache.get(key)
        if hit is None or (full and hit[3] is None):
            n = self.K.shape[0]
            A = r * self.LK
            A[np.diag_indices(n)] += 1.0
            lu = sla.lu_factor(A, overwrite_a=True, check_finite=False)
            self.n_factorizations += 1
            rhs = np.zeros((n, self.Q.size + 1))
            rhs[self.Q, np.arange(self.Q.size)] = 1.0
            rhs[:, -1] = self.ell
            Z = sla.lu_solve(lu, rhs, check_finite=False)
            Gqq = self.KQ @ Z[:, :-1]
            gl = Z[:, :-1].T @ self.Kell
            s = float(self.Kell @ Z[:, -1])
            Gn = self.K @ Z if full else None  # G P_Q and G ell, up to 1/gamma_a
            hit = (0.5 * (Gqq + Gqq.T), gl, s, Gn)
            self._cache[key] = hit
        return hit

    def weights(self, gamma_a: float, gamma_i: float, full: bool = False) -> _Weighted:
        r"""The quantities :math:`G_{QQ}`, :math:`(G\ell)_Q`, :math:`\ell^TG\ell`.

        With ``full``, also :math:`G_{:,Q}` and :math:`G\ell` on every point (for
        outputs on all the training points).
        """
        if not self.has_L or gamma_i == 0:
            m = self.Q.size
            Gnq = self.K[:, self.Q] / gamma_a if full else None
            gln = np.zeros(self.K.shape[0]) if full else None
            return _Weighted(self.KQQ / gamma_a, np.zeros(m), 0.0, 0.0, 0.0, Gnq, gln)
        Gqq, gl, s, Gn = self._ratio(gamma_i / gamma_a, full)
        return _Weighted(
            Gqq / gamma_a,
            gl / gamma_a,
            s / gamma_a,
            self.one_ell,
            self.beta * gamma_i,
            Gn[:, :-1] / gamma_a if full else None,
            Gn[:, -1] / gamma_a if full else None,
        )


@dataclass
class _Weighted:
    Gqq: np.ndarray
    gl: np.ndarray
    s: float
    one_ell: float
    bg: float  # beta * gamma_i
    Gnq: np.ndarray | None = None  # G[:, Q] (full outputs)
    gln: np.ndarray | None = None  # G ell

    def solve(
        self,
        E: np.ndarray,
        Y: np.ndarray,
        c: np.ndarray | None = None,
        full: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        r"""Exact minimiser with (weighted) loss on the positions E (into Q).

        Parameters
        ----------
        E : ndarray of int
            Positions (into the labeled set Q) of the points in the loss.
        Y : ndarray of shape (|E|, C)
            Targets of those points.
        c : ndarray of shape (|E|,), default=None
            Loss weights (``class_weight``); 1 by default.  The Woodbury
            identity then reads :math:`(M + P C P^T)^{-1} = G - G P (C^{-1} +
            G_{EE})^{-1} P^T G`.
        full : bool, default=False
            Also return the outputs on every training point.

        Returns
        -------
        o : ndarray of shape (|Q|, C)
            Outputs :math:`f + b` on every point of Q.
        b : ndarray of shape (C,)
        o_all : ndarray of shape (n, C) or None
        """
        Y = np.asarray(Y, dtype=np.float64).reshape(E.size, -1)
        c = np.ones(E.size) if c is None else np.asarray(c, dtype=np.float64)
        cY = c[:, None] * Y
        GE = self.Gqq[:, E]
        A = self.Gqq[np.ix_(E, E)].copy()
        A[np.diag_indices_from(A)] += 1.0 / c
        cf = sla.cho_factor(A, check_finite=False)
        glE = self.gl[E]
        # v0 = P_E C y (C columns), w = P_E c + beta gamma_I ell
        Gv0 = GE @ cY
        lGv0 = glE @ cY
        Gw = GE @ c + self.bg * self.gl
        lGw = glE @ c + self.bg * self.s
        Z0 = sla.cho_solve(cf, Gv0[E], check_finite=False)
        zw = sla.cho_solve(cf, Gw[E], check_finite=False)
        f0 = Gv0 - GE @ Z0
        lf0 = lGv0 - glE @ Z0
        f1 = Gw - GE @ zw
        lf1 = lGw - glE @ zw
        num = (c[:, None] * (Y - f0[E])).sum(axis=0) - self.bg * lf0
        den = c.sum() - c @ f1[E] + self.bg * (self.one_ell - lf1)
        if not den > 0:
            raise FloatingPointError("singular bias equation (no point in the loss)")
        b = num / den
        o = f0 - f1[:, None] * b[None, :] + b[None, :]
        o_all = None
        if full:
            assert self.Gnq is not None and self.gln is not None
            GnE = self.Gnq[:, E]
            f0n = GnE @ (cY - Z0)
            f1n = GnE @ (c - zw) + self.bg * self.gln
            o_all = f0n - f1n[:, None] * b[None, :] + b[None, :]
        return o, b, o_all

    def laprls(
        self,
        train: np.ndarray,
        Y: np.ndarray,
        c: np.ndarray | None = None,
        full: bool = False,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """LapRLS outputs on Q (and on every point with ``full``), loss on ``train``."""
        o, _, o_all = self.solve(train, Y, c, full)
        return o, o_all

    def lapsvm(
        self,
        train: np.ndarray,
        y: np.ndarray,
        E0: np.ndarray | None = None,
        c: np.ndarray | None = None,
        full: bool = False,
        max_iter: int = 50,
    ) -> tuple[np.ndarray | None, np.ndarray, int, np.ndarray | None]:
        """LapSVM (squared hinge) by primal Newton on error-vector sets, one column.

        Parameters
        ----------
        train : ndarray of int
            Positions (into Q) of the labeled training points.
        y : ndarray of shape (|train|,)
            +1 / -1 targets.
        E0 : ndarray of bool of shape (|train|,), default=None
            Starting error-vector set (warm start); all points by default.
        c : ndarray of shape (|train|,), default=None
            Loss weights.
        full : bool, default=False
            Also return the outputs on every training point.
        max_iter : int, default=50

        Returns
        -------
        o : ndarray of shape (|Q|,) or None
            Outputs on Q, or None when E did not settle within ``max_iter`` steps.
        E : ndarray of bool
            Final error-vector set.
        n_iter : int
        o_all : ndarray of shape (n,) or None
        """
        E = np.ones(train.size, dtype=bool) if E0 is None else E0.copy()
        c = np.ones(train.size) if c is None else np.asarray(c, dtype=np.float64)
        seen: set[bytes] = set()
        for it in range(1, max_iter + 1):
            if not E.any():
                E = np.ones(train.size, dtype=bool)
            key = E.tobytes()
            if key in seen:  # cycling between error sets: not settled
                return None, E, it, None
            seen.add(key)
            o, _, o_all = self.solve(train[E], y[E][:, None], c[E], full)
            o = o[:, 0]
            E_new = y * o[train] < 1.0
            if np.array_equal(E_new, E):
                return o, E, it, None if o_all is None else o_all[:, 0]
            E = E_new
        return None, E, max_iter, None
