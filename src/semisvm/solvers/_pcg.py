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
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..kernels._operators import as_operator, single_blas_thread
from ._early_stopping import (
    EARLY_STOPPING_RULES,
    DataStoppingRule,
    UserCallback,
    validation_error,
)
from ._linesearch import exact_line_search_batch
from ._preconditioners import PRECONDITIONERS, make_preconditioner
from ._result import SolveResult

__all__ = ["lapsvm_pcg", "TOL_CRITERIA", "EARLY_STOPPING_RULES"]

TOL_CRITERIA = ("mixed", "gradient", "preconditioned_gradient", "objective")

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
    stability_window: str = "last",
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
    preconditioner: str = "paper",
    preconditioner_rank: int | None = None,
    random_state: Any = None,
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
    stability_window : {'last', 'half'}, default='last'
        What the stability check compares the current labels (and outputs) with:
        ``'last'``, the previous check, :math:`\theta` iterations ago (the paper);
        ``'half'``, the check nearest to half the iterations done so far.  A window
        that grows with the run sees the slow drift of a diffusing solution that a
        fixed window misses (measured in ``benchmarks/bench_pcg_iterations.py``:
        within 0.5 points of the unstopped accuracy where ``'last'`` lost up to 4).
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
    preconditioner : {'paper', 'nystroem'}, default='paper'
        ``'paper'``: :math:`P = \mathrm{diag}(1, K)` (Algorithm 1, exactly).
        ``'nystroem'``: the paper's P combined with a deflation of the top of the
        spectrum of :math:`(I_E + \gamma_I L) K + \gamma_A I` on ``preconditioner_rank``
        landmark columns of K (Rayleigh-Ritz in the K inner product); see
        :mod:`semisvm.solvers._preconditioners`.  Same objective and optimum, the same
        exact line search, one product with K per iteration; fewer iterations
        when the spectrum spreads with n.
    preconditioner_rank : int, default=None
        Landmarks of the Nyström preconditioner; ``None`` gives
        :math:`\min(n, 1000, \max(100, \lceil 5\sqrt n\rceil))`.
    random_state : int, RandomState instance or None, default=None
        Landmark draw of the Nyström preconditioner.

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
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(
            f"Unknown preconditioner {preconditioner!r}; expected one of {PRECONDITIONERS}."
        )
    if preconditioner_rank is not None and int(preconditioner_rank) < 1:
        raise ValueError(
            f"preconditioner_rank must be a positive integer, got {preconditioner_rank!r}."
        )
    if early_stopping is not None and early_stopping not in EARLY_STOPPING_RULES:
        raise ValueError(
            f"Unknown early_stopping {early_stopping!r}; expected None or one of "
            f"{EARLY_STOPPING_RULES}."
        )
    if stability_window not in ("last", "half"):
        raise ValueError(
            f"Unknown stability_window {stability_window!r}; expected 'last' or 'half'."
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

    pre = make_preconditioner(
        preconditioner, Kop, lab, Lop, gamma_a, gamma_i, preconditioner_rank, random_state
    )
    n_products = np.full(C, getattr(pre, "setup_products", 0), dtype=np.intp)

    all_cols = np.arange(C)
    gb, ga, _ = grad(all_cols)
    Kga = Kop @ ga  # the one product of iteration 0
    n_products += 1
    za, Kza = pre.apply(ga, Kga)
    d_b, d_a, Kd = -gb, -za, -Kza
    pg_dot = gb * gb + _coldot(za, Kga)  # z^T grad (M^-1-norm of the gradient)
    mixed = gb * gb + _coldot(ga, Kga)  # ghat^T grad, the paper's quantity
    obj = objective(all_cols)
    obj0 = np.maximum(obj, np.finfo(np.float64).tiny)

    def crit_values(gb_, ga_, Kga_, mix, obj_prev, obj_now) -> np.ndarray:
        if tol_criterion == "mixed":
            return np.sqrt(np.maximum(mix, 0.0))
        if tol_criterion == "gradient":
            return np.sqrt(gb_ * gb_ + _coldot(Kga_, Kga_))
        if tol_criterion == "preconditioned_gradient":
            return np.sqrt(gb_ * gb_ + _coldot(ga_, ga_))
        return np.abs(obj_prev - obj_now) / obj0[: obj_now.size]

    crit0 = crit_values(gb, ga, Kga, mixed, obj, obj)
    if alpha0 is not None or b0 is not None:
        # normalise by the values at z = 0 (the paper's t = 0), not at the warm start
        WYl = Yl if Wl is None else Wl * Yl
        gb0 = -WYl.sum(axis=0) if fit_intercept else np.zeros(C)
        ga0 = np.zeros((n, C))
        ga0[lab] = -WYl
        Kga0 = Kop @ ga0
        n_products += 1
        mix0 = gb0 * gb0 + _coldot(ga0, Kga0)
        obj_zero = 0.5 * (WYl * Yl).sum(axis=0)
        obj0 = np.maximum(obj_zero, np.finfo(np.float64).tiny)
        crit0 = crit_values(gb0, ga0, Kga0, mix0, obj_zero, obj_zero)
    crit0 = np.where(crit0 > 0, crit0, 1.0)
    if tol_criterion == "objective":
        crit0 = np.ones(C)

    def _confirm(cs: np.ndarray, obj_before: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stopping check on the true residual of columns ``cs``.

        The recurrences for K alpha, L K alpha and K d drift from the true values
        (most with a float32 K, whose products round at ~1e-7); a stop is only
        granted when the criterion recomputed from alpha itself (two products with
        K) is below tol.  Columns that fail restart from steepest descent at the
        refreshed state.
        """
        nonlocal d_b, d_a, Kd
        Ka[:, cs] = _accurate_product(Kop, alpha[:, cs])
        if use_L:
            LKa[:, cs] = Lop @ Ka[:, cs]
            if L1 is not None:
                LKa[:, cs] += L1[:, None] * b[cs]
        gb_t, ga_t, _ = grad(cs)
        Kga_t = _accurate_product(Kop, ga_t)
        mix_t = gb_t * gb_t + _coldot(ga_t, Kga_t)
        obj_t = objective(cs)
        crit_t = crit_values(gb_t, ga_t, Kga_t, mix_t, obj_before, obj_t) / crit0[cs]
        # g^T K g <= 0 with g != 0 is impossible for a PSD K: the products (or K
        # itself, e.g. rounded to float32) are indefinite at this scale
        indefinite = (mix_t <= 0) & (np.abs(ga_t).max(axis=0) > 0)
        ok = (crit_t <= tol) & ~indefinite
        obj[cs] = obj_t
        bad = cs[~ok]
        if bad.size:
            za_t, Kza_t = pre.apply(ga_t[:, ~ok], Kga_t[:, ~ok])
            gb[bad], ga[:, bad], Kga[:, bad] = gb_t[~ok], ga_t[:, ~ok], Kga_t[:, ~ok]
            mixed[bad] = mix_t[~ok]
            pg_dot[bad] = gb_t[~ok] ** 2 + _coldot(za_t, Kga_t[:, ~ok])
            d_b[bad], d_a[:, bad], Kd[:, bad] = -gb_t[~ok], -za_t, -Kza_t
        return ok, crit_t, indefinite

    active = np.ones(C, dtype=bool)
    n_iter = np.zeros(C, dtype=np.intp)
    n_ls = np.zeros(C, dtype=np.intp)
    reason = np.array([""] * C, dtype=object)
    converged = np.zeros(C, dtype=bool)
    # true-residual checks that failed, and the criterion they measured
    n_refresh = np.zeros(C, dtype=np.intp)
    last_true_crit = np.full(C, np.inf)
    saw_indefinite = False
    # initial gradient may already be zero (e.g. warm start at the optimum)
    zero_grad = np.sqrt(np.maximum(mixed, 0)) <= np.finfo(np.float64).eps
    active[zero_grad], converged[zero_grad], reason[zero_grad] = False, True, "tol"

    # the data-based rules and the user's callback: hooks on the iteration state
    # (semisvm.solvers._early_stopping); a hook returns a column mask or a bool
    rule = None if early_stopping is None else DataStoppingRule(
        early_stopping, theta=theta, unlabeled=unl, n_columns=C,
        stability_tol=stability_tol, stability_value_tol=stability_value_tol,
        window=stability_window, K_val=K_val, Y_val=Y_val,
    )
    user = None if callback is None else UserCallback(callback)

    def run_hook(hook: Any, state: dict) -> None:
        stop = hook(state)
        if stop is None or stop is False:
            return
        act = np.flatnonzero(active)
        if stop is not True:
            act = act[np.asarray(stop)[act]]
        active[act], reason[act] = False, hook.reason

    history: dict[str, list] = {}
    if record_history:
        history = {
            "objective": [obj.copy()],
            "gradient": [np.sqrt(gb * gb + _coldot(Kga, Kga))],
            "preconditioned_gradient": [np.sqrt(gb * gb + _coldot(ga, ga))],
            "mixed": [np.sqrt(np.maximum(mixed, 0))],
            "time": [0.0],
        }
        if K_eval is not None:
            history["eval_error"] = [validation_error(K_eval, alpha, b, Y_eval)]
    t_start = time.perf_counter()
    t_cb = 0.0

    for it in range(1, max_iter + 1):
        cols = np.flatnonzero(active)
        if cols.size == 0:
            break
        full = cols.size == C
        sel = slice(None) if full else cols
        # --- exact line search on all active columns at once
        Kd_c = Kd[:, sel]
        db_c = d_b[sel]
        fd_l = Kd_c[lab] + db_c
        LKd = (Lop @ Kd_c) if use_L else None
        if L1 is not None:
            LKd += L1[:, None] * db_c
        alpha_c = alpha[:, sel]
        A = gamma_a * _coldot(alpha_c, Kd_c)
        B = gamma_a * _coldot(d_a[:, sel], Kd_c)
        if use_L:
            if L1 is not None:
                dI = Kd_c + db_c
                A += gamma_i * _coldot(LKa[:, sel], dI)
                B += gamma_i * _coldot(dI, LKd)
            else:
                A += gamma_i * _coldot(Ka[:, sel], LKd)
                B += gamma_i * _coldot(Kd_c, LKd)
        F_l = Ka[lab][:, sel] + b[sel]
        if squared:
            wfd = fd_l if Wl is None else Wl * fd_l
            a = A + _coldot(F_l - Yl[:, sel], wfd)
            cc = B + _coldot(fd_l, wfd)
            with np.errstate(divide="ignore", invalid="ignore"):
                steps = np.where(cc > 0, -a / cc, 0.0)
            nls = np.ones(cols.size, dtype=np.intp)
        else:
            steps, nls = exact_line_search_batch(F_l, fd_l, Yl[:, sel], A, B, Wl)
        # an unbounded direction cannot happen with gamma_a > 0
        steps = np.where(np.isfinite(steps), steps, 0.0)
        n_ls[cols] += nls
        # --- update
        if full:
            alpha += steps * d_a
            b += steps * d_b
            Ka += steps * Kd
            if use_L:
                LKa += steps * LKd
        else:
            alpha[:, cols] += steps * d_a[:, cols]
            b[cols] += steps * d_b[cols]
            Ka[:, cols] += steps * Kd_c
            if use_L:
                LKa[:, cols] += steps * LKd
        n_iter[cols] += 1
        # --- new gradient, one product with K
        gb_new, ga_new, _ = grad(cols)
        Kga_new = Kop @ ga_new
        n_products[cols] += 1
        za_new, Kza_new = pre.apply(ga_new, Kga_new)
        pg_new = gb_new * gb_new + _coldot(za_new, Kga_new)
        mix_new = gb_new * gb_new + _coldot(ga_new, Kga_new)
        # Polak-Ribiere: z_t^T (grad_t - grad_{t-1}) / z_{t-1}^T grad_{t-1}
        cross = gb_new * gb[sel] + _coldot(za_new, Kga[:, sel])
        denom = pg_dot[sel]
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(denom > 0, (pg_new - cross) / denom, 0.0)
        rho = np.maximum(rho, 0.0)
        if full:
            d_b = -gb_new + rho * d_b
            d_a = -za_new + rho * d_a
            Kd = -Kza_new + rho * Kd
            gb, ga, Kga, pg_dot, mixed = gb_new, ga_new, Kga_new, pg_new, mix_new
        else:
            d_b[cols] = -gb_new + rho * d_b[cols]
            d_a[:, cols] = -za_new + rho * d_a[:, cols]
            Kd[:, cols] = -Kza_new + rho * Kd[:, cols]
            gb[cols], ga[:, cols], Kga[:, cols] = gb_new, ga_new, Kga_new
            pg_dot[cols], mixed[cols] = pg_new, mix_new
        obj_prev = obj[cols].copy()
        obj[cols] = objective(cols)
        # --- classical stopping, confirmed on the true residual
        crit = crit_values(gb_new, ga_new, Kga_new, mix_new, obj_prev, obj[cols])
        cand = (crit / crit0[cols] <= tol) | (mix_new <= 0) | (pg_new <= 0)
        if cand.any():
            cc_ = cols[cand]
            ok, true_crit, indefinite = _confirm(cc_, obj_prev[cand])
            n_products[cc_] += 2
            stop = ok
            # no progress of the true criterion since the last failed check, or an
            # indefinite K: the arithmetic (e.g. a float32 K) cannot resolve tol
            stalled = ~ok & ((true_crit >= 0.5 * last_true_crit[cc_]) | indefinite)
            saw_indefinite |= bool(indefinite.any())
            last_true_crit[cc_] = np.where(ok, last_true_crit[cc_], true_crit)
            n_refresh[cc_] += ~ok
            active[cc_[stop]], converged[cc_[stop]], reason[cc_[stop]] = False, True, "tol"
            st = cc_[stalled]
            active[st], reason[st] = False, "precision"
        # --- data-based early stopping (every theta iterations, inside the rule)
        state = {"iteration": it, "Ka": Ka, "b": b, "alpha": alpha, "active": active,
                 "objective": obj}
        if rule is not None:
            run_hook(rule, state)
        if record_history:
            history["objective"].append(obj.copy())
            history["gradient"].append(np.sqrt(gb * gb + _coldot(Kga, Kga)))
            history["preconditioned_gradient"].append(np.sqrt(gb * gb + _coldot(ga, ga)))
            history["mixed"].append(np.sqrt(np.maximum(mixed, 0)))
            history["time"].append(time.perf_counter() - t_start - t_cb)
            if K_eval is not None:
                history["eval_error"].append(validation_error(K_eval, alpha, b, Y_eval))
        if user is not None:
            t0 = time.perf_counter()
            run_hook(user, state)
            t_cb += time.perf_counter() - t0
    reason[active] = "max_iter"
    if np.any(reason == "precision"):
        warnings.warn(
            f"PCG stopped before reaching tol={tol:g}: the stopping quantity, "
            "recomputed from the coefficients, no longer decreases (it reached "
            f"{np.min(last_true_crit[reason == 'precision']):.3g} relative)"
            + (f" and K is numerically indefinite at the scale of gamma_a={gamma_a:g} "
               "(g^T K g <= 0 for a nonzero g"
               + (": the float32 rounding of K exceeds the regularization)"
                  if Kop.dtype == np.float32 else ")")
               if saw_indefinite else "")
            + ". Use a float64 kernel, a larger gamma_a or a larger tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    hist = {k: np.asarray(v) for k, v in history.items()}
    return SolveResult(
        alpha=alpha,
        b=b,
        n_iter=n_iter,
        converged=converged,
        reason=reason.tolist(),
        n_products=n_products,
        preconditioner=pre.name,
        objective=obj,
        history=hist,
        n_ls_iter=n_ls,
    )


def _accurate_product(Kop: Any, V: np.ndarray) -> np.ndarray:
    """``K @ V`` accumulated in float64, also for a float32 K (row blocks, bounded memory).

    A float32 product rounds the input to float32 and accumulates in float32: with
    a small gamma_a the coefficients are large and cancel, and such a product can
    be off by more than the residual being measured.  Only the stopping check uses
    this (a few times per solve); other operators are used as they are.
    """
    Kmat = getattr(Kop, "K", None)
    if not (isinstance(Kmat, np.ndarray) and Kmat.dtype == np.float32):
        return np.asarray(Kop @ V, dtype=np.float64)
    n = Kmat.shape[0]
    rows = max(1, min(n, (8 * 2**20) // (8 * n)))  # 8 MiB float64 blocks
    out = np.empty((n, V.shape[1]))
    with single_blas_thread():
        for i in range(0, n, rows):
            out[i:i + rows] = Kmat[i:i + rows].astype(np.float64) @ V
    return out


def _coldot(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Column-wise dot products (one pass, no temporary of shape (n, C))."""
    return np.einsum("ij,ij->j", P, Q)
