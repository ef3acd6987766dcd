r"""Entire regularization path of the Laplacian SVM.

Wang, Chen, Yeung & Lochovsky, "Solution path for semi-supervised classification
with manifold regularization".  With :math:`\rho` fixed, the LapSVM problem

.. math::

    \min_{\beta, \beta_0} \sum_{i \le l} \xi_i
        + \frac{\lambda}{2} \beta^T (\rho K + K L K) \beta,
    \qquad y_i f(x_i) \ge 1 - \xi_i,\ \xi_i \ge 0,

with :math:`f(x) = \beta^T k(x) + \beta_0`, has the dual

.. math::

    \max_{0 \le \alpha \le 1,\ y^T\alpha = 0}
        \sum_i \alpha_i - \frac{1}{2\lambda} \alpha^T Q \alpha,
    \qquad Q = Y J K (\rho I + L K)^{-1} J^T Y,

and :math:`\beta = P\alpha / \lambda` with the *translating matrix*
:math:`P = (\rho I + LK)^{-1} J^T Y` (paper, Eq. 7-11).  Writing
:math:`\alpha_0 = \lambda \beta_0`, the decision function is
:math:`f(x) = (\alpha^T P^T k(x) + \alpha_0) / \lambda` and
:math:`(\alpha(\lambda), \alpha_0(\lambda))` is piecewise linear in
:math:`\lambda` (Theorem 1, Eq. 18).  This module computes every breakpoint
(:func:`lapsvm_path`; how, in :class:`_PathFollower`).

References
----------
G. Wang, T. Chen, D.-Y. Yeung and F. H. Lochovsky, "Solution path for
semi-supervised classification with manifold regularization", ICDM 2006.

T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path
for the support vector machine", JMLR 5:1391-1415, 2004.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize

from .._validation import plain
from ._result import SolverResult
from ._targets import as_targets
from ._tolerances import tolerances

__all__ = [
    "LapSVMPathResult",
    "PathWarning",
    "lapsvm_path",
    "translating_matrix",
]

# state codes of a labeled point
_R, _E, _L = 0, 1, 2
_STATE_NAME = {_R: "R", _E: "E", _L: "L"}

# the path works in float64: its tolerances are the float64 row of the table
_TOL = tolerances(np.float64)
# smallest lambda followed, relative to the scale max_i sum_j |Q_ij| of the
# labeled Gram matrix: slacks h = Q alpha + y alpha_0 - lambda carry an absolute
# round-off of about eps * scale, and y f - 1 = h / lambda must stay accurate
_LAMBDA_FLOOR = _TOL.path_lambda_floor

# enumerate every subset of the ambiguous points when there are at most this many
_MAX_ENUM = 12


class PathWarning(UserWarning):
    """Degenerate situation met (and handled) while following the LapSVM path."""


@dataclass(frozen=True, kw_only=True)
class LapSVMPathResult(SolverResult):
    r"""Breakpoints of the LapSVM regularization path.

    The path is exact and piecewise linear in the
    :math:`(\alpha, \alpha_0)` parametrisation:
    :math:`f_\lambda(x) = (\alpha(\lambda)^T P^T k(x) + \alpha_0(\lambda))/\lambda`.

    Attributes
    ----------
    lambdas : ndarray of shape (n_breakpoints,)
        Strictly decreasing breakpoints; ``lambdas[0]`` is :math:`\lambda^0`, the
        largest :math:`\lambda` at which the solution changes (Eq. 16).
    alphas : ndarray of shape (n_breakpoints, l)
        Dual coefficients :math:`\alpha` at each breakpoint (in ``[0, 1]``).
    alpha0s : ndarray of shape (n_breakpoints,)
        Offsets :math:`\alpha_0 = \lambda\beta_0` at each breakpoint.
    labeled : ndarray of int of shape (l,)
        Indices of the labeled points among the n training points.
    y_labeled : ndarray of shape (l,)
        Their labels in ``{-1, +1}``.
    elbows : tuple of ndarray
        ``elbows[k]``: indices (into the labeled points) of the elbow set E on the
        segment that starts at ``lambdas[k]`` and goes down.
    events : tuple of tuple
        ``events[k]``: the set changes at ``lambdas[k]``, as
        ``(i, from_set, to_set)`` with sets ``'L'``, ``'E'``, ``'R'``.
    n_events : int
        Breakpoints after :math:`\lambda^0` at which a set changed.
    reason : {'empty_L', 'lambda_min', 'lambda_floor', 'max_events', 'no_more_events'}
        Why the path stopped.  ``'empty_L'``: no labeled point left inside the margin; below the last
        breakpoint the decision function no longer changes
        (:math:`\alpha, \alpha_0 \propto \lambda`).  ``'no_more_events'``: the last
        segment extends to :math:`\lambda \to 0` without event.
        ``'lambda_floor'``: the next event lies below ``1e-7`` times
        :math:`\max_i \sum_j |Q_{ij}|` (labels the kernel cannot separate, so
        events pile up towards :math:`\lambda = 0`); there the margins
        :math:`y_i f(x_i) - 1 = h_i/\lambda` can no longer be computed in double
        precision, so the path ends with a breakpoint at that floor (which still
        satisfies the KKT conditions) and is not extrapolated below it.
    init : {'balanced', 'unbalanced'}
        Which initialisation (Lemma 1 or Lemma 2) was used.
    head_slope : float
        :math:`d\alpha_0/d\lambda` above :math:`\lambda^0` (``alpha`` is constant
        there): ``0`` for balanced classes (Lemma 1; the optimal
        :math:`\alpha_0` form an interval around :math:`\alpha_0^0` growing with
        :math:`\lambda`; the constant is its midpoint, as the dual QP returns)
        or the majority label (Lemma 2).
    tail : {'scale', 'linear', 'none'}
        How the path continues below ``lambdas[-1]``.
    tail_slope : ndarray of shape (l + 1,) or None
        :math:`(d\alpha/d\lambda, d\alpha_0/d\lambda)` of a ``'linear'`` tail.
    rho : float
    P : ndarray of shape (n, l) or None
        Translating matrix :math:`(\rho I + LK)^{-1} J^T Y`, needed to evaluate
        the decision function at new points.
    M : ndarray of shape (l, l)
        :math:`J K (\rho I + LK)^{-1} J^T`.
    n_ties, n_singular, n_reentries, n_inexact : int
        Breakpoints where several events coincided, elbow systems that were
        singular (least-squares solution used), elbow entries of a point that had
        been in the elbow before, and steps where no consistent direction was
        found (the least-violating one was taken).
    messages : tuple of str
        What was warned about.
    """

    lambdas: np.ndarray
    alphas: np.ndarray
    alpha0s: np.ndarray
    labeled: np.ndarray
    y_labeled: np.ndarray
    elbows: tuple
    events: tuple
    n_events: int
    reason: str
    init: str
    head_slope: float
    tail: str
    tail_slope: np.ndarray | None
    rho: float
    M: np.ndarray
    P: np.ndarray | None = None
    n_ties: int = 0
    n_singular: int = 0
    n_reentries: int = 0
    n_inexact: int = 0
    messages: tuple = field(default_factory=tuple)

    # ------------------------------------------------------------------ queries
    @property
    def lambda_max(self) -> float:
        r""":math:`\lambda^0`: above it only :math:`\beta_0` moves."""
        return float(self.lambdas[0])

    @property
    def lambda_end(self) -> float:
        """Smallest lambda at which the path is known (0 with a tail)."""
        return 0.0 if self.tail != "none" else float(self.lambdas[-1])

    def coefficients(self, lam: Any) -> tuple[np.ndarray, np.ndarray]:
        r"""Exact :math:`(\alpha, \alpha_0)` at any :math:`\lambda > 0`.

        Linear interpolation between breakpoints (exact, Theorem 1); above
        :math:`\lambda^0` ``alpha`` is constant and
        :math:`\alpha_0 = \alpha_0^0 + (\lambda - \lambda^0)` ``head_slope``; below the
        last breakpoint the ``tail`` rule applies.

        Parameters
        ----------
        lam : float or array-like of shape (k,)

        Returns
        -------
        alpha : ndarray of shape (k, l)
        alpha0 : ndarray of shape (k,)
        """
        lam = np.atleast_1d(np.asarray(lam, dtype=np.float64))
        if lam.ndim != 1 or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
            raise ValueError("lam must be positive finite number(s).")
        lams = self.lambdas
        lo = float(lams[-1])
        if self.tail == "none" and np.any(lam < lo * (1 - 1e-12)):
            raise ValueError(
                f"lam={lam.min():g} is below the computed path, which stops at "
                f"lambda={lo:g} (reason={self.reason!r}). Lower "
                "lambda_min or raise max_events."
            )
        k = lam.size
        alpha = np.empty((k, self.alphas.shape[1]))
        alpha0 = np.empty(k)
        head = lam >= lams[0]
        alpha[head] = self.alphas[0]
        alpha0[head] = self.alpha0s[0] + (lam[head] - lams[0]) * self.head_slope
        tail = lam < lo
        if tail.any():
            if self.tail == "scale":
                s = lam[tail] / lo
                alpha[tail] = s[:, None] * self.alphas[-1]
                alpha0[tail] = s * self.alpha0s[-1]
            elif self.tail == "linear" and self.tail_slope is not None:
                d = (lam[tail] - lo)[:, None] * self.tail_slope[None, :]
                alpha[tail] = np.clip(self.alphas[-1] + d[:, :-1], 0.0, 1.0)
                alpha0[tail] = self.alpha0s[-1] + d[:, -1]
            else:  # within round-off of the end
                alpha[tail] = self.alphas[-1]
                alpha0[tail] = self.alpha0s[-1]
        mid = ~head & ~tail
        if mid.any():
            # lambdas is decreasing; find j with lams[j] > lam >= lams[j + 1]
            neg = -lams
            j = np.searchsorted(neg, -lam[mid], side="right") - 1
            j = np.clip(j, 0, lams.size - 2)
            hi, lo_ = lams[j], lams[j + 1]
            w = (lam[mid] - lo_) / (hi - lo_)
            alpha[mid] = self.alphas[j + 1] + w[:, None] * (
                self.alphas[j] - self.alphas[j + 1]
            )
            alpha0[mid] = self.alpha0s[j + 1] + w * (
                self.alpha0s[j] - self.alpha0s[j + 1]
            )
        return alpha, alpha0

    def numerators(self, KP: np.ndarray, lam: Any) -> np.ndarray:
        r""":math:`\lambda f_\lambda(x) = \alpha^T P^T k(x) + \alpha_0`.

        Parameters
        ----------
        KP : ndarray of shape (m, l)
            ``k(x)^T P`` for m points (``K_test @ P``).
        lam : float or array-like of shape (k,)

        Returns
        -------
        ndarray of shape (m, k)
        """
        alpha, alpha0 = self.coefficients(lam)
        return KP @ alpha.T + alpha0[None, :]

    def decision_function(self, K_rows: np.ndarray, lam: Any) -> np.ndarray:
        r"""Decision values :math:`f_\lambda(x)` from kernel rows.

        Parameters
        ----------
        K_rows : ndarray of shape (m, n)
            Kernel between m points and the n training points.
        lam : float or array-like of shape (k,)

        Returns
        -------
        ndarray of shape (m,) for a scalar ``lam``, else (m, k)
        """
        if self.P is None:
            raise ValueError("This path was computed without its translating matrix P.")
        scalar = np.ndim(lam) == 0
        lams = np.atleast_1d(np.asarray(lam, dtype=np.float64))
        F = self.numerators(np.asarray(K_rows) @ self.P, lams) / lams[None, :]
        return F[:, 0] if scalar else F

    def expansion(self, lam: float) -> tuple[np.ndarray, float]:
        r"""Expansion :math:`\beta = P\alpha/\lambda` and bias :math:`\beta_0`.

        So that :math:`f(x) = \beta^T k(x) + \beta_0` (paper, Eq. 4).
        """
        if self.P is None:
            raise ValueError("This path was computed without its translating matrix P.")
        alpha, alpha0 = self.coefficients(lam)
        return self.P @ alpha[0] / lam, float(alpha0[0] / lam)


# --------------------------------------------------------------------------- setup
def translating_matrix(
    K: np.ndarray, L: Any, labeled: np.ndarray, y_labeled: np.ndarray, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Translating matrix :math:`P` and the reduced Gram :math:`M`.

    :math:`P = (\rho I + LK)^{-1} J^T Y` (one LU factorisation of an n-by-n
    matrix, no explicit inverse) and :math:`M = J K (\rho I + LK)^{-1} J^T
    = K_{l,:} P Y`, symmetrised.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    L : sparse matrix or ndarray of shape (n, n)
    labeled : ndarray of int of shape (l,)
    y_labeled : ndarray of shape (l,)
        Labels in ``{-1, +1}``.
    rho : float

    Returns
    -------
    P : ndarray of shape (n, l)
    M : ndarray of shape (l, l)
    """
    n = K.shape[0]
    LK = L @ K if sp.issparse(L) else np.asarray(L) @ K
    LK = np.asarray(LK, dtype=np.float64)
    LK[np.diag_indices(n)] += rho
    rhs = np.zeros((n, labeled.size))
    rhs[labeled, np.arange(labeled.size)] = y_labeled
    lu = sla.lu_factor(LK, overwrite_a=True, check_finite=False)
    P = sla.lu_solve(lu, rhs, check_finite=False)
    M = np.asarray(K[labeled], dtype=np.float64) @ (P * y_labeled[None, :])
    M = 0.5 * (M + M.T)
    return P, M


def _check_operands(K: Any, L: Any) -> tuple[np.ndarray, Any]:
    """Validate ``K`` (dense, square, finite) and ``L`` (same shape, finite)."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) Gram matrix, got shape {K.shape}.")
    n = K.shape[0]
    if not np.isfinite(K).all():
        raise ValueError("K contains NaN or infinity.")
    if L.shape != (n, n):
        raise ValueError(f"L must have shape ({n}, {n}) like K, got {L.shape}.")
    Ld = L.data if sp.issparse(L) else np.asarray(L)
    if not np.isfinite(Ld).all():
        raise ValueError("L contains NaN or infinity.")
    return K, L


def _check_targets(Y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, C) targets -> (labeled rows, their ±1 targets (l, C)), validated."""
    Y = as_targets(Y, n)
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    T = Y[lab]
    if np.any(T == 0):
        raise ValueError(
            "Y must label the same rows in every column (one-vs-rest targets): "
            "a labeled row has a 0 in some column."
        )
    one_class = np.flatnonzero(~(np.any(T > 0, axis=0) & np.any(T < 0, axis=0)))
    if one_class.size:
        raise ValueError(
            f"Y column(s) {one_class.tolist()} hold a single class among the labeled "
            "rows; each column needs +1 and -1 targets."
        )
    return lab, T


def lapsvm_path(
    K: Any,
    L: Any,
    Y: Any,
    *,
    rho: float = 1e-3,
    lambda_min: float | None = None,
    max_events: int | None = None,
    tol: float = 1e-10,
) -> list[LapSVMPathResult]:
    r"""Entire regularization path of the Laplacian SVM in :math:`\lambda`.

    Follows :math:`(\alpha(\lambda), \alpha_0(\lambda))` from
    :math:`\lambda = +\infty` down, event by event (Wang et al., Section 3), for
    each column of the targets (one-vs-rest problems share the factorisation of
    :math:`\rho I + LK`).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of all (labeled and unlabeled) training points.
    L : sparse matrix or ndarray of shape (n, n)
        Graph Laplacian of the same points.
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`,
        :func:`~semisvm.solvers._targets.as_targets`): +1 / -1 on labeled rows, 0
        on unlabeled rows, every column labeling the same rows with both classes;
        a 1-D array is one column.  Class labels (-1 for unlabeled points) must be
        encoded first, e.g. by :func:`semisvm.models._problem.encode_targets` (its
        ``Y``).
    rho : float, default=1e-3
        Ratio of ambient to intrinsic regularization (paper's :math:`\rho`).
    lambda_min : float, default=None
        Stop when the path reaches this :math:`\lambda` (a final breakpoint is
        placed there).  ``None``: follow the path until no labeled point is left
        inside the margin (set L empty), no further event occurs, or the next
        event lies below the numerical floor (``reason='lambda_floor'``).
    max_events : int, default=None
        Guard on the number of events; ``None`` means ``max(100, 20 l)``.
    tol : float, default=1e-10
        Relative tolerance that decides when a point is at the elbow.

    Returns
    -------
    list of LapSVMPathResult
        One path per column of ``Y`` (a list of one for a single column).

    Warns
    -----
    PathWarning
        When ties, singular elbow systems, points entering the elbow more than
        once, inexact steps or the ``max_events`` guard were met.

    Notes
    -----
    Between events (Theorem 1),

    .. math::

        \begin{pmatrix}\alpha_0\\ \alpha_\mathcal{E}\end{pmatrix}(\lambda) =
        \begin{pmatrix}\alpha_0^\ell\\ \alpha_\mathcal{E}^\ell\end{pmatrix} +
        (\lambda - \lambda^\ell) A_\mathcal{E}^{-1}
        \begin{pmatrix}0\\ y_\mathcal{E}\end{pmatrix},
        \quad A_\mathcal{E} = \begin{pmatrix}0 & y_\mathcal{E}^T\\
        1 & K_\mathcal{E} P_\mathcal{E}\end{pmatrix}.

    The coefficients of points in L or R stay at 1 or 0.  An event is an
    :math:`\alpha_i, i \in \mathcal{E}`, reaching 0 or 1, or a point outside the
    elbow reaching :math:`y_i f(x_i) = 1`.

    References
    ----------
    G. Wang, T. Chen, D.-Y. Yeung and F. H. Lochovsky, "Solution path for
    semi-supervised classification with manifold regularization", ICDM 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from semisvm.datasets import make_two_moons
    >>> from semisvm.graph import graph_laplacian, knn_graph
    >>> from semisvm.kernels import kernel_matrix
    >>> from semisvm.solvers._path import lapsvm_path
    >>> X, y, _ = make_two_moons(100, n_labeled_per_class=4, random_state=0)
    >>> K = kernel_matrix(X, gamma=2.0)
    >>> L = graph_laplacian(knn_graph(X, 6))
    >>> Y = np.where(y == -1, 0.0, 2.0 * y - 1.0)[:, None]  # y: 0/1, -1 unlabeled
    >>> [path] = lapsvm_path(K, L, Y)
    >>> bool(np.all(np.diff(path.lambdas) < 0)), path.reason
    (True, 'empty_L')
    """
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a positive float, got {plain(rho)!r}.")
    K, L = _check_operands(K, L)
    labeled, T = _check_targets(Y, K.shape[0])
    # M = J K (rho I + L K)^{-1} J^T does not depend on the targets: one LU serves
    # every column, P_c = P_1 diag(t_c)
    P1, M = translating_matrix(K, L, labeled, np.ones(labeled.size), rho)
    paths = []
    for t in T.T:
        res = _solve_path(
            M, t, rho=rho, lambda_min=lambda_min, max_events=max_events, tol=tol
        )
        paths.append(_replace(res, P=P1 * t[None, :], labeled=labeled))
    return paths


def _replace(res: LapSVMPathResult, **kw: Any) -> LapSVMPathResult:
    import dataclasses

    return dataclasses.replace(res, **kw)


# --------------------------------------------------------------------- init (QP)
def _init_unbalanced(
    Q: np.ndarray, y: np.ndarray, maj: np.ndarray, mnr: np.ndarray, notes: list
) -> np.ndarray:
    r"""Lemma 2: :math:`\min \alpha^T Q \alpha` with the minority at 1.

    Subject to :math:`0 \le \alpha_i \le 1` on the majority class and
    :math:`\sum_{maj} \alpha_i = l_{minority}`.

    For every :math:`\lambda \ge \lambda^0` the dual (11) has this solution
    (maximising :math:`\sum\alpha` pins the minority at 1 and the majority sum
    at :math:`l_{minority}`; the quadratic term then picks the Lemma-2 point), and
    :math:`\lambda^0 \le \max_i \sum_j |Q_{ij}|`.  So the QP is solved by LIBSVM
    (:class:`sklearn.svm.SVC` on the precomputed Gram :math:`M/\lambda_{big}`,
    ``C=1``) at :math:`\lambda_{big} = 4 \max_i \sum_j |Q_{ij}|`; SLSQP is the
    fallback.  LIBSVM caches the kernel in single precision, so the active set it
    identifies is then polished by solving the KKT system exactly.
    """
    from sklearn.svm import SVC

    target = float(mnr.sum())
    Qm = Q[np.ix_(maj, maj)]
    c = Q[np.ix_(maj, mnr)].sum(axis=1)
    lam_big = 4.0 * max(1.0, float(np.abs(Q).sum(axis=1).max()))
    G = Q * y[:, None] * y[None, :] / lam_big
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10, max_iter=-1)
    svc.fit(G, y)
    a_svc = np.zeros(y.size)
    a_svc[svc.support_] = np.abs(svc.dual_coef_[0])
    x = np.clip(a_svc[maj], 0.0, 1.0)
    polished = _polish_box_qp(Qm, c, target, x)
    if polished is None:
        x = _slsqp_box_qp(Qm, c, target)
        polished = _polish_box_qp(Qm, c, target, x)
    if polished is None:
        notes.append(
            "the unbalanced initial QP (Lemma 2) could not be polished to an exact "
            "KKT point; the SLSQP solution was used"
        )
        polished = x
    alpha = np.ones(Q.shape[0])
    alpha[maj] = polished
    return alpha


def _slsqp_box_qp(Qm: np.ndarray, c: np.ndarray, target: float) -> np.ndarray:
    """min ½xᵀQx + cᵀx, 0 ≤ x ≤ 1, Σx = target, by SLSQP."""
    p = c.size
    scale = max(1.0, float(np.abs(Qm).max()))

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = Qm @ x + c
        return float(0.5 * x @ (g + c)) / scale, g / scale

    opt = minimize(
        fun,
        np.full(p, target / p),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * p,
        constraints=[
            {
                "type": "eq",
                "fun": lambda x: x.sum() - target,
                "jac": lambda x: np.ones(p),
            }
        ],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    return np.clip(opt.x, 0.0, 1.0)


def _polish_box_qp(
    Qm: np.ndarray, c: np.ndarray, target: float, x: np.ndarray
) -> np.ndarray | None:
    """Exact KKT point of min ½xᵀQx + cᵀx, 0≤x≤1, Σx = target, near ``x``."""
    p = x.size
    tb = 1e-7
    state = np.where(x <= tb, 0, np.where(x >= 1 - tb, 2, 1))  # 0 low,1 free,2 up
    scale = max(1.0, float(np.abs(Qm).max()) * p)
    for _ in range(4 * p + 10):
        F = np.flatnonzero(state == 1)
        xs = np.where(state == 2, 1.0, 0.0)
        rest = target - xs.sum()
        if F.size:
            m = F.size
            A = np.zeros((m + 1, m + 1))
            A[:m, :m] = Qm[np.ix_(F, F)]
            A[:m, m] = 1.0
            A[m, :m] = 1.0
            b = np.r_[-(c[F] + Qm[F] @ xs), rest]
            sol, *_ = np.linalg.lstsq(A, b, rcond=1e-13)
            if np.linalg.norm(A @ sol - b) > 1e-9 * (1 + np.linalg.norm(b)):
                return None
            xs[F] = sol[:m]
            nu = sol[m]
            out = np.minimum(xs[F], 1.0 - xs[F])
            if out.min() < -1e-12:
                j = F[np.argmin(out)]
                state[j] = 0 if xs[j] < 0.5 else 2
                continue
            r = Qm @ xs + c + nu
        else:
            if abs(rest) > 1e-9:
                return None
            r0 = Qm @ xs + c
            lo_ = state == 0
            up_ = state == 2
            # need r0 + nu >= 0 on lower, <= 0 on upper
            nu_lo = -r0[lo_].min() if lo_.any() else -np.inf
            nu_hi = -r0[up_].max() if up_.any() else np.inf
            if nu_lo <= nu_hi + 1e-12 * scale:
                return np.clip(xs, 0.0, 1.0)
            # free the worst pair
            i_up = np.flatnonzero(up_)[np.argmax(r0[up_])]
            i_lo = np.flatnonzero(lo_)[np.argmin(r0[lo_])]
            state[[i_up, i_lo]] = 1
            continue
        viol_lo = np.where(state == 0, -r, -np.inf)
        viol_up = np.where(state == 2, r, -np.inf)
        worst = max(viol_lo.max(), viol_up.max())
        if worst <= 1e-10 * scale:
            return np.clip(xs, 0.0, 1.0)
        j = int(np.argmax(np.maximum(viol_lo, viol_up)))
        state[j] = 1
    return None


# ------------------------------------------------------------------- directions
_getrf, _gecon, _getrs = sla.get_lapack_funcs(
    ("getrf", "gecon", "getrs"), (np.empty(0, dtype=np.float64),)
)


def _saddle_solve(
    Q: np.ndarray, y: np.ndarray, E: np.ndarray, top: np.ndarray, bottom: float
) -> tuple[np.ndarray | None, bool]:
    """Solve [[Q_EE, y_E], [y_Eᵀ, 0]] x = [top; bottom] (least squares if singular).

    Returns the solution (None if the singular system is inconsistent) and
    whether the system was singular.

    The system is singular when sigma_min <= ``path_singular`` sigma_max. An LU
    factorization with LAPACK's 1-norm condition estimate decides the clear cases
    at a tenth of an SVD's cost: kappa_2 <= (m + 1) kappa_1, and the estimate of
    kappa_1 is within a factor 3 of it in practice (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 15.3), so an estimate below
    1 / (10 (m + 1) path_singular) is nonsingular by the SVD's test too. Every
    other system goes to the SVD, as before.
    """
    m = E.size
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = Q[np.ix_(E, E)]
    A[:m, m] = y[E]
    A[m, :m] = y[E]
    b = np.r_[top, bottom]
    lu, piv, info = _getrf(A)
    if info == 0:
        rcond, _ = _gecon(lu, np.abs(A).sum(axis=0).max(), norm="1")
        if rcond > 10.0 * (m + 1) * _TOL.path_singular:
            x, _ = _getrs(lu, piv, b)
            return x, False
    U, s, Vt = np.linalg.svd(A)
    if s[-1] > _TOL.path_singular * s[0]:
        return Vt.T @ ((U.T @ b) / s), False
    keep = s > _TOL.path_rank * s[0]
    x = Vt[keep].T @ ((U[:, keep].T @ b) / s[keep])
    if np.linalg.norm(A @ x - b) > _TOL.path_consistent * (1.0 + np.linalg.norm(b)):
        return None, True
    return x, True


@dataclass
class _Direction:
    E: np.ndarray  # elbow on the coming segment (sorted)
    a: np.ndarray  # d alpha / dt (t = lambda^l - lambda), full length l
    a0: float  # d alpha_0 / dt
    dh: np.ndarray  # d h / dt, full length l
    singular: bool
    violation: float


def _try_direction(
    Q: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    free: np.ndarray,
    bound: np.ndarray,
    stay: np.ndarray,
    tol: float,
) -> _Direction | None:
    """Direction with elbow ``free ∪ bound[stay]``; None if the system is inconsistent."""
    E = np.sort(np.r_[free, bound[stay]]).astype(np.intp)
    l = y.size
    if E.size:
        sol, singular = _saddle_solve(Q, y, E, -np.ones(E.size), 0.0)
    else:
        sol, singular = np.zeros(1), True  # alpha_0 undetermined: keep it fixed
    if sol is None:
        return None
    a = np.zeros(l)
    a[E] = sol[:-1]
    a0 = float(sol[-1])
    dh = Q[:, E] @ a[E] + y * a0 + 1.0
    sa = tol * max(1.0, float(np.abs(a).max()))
    sh = tol * max(1.0, float(np.abs(dh).max()))
    viol = 0.0
    for k, i in enumerate(bound):
        at_one = alpha[i] == 1.0
        if stay[k]:
            v = (a[i] - sa) if at_one else (-a[i] - sa)
        else:
            v = (dh[i] - sh) if at_one else (-dh[i] - sh)
        viol += max(v, 0.0)
    # clean round-off that would point outside the box
    for i in bound[stay]:
        if (alpha[i] == 1.0 and a[i] > 0) or (alpha[i] == 0.0 and a[i] < 0):
            a[i] = 0.0
    return _Direction(E, a, a0, dh, singular, viol)


def _qp_direction_guess(
    Q: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: np.ndarray
) -> np.ndarray:
    """Elbow guess from the directional QP, solved with SLSQP.

    min ½aᵀQ_CC a + 1ᵀa, y_Cᵀa = 0, a ≥ 0 where alpha = 0, a ≤ 0 where alpha = 1.
    Returns a boolean mask over C of the points that stay on the elbow.
    """
    Qc = Q[np.ix_(C, C)]
    yc = y[C]
    bounds = [
        (0.0, None)
        if alpha[i] == 0.0
        else (None, 0.0)
        if alpha[i] == 1.0
        else (None, None)
        for i in C
    ]
    opt = minimize(
        lambda a: (0.5 * a @ Qc @ a + a.sum(), Qc @ a + 1.0),
        np.zeros(C.size),
        jac=True,
        method="SLSQP",
        bounds=bounds,
        constraints=[{"type": "eq", "fun": lambda a: yc @ a, "jac": lambda a: yc}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    a = opt.x
    # multiplier of the equality from the free/moving coordinates
    g = Qc @ a + 1.0
    mov = np.abs(a) > 1e-8 * max(1.0, np.abs(a).max())
    a0 = -float(np.median(g[mov] * yc[mov])) if mov.any() else 0.0
    dh = g + yc * a0
    return mov | (np.abs(dh) < 1e-6 * max(1.0, np.abs(dh).max()))


def _direction(
    Q: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    C: np.ndarray,
    guess: set,
    tol: float,
) -> tuple[_Direction, bool, bool]:
    """Elbow set and direction at a breakpoint.

    Returns the direction, whether the obvious guess failed (a degenerate
    breakpoint), and whether no consistent direction was found (inexact).
    """
    ac = alpha[C]
    free = C[(ac > 0.0) & (ac < 1.0)]
    bound = C[(ac == 0.0) | (ac == 1.0)]
    g0 = np.array([i in guess for i in bound], dtype=bool)
    best: _Direction | None = None

    def consider(stay: np.ndarray) -> _Direction | None:
        """The direction if consistent (no violation); keeps the least violating."""
        nonlocal best
        d = _try_direction(Q, y, alpha, free, bound, stay, tol)
        if d is None:
            return None
        if best is None or d.violation < best.violation:
            best = d
        return d if d.violation == 0.0 else None

    if (d := consider(g0)) is not None:
        return d, False, False
    nb = bound.size
    max_flip = nb if nb <= _MAX_ENUM else 2
    for k in range(1, max_flip + 1):
        for flips in itertools.combinations(range(nb), k):
            stay = g0.copy()
            stay[list(flips)] = ~stay[list(flips)]
            if (d := consider(stay)) is not None:
                return d, True, False
    if nb > _MAX_ENUM:
        mask = _qp_direction_guess(Q, y, alpha, C)
        stay = np.array([mask[np.searchsorted(C, i)] for i in bound], dtype=bool)
        if (d := consider(stay)) is not None:
            return d, True, False
    if best is None:  # every candidate system inconsistent: freeze the elbow
        E = np.sort(free).astype(np.intp)
        best = _Direction(E, np.zeros(y.size), 0.0, np.ones(y.size), True, np.inf)
    return best, True, True


# ----------------------------------------------------------------------- path
def _solve_path(
    M: np.ndarray,
    y: np.ndarray,
    *,
    rho: float = 1e-3,
    lambda_min: float | None = None,
    max_events: int | None = None,
    tol: float = 1e-10,
    warn: bool = True,
) -> LapSVMPathResult:
    """Path over the reduced l x l problem (``M`` symmetric PSD, ``y`` in ±1)."""
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.abs(y) == 1.0):
        raise ValueError(
            "_solve_path takes the labeled points' targets in {-1, +1}; got values "
            f"{np.unique(y)[:5].tolist()}. (lapsvm_path takes the (n, 1) targets.)"
        )
    if lambda_min is None:
        lambda_min = 0.0
    if lambda_min < 0 or not np.isfinite(lambda_min):
        raise ValueError(
            f"lambda_min must be a finite float >= 0, got {plain(lambda_min)!r}."
        )
    if max_events is None:
        max_events = max(100, 20 * y.size)
    path = _PathFollower(M, y, lambda_min=lambda_min, tol=tol)
    while True:
        d = path.breakpoint()
        if not (path.state == _L).any():
            path.reason, path.tail = "empty_L", "scale"
            break
        if path.n_events >= max_events:
            path.reason = "max_events"
            path.notes.append(
                f"stopped after max_events={max_events} events at "
                f"lambda={path.lam:g}; raise max_events to follow the path further"
            )
            break
        if not path.advance(d):
            break
    return path.result(rho, warn)


class _PathFollower:
    r"""State of the path between two breakpoints, one method per phase.

    ``alpha, a0, lam`` the current point; ``h`` the slacks; ``C`` the candidate
    elbow at the current breakpoint and ``guess`` the obvious elbow update;
    ``state`` the set (R, E, L) of every labeled point; the recorded breakpoints
    and the counters of degenerate situations.

    Notes
    -----
    * Everything after the translating matrix works on the ``l x l`` matrix
      :math:`M = J K (\rho I + LK)^{-1} J^T` (symmetric positive semi-definite;
      :math:`Q = YMY`), so the path costs :math:`O(l^2)` per event plus an
      :math:`O(m^3)` solve with :math:`m = |\mathcal{E}|`.
    * The margin slack of labeled point ``i`` is tracked as
      :math:`h_i = y_i(\alpha^T P^T k(x_i) + \alpha_0) - \lambda = (Q\alpha)_i +
      y_i\alpha_0 - \lambda`: ``h > 0`` is the set R (outside the margin,
      ``alpha = 0``), ``h < 0`` the set L (inside, ``alpha = 1``), ``h = 0`` the
      elbow E.
    * On a segment, Eq. (18) reads (with :math:`t = \lambda^\ell - \lambda`)
      :math:`Q_{EE}\,\dot\alpha_E + y_E\,\dot\alpha_0 = -1,\ y_E^T\dot\alpha_E = 0`,
      a symmetric saddle-point system equivalent to the paper's
      :math:`A_\mathcal{E}` system.
    * At each breakpoint the new elbow set is the one that makes the *direction*
      consistent: points at a bound that stay in E must move into ``[0, 1]``,
      points that leave E must move to the side that matches their ``alpha``.
      This is the optimality condition of a small QP (the directional derivative
      of the parametric dual).  The obvious update of E (the point that
      triggered the event enters or leaves) is tried first; ties (several
      events at one :math:`\lambda`) and singular elbow systems fall back to an
      enumeration of the candidate sets (then to SLSQP on that QP) and are
      reported in a :class:`PathWarning`.
    * Initialisation: balanced classes use Lemma 1 (Eq. 14-17); unbalanced
      classes use Lemma 2, a box-constrained QP solved with LIBSVM
      (scikit-learn's ``SVC``; SLSQP as fallback) and then polished by an exact
      active-set solve of its KKT system.
    """

    def __init__(
        self, M: np.ndarray, y: np.ndarray, *, lambda_min: float, tol: float
    ) -> None:
        self.M, self.y, self.tol, self.lambda_min = M, y, tol, lambda_min
        self.Q = M * y[:, None] * y[None, :]
        self.tols = tolerances(np.float64)
        self.notes: list[str] = []
        self.lambdas: list = []
        self.alphas: list = []
        self.alpha0s: list = []
        self.elbows: list = []
        self.events: list = []
        self.n_events = self.n_ties = self.n_singular = 0
        self.n_reentries = self.n_inexact = self.n_degenerate = 0
        self.reason = ""  # set by the loop before result()
        self.tail, self.tail_slope = "none", None
        self.first = True
        self._initialise()

    def slack(self, alpha: np.ndarray, a0: float, lam: float) -> np.ndarray:
        """h = Q alpha + y alpha_0 - lambda."""
        return self.Q @ alpha + self.y * a0 - lam

    def htol(self, lam: float, a0: float) -> float:
        """Absolute tolerance of h = 0 (the elbow)."""
        return self.tol * (self.scale_u + abs(a0) + lam)

    def _initialise(self) -> None:
        """lambda^0 and the coefficients there (Lemma 1 or Lemma 2)."""
        Q, y = self.Q, self.y
        n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
        if n_pos == n_neg:
            self.init, s, alpha = "balanced", 1.0, np.ones(y.size)
        else:
            self.init = "unbalanced"
            s = 1.0 if n_pos > n_neg else -1.0
            alpha = _init_unbalanced(Q, y, y == s, y == -s, self.notes)
        maj = y == s
        mnr = ~maj
        u = Q @ alpha
        frac = maj & (alpha > 0) & (alpha < 1)
        if frac.any():
            u_c = float(u[frac].mean())
        else:
            u_c = float(u[maj & (alpha == 1.0)].max())
        lam = float(((u[mnr] + u_c) / 2.0).max())
        self.scale_u = max(1.0, float(np.abs(Q).sum(axis=1).max()))
        self.lam_floor = self.tols.path_lambda_floor * self.scale_u
        if not lam > 1e-12 * self.scale_u:
            raise ValueError(
                "Degenerate path: the labeled points cannot be separated by the "
                f"kernel (lambda^0 = {lam:g} <= 0). Check for identical points with "
                "opposite labels or a constant kernel."
            )
        a0 = s * (lam - u_c)
        # Above lambda^0 alpha is fixed and the KKT conditions only ask
        # h_i = u_i + y_i alpha_0 - lambda <= 0 on L (and = 0 on a fractional
        # majority point).  Balanced: alpha_0 in [max_neg u - lambda, lambda -
        # max_pos u], an interval growing with slope -1 / +1 around alpha_0^0, so a
        # constant alpha_0 stays optimal (it is the interval's midpoint, LIBSVM's
        # choice); slope beta_0^0 = alpha_0^0 / lambda^0 would leave it when
        # |beta_0^0| > 1.  Unbalanced: the fractional majority points pin the slope.
        self.head_slope = 0.0 if self.init == "balanced" else s
        self.alpha, self.a0, self.lam = alpha, a0, lam
        self.h = h = self.slack(alpha, a0, lam)
        C = set(np.flatnonzero(np.abs(h) <= self.htol(lam, a0)).tolist())
        C |= set(np.flatnonzero(frac).tolist())
        C.add(int(np.flatnonzero(mnr)[np.argmax(u[mnr])]))
        if not frac.any():
            cand = np.flatnonzero(maj & (alpha == 1.0))
            C.add(int(cand[np.argmax(u[cand])]))
        self.C, self.guess = C, set(C)
        expected_init = (int(frac.sum()) if frac.any() else 1) + 1
        self.state = np.where(alpha == 1.0, _L, _R)
        self.state[frac] = _E
        self.entries = (self.state == _E).astype(int)
        if len(C) > expected_init:
            self.n_ties += 1

    def breakpoint(self) -> _Direction:
        """Elbow set and direction at the current breakpoint, recorded."""
        alpha = self.alpha
        self.Carr = np.array(sorted(self.C), dtype=np.intp)
        d, degenerate, inexact = _direction(
            self.Q, self.y, alpha, self.Carr, self.guess, self.tols.path_direction
        )
        self.n_singular += int(d.singular and d.E.size > 0)
        self.n_degenerate += int(degenerate)
        self.n_inexact += int(inexact)
        new_state = np.where(alpha == 1.0, _L, _R)
        new_state[d.E] = _E
        changes = tuple(
            (int(i), _STATE_NAME[self.state[i]], _STATE_NAME[new_state[i]])
            for i in np.flatnonzero(new_state != self.state)
        )
        entered = np.flatnonzero((new_state == _E) & (self.state != _E))
        self.n_reentries += int((self.entries[entered] > 0).sum())
        self.entries[entered] += 1
        self.state = new_state
        if not self.first and len(changes) > 1:
            self.n_ties += 1
        if not self.first and changes:
            self.n_events += 1
        self._record(d.E, changes)
        self.first = False
        return d

    def _record(self, E: np.ndarray, changes: tuple) -> None:
        self.lambdas.append(self.lam)
        self.alphas.append(self.alpha.copy())
        self.alpha0s.append(self.a0)
        self.elbows.append(E.copy())
        self.events.append(changes)

    def advance(self, d: _Direction) -> bool:
        """Move to the next event along ``d``; False when the path ends instead."""
        a, da0, dh, h, alpha, lam = d.a, d.a0, d.dh, self.h, self.alpha, self.lam
        l = self.y.size
        inE = np.zeros(l, dtype=bool)
        inE[d.E] = True
        t_ev = np.full(l, np.inf)
        kind = np.zeros(l, dtype=int)  # 1: alpha hits a bound, 2: h hits 0
        sa = self.tols.path_moving * max(1.0, float(np.abs(a).max()))
        up = inE & (a > sa)
        dn = inE & (a < -sa)
        t_ev[up] = (1.0 - alpha[up]) / a[up]
        t_ev[dn] = alpha[dn] / -a[dn]
        kind[up | dn] = 1
        outside = ~inE & ~np.isin(np.arange(l), self.Carr)
        cross = outside & (h * dh < 0)
        t_ev[cross] = -h[cross] / dh[cross]
        kind[cross] = 2
        t_star = float(t_ev.min())
        # an event below the floor cannot be resolved in double precision
        below_floor = bool(0.0 < lam - t_star < self.lam_floor)
        if not np.isfinite(t_star) or t_star >= lam - self.lambda_min or below_floor:
            self._finish(d, below_floor)
            return False
        tols = self.tols
        hit = np.flatnonzero(
            t_ev <= t_star * (1.0 + tols.path_hit_rtol) + tols.path_hit_atol * lam
        )
        alpha = alpha + t_star * a
        a0 = self.a0 + t_star * da0
        lam = lam - t_star
        for i in hit:
            if kind[i] == 1:
                alpha[i] = 1.0 if a[i] > 0 else 0.0
        # snap elbow coefficients sitting on a bound within round-off
        near0 = inE & (np.abs(alpha) <= tols.path_snap)
        near1 = inE & (np.abs(alpha - 1.0) <= tols.path_snap)
        alpha[near0] = 0.0
        alpha[near1] = 1.0
        alpha = np.clip(alpha, 0.0, 1.0)
        alpha, a0 = _recenter(self.Q, self.y, alpha, a0, lam, d.E)
        self.alpha, self.a0, self.lam = alpha, a0, lam
        self.h = self.slack(alpha, a0, lam)
        C = set(d.E.tolist()) | set(hit.tolist())
        C |= set(np.flatnonzero(np.abs(self.h) <= self.htol(lam, a0)).tolist())
        self.C = C
        self.guess = (set(d.E.tolist()) - {int(i) for i in hit if kind[i] == 1}) | {
            int(i) for i in hit if kind[i] == 2
        }
        return True

    def _finish(self, d: _Direction, below_floor: bool) -> None:
        """No event above the stop: end at lambda_min, at the floor, or with a tail."""
        lambda_min, lam_floor, lam = self.lambda_min, self.lam_floor, self.lam
        if not (below_floor or lambda_min > 0):
            self.reason, self.tail = "no_more_events", "linear"
            self.tail_slope = -np.r_[d.a, d.a0]
            return
        stop = lambda_min if lambda_min >= lam_floor else lam_floor
        t_room = lam - stop
        if t_room > 0:
            self.alpha = np.clip(self.alpha + t_room * d.a, 0.0, 1.0)
            self.a0 = self.a0 + t_room * d.a0
            self.lam = stop
            self._record(d.E, ())
        if lambda_min >= lam_floor:
            self.reason = "lambda_min"
            return
        self.reason = "lambda_floor"
        self.notes.append(
            f"the next event lies below lambda={lam_floor:.3g} "
            f"(= {self.tols.path_lambda_floor:g} x the scale of the labeled Gram "
            "matrix), where the margins can no longer be resolved in double "
            "precision (labels not separable by the kernel); the path stops there"
        )

    def _warn(self) -> None:
        notes = self.notes
        if self.n_ties:
            notes.append(
                f"{self.n_ties} breakpoint(s) with several simultaneous events (ties); "
                "resolved by choosing the elbow set whose direction is consistent"
            )
        if self.n_singular:
            notes.append(
                f"{self.n_singular} singular elbow system(s) (e.g. duplicate labeled "
                "points); solved in the least-squares sense"
            )
        if self.n_reentries:
            notes.append(
                f"{self.n_reentries} elbow entr(y/ies) by points that had passed "
                "through the elbow before"
            )
        if self.n_inexact:
            notes.append(
                f"{self.n_inexact} breakpoint(s) where no consistent elbow set was "
                "found; stepped past with the least-violating direction (path may be "
                "inexact)"
            )

    def result(self, rho: float, warn: bool) -> LapSVMPathResult:
        self._warn()
        if warn and self.notes:
            warnings.warn(
                "LapSVM path: " + "; ".join(self.notes) + ".",
                PathWarning,
                stacklevel=4,
            )
        return LapSVMPathResult(
            lambdas=np.asarray(self.lambdas),
            alphas=np.asarray(self.alphas),
            alpha0s=np.asarray(self.alpha0s),
            labeled=np.arange(self.y.size),
            y_labeled=self.y,
            elbows=tuple(self.elbows),
            events=tuple(self.events),
            n_events=self.n_events,
            reason=self.reason,
            init=self.init,
            head_slope=float(self.head_slope),
            tail=self.tail,
            tail_slope=self.tail_slope,
            rho=float(rho),
            M=self.M,
            n_ties=self.n_ties,
            n_singular=self.n_singular,
            n_reentries=self.n_reentries,
            n_inexact=self.n_inexact,
            messages=tuple(self.notes),
        )


def _recenter(
    Q: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    a0: float,
    lam: float,
    E: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Remove drift: put the free elbow points exactly on y f = 1, yᵀα = 0.

    Applied only when the correction is at round-off level and keeps
    ``alpha`` strictly inside the box.
    """
    E = E[(alpha[E] > 0.0) & (alpha[E] < 1.0)]
    if E.size == 0:
        return alpha, a0
    N = np.setdiff1d(np.arange(y.size), E)
    top = lam - Q[np.ix_(E, N)] @ alpha[N]
    sol, singular = _saddle_solve(Q, y, E, top, -float(y[N] @ alpha[N]))
    if sol is None or singular:
        return alpha, a0
    new = sol[:-1]
    if (
        np.abs(new - alpha[E]).max() > _TOL.path_recenter
        or new.min() <= 0
        or new.max() >= 1
    ):
        return alpha, a0
    alpha = alpha.copy()
    alpha[E] = new
    return alpha, float(sol[-1])
