r"""Kernel L2-SVM (squared hinge loss) trained in the primal by Newton's method.

The problem, for a Gram matrix :math:`K`, targets :math:`y_i \in \{-1, 0, +1\}`
and per-sample costs :math:`C_i \ge 0`, is

.. math::

    \min_{\alpha, b}\; \tfrac12 \alpha^\top K \alpha
    + \sum_i C_i \max(0, 1 - y_i f_i)^2, \qquad f = K\alpha + b\,\mathbf 1,

which equals :math:`\tfrac12\|f\|_{\mathcal H}^2 + C\sum_{L}\ell + C^\star
\sum_{U}\ell` when the labeled points carry ``C`` and the (labeled) unlabeled
points carry ``C_star``.  Points with ``C_i = 0`` or ``y_i = 0`` do not enter the
objective but still receive a decision value ``f_i`` (the branch and bound uses
it to pick the next point to branch on).

Newton's method on the error-vector set (Chapelle, 2007).  Let
:math:`E = \{i : C_i > 0,\ y_i f_i < 1\}`.  On the region where :math:`E` is fixed
the objective is quadratic and its minimiser has :math:`\alpha_i = 0` outside
:math:`E` and solves

.. math::

    \begin{pmatrix} K_{EE} + D_E & \mathbf 1 \\ \mathbf 1^\top & 0 \end{pmatrix}
    \begin{pmatrix} \alpha_E \\ b \end{pmatrix}
    = \begin{pmatrix} y_E \\ 0 \end{pmatrix},
    \qquad D = \operatorname{diag}\bigl(1 / (2 C_i)\bigr),

i.e. the Newton step.  The step is followed by an exact line search on the
convex piecewise quadratic objective, and the iteration stops when the error set
no longer changes: the KKT conditions
:math:`\alpha_i = 2 C_i y_i \max(0, 1 - y_i f_i)`, :math:`\sum_i \alpha_i = 0`
then hold exactly (up to rounding).  Only an :math:`|E| \times |E|` system is
factorised, so warm starts from a neighbouring problem (the branch and bound
adds one point at a time) typically converge in one or two steps.

References
----------
O. Chapelle, "Training a support vector machine in the primal", Neural
Computation 19(5), 2007.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, LinAlgWarning, cho_solve
from scipy.linalg.lapack import dpotrf, dpotrs

from ._result import SolverResult
from ._targets import as_targets

__all__ = ["L2SVMResult", "l2svm_primal", "l2svm_objective", "add_point_bounds"]


@dataclass(frozen=True, kw_only=True)
class L2SVMResult(SolverResult):
    """Outcome of :func:`l2svm_primal` (one problem, one column).

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Expansion coefficients (zero outside the error set).
    b : float
        Bias.
    objective : float
        Primal objective at ``(alpha, b)``.
    f : ndarray of shape (n,)
        Decision values ``K @ alpha + b`` at every point, including those with
        zero cost.
    error_set : ndarray of int
        Indices of the error vectors ``{i : C_i > 0, y_i f_i < 1}``.
    n_iter : int
        Newton steps taken.
    converged : bool
        ``True`` if the error set stabilised before ``max_iter``.
    reason : str
        Why the solver stopped (:data:`~semisvm.solvers.STOP_REASONS`):
        ``"error_vectors"`` (the error set stopped changing: exact optimum),
        ``"direct"`` (no point in the problem, or one class without error
        vector: the closed-form optimum) or ``"max_iter"``.
    factor : tuple or None
        Cholesky factor ``(c, lower)`` (the format of
        :func:`scipy.linalg.cho_factor`, lower triangle valid) of
        :math:`K_{EE} + D_E` for the final error set when converged, else
        ``None``.  Lets callers bound the effect of adding a point
        (:func:`add_point_bounds`).
    """

    alpha: np.ndarray
    b: float
    objective: float
    f: np.ndarray
    error_set: np.ndarray
    n_iter: int
    converged: bool
    reason: str
    factor: tuple | None = None


def l2svm_objective(
    K: np.ndarray, y: np.ndarray, cost: np.ndarray, alpha: np.ndarray, b: float
) -> float:
    r"""Primal objective :math:`\frac12\alpha^\top K\alpha + \sum_i C_i
    \max(0, 1 - y_i f_i)^2` (reference implementation, dense products)."""
    f = K @ alpha + b
    slack = np.maximum(0.0, 1.0 - y * f)
    return float(0.5 * alpha @ (K @ alpha) + np.sum(cost * slack**2))


def _chol_solve(factor: tuple, rhs: np.ndarray) -> np.ndarray:
    """``A^{-1} rhs`` from a ``(c, lower)`` Cholesky factor (LAPACK ``potrs``).

    Calls LAPACK directly: the branch and bound solves thousands of tiny
    systems, for which the checks of :func:`scipy.linalg.cho_solve` cost more
    than the solve.
    """
    x, info = dpotrs(factor[0], rhs, lower=1)
    if info != 0:  # pragma: no cover - invalid argument, cannot happen here
        return cho_solve(factor, rhs, check_finite=False)
    return x


def _solve_on_set(
    K: np.ndarray, y: np.ndarray, cost: np.ndarray, E: np.ndarray
) -> tuple[np.ndarray, float, tuple | None]:
    """Minimiser of the quadratic piece with error set ``E`` (the Newton point)."""
    A = K[E[:, None], E]
    A.flat[:: E.size + 1] += 0.5 / cost[E]
    rhs = np.empty((E.size, 2))
    rhs[:, 0] = y[E]
    rhs[:, 1] = 1.0
    c, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)
    if info == 0:
        cf = (c, True)
        uv = _chol_solve(cf, rhs)
    else:  # K not PSD to rounding: fall back on a generic solve
        cf = None
        A = K[E[:, None], E]
        A.flat[:: E.size + 1] += 0.5 / cost[E]
        try:
            uv = np.linalg.solve(A, rhs)
        except LinAlgError:
            warnings.warn(
                f"l2svm_primal: the system K_EE + diag(1/(2 C_E)) of {E.size} error "
                "vectors is singular (K is not positive semi-definite); it was "
                "solved in the least-squares sense. Remedy: use a positive "
                "semi-definite kernel, or lower the costs C (a larger diagonal).",
                LinAlgWarning,
                stacklevel=3,
            )
            uv = np.linalg.lstsq(A, rhs, rcond=None)[0]
    u, v = uv[:, 0], uv[:, 1]
    b = float(u.sum() / v.sum())
    return u - b * v, b, cf


def _line_search(
    y: np.ndarray,
    cost: np.ndarray,
    active: np.ndarray,
    f: np.ndarray,
    g: np.ndarray,
    c1: float,
    c2: float,
) -> float:
    r"""Exact minimiser over :math:`t \ge 0` of the convex piecewise quadratic

    :math:`\phi(t) = \frac12 c_2 t^2 + c_1 t + \sum_i C_i\max(0, r_i - t m_i)^2`
    with :math:`r = 1 - y f`, :math:`m = y g` (sum over ``active``).
    """
    c = cost[active]
    r = 1.0 - y[active] * f[active]
    m = y[active] * g[active]
    nz = m != 0.0
    c, r, m = c[nz], r[nz], m[nz]
    # fast path: phi' is continuous (squared hinge is C^1), so t = 1 (the
    # Newton point) is the minimiser iff phi'(1) = 0 to rounding.
    cm = c * m
    h1 = np.maximum(r - m, 0.0)
    d1 = c1 + c2 - 2.0 * float(cm @ h1)
    scale = abs(c1) + abs(c2) + 2.0 * float(np.abs(cm) @ (np.abs(r) + np.abs(m)))
    if abs(d1) <= 1e-12 * max(scale, 1.0):
        return 1.0
    # phi'(t) = c1 + c2 t - 2 sum_{i in S(t)} c_i m_i (r_i - t m_i),
    # S(t) = {i : r_i - t m_i > 0}; membership flips at t_i = r_i / m_i.
    tb = r / m
    # at t = 0+: members are r > 0, or r == 0 and m < 0
    member0 = (r > 0) | ((r == 0) & (m < 0))
    s_cmr = float(np.sum((c * m * r)[member0]))
    s_cmm = float(np.sum((c * m * m)[member0]))
    # events with t_i > 0 (or == 0 for entering points that start with r == 0)
    fut = (tb > 0) | ((tb == 0) & (m < 0) & ~member0)
    order = np.argsort(tb[fut], kind="stable")
    tev = tb[fut][order]
    # entering (m < 0, not member yet) adds; leaving (m > 0, member) removes
    sign = np.where(m[fut][order] < 0, 1.0, -1.0)
    d_cmr = sign * (c * m * r)[fut][order]
    d_cmm = sign * (c * m * m)[fut][order]
    t_lo = 0.0
    for k in range(tev.size + 1):
        slope = c2 + 2.0 * s_cmm
        lin = c1 - 2.0 * s_cmr
        if slope > 0:
            t_star = -lin / slope
        else:  # phi linear on this piece
            t_star = t_lo if lin >= 0 else np.inf
        t_hi = tev[k] if k < tev.size else np.inf
        if t_star <= t_hi:
            return max(t_star, t_lo)
        t_lo = t_hi
        s_cmr += d_cmr[k]
        s_cmm += d_cmm[k]
    return t_lo  # pragma: no cover - unbounded ray (not for a valid problem)


def l2svm_primal(
    K: np.ndarray,
    y: np.ndarray,
    cost: np.ndarray,
    *,
    alpha0: np.ndarray | None = None,
    b0: float | None = None,
    f0: np.ndarray | None = None,
    max_iter: int = 100,
) -> L2SVMResult:
    r"""Train a kernel L2-SVM in the primal with Newton steps on the error set.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix (float64, symmetric positive semi-definite).
    y : ndarray of shape (n,) or (n, 1)
        Targets in the solvers' convention (:mod:`semisvm.solvers`,
        :func:`~semisvm.solvers._targets.as_targets`) for one column: +1 / -1,
        and ``0`` for a point that is not in the problem.
    cost : ndarray of shape (n,)
        Per-sample costs :math:`C_i \ge 0` (``C`` for labeled, ``C_star`` for
        unlabeled points); points with zero cost are not in the problem.
    alpha0, b0 : ndarray of shape (n,) and float, default=None
        Warm start (e.g. the solution of a problem with one point fewer). Not
        modified.
    f0 : ndarray of shape (n,), default=None
        ``K @ alpha0 + b0`` if already known (saves one product).
    max_iter : int, default=100
        Maximum number of Newton steps.

    Returns
    -------
    result : L2SVMResult

    Notes
    -----
    Objective :math:`\frac12\alpha^\top K\alpha + \sum_i C_i\max(0, 1-y_if_i)^2`,
    :math:`f = K\alpha + b`.  Each step solves the bordered system of the current
    error set :math:`E` (module docstring) by a Cholesky factorisation of
    :math:`K_{EE} + D_E` and a Schur complement for :math:`b`, then takes the
    exact line-search step along the Newton direction.  Stopping rule: the error
    set computed at the new point equals the one the step was solved on (and the
    full step was taken), which is exact optimality.  Without any point in the
    problem, or with one class only and no error vector, ``alpha = 0``.

    References
    ----------
    O. Chapelle, "Training a support vector machine in the primal", Neural
    Computation 19(5), 2007.
    """
    n = K.shape[0]
    Y = as_targets(y, n, name="y")
    if Y.shape[1] != 1:
        raise ValueError(
            f"l2svm_primal solves one problem: y must have shape ({n},) or ({n}, 1), "
            f"got {Y.shape}."
        )
    y = Y[:, 0]
    cost = np.asarray(cost, dtype=np.float64)
    active = (cost > 0) & (y != 0)
    if alpha0 is None:
        alpha = np.zeros(n)
        b = 0.0
        f = np.zeros(n)
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        b = float(b0 if b0 is not None else 0.0)
        if f0 is not None:
            f = np.array(f0, dtype=np.float64)
        else:
            nzi = np.flatnonzero(alpha)
            f = K[:, nzi] @ alpha[nzi] + b
    if not active.any():
        return L2SVMResult(
            alpha=np.zeros(n),
            b=0.0,
            objective=0.0,
            f=np.zeros(n),
            error_set=np.zeros(0, int),
            n_iter=0,
            converged=True,
            reason="direct",
        )
    E = np.flatnonzero(active & (y * f < 1.0))
    converged, reason = False, "error_vectors"
    factor = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter reported
        if E.size == 0:
            # every active point already satisfies y f >= 1: alpha = 0 and the
            # bias alone separates -> only possible with a single class.
            ya = y[active]
            if np.all(ya > 0) or np.all(ya < 0):
                alpha = np.zeros(n)
                b = float(ya[0])
                f = np.full(n, b)
                converged, reason = True, "direct"
                factor = None
                break
            # cannot happen at an optimum with both classes; restart cold
            E = np.flatnonzero(active)
        a_new, b_new, factor = _solve_on_set(K, y, cost, E)
        # one product gives the Newton point's decision values; the direction's
        # image K d follows by difference.
        f_new = K[:, E] @ a_new + b_new
        g = f_new - f
        d_alpha = -alpha
        d_alpha[E] += a_new
        Kd = g - (b_new - b)
        # regulariser along the ray: 1/2 (a + t d)^T K (a + t d)
        c1 = float(alpha @ Kd)
        c2 = float(d_alpha @ Kd)
        t = _line_search(y, cost, active, f, g, c1, max(c2, 0.0))
        if abs(t - 1.0) <= 1e-8:
            alpha = np.zeros(n)
            alpha[E] = a_new
            b = b_new
            f = f_new
            E_new = np.flatnonzero(active & (y * f < 1.0))
            if np.array_equal(E_new, E):
                converged = True
                break
        else:
            alpha = alpha + t * d_alpha
            b = b + t * (b_new - b)
            f = f + t * g
            E_new = np.flatnonzero(active & (y * f < 1.0))
        E = E_new
    slack = np.maximum(0.0, 1.0 - y[active] * f[active])
    # alpha^T K alpha = alpha^T (f - b) on the support of alpha
    supp = np.flatnonzero(alpha)
    reg = float(alpha[supp] @ (f[supp] - b))
    obj = 0.5 * reg + float(np.sum(cost[active] * slack**2))
    return L2SVMResult(
        alpha=alpha,
        b=float(b),
        objective=obj,
        f=f,
        error_set=E,
        n_iter=n_iter,
        converged=converged,
        reason=reason if converged else "max_iter",
        factor=factor if converged else None,
    )


def add_point_bounds(
    K: np.ndarray, res: L2SVMResult, cost: np.ndarray, idx: np.ndarray, c_new: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Lower bounds on the objective increase when one point is added.

    For each candidate ``j`` in ``idx`` (a point not in the problem of ``res``)
    and each label :math:`s = \pm1`, returns :math:`\delta_j(s) \ge 0` with

    .. math::

        \mathrm{obj}(\text{problem} + (x_j, s, c_{new})) \ge
        \mathrm{obj}(\text{problem}) + \delta_j(s).

    Derivation (weak duality).  In :math:`\alpha = y\circ\beta` form the dual of
    the L2-SVM is :math:`D(\alpha) = \sum_i y_i\alpha_i - \frac12\alpha^\top
    K\alpha - \sum_i \alpha_i^2 / (4C_i)` subject to :math:`\sum_i\alpha_i = 0`
    and :math:`y_i\alpha_i \ge 0`; at the optimum :math:`D(\alpha^\star)` equals
    the primal objective.  Move along :math:`d` with :math:`d_j = s` and
    :math:`d_E = v`, :math:`\mathbf 1^\top v = -s`, the :math:`v` minimising the
    curvature: :math:`D` changes by :math:`a t - \frac12 q t^2` with
    :math:`a = 1 - s f_j` and the Schur complement
    :math:`q = K_{jj} + \frac{1}{2c} - k^\top A^{-1}k + (1 - \mathbf 1^\top
    A^{-1}k)^2 / \mathbf 1^\top A^{-1}\mathbf 1`, :math:`A = K_{EE} + D_E`,
    :math:`k = K_{Ej}`.  Any feasible step :math:`0 \le t \le t_{max}` (dual
    signs kept) gives a dual value of the larger problem, hence a lower bound
    on its optimum; the best one is returned.  It is exact when the error set
    does not change (the incremental update of Cauwenberghs & Poggio).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    res : L2SVMResult
        Converged solution of the current problem (its ``factor`` is used).
    cost : ndarray of shape (n,)
        Costs of the current problem (those of the error set are read).
    idx : ndarray of int
        Candidate points.
    c_new : float
        Cost the candidates would get.

    Returns
    -------
    delta_pos, delta_neg : ndarray of shape (len(idx),)
        Bounds for the labels +1 and -1 (zeros when ``res`` has no factor).
    """
    m = idx.size
    if res.factor is None or res.error_set.size == 0 or m == 0:
        return np.zeros(m), np.zeros(m)
    E = res.error_set
    kE = K[E[:, None], idx]
    Z = _chol_solve(res.factor, np.c_[kE, np.ones(E.size)])
    w1 = Z[:, -1]  # A^{-1} 1
    Z = Z[:, :-1]  # A^{-1} k_j
    s1 = float(w1.sum())
    kAk = np.einsum("ij,ij->j", kE, Z)
    oAk = Z.sum(axis=0)
    q = K[idx, idx] + 0.5 / c_new - kAk + (1.0 - oAk) ** 2 / s1
    q = np.maximum(q, 0.5 / c_new * 1e-12)
    # minimiser v = -A^{-1}(k + lam 1) for s = +1, lam = (1 - 1^T A^{-1} k) / s1
    lam = (1.0 - oAk) / s1
    V = -(Z + np.outer(w1, lam))  # (|E|, m): v for s = +1; v(s) = s v(+1)
    beta = res.alpha[E] * np.sign(res.alpha[E])  # = y_i alpha_i >= 0 on E
    ysgn = np.sign(res.alpha[E])
    out = []
    for s in (1.0, -1.0):
        a = 1.0 - s * res.f[idx]
        yv = ysgn[:, None] * (s * V)  # change of beta per unit step
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(yv < 0, beta[:, None] / -yv, np.inf)
        t_max = ratio.min(axis=0)
        t = np.clip(a / q, 0.0, t_max)
        delta = np.where(a > 0, a * t - 0.5 * q * t * t, 0.0)
        out.append(np.maximum(delta, 0.0))
    return out[0], out[1]
