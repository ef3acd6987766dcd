r"""Preconditioned conjugate gradient for primal LapSVM and LapRLS.

Melacci & Belkin (2011), Algorithm 1, solved for C one-vs-rest problems at once
(an n-by-C block, so that K is applied as one matrix-matrix product), each column
stopping by its own rule.

Objective of one column (Eq. 7)

.. math::
    \mathrm{obj}(\alpha, b) = \tfrac12 \Big[\sum_{i \le l}
    \max(0, 1 - y_i(k_i^T\alpha + b))^2 + \gamma_A \alpha^T K \alpha
    + \gamma_I \alpha^T K L K \alpha\Big]

(``loss="squared"`` replaces the squared hinge by :math:`(y_i - f_i)^2` on every
labeled point: LapRLS, Eq. 14).  The intrinsic term acts on :math:`K\alpha` only, not
on the bias, for the plain and the normalized Laplacian alike (the paper's
Eq. 7 and the authors' code).

With the preconditioner :math:`P = \mathrm{diag}(1, K)` the preconditioned gradient is

.. math::
    \hat\nabla = \begin{bmatrix} 1^T I_E (K\alpha + 1 b - y) \\
    I_E (K\alpha + 1b - y) + \gamma_A \alpha + \gamma_I L K \alpha \end{bmatrix},
    \qquad \nabla = P \hat\nabla .

One product with K per iteration: :math:`K\hat\nabla_\alpha` gives both the true
gradient and, through :math:`K d_t = -K\hat\nabla_t + \rho K d_{t-1}`, the product
of K with the new direction; :math:`K\alpha` and :math:`LK\alpha` are updated
incrementally.  LK and KLK are never formed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..kernels._operators import as_operator
from ._linesearch import exact_line_search_batch
from ._result import SolveResult

__all__ = ["lapsvm_pcg", "TOL_CRITERIA", "EARLY_STOPPING_RULES"]

TOL_CRITERIA = ("mixed", "gradient", "preconditioned_gradient", "objective")
EARLY_STOPPING_RULES = ("stability", "validation", "mixed")

# above this n the per-column dot products are pinned to one BLAS thread
_THREADED_DOT_N = 5000


def _ls_step_squared(a: float, c: float) -> float:
    return -a / c if c > 0 else 0.0


def lapsvm_pcg(
    K: Any,
    Y: np.ndarray,
    *,
    L: Any = None,
    gamma_a: float = 1.0,
    gamma_i: float = 0.0,
    loss: str = "squared_hinge",
    max_iter: int = 1000,
    tol: float = 1e-6,
    tol_criterion: str = "mixed",
    early_stopping: str | None = None,
    check_every: int | None = None,
    stability_tol: float = 0.015,
    stability_value_tol: float | None = 0.05,
    K_val: Any = None,
    Y_val: np.ndarray | None = None,
    alpha0: np.ndarray | None = None,
    b0: np.ndarray | None = None,
    intrinsic_bias: bool = False,
    fit_intercept: bool = True,
    callback: Callable[[dict], Any] | None = None,
    record_history: bool = False,
    K_eval: Any = None,
    Y_eval: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
) -> SolveResult:
    r"""Train C LapSVM (or LapRLS) columns in the primal by PCG.

    Parameters
    ----------
    K : ndarray or operator of shape (n, n)
        Gram matrix of the training points (anything with ``@`` on an (n, C) block).
    Y : ndarray of shape (n, C)
        Targets: +1 / -1 on labeled rows, 0 on unlabeled rows.
    L : sparse matrix or operator of shape (n, n), default=None
        Graph Laplacian (``None`` or ``gamma_i == 0``: no intrinsic term).
    gamma_a, gamma_i : float
        Ambient and intrinsic regularisation weights.
    loss : {'squared_hinge', 'squared'}, default='squared_hinge'
        LapSVM (exact piecewise line search) or LapRLS (closed-form step).
    max_iter : int, default=1000
    tol : float, default=1e-6
        Threshold of the classical stopping value chosen by ``tol_criterion``,
        normalised by its value at t = 0.
    tol_criterion : {'mixed', 'gradient', 'preconditioned_gradient', 'objective'}
        :math:`\sqrt{\hat\nabla^T\nabla}`, :math:`\|\nabla\|`, :math:`\|\hat\nabla\|`, or
        the objective decrease of the last iteration over the objective at t = 0.
    early_stopping : {None, 'stability', 'validation', 'mixed'}, default=None
        The paper's data-based rules (Sec. 4.1), checked every ``check_every``
        iterations: *stability* stops when the fraction of unlabeled points whose
        predicted label changed since the last check is below ``stability_tol``
        (and, when ``stability_value_tol`` is set, the outputs on the unlabeled
        points moved by less than that fraction of their norm); *validation* stops
        when the error on (K_val, Y_val) did not improve by at least one example;
        *mixed* requires both.
    check_every : int, default=None
        :math:`\theta`; ``None`` means :math:`\lceil\sqrt{n}/2\rceil`.
    stability_tol : float, default=0.015
        :math:`\eta` of the stability check (fraction, not percent).
    stability_value_tol : float or None, default=0.05
        Extra guard of the stability check against stopping before the labels have
        diffused along the graph: the relative change of the outputs on the
        unlabeled points since the last check must also be below this value.
        ``None`` gives the paper's rule exactly.
    K_val : ndarray of shape (m, n), default=None
        Kernel between validation points and training points.
    Y_val : ndarray of shape (m, C), default=None
        Validation targets in {-1, +1}.
    alpha0, b0 : ndarray, default=None
        Starting point (not modified); zero by default (Algorithm 1).
    fit_intercept : bool, default=True
        Learn the unregularised bias b; False keeps b at ``b0`` (zero by default):
        the default of the authors' code ``lapsvmp`` (``UseBias = 0``), the only
        setting it allows with the normalized Laplacian.
    callback : callable, default=None
        Called after every iteration with a dict (``iteration``, ``alpha``, ``b``,
        ``objective``, ``active``); returning True stops the run ("callback").
    record_history : bool, default=False
        Keep per-iteration objective, gradient norms, and the error on
        (K_eval, Y_eval) if given.
    sample_weight : ndarray of shape (n,), default=None
        Weights :math:`c_i > 0` of the labeled loss terms (``class_weight``): the
        loss becomes :math:`\sum_i c_i \ell_i`; the gradient, the objective and
        the exact line search are weighted alike.  ``None``: all 1.

    Returns
    -------
    SolveResult

    References
    ----------
    S. Melacci and M. Belkin, "Laplacian Support Vector Machines Trained in the
    Primal", JMLR 12, 2011, Algorithm 1, Sections 3.2 and 4.
    """
    if loss not in ("squared_hinge", "squared"):
        raise ValueError(f"Unknown loss {loss!r}; expected 'squared_hinge' or 'squared'.")
    if tol_criterion not in TOL_CRITERIA:
        raise ValueError(
            f"Unknown tol_criterion {tol_criterion!r}; expected one of {TOL_CRITERIA}."
        )
    if early_stopping is not None and early_stopping not in EARLY_STOPPING_RULES:
        raise ValueError(
            f"Unknown early_stopping {early_stopping!r}; expected None or one of "
            f"{EARLY_STOPPING_RULES}."
        )
    if early_stopping in ("validation", "mixed") and (K_val is None or Y_val is None):
        raise ValueError(
            f"early_stopping={early_stopping!r} needs validation data (K_val, Y_val)."
        )
    Kop = as_operator(K)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    n, C = Y.shape
    use_L = L is not None and gamma_i != 0
    Lop = as_operator(L) if use_L else None
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    unl = np.flatnonzero(~np.any(Y != 0, axis=1))
    Yl = Y[lab]
    Wl = None
    if sample_weight is not None:
        Wl = np.asarray(sample_weight, dtype=np.float64).ravel()[lab][:, None]
        if not (np.isfinite(Wl).all() and (Wl > 0).all()):
            raise ValueError("sample_weight must be finite and > 0 on the labeled rows.")
    theta = check_every or max(1, math.ceil(math.sqrt(n) / 2))
    squared = loss == "squared"

    # state
    alpha = np.zeros((n, C)) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    alpha = alpha.reshape(n, C)
    b = np.zeros(C) if b0 is None else np.array(b0, dtype=np.float64).reshape(C)
    Ka = Kop @ alpha if alpha.any() else np.zeros((n, C))
    # LKa holds L f_I, where f_I = K alpha (+ b 1 with intrinsic_bias)
    L1 = (Lop @ np.ones(n)) if (use_L and intrinsic_bias) else None
    LKa = (Lop @ Ka) if use_L else None
    if L1 is not None:
        LKa += L1[:, None] * b

    def grad(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Preconditioned gradient (b part, alpha part) and the error-vector masks."""
        f_l = Ka[np.ix_(lab, cols)] + b[cols]
        res = f_l - Yl[:, cols]
        if squared:
            E = np.ones_like(res, dtype=bool)
        else:
            E = Yl[:, cols] * f_l < 1.0
        res = np.where(E, res, 0.0)
        if Wl is not None:
            res = Wl * res
        ga = gamma_a * alpha[:, cols]
        if use_L:
            ga = ga + gamma_i * LKa[:, cols]
        ga[lab] += res
        gb = res.sum(axis=0)
        if L1 is not None:
            gb = gb + gamma_i * LKa[:, cols].sum(axis=0)
        if not fit_intercept:  # b stays at b0 (0): no bias direction
            gb = np.zeros_like(gb)
        return gb, ga, E

    def objective(cols: np.ndarray) -> np.ndarray:
        f_l = Ka[np.ix_(lab, cols)] + b[cols]
        if squared:
            h = Yl[:, cols] - f_l
        else:
            h = np.maximum(0.0, 1.0 - Yl[:, cols] * f_l)
        hh = h * h if Wl is None else Wl * h * h
        val = hh.sum(axis=0) + gamma_a * np.einsum(
            "ij,ij->j", alpha[:, cols], Ka[:, cols]
        )
        if use_L:
            fI = Ka[:, cols] + b[cols] if L1 is not None else Ka[:, cols]
            val = val + gamma_i * np.einsum("ij,ij->j", fI, LKa[:, cols])
        return 0.5 * val

    all_cols = np.arange(C)
    gb, ga, _ = grad(all_cols)
    Kga = Kop @ ga  # the one product of iteration 0
    d_b, d_a, Kd = -gb, -ga, -Kga
    pg_dot = gb * gb + np.einsum("ij,ij->j", ga, Kga)  # ghat^T P ghat = ghat^T grad
    obj = objective(all_cols)
    obj0 = np.maximum(obj, np.finfo(np.float64).tiny)

    def crit_values(gb_, ga_, Kga_, pgd, obj_prev, obj_now) -> np.ndarray:
        if tol_criterion == "mixed":
            return np.sqrt(np.maximum(pgd, 0.0))
        if tol_criterion == "gradient":
            return np.sqrt(gb_ * gb_ + np.einsum("ij,ij->j", Kga_, Kga_))
        if tol_criterion == "preconditioned_gradient":
            return np.sqrt(gb_ * gb_ + np.einsum("ij,ij->j", ga_, ga_))
        return np.abs(obj_prev - obj_now) / obj0[: obj_now.size]

    crit0 = crit_values(gb, ga, Kga, pg_dot, obj, obj)
    if alpha0 is not None or b0 is not None:
        # normalise by the values at z = 0 (the paper's t = 0), not at the warm start
        WYl = Yl if Wl is None else Wl * Yl
        gb0 = -WYl.sum(axis=0) if fit_intercept else np.zeros(C)
        ga0 = np.zeros((n, C))
        ga0[lab] = -WYl
        Kga0 = Kop @ ga0
        pg0 = gb0 * gb0 + np.einsum("ij,ij->j", ga0, Kga0)
        obj_zero = 0.5 * (WYl * Yl).sum(axis=0)
        obj0 = np.maximum(obj_zero, np.finfo(np.float64).tiny)
        crit0 = crit_values(gb0, ga0, Kga0, pg0, obj_zero, obj_zero)
    crit0 = np.where(crit0 > 0, crit0, 1.0)
    if tol_criterion == "objective":
        crit0 = np.ones(C)

    active = np.ones(C, dtype=bool)
    n_iter = np.zeros(C, dtype=np.intp)
    n_ls = np.zeros(C, dtype=np.intp)
    reason = [""] * C
    converged = np.zeros(C, dtype=bool)
    # initial gradient may already be zero (e.g. warm start at the optimum)
    zero_grad = np.sqrt(np.maximum(pg_dot, 0)) <= np.finfo(np.float64).eps
    for c in np.flatnonzero(zero_grad):
        active[c], converged[c], reason[c] = False, True, "tol"

    # early-stopping state
    old_pred_U = np.zeros((unl.size, C))
    old_f_U = None
    old_err_val = np.full(C, np.inf)
    if Y_val is not None:
        Y_val = np.asarray(Y_val, dtype=np.float64).reshape(-1, C)
    m_val = 0 if Y_val is None else Y_val.shape[0]

    history: dict[str, list] = {}
    if record_history:
        history = {
            "objective": [obj.copy()],
            "gradient": [crit_values(gb, ga, Kga, pg_dot, obj, obj)]
            if tol_criterion == "gradient"
            else [np.sqrt(gb * gb + np.einsum("ij,ij->j", Kga, Kga))],
            "preconditioned_gradient": [np.sqrt(gb * gb + np.einsum("ij,ij->j", ga, ga))],
            "mixed": [np.sqrt(np.maximum(pg_dot, 0))],
            "time": [0.0],
        }
        if K_eval is not None:
            history["eval_error"] = [_error(K_eval, alpha, b, Y_eval)]
    t_start = time.perf_counter()
    t_cb = 0.0

    for it in range(1, max_iter + 1):
        cols = np.flatnonzero(active)
        if cols.size == 0:
            break
        # --- line search on each active column
        fd_l = Kd[np.ix_(lab, cols)] + d_b[cols] if cols.size < C else Kd[lab] + d_b
        LKd = (Lop @ Kd[:, cols]) if use_L else None
        if L1 is not None:
            LKd += L1[:, None] * d_b[cols]
        # --- exact line search on all active columns at once
        def coldot(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
            return np.einsum("ij,ij->j", P, Q)

        Kd_c = Kd[:, cols]
        A = gamma_a * coldot(alpha[:, cols], Kd_c)
        B = gamma_a * coldot(d_a[:, cols], Kd_c)
        if use_L:
            if L1 is not None:
                dI = Kd_c + d_b[cols]
                A += gamma_i * coldot(LKa[:, cols], dI)
                B += gamma_i * coldot(dI, LKd)
            else:
                A += gamma_i * coldot(Ka[:, cols], LKd)
                B += gamma_i * coldot(Kd_c, LKd)
        F_l = Ka[np.ix_(lab, cols)] + b[cols]
        if squared:
            wfd = fd_l if Wl is None else Wl * fd_l
            a = A + coldot(F_l - Yl[:, cols], wfd)
            cc = B + coldot(fd_l, wfd)
            with np.errstate(divide="ignore", invalid="ignore"):
                steps = np.where(cc > 0, -a / cc, 0.0)
            nls = np.ones(cols.size, dtype=np.intp)
        else:
            steps, nls = exact_line_search_batch(F_l, fd_l, Yl[:, cols], A, B, Wl)
        # an unbounded direction cannot happen with gamma_a > 0
        steps = np.where(np.isfinite(steps), steps, 0.0)
        n_ls[cols] += nls
        # --- update
        alpha[:, cols] += steps * d_a[:, cols]
        b[cols] += steps * d_b[cols]
        Ka[:, cols] += steps * Kd[:, cols]
        if use_L:
            LKa[:, cols] += steps * LKd
        n_iter[cols] += 1
        # --- new gradient, one product with K
        gb_new, ga_new, _ = grad(cols)
        Kga_new = Kop @ ga_new
        pg_new = gb_new * gb_new + np.einsum("ij,ij->j", ga_new, Kga_new)
        # Polak-Ribiere with P = diag(1, K): ghat_t^T P (ghat_t - ghat_{t-1})
        cross = gb_new * gb[cols] + np.einsum("ij,ij->j", ga_new, Kga[:, cols])
        denom = pg_dot[cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(denom > 0, (pg_new - cross) / denom, 0.0)
        rho = np.maximum(rho, 0.0)
        d_b[cols] = -gb_new + rho * d_b[cols]
        d_a[:, cols] = -ga_new + rho * d_a[:, cols]
        Kd[:, cols] = -Kga_new + rho * Kd[:, cols]
        gb[cols], ga[:, cols], Kga[:, cols], pg_dot[cols] = gb_new, ga_new, Kga_new, pg_new
        obj_prev = obj[cols].copy()
        obj[cols] = objective(cols)
        # --- classical stopping
        crit = crit_values(gb_new, ga_new, Kga_new, pg_new, obj_prev, obj[cols])
        crit_rel = crit / crit0[cols]
        for j, c in enumerate(cols):
            if crit_rel[j] <= tol or pg_new[j] <= 0:
                active[c], converged[c], reason[c] = False, True, "tol"
        # --- data-based early stopping, every theta iterations
        if early_stopping is not None and it % theta == 0:
            f_U = Ka[unl] + b
            pred_U = np.where(f_U >= 0, 1.0, -1.0)
            err_val = None
            if early_stopping in ("validation", "mixed"):
                err_val = _error(K_val, alpha, b, Y_val)
            for c in np.flatnonzero(active):
                stable = False
                if early_stopping in ("stability", "mixed") and unl.size:
                    frac = np.mean(pred_U[:, c] != old_pred_U[:, c])
                    stable = frac < stability_tol
                    if stable and stability_value_tol is not None:
                        prev = old_f_U[:, c] if old_f_U is not None else np.zeros(unl.size)
                        nrm = np.linalg.norm(f_U[:, c])
                        moved = np.linalg.norm(f_U[:, c] - prev)
                        stable = nrm > 0 and moved <= stability_value_tol * nrm
                elif early_stopping in ("stability", "mixed"):
                    stable = True
                no_gain = False
                if err_val is not None:
                    no_gain = err_val[c] * m_val > old_err_val[c] * m_val - 1.0 + 1e-9
                    old_err_val[c] = min(old_err_val[c], err_val[c])
                stop = {
                    "stability": stable,
                    "validation": no_gain,
                    "mixed": stable and no_gain,
                }[early_stopping]
                if stop:
                    active[c], reason[c] = False, early_stopping
            old_pred_U = pred_U
            old_f_U = f_U
        if record_history:
            history["objective"].append(obj.copy())
            history["gradient"].append(np.sqrt(gb * gb + np.einsum("ij,ij->j", Kga, Kga)))
            history["preconditioned_gradient"].append(
                np.sqrt(gb * gb + np.einsum("ij,ij->j", ga, ga))
            )
            history["mixed"].append(np.sqrt(np.maximum(pg_dot, 0)))
            history["time"].append(time.perf_counter() - t_start - t_cb)
            if K_eval is not None:
                history["eval_error"].append(_error(K_eval, alpha, b, Y_eval))
        if callback is not None:
            t0 = time.perf_counter()
            stop = callback(
                {"iteration": it, "alpha": alpha, "b": b, "objective": obj, "active": active}
            )
            t_cb += time.perf_counter() - t0
            if stop:
                for c in np.flatnonzero(active):
                    active[c], reason[c] = False, "callback"
    for c in np.flatnonzero(active):
        reason[c] = "max_iter"
    hist = {k: np.asarray(v) for k, v in history.items()}
    return SolveResult(
        alpha=alpha,
        b=b,
        n_iter=n_iter,
        converged=converged,
        reason=reason,
        objective=obj,
        history=hist,
        n_ls_iter=n_ls,
    )


def _error(K_val: Any, alpha: np.ndarray, b: np.ndarray, Y_val: np.ndarray) -> np.ndarray:
    """Per-column binary error rate of sign(K_val alpha + b) against Y_val (+-1)."""
    F = np.asarray(K_val @ alpha) + b
    return np.mean(np.where(F >= 0, 1.0, -1.0) != Y_val, axis=0)
