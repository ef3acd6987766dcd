r"""Primal Newton for LapSVM (Melacci & Belkin 2011, Eq. 11) and the direct LapRLS solve.

Each Newton step solves, for :math:`z = [b; \alpha]`,

.. math::
    \begin{bmatrix} 1^T I_E 1 & 1^T I_E K \\ I_E 1 & I_E K + \gamma_A I + \gamma_I L K
    \end{bmatrix} z = \begin{bmatrix} 1^T I_E y \\ I_E y \end{bmatrix}

which is the generalized-Hessian system :math:`H z = c` of Eq. 12 with its second
block row multiplied by :math:`K^{-1}`.  The paper writes the first row as
:math:`[0, 1^T]`; the two agree only when :math:`1^T L = 0` (plain Laplacian).  We
keep the exact first row, so that the solution is the minimiser of Eq. 7 for the
normalized Laplacian too (the intrinsic term acting on :math:`K\alpha` only).
Convergence: the set of error vectors E does not change (step 1; if the objective
does not decrease, the exact line search along the Newton direction is used).

LapRLS (Eq. 15) is the same system with E fixed to all labeled points: one LU
factorisation serves every one-vs-rest column.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg as sla

from ..graph._power import product_operand
from ._linesearch import exact_line_search
from ._result import SolveResult
from ._targets import as_targets
from ._tolerances import tolerances

__all__ = ["lapsvm_newton", "laprls_direct"]


def _dense_K(K: Any) -> np.ndarray:
    if hasattr(K, "toarray"):
        return np.asarray(K.toarray(), dtype=np.float64)
    return np.asarray(K, dtype=np.float64)


def _base_matrix(Kd: np.ndarray, L: Any, gamma_a: float, gamma_i: float) -> np.ndarray:
    """gamma_A I + gamma_I L K (dense), the part of the system that does not depend on E."""
    n = Kd.shape[0]
    if L is not None and gamma_i != 0:
        M = gamma_i * np.asarray(product_operand(L) @ Kd)
    else:
        M = np.zeros((n, n))
    M[np.diag_indices(n)] += gamma_a
    return M


def _system(
    Kd: np.ndarray,
    M: np.ndarray,
    lab: np.ndarray,
    E: np.ndarray,
    gL1: np.ndarray | None = None,
    gKL1: np.ndarray | None = None,
    fit_intercept: bool = True,
    w: np.ndarray | None = None,
) -> np.ndarray:
    """Newton / LapRLS matrix; ``w`` (length l) weights the rows of the labeled points."""
    n = Kd.shape[0]
    idx = lab[E]
    A = np.empty((n + 1, n + 1))
    A[1:, 1:] = M
    if w is None:
        A[1:, 1:][idx] += Kd[idx]
        A[0, 0] = idx.size
        A[0, 1:] = Kd[idx].sum(axis=0)
        A[1:, 0] = 0.0
        A[1 + idx, 0] = 1.0
    else:
        wE = w[E]
        A[1:, 1:][idx] += wE[:, None] * Kd[idx]
        A[0, 0] = wE.sum()
        A[0, 1:] = wE @ Kd[idx]
        A[1:, 0] = 0.0
        A[1 + idx, 0] = wE
    if gL1 is not None:  # intrinsic term on K alpha + b 1
        A[0, 0] += gL1.sum()
        A[0, 1:] += gKL1
        A[1:, 0] += gL1
    if not fit_intercept:  # b = 0: the first row and column become e_0
        A[0, :] = 0.0
        A[1:, 0] = 0.0
        A[0, 0] = 1.0
    return A


def _label_weights(
    sample_weight: np.ndarray | None, n: int, lab: np.ndarray
) -> np.ndarray | None:
    """Weights of the labeled rows (``None`` when all are 1), validated."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=np.float64).ravel()
    if sw.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}.")
    w = sw[lab]
    if not (np.isfinite(w).all() and (w > 0).all()):
        raise ValueError("sample_weight must be finite and > 0 on the labeled rows.")
    return w


def _bias_terms(
    Kd: np.ndarray, L: Any, gamma_i: float, intrinsic_bias: bool
) -> tuple[np.ndarray | None, np.ndarray | None]:
    if not intrinsic_bias or L is None or gamma_i == 0:
        return None, None
    gL1 = gamma_i * np.asarray(L @ np.ones(Kd.shape[0]))
    return gL1, Kd @ gL1


def _objective(
    Ka: np.ndarray,
    alpha: np.ndarray,
    b: float,
    y_l: np.ndarray,
    lab: np.ndarray,
    L: Any,
    gamma_a: float,
    gamma_i: float,
    squared: bool = False,
    intrinsic_bias: bool = False,
    w: np.ndarray | None = None,
) -> float:
    f = Ka[lab] + b
    h = (y_l - f) if squared else np.maximum(0.0, 1.0 - y_l * f)
    val = float((h if w is None else w * h) @ h) + gamma_a * float(alpha @ Ka)
    if L is not None and gamma_i != 0:
        fI = Ka + b if intrinsic_bias else Ka
        val += gamma_i * float(fI @ (L @ fI))
    return 0.5 * val


def lapsvm_newton(
    K: Any,
    Y: np.ndarray,
    *,
    L: Any = None,
    gamma_a: float = 1.0,
    gamma_i: float = 0.0,
    max_iter: int = 50,
    intrinsic_bias: bool = False,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> SolveResult:
    r"""Train C LapSVM columns in the primal by Newton's method (Eq. 11).

    With ``sample_weight`` :math:`c` the loss is :math:`\tfrac12\sum_i c_i
    \max(0, 1 - y_i f_i)^2`: the error-vector rows of the system are multiplied
    by :math:`c_i` (exact; the weighted objective is still a convex piecewise
    quadratic and E still fixes a quadratic piece).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix (converted to float64: an O(n^3) exact method).
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`): +1 / -1 on
        labeled rows, 0 on unlabeled rows.
    L : sparse matrix of shape (n, n), default=None
    gamma_a, gamma_i : float
    max_iter : int, default=50
        Newton steps per column (the paper never needed more than 6).
    intrinsic_bias : bool, default=False
        Apply the intrinsic term to :math:`K\alpha + b1` instead of :math:`K\alpha`
        (identical for the plain Laplacian, where :math:`L1 = 0`).
    fit_intercept : bool, default=True
        Learn the unregularised bias b; False fixes b = 0 (the default of the
        authors' code ``lapsvmp``, ``UseBias = 0``, which refuses a bias with
        the normalized Laplacian; Newton's system keeps its first row as
        :math:`b = 0`).
    sample_weight : ndarray of shape (n,), default=None
        Weights :math:`c_i > 0` of the labeled loss terms (ignored on unlabeled
        rows); ``None``: all 1.

    Returns
    -------
    SolveResult
        ``reason`` is ``"error_vectors"`` when E stopped changing.
    """
    Kd = _dense_K(K)
    Y = as_targets(Y, Kd.shape[0])
    n, C = Y.shape
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    w = _label_weights(sample_weight, n, lab)
    M = _base_matrix(Kd, L, gamma_a, gamma_i)
    gL1, gKL1 = _bias_terms(Kd, L, gamma_i, intrinsic_bias)
    cols = []
    for c in range(C):  # a loop, not a comprehension: a fixed warning stacklevel
        cols.append(
            _newton_column(
                Kd,
                M,
                L,
                Y[lab, c],
                lab,
                gL1,
                gKL1,
                w,
                gamma_a=gamma_a,
                gamma_i=gamma_i,
                fit_intercept=fit_intercept,
                max_iter=max_iter,
            )
        )
    return SolveResult(
        alpha=np.column_stack([c[0] for c in cols]).reshape(n, C),
        b=np.array([c[1] for c in cols], dtype=np.float64).reshape(C),
        n_iter=np.array([c[3] for c in cols], dtype=np.intp).reshape(C),
        converged=np.array([c[4] == "error_vectors" for c in cols], dtype=bool),
        reason=[c[4] for c in cols],
        objective=np.array([c[2] for c in cols], dtype=np.float64).reshape(C),
    )


def _solve_newton_system(
    A: np.ndarray, rhs: np.ndarray, *, step: int, n_errors: int
) -> np.ndarray:
    """Solve one Newton system; a singular one in the least-squares sense, with a
    ``LinAlgWarning`` that names the cause and the remedy."""
    try:
        return sla.solve(A, rhs, check_finite=False)
    except (sla.LinAlgError, ValueError) as exc:
        cause = (
            "no labeled point is an error vector, so the bias b is not determined"
            if n_errors == 0
            else str(exc).rstrip(".")
        )
        warnings.warn(
            f"lapsvm_newton: the Newton system of step {step} is singular "
            f"({cause}); it was solved in the least-squares sense (minimum-norm "
            "step). Remedy: raise gamma_a (the ridge gamma_A I makes the system "
            "regular), remove duplicate points from K, or use fit_intercept=False "
            "when the bias is not determined.",
            sla.LinAlgWarning,
            stacklevel=4,
        )
        return sla.lstsq(A, rhs, check_finite=False)[0]


def _newton_column(
    Kd: np.ndarray,
    M: np.ndarray,
    L: Any,
    y_l: np.ndarray,
    lab: np.ndarray,
    gL1: np.ndarray | None,
    gKL1: np.ndarray | None,
    w: np.ndarray | None,
    *,
    gamma_a: float,
    gamma_i: float,
    fit_intercept: bool,
    max_iter: int,
) -> tuple[np.ndarray, float, float, int, str]:
    """Newton on one column: (alpha, b, objective, iterations, reason)."""
    n = Kd.shape[0]
    ib = gL1 is not None
    tols = tolerances(np.float64)
    a_c, b_c = np.zeros(n), 0.0
    Ka = np.zeros(n)
    E = np.ones(lab.size, dtype=bool)  # alpha = 0: every labeled point errs
    obj = _objective(
        Ka, a_c, b_c, y_l, lab, L, gamma_a, gamma_i, intrinsic_bias=ib, w=w
    )
    wy = y_l if w is None else w * y_l
    n_iter, reason = 0, "max_iter"
    for it in range(1, max_iter + 1):
        A = _system(Kd, M, lab, E, gL1, gKL1, fit_intercept, w)
        rhs = np.zeros(n + 1)
        rhs[0] = wy[E].sum() if fit_intercept else 0.0
        rhs[1 + lab[E]] = wy[E]
        z = _solve_newton_system(A, rhs, step=it, n_errors=int(E.sum()))
        b_new, a_new = z[0], z[1:]
        Ka_new = Kd @ a_new
        obj_new = _objective(
            Ka_new,
            a_new,
            b_new,
            y_l,
            lab,
            L,
            gamma_a,
            gamma_i,
            intrinsic_bias=ib,
            w=w,
        )
        if obj_new > obj * (1 + tols.uphill_rtol) + tols.uphill_atol:
            # full step went uphill: exact line search along the Newton direction
            da, db, Kda = a_new - a_c, b_new - b_c, Ka_new - Ka
            Acoef = gamma_a * float(a_c @ Kda)
            Bcoef = gamma_a * float(da @ Kda)
            if L is not None and gamma_i != 0:
                fI, dI = (Ka + b_c, Kda + db) if ib else (Ka, Kda)
                LdI = L @ dI
                Acoef += gamma_i * float(fI @ LdI)
                Bcoef += gamma_i * float(dI @ LdI)
            s, _ = exact_line_search(Ka[lab] + b_c, Kda[lab] + db, y_l, Acoef, Bcoef, w)
            a_new, b_new, Ka_new = a_c + s * da, b_c + s * db, Ka + s * Kda
            obj_new = _objective(
                Ka_new,
                a_new,
                b_new,
                y_l,
                lab,
                L,
                gamma_a,
                gamma_i,
                intrinsic_bias=ib,
                w=w,
            )
        a_c, b_c, Ka, obj = a_new, b_new, Ka_new, obj_new
        E_new = y_l * (Ka[lab] + b_c) < 1.0
        n_iter = it
        if np.array_equal(E_new, E):
            reason = "error_vectors"
            break
        E = E_new
    return a_c, float(b_c), float(obj), n_iter, reason


def laprls_direct(
    K: Any,
    Y: np.ndarray,
    *,
    L: Any = None,
    gamma_a: float = 1.0,
    gamma_i: float = 0.0,
    intrinsic_bias: bool = False,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> SolveResult:
    r"""LapRLS by one direct solve of Eq. 15 (all columns share one LU factorisation).

    With ``sample_weight`` :math:`c` the loss is :math:`\tfrac12\sum_i c_i (y_i - f_i)^2`
    (weighted least squares: the labeled rows of the system are multiplied by
    :math:`c_i`).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`): +1 / -1 on
        labeled rows, 0 on unlabeled rows.
    L : sparse matrix, default=None
    gamma_a, gamma_i : float
    intrinsic_bias : bool, default=False
        See :func:`lapsvm_newton`.
    fit_intercept : bool, default=True
        False fixes the bias at 0 (see :func:`lapsvm_newton`).
    sample_weight : ndarray of shape (n,), default=None
        Weights of the labeled loss terms (``None``: all 1).

    Returns
    -------
    SolveResult
    """
    Kd = _dense_K(K)
    Y = as_targets(Y, Kd.shape[0])
    n, C = Y.shape
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    w = _label_weights(sample_weight, n, lab)
    M = _base_matrix(Kd, L, gamma_a, gamma_i)
    gL1, gKL1 = _bias_terms(Kd, L, gamma_i, intrinsic_bias)
    A = _system(Kd, M, lab, np.ones(lab.size, dtype=bool), gL1, gKL1, fit_intercept, w)
    Yw = Y[lab] if w is None else w[:, None] * Y[lab]
    rhs = np.zeros((n + 1, C))
    rhs[0] = Yw.sum(axis=0) if fit_intercept else 0.0
    rhs[1 + lab] = Yw
    lu = sla.lu_factor(A, check_finite=False)
    z = sla.lu_solve(lu, rhs, check_finite=False)
    b, alpha = z[0].copy(), z[1:].copy()
    Ka = Kd @ alpha
    objs = np.array(
        [
            _objective(
                Ka[:, c],
                alpha[:, c],
                b[c],
                Y[lab, c],
                lab,
                L,
                gamma_a,
                gamma_i,
                squared=True,
                intrinsic_bias=gL1 is not None,
                w=w,
            )
            for c in range(C)
        ]
    )
    return SolveResult(
        alpha=alpha,
        b=b,
        n_iter=np.ones(C, dtype=np.intp),
        converged=np.ones(C, dtype=bool),
        reason=["direct"] * C,
        objective=objs,
    )
