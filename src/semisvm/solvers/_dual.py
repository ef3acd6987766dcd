r"""The original dual ("two step") Laplacian SVM solver.

Belkin, Niyogi and Sindhwani (2006) train the Laplacian SVM

.. math::

    \min_{\alpha, b}\; \sum_{i \le l} \max(0, 1 - y_i f(x_i))
        + \gamma_A \alpha^\top K \alpha + \gamma_I \alpha^\top K L K \alpha,
    \qquad f(x) = \sum_j \alpha_j k(x_j, x) + b,

through its Wolfe dual, an l-variable SVM quadratic program, followed by an
n-by-n linear system (Melacci & Belkin 2011, Eq. 5 and 6): with
:math:`A = 2\gamma_A I + 2\gamma_I L K` (LU-factored once) and J the l-by-n
selector of the labeled rows, :math:`\beta^*` solves the SVM dual with the Gram
matrix :math:`G = J K A^{-1} J^\top` and ``C = 1`` (times the weights
:math:`c_i`), and :math:`\alpha = A^{-1} J^\top Y \beta^*`.  LIBSVM
(scikit-learn's ``SVC(kernel="precomputed")``) solves the QP and gives b.  The
squared hinge (Eq. 7, the problem of the Newton and PCG solvers) has a dual of
the same form with :math:`A_2 = \gamma_A I + \gamma_I L K`, the Gram matrix
:math:`G_2 + \mathrm{diag}(c)^{-1}` and no upper bound (:func:`_column_qp`);
its solution equals Newton's and PCG's to solver tolerance (tested).  The
intrinsic term acts on :math:`K\alpha` only, never on the unregularised bias
(Melacci & Belkin 2011, footnote 1).  With the hinge b can be non-unique
(:func:`_solve_with_bias`); without the bias the dual is a box QP
(:func:`_solve_without_bias`).

References
----------
M. Belkin, P. Niyogi, V. Sindhwani. Manifold regularization: a geometric
framework for learning from labeled and unlabeled examples. JMLR 7, 2006.

S. Melacci, M. Belkin. Laplacian support vector machines trained in the
primal. JMLR 12, 2011, Section 2.1, Eq. 5 and 6.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg as la
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from .._validation import plain
from ..graph._power import product_operand
from ._result import SolveResult
from ._targets import as_targets

__all__ = ["lapsvm_dual", "lapsvm_dual_objective"]


def lapsvm_dual_objective(
    K: np.ndarray,
    L: Any,
    Y: np.ndarray,
    alpha: np.ndarray,
    b: np.ndarray,
    *,
    gamma_a: float,
    gamma_i: float,
    loss: str,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    r"""Laplacian SVM objective of every column, as the dual solver states it.

    .. math::

        \sum_{i:\, y_i \neq 0} c_i \max(0, 1 - y_i (k_i^\top\alpha + b))
        + \gamma_A \alpha^\top K \alpha + \gamma_I \alpha^\top K L K \alpha

    for ``loss='hinge'`` (Belkin et al. 2006), and the primal form of Melacci &
    Belkin (2011, Eq. 7)

    .. math::

        \tfrac12\Big[\sum_{i:\, y_i \neq 0} c_i \max(0, 1 - y_i f_i)^2
        + \gamma_A \alpha^\top K \alpha + \gamma_I \alpha^\top K L K \alpha\Big]

    for ``loss='squared_hinge'``; :math:`c_i` are the weights (default 1).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of the training points.
    L : {sparse matrix, ndarray} of shape (n, n)
        Graph Laplacian.
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention: +1/-1 for labeled rows and 0 for
        unlabeled rows.
    alpha : ndarray of shape (n, C)
    b : ndarray of shape (C,)
    gamma_a, gamma_i : float
    loss : {'hinge', 'squared_hinge'}
        Required, as in :func:`lapsvm_dual`.
    sample_weight : ndarray of shape (n,), default=None

    Returns
    -------
    objective : ndarray of shape (C,)
    """
    Y = as_targets(Y, K.shape[0])
    alpha = np.asarray(alpha, dtype=np.float64).reshape(K.shape[0], -1)
    Ka = K @ alpha
    F = Ka + np.asarray(b, dtype=np.float64)[None, :]
    h = np.where(Y != 0, np.maximum(0.0, 1.0 - Y * F), 0.0)
    if loss == "squared_hinge":
        h = h * h
    if sample_weight is not None:
        h = h * np.asarray(sample_weight, dtype=np.float64)[:, None]
    ambient = np.einsum("ij,ij->j", alpha, Ka)
    intrinsic = (
        np.einsum("ij,ij->j", Ka, np.asarray(L @ Ka))
        if L is not None and gamma_i
        else np.zeros(Ka.shape[1])
    )
    val = h.sum(axis=0) + gamma_a * ambient + gamma_i * intrinsic
    return 0.5 * val if loss == "squared_hinge" else val


def _check_inputs(
    K: Any, L: Any, Y: Any, gamma_a: float, gamma_i: float
) -> tuple[np.ndarray, Any, np.ndarray]:
    """Validated ``(K, L, Y)``: K square and finite, L of K's shape, Y the (n, C)
    targets of :func:`~semisvm.solvers._targets.as_targets` with both classes in
    every column."""
    if not (np.isfinite(gamma_a) and gamma_a > 0):
        raise ValueError(f"gamma_a must be a float > 0, got {plain(gamma_a)!r}.")
    if not (np.isfinite(gamma_i) and gamma_i >= 0):
        raise ValueError(f"gamma_i must be a float >= 0, got {plain(gamma_i)!r}.")
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) Gram matrix, got shape {K.shape}.")
    n = K.shape[0]
    if L is not None and L.shape != (n, n):
        raise ValueError(f"L must have shape ({n}, {n}) like K, got {L.shape}.")
    if not np.isfinite(K).all():
        raise ValueError("K must not contain NaN or infinity.")
    Y = as_targets(Y, n)
    for j in range(Y.shape[1]):
        if not ((Y[:, j] > 0).any() and (Y[:, j] < 0).any()):
            raise ValueError(
                f"Column {j} of Y needs at least one +1 and one -1 labeled row."
            )
    return K, L, Y


def _label_weights(sample_weight: Any, n: int, lab_all: np.ndarray) -> np.ndarray:
    """Loss weights :math:`c_i` of all n rows (1 when ``None``), validated on the
    labeled rows."""
    if sample_weight is None:
        return np.ones(n)
    cw = np.asarray(sample_weight, dtype=np.float64).ravel()
    if cw.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {cw.shape}.")
    if not (np.isfinite(cw[lab_all]).all() and (cw[lab_all] > 0).all()):
        raise ValueError("sample_weight must be finite and > 0 on the labeled rows.")
    return cw


def _factor_system(
    K: np.ndarray, L: Any, gamma_a: float, gamma_i: float, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""LU factors of :math:`A = s(\gamma_A I + \gamma_I L K)` (``scale`` s = 2 for
    the hinge, Eq. 5; 1 for the squared hinge), reused for G and for the
    :math:`\alpha` of every column: nothing is inverted explicitly.  The
    intrinsic term acts on :math:`K\alpha` only: with the normalized Laplacian
    (:math:`L\mathbf 1 \ne 0`) this differs from penalising
    :math:`(K\alpha + b\mathbf 1)^\top L (K\alpha + b\mathbf 1)`."""
    n = K.shape[0]
    if L is not None and gamma_i != 0:
        A = (scale * gamma_i) * np.asarray(product_operand(L) @ K)
    else:
        A = np.zeros((n, n))
    A[np.diag_indices(n)] += scale * gamma_a
    return la.lu_factor(A, overwrite_a=True, check_finite=False)


def _labeled_gram(
    K: np.ndarray, lu_piv: tuple[np.ndarray, np.ndarray], lab_all: np.ndarray
) -> np.ndarray:
    r""":math:`G = J K A^{-1} J^\top` over the union of the labeled rows of all
    columns, symmetrised against round-off (one solve with l right-hand sides):
    :math:`K A^{-1} = (2\gamma_A I + 2\gamma_I K L)^{-1} K` is symmetric
    positive semi-definite."""
    n = K.shape[0]
    E = np.zeros((n, lab_all.size))
    E[lab_all, np.arange(lab_all.size)] = 1.0
    M = la.lu_solve(lu_piv, E, check_finite=False)
    G_all = K[lab_all] @ M
    return 0.5 * (G_all + G_all.T)


def _box_qp(
    Q: np.ndarray, ub: np.ndarray, tol: float, max_sweeps: int
) -> tuple[np.ndarray, int, bool]:
    r""":math:`\min_{0 \le \beta \le u} \tfrac12\beta^T Q\beta - 1^T\beta`, the
    bias-free SVM dual.

    With :math:`Q = R^T R` (Cholesky, after a jitter of :math:`10^{-12}\,
    \mathrm{tr}(Q)/m` when Q is singular) the objective is
    :math:`\tfrac12\|R\beta - R^{-T}1\|^2` up to a constant, a bounded-variable
    least-squares problem solved by the exact active-set method BVLS (Stark &
    Parker 1995, ``scipy.optimize.lsq_linear``).  The KKT conditions are then
    checked on Q itself (largest projected-gradient entry) and, if needed,
    enforced by exact coordinate descent (Hsieh et al. 2008), which never
    increases the objective, until they hold to ``tol``.  Returns
    (beta, iterations, converged).
    """
    from scipy.optimize import lsq_linear

    m = Q.shape[0]
    Qs = 0.5 * (Q + Q.T)
    jitter = 0.0
    for _ in range(6):
        try:
            R = la.cholesky(Qs + jitter * np.eye(m), lower=False, check_finite=False)
            break
        except la.LinAlgError:
            jitter = max(jitter * 100.0, 1e-12 * float(np.trace(Qs)) / m)
    else:  # pragma: no cover - Q far from PSD
        raise ValueError("the dual QP matrix is not positive semi-definite")
    t = la.solve_triangular(R, np.ones(m), trans="T", check_finite=False)
    hi = np.where(np.isfinite(ub), ub, np.inf)
    res = lsq_linear(
        R,
        t,
        bounds=(np.zeros(m), hi),
        method="bvls",
        tol=1e-12,
        max_iter=max(100, 10 * m),
    )
    beta = np.clip(res.x, 0.0, hi)
    it = int(res.nit)

    def proj_grad(b: np.ndarray, g: np.ndarray) -> float:
        pg = np.where(
            b <= 0.0, np.minimum(g, 0.0), np.where(b >= hi, np.maximum(g, 0.0), g)
        )
        return float(np.abs(pg).max()) if m else 0.0

    grad = Qs @ beta - 1.0
    diag = np.maximum(np.diag(Qs).copy(), 1e-300)
    for sweep in range(max_sweeps):
        if proj_grad(beta, grad) <= tol:
            return beta, it + sweep, True
        for i in range(m):
            new = min(max(beta[i] - grad[i] / diag[i], 0.0), hi[i])
            d = new - beta[i]
            if d != 0.0:
                beta[i] = new
                grad += d * Qs[:, i]
    return beta, it + max_sweeps, proj_grad(beta, grad) <= tol


def _column_qp(G: np.ndarray, c: np.ndarray, squared: bool) -> np.ndarray:
    r"""Gram matrix of one column's QP: ``G`` (hinge) or ``G + diag(1/c)``
    (squared hinge).

    The squared hinge's primal (Melacci & Belkin 2011, Eq. 7)

    .. math::

        \min_{\alpha, b}\; \tfrac12\Big[\sum_{i \le l} c_i \max(0, 1 - y_i f_i)^2
        + \gamma_A \alpha^\top K \alpha + \gamma_I \alpha^\top K L K \alpha\Big]

    with :math:`\xi_i \ge 1 - y_i f_i` has the Lagrangian's stationarity
    :math:`c_i\xi_i = \beta_i`, :math:`\beta^\top y = 0` and
    :math:`\alpha = A_2^{-1} J^\top Y\beta`, :math:`A_2 = \gamma_A I + \gamma_I L K`,
    so that :math:`\beta^*` maximizes :math:`\mathbf 1^\top \beta - \tfrac12
    \beta^\top Y (G_2 + D^{-1}) Y \beta` over :math:`\beta \ge 0,\ \beta^\top y =
    0`, with :math:`G_2 = J K A_2^{-1} J^\top` and :math:`D = \mathrm{diag}(c)`.
    Both losses use the same :math:`\gamma_A, \gamma_I`: the loss is weighted 1
    against them in both (the factor ½ of Eq. 7 multiplies the whole objective).
    """
    if not squared:
        return G
    Q = G.copy()
    Q[np.diag_indices(c.size)] += 1.0 / c
    return Q


def _solve_with_bias(
    Q: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    *,
    squared: bool,
    weighted: bool,
    tol: float,
    max_iter: int,
    shrinking: bool,
    column: int,
) -> tuple[np.ndarray, float, int, bool]:
    r"""One column's QP with the constraint :math:`\beta^\top y = 0`, by LIBSVM.

    Returns ``(y * beta, b, iterations, converged)``.  LIBSVM's own
    "terminated early" warning is replaced by one that names the column and the
    remedy; every other warning raised during the fit reaches the caller.

    *The squared hinge* has no upper bound on :math:`\beta`; a bound that never
    binds makes it a LIBSVM problem.  At the optimum
    :math:`\tfrac12\sum c_j\xi_j^2` is at most the objective at
    :math:`(\alpha, b) = 0`, i.e. :math:`\tfrac12\sum_j c_j`, so
    :math:`\beta_i = c_i\xi_i \le \sqrt{c_i \sum_j c_j}`; LIBSVM gets
    :math:`C = 2\max_i\sqrt{c_i\sum_j c_j} + 1`, strictly above every
    :math:`\beta_i` of the optimum, and the solution is that of the unbounded QP.

    *The hinge's bias can be non-unique.*  When every labeled point is a bounded
    support vector (:math:`\beta_i = c_i`: the regularisation is so strong that
    every labeled point lies inside the margin, e.g. G50C with the paper's
    :math:`\gamma_A = 1`) the objective is flat in b over an interval (its
    derivative in b is :math:`-\sum_i c_i y_i = 0` for balanced classes): every
    b in it is optimal, and LIBSVM returns the interval's midpoint, which can
    put every point on one side.  The squared hinge has a unique b.
    """
    if squared:  # a box that never binds (docstring)
        C_box = 2.0 * float(np.sqrt(c.max() * c.sum())) + 1.0
        fit_kw: dict[str, Any] = {}
    else:
        C_box = 1.0
        fit_kw = {"sample_weight": c} if weighted else {}
    svc = SVC(
        kernel="precomputed", C=C_box, tol=tol, max_iter=max_iter, shrinking=shrinking
    )
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Solver terminated early", category=ConvergenceWarning
        )
        svc.fit(Q, y, **fit_kw)
    converged = int(svc.fit_status_) == 0
    if not converged:
        warnings.warn(
            f"lapsvm_dual: LIBSVM stopped at max_iter={max_iter} before reaching"
            f" tol={tol} on column {column}; increase max_iter (or -1 for no cap).",
            ConvergenceWarning,
            stacklevel=3,
        )
    it = getattr(svc, "n_iter_", None)
    n_iter = int(np.ravel(it)[0]) if it is not None else 1
    # SVC's dual_coef_ holds y_i beta_i of the support vectors, oriented so
    # that the decision function is positive for classes_[1] == +1.
    ybeta = np.zeros(y.size)
    ybeta[svc.support_] = svc.dual_coef_.ravel()
    return ybeta, float(svc.intercept_[0]), n_iter, converged


def _solve_without_bias(
    Q: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    *,
    squared: bool,
    tol: float,
    max_iter: int,
    column: int,
) -> tuple[np.ndarray, int, bool]:
    r"""One column's QP without the bias (box only), by :func:`_box_qp`.

    Without the bias (``fit_intercept=False``) the dual has no equality
    constraint :math:`\beta^\top y = 0`, only the box, which LIBSVM cannot
    express.  Dropping LIBSVM's b after solving the problem *with* the
    constraint is not the same model (on COIL20, 20 one-vs-rest columns and 2
    labels per class, it errs 48% on U where the problem without b errs 15%,
    the value of Newton without b).

    Returns ``(y * beta, iterations, converged)``.
    """
    ub = np.full(y.size, np.inf) if squared else c.copy()
    beta, n_iter, converged = _box_qp(
        y[:, None] * Q * y[None, :], ub, tol, max_iter if max_iter > 0 else 10_000
    )
    if not converged:
        warnings.warn(
            f"lapsvm_dual: the bias-free QP stopped at max_iter={max_iter} "
            f"sweeps before reaching tol={tol} on column {column}; increase "
            "max_iter (or -1 for the default cap of 10,000 sweeps).",
            ConvergenceWarning,
            stacklevel=3,
        )
    return y * beta, n_iter, converged


def _solve_column(
    Q: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    *,
    fit_intercept: bool,
    squared: bool,
    weighted: bool,
    tol: float,
    max_iter: int,
    shrinking: bool,
    column: int,
) -> tuple[np.ndarray, float, int, bool]:
    """One column's QP, with or without the bias: ``(y * beta, b, iterations,
    converged)`` (b = 0 without the bias)."""
    if fit_intercept:
        return _solve_with_bias(
            Q,
            y,
            c,
            squared=squared,
            weighted=weighted,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            column=column,
        )
    ybeta, n_iter, converged = _solve_without_bias(
        Q, y, c, squared=squared, tol=tol, max_iter=max_iter, column=column
    )
    return ybeta, 0.0, n_iter, converged


def _solve_columns(
    Y: np.ndarray,
    cw: np.ndarray,
    G_all: np.ndarray,
    lab_all: np.ndarray,
    lu_piv: tuple[np.ndarray, np.ndarray],
    **qp_kw: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list, list]:
    """Every column's QP, then its ``alpha = A^{-1} J^T Y beta`` (one solve with
    the shared LU factors).

    Returns ``(alpha, b, n_iter, converged, betas, dual_objectives)``;
    ``qp_kw`` are the keywords of :func:`_solve_column` but ``column``.
    """
    n, n_cols = Y.shape
    pos = np.full(n, -1, dtype=np.intp)
    pos[lab_all] = np.arange(lab_all.size)
    alpha = np.zeros((n, n_cols))
    b = np.zeros(n_cols)
    n_iter = np.ones(n_cols, dtype=np.intp)
    converged = np.ones(n_cols, dtype=bool)
    betas: list[np.ndarray] = []
    dual_obj: list[float] = []
    for j in range(n_cols):
        lab = np.flatnonzero(Y[:, j] != 0)
        y, c = Y[lab, j], cw[lab]
        p = pos[lab]
        Q = _column_qp(G_all[np.ix_(p, p)], c, qp_kw["squared"])
        ybeta, b[j], n_iter[j], converged[j] = _solve_column(Q, y, c, column=j, **qp_kw)
        rhs = np.zeros(n)
        rhs[lab] = ybeta
        alpha[:, j] = la.lu_solve(lu_piv, rhs, check_finite=False)
        beta = np.zeros(n)
        beta[lab] = ybeta * y
        betas.append(beta)
        dual_obj.append(float(beta[lab].sum() - 0.5 * ybeta @ (Q @ ybeta)))
    return alpha, b, n_iter, converged, betas, dual_obj


def lapsvm_dual(
    K: np.ndarray,
    L: Any,
    Y: np.ndarray,
    *,
    gamma_a: float,
    gamma_i: float,
    loss: str,
    sample_weight: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int = -1,
    shrinking: bool = True,
    fit_intercept: bool = True,
) -> SolveResult:
    r"""Laplacian SVM trained in the dual (Belkin, Niyogi & Sindhwani 2006).

    For every column ``y`` of ``Y`` (one binary or one-vs-rest problem),
    ``loss='hinge'`` (the original method) solves

    .. math::

        \min_{\alpha \in \mathbb{R}^n, b}\;
        \sum_{i \le l} c_i \max(0, 1 - y_i (k_i^\top \alpha + b))
        + \gamma_A \alpha^\top K \alpha + \gamma_I \alpha^\top K L K \alpha

    by the two-step dual method (Melacci & Belkin 2011, Eq. 5-6): an l-variable
    SVM dual solved by LIBSVM (``sklearn.svm.SVC(kernel="precomputed")``, which
    also returns ``b``), then one linear system for ``alpha``.
    ``loss='squared_hinge'`` solves the primal LapSVM of Eq. 7 (the problem of
    the Newton and PCG solvers, and :class:`~semisvm.LapSVM`'s default) through
    its dual.  The method is summarized in the docstring of
    :mod:`semisvm.solvers._dual`; the squared hinge's dual, its never-binding box
    and the bias in those of ``_column_qp``, ``_solve_with_bias`` and
    ``_solve_without_bias`` there.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of all (labeled and unlabeled) training points.  Converted to
        float64 (the QP is solved in double precision).
    L : {sparse matrix, ndarray} of shape (n, n) or None
        Graph Laplacian of the n points (plain, normalized or iterated); ``None``
        (or ``gamma_i = 0``): no intrinsic term, a supervised SVM on the labels.
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`): +1 / -1 on
        labeled rows, 0 on unlabeled rows; one column per binary (one-vs-rest)
        problem, each with both classes.  All columns share the factorisation of
        ``A``.
    gamma_a : float
        Ambient (RKHS) regularisation :math:`\gamma_A > 0`.
    gamma_i : float
        Intrinsic (graph) regularisation :math:`\gamma_I \ge 0`.
    loss : {'hinge', 'squared_hinge'}
        The original L1 hinge, or the squared hinge of the primal solvers.
        Required: the estimators default to the squared hinge, the original
        method is the hinge.
    sample_weight : ndarray of shape (n,), default=None
        Weights :math:`c_i > 0` of the labeled loss terms (``class_weight``);
        ignored on unlabeled rows.  ``None``: all 1.
    tol : float, default=1e-6
        LIBSVM stopping tolerance (maximal KKT violation of the QP).
    max_iter : int, default=-1
        LIBSVM iteration cap; -1 means none.  Hitting it emits a
        ``ConvergenceWarning`` and sets ``converged`` to False.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic.
    fit_intercept : bool, default=True
        False solves the problem without the bias b (b = 0, as the primal
        solvers with ``fit_intercept=False`` and the authors' code with
        ``UseBias = 0``): a box-constrained QP solved by :func:`_box_qp` to the
        same ``tol`` on the projected gradient.

    Returns
    -------
    result : SolveResult
        ``alpha`` (n, C), ``b`` (C,), ``n_iter`` (QP iterations per column),
        ``converged``, ``reason`` (``"direct"``, or ``"max_iter"`` when the QP
        solver hit its cap), ``objective`` (see :func:`lapsvm_dual_objective`).
        ``history`` holds ``"beta"`` (the dual variables, one array of length
        n over all rows, zero on unlabeled rows, per column) and
        ``"dual_objective"`` (the dual objective per column; equals
        ``objective`` at the optimum).

    Raises
    ------
    ValueError
        If ``gamma_a <= 0``, ``gamma_i < 0``, shapes do not match, ``loss`` is
        unknown, a weight is not positive, ``Y`` breaks the target convention or
        a column of ``Y`` lacks one of the two classes.

    Notes
    -----
    Cost: one dense n-by-n LU (:math:`O(n^3)`), one solve with the ``l`` labeled
    columns of the identity as right-hand side (:math:`O(n^2 l)`), the QP on
    the l-by-l matrix ``G``, and one more solve per column for ``alpha``.
    """
    if loss not in ("hinge", "squared_hinge"):
        raise ValueError(f"loss must be 'hinge' or 'squared_hinge', got {loss!r}.")
    K, L, Y = _check_inputs(K, L, Y, float(gamma_a), float(gamma_i))
    n, n_cols = Y.shape
    lab_all = np.flatnonzero((Y != 0).any(axis=1))
    cw = _label_weights(sample_weight, n, lab_all)
    squared = loss == "squared_hinge"
    # A = s (gamma_A I + gamma_I L K), s = 2 (hinge, Eq. 5) or 1 (squared hinge)
    lu_piv = _factor_system(K, L, gamma_a, gamma_i, 1.0 if squared else 2.0)
    G_all = _labeled_gram(K, lu_piv, lab_all)
    alpha, b, n_iter, converged, betas, dual_obj = _solve_columns(
        Y,
        cw,
        G_all,
        lab_all,
        lu_piv,
        fit_intercept=fit_intercept,
        squared=squared,
        weighted=sample_weight is not None,
        tol=tol,
        max_iter=max_iter,
        shrinking=shrinking,
    )
    objective = lapsvm_dual_objective(
        K,
        L,
        Y,
        alpha,
        b,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss=loss,
        sample_weight=cw if sample_weight is not None else None,
    )
    return SolveResult(
        alpha=alpha,
        b=b,
        n_iter=n_iter,
        converged=converged,
        reason=["direct" if ok else "max_iter" for ok in converged],
        objective=objective,
        history={"beta": betas, "dual_objective": dual_obj},
    )
