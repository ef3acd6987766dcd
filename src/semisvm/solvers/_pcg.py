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
from ._targets import as_targets
from ._tolerances import tolerances

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
    landmarks: Any = None,
) -> SolveResult:
    r"""Train C LapSVM (or LapRLS) columns in the primal by PCG.

    Parameters
    ----------
    K : ndarray or operator of shape (n, n)
        Gram matrix of the training points (anything with ``@`` on an (n, C) block).
    Y : ndarray of shape (n, C) or (n,)
        Targets in the solvers' convention (:mod:`semisvm.solvers`): +1 / -1 on
        labeled rows, 0 on unlabeled rows, one one-vs-rest problem per column.
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
        ``'half'``, the outputs at half the iterations so far, checked every
        :math:`\theta/2` from :math:`2\theta` on: sees slow drifts.
    K_val, Y_val : ndarray of shape (m, n) and (m, C), default=None
        Kernel between validation and training points; validation targets in ±1.
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
        landmark columns of K (Rayleigh-Ritz in the K inner product;
        :mod:`semisvm.solvers._preconditioners`): the same optimum, fewer iterations.
    preconditioner_rank : int, default=None
        Its landmarks; ``None``: :math:`\min(n, 1000, \max(100, \lceil 5\sqrt n\rceil))`.
    random_state : int, RandomState instance or None, default=None
        Landmark draw of the Nyström preconditioner.
    landmarks : LandmarkSpace, optional
        K's landmarks with L (:mod:`semisvm.solvers._landmarks`): the Nyström
        preconditioner's subspace and graph Gram, instead of a landmark draw.

    Returns
    -------
    SolveResult

    References
    ----------
    S. Melacci and M. Belkin, "Laplacian Support Vector Machines Trained in the
    Primal", JMLR 12, 2011, Algorithm 1, Sections 3.2 and 4.
    """
    _check_solver_options(
        loss, tol_criterion, preconditioner, preconditioner_rank, landmarks, L
    )
    _check_stopping_options(early_stopping, stability_window, K_val, Y_val)
    pcg = _PCG(
        K,
        as_targets(Y),
        L=L,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        squared=loss == "squared",
        intrinsic_bias=intrinsic_bias,
        fit_intercept=fit_intercept,
        sample_weight=sample_weight,
        tol=tol,
        tol_criterion=tol_criterion,
        keep_Kg=record_history,  # the history's 'gradient' criterion reads K g
    )
    pcg.start(alpha0, b0, preconditioner, preconditioner_rank, random_state, landmarks)
    rule = _stopping_rule(
        early_stopping,
        pcg,
        check_every,
        stability_tol,
        stability_value_tol,
        stability_window,
        K_val,
        Y_val,
    )
    history = _History(pcg, K_eval, Y_eval) if record_history else None
    pcg.run(max_iter, rule, history, callback)
    pcg.warn_precision()
    return pcg.result({} if history is None else history.arrays())


def _check_solver_options(
    loss: str,
    tol_criterion: str,
    preconditioner: str,
    preconditioner_rank: Any,
    landmarks: Any = None,
    L: Any = None,
) -> None:
    """Reject unknown solver options with a message naming the parameter."""
    if landmarks is not None:
        landmarks.check_laplacian(L)
    if loss not in ("squared_hinge", "squared"):
        raise ValueError(
            f"Unknown loss {loss!r}; expected 'squared_hinge' or 'squared'."
        )
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


def _check_stopping_options(
    early_stopping: str | None, stability_window: str, K_val: Any, Y_val: Any
) -> None:
    """Reject unknown early-stopping options, or a validation rule without data."""
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


def _stopping_rule(
    early_stopping: str | None,
    pcg: _PCG,
    check_every: int | None,
    stability_tol: float,
    stability_value_tol: float | None,
    stability_window: str,
    K_val: Any,
    Y_val: Any,
) -> DataStoppingRule | None:
    """The data-based stopping rule of ``early_stopping`` (``None``: none).

    The data-based rules and the user's callback are hooks on the iteration state
    (:mod:`semisvm.solvers._early_stopping`); a hook returns a column mask or a bool.
    """
    if early_stopping is None:
        return None
    return DataStoppingRule(
        early_stopping,
        theta=check_every or max(1, math.ceil(math.sqrt(pcg.n) / 2)),
        unlabeled=pcg.unl,
        n_columns=pcg.C,
        stability_tol=stability_tol,
        stability_value_tol=stability_value_tol,
        window=stability_window,
        K_val=K_val,
        Y_val=Y_val,
        dead_zone=tolerances(pcg.Kop.dtype).sign_dead_zone,
    )


class _PCG:
    """State of Algorithm 1 on C columns, one method per phase of an iteration.

    ``alpha, b`` the iterate; ``Ka`` and ``LKa`` (:math:`L f_I`, with
    :math:`f_I = K\\alpha` or :math:`K\\alpha + b1`) its products, updated by
    recurrence; ``gb, ga, Kga`` the preconditioned gradient and its product with
    K (``Kga`` None in the *lean* step, where a preconditioner riding on the
    operator's passes returns :math:`KTg` and :math:`g^TKg` and K's symmetry
    moves every inner product with :math:`Kg` onto :math:`KTg`:
    :math:`z^TKg = (Kz)^Tg`); ``d_b, d_a, Kd`` the direction; ``pg_dot`` and ``mixed`` the two inner
    products of the gradient (:math:`z^T\\nabla` and :math:`\\hat\\nabla^T\\nabla`).
    Per column: ``active``, ``n_iter``, ``n_ls``, ``reason``, ``converged`` and
    the record of the true-residual checks.
    """

    def __init__(
        self,
        K: Any,
        Y: np.ndarray,
        *,
        L: Any,
        gamma_a: float,
        gamma_i: float,
        squared: bool,
        intrinsic_bias: bool,
        fit_intercept: bool,
        sample_weight: np.ndarray | None,
        tol: float,
        tol_criterion: str,
        keep_Kg: bool = False,
    ) -> None:
        self.Kop = as_operator(K)
        #: keep K g in every iteration instead of the lean step (start)
        self.keep_Kg = keep_Kg
        self.n, self.C = Y.shape
        self.use_L = L is not None and gamma_i != 0
        self.Lop = as_operator(L) if self.use_L else None
        self.lab = np.flatnonzero(np.any(Y != 0, axis=1))
        self.unl = np.flatnonzero(~np.any(Y != 0, axis=1))
        self.Yl = Y[self.lab]
        self.Wl = None
        if sample_weight is not None:
            Wl = np.asarray(sample_weight, dtype=np.float64).ravel()[self.lab][:, None]
            if not (np.isfinite(Wl).all() and (Wl > 0).all()):
                raise ValueError(
                    "sample_weight must be finite and > 0 on the labeled rows."
                )
            self.Wl = Wl
        self.gamma_a, self.gamma_i = gamma_a, gamma_i
        self.squared, self.fit_intercept = squared, fit_intercept
        self.intrinsic_bias = intrinsic_bias
        self.tol, self.tol_criterion = tol, tol_criterion
        self.tols = tolerances(np.float64)  # the coefficients are float64
        C = self.C
        self.active = np.ones(C, dtype=bool)
        self.n_iter = np.zeros(C, dtype=np.intp)
        self.n_ls = np.zeros(C, dtype=np.intp)
        self.reason = np.array([""] * C, dtype=object)
        self.converged = np.zeros(C, dtype=bool)
        # true-residual checks that failed, and the criterion they measured
        self.n_refresh = np.zeros(C, dtype=np.intp)
        self.last_true_crit = np.full(C, np.inf)
        self.saw_indefinite = False

    # ------------------------------------------------------------ gradient, objective
    def grad(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Preconditioned gradient (b part, alpha part) and the error-vector masks."""
        lab, Wl = self.lab, self.Wl
        sel, Ka_l, Yl = self._columns(cols)
        f_l = Ka_l + self.b[sel]
        res = f_l - Yl
        if self.squared:
            E = np.ones_like(res, dtype=bool)
        else:
            E = Yl * f_l < 1.0
        res = np.where(E, res, 0.0)
        if Wl is not None:
            res = Wl * res
        ga = self.gamma_a * self.alpha[:, sel]
        LKa = self.LKa  # None without the intrinsic term (use_L False)
        if LKa is not None:
            ga += self.gamma_i * LKa[:, sel]
        ga[lab] += res
        gb = res.sum(axis=0)
        if self.L1 is not None and LKa is not None:  # L1 implies the intrinsic term
            gb = gb + self.gamma_i * LKa[:, sel].sum(axis=0)
        if not self.fit_intercept:  # b stays at b0 (0): no bias direction
            gb = np.zeros_like(gb)
        return gb, ga, E

    def objective(self, cols: np.ndarray) -> np.ndarray:
        """Objective (Eq. 7 or 14) of columns ``cols`` from the maintained products."""
        sel, Ka_l, Yl = self._columns(cols)
        f_l = Ka_l + self.b[sel]
        if self.squared:
            h = Yl - f_l
        else:
            h = np.maximum(0.0, 1.0 - Yl * f_l)
        hh = h * h if self.Wl is None else self.Wl * h * h
        Ka = self.Ka[:, sel]
        val = hh.sum(axis=0) + self.gamma_a * _coldot(self.alpha[:, sel], Ka)
        if self.LKa is not None:  # the intrinsic term (use_L)
            fI = Ka + self.b[sel] if self.L1 is not None else Ka
            val = val + self.gamma_i * _coldot(fI, self.LKa[:, sel])
        return 0.5 * val

    def _columns(self, cols: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """Selector of columns ``cols``, K alpha and the targets on the labeled rows.

        ``cols`` is sorted and unique, so all C of them select everything: then the
        selector is a slice (views, no gather of the (n, C) blocks), else the indices.
        """
        if cols.size == self.C:
            return slice(None), self.Ka[self.lab], self.Yl
        return cols, self.Ka[np.ix_(self.lab, cols)], self.Yl[:, cols]

    def crit_values(
        self,
        gb: np.ndarray,
        ga: np.ndarray,
        Kga: np.ndarray,
        mix: np.ndarray,
        obj_prev: np.ndarray,
        obj_now: np.ndarray,
    ) -> np.ndarray:
        """The classical stopping quantity of ``tol_criterion`` (unnormalised)."""
        if self.tol_criterion == "mixed":
            return np.sqrt(np.maximum(mix, 0.0))
        if self.tol_criterion == "gradient":
            return np.sqrt(gb * gb + _coldot(Kga, Kga))
        if self.tol_criterion == "preconditioned_gradient":
            return np.sqrt(gb * gb + _coldot(ga, ga))
        return np.abs(obj_prev - obj_now) / self.obj0[: obj_now.size]

    # ----------------------------------------------------------------------- start
    def start(
        self,
        alpha0: Any,
        b0: Any,
        preconditioner: str,
        rank: int | None,
        random_state: Any,
        landmarks: Any = None,
    ) -> None:
        """Preconditioner, iterate, products, gradient, direction, criterion scale."""
        pre = make_preconditioner(
            preconditioner,
            self.Kop,
            self.lab,
            self.Lop,
            self.gamma_a,
            self.gamma_i,
            rank,
            random_state,
            landmarks,
        )
        n, C, Kop = self.n, self.C, self.Kop
        self.pre = pre
        alpha = (
            np.zeros((n, C)) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        )
        self.alpha = alpha.reshape(n, C)
        self.b = (
            np.zeros(C) if b0 is None else np.array(b0, dtype=np.float64).reshape(C)
        )
        self.Ka = Kop @ self.alpha if self.alpha.any() else np.zeros((n, C))
        Lop = self.Lop  # None exactly when use_L is False
        self.L1: np.ndarray | None = (
            (Lop @ np.ones(n)) if (Lop is not None and self.intrinsic_bias) else None
        )
        self.LKa: np.ndarray | None = (Lop @ self.Ka) if Lop is not None else None
        if self.L1 is not None and self.LKa is not None:
            self.LKa += self.L1[:, None] * self.b
        self.n_products = np.full(C, getattr(pre, "setup_products", 0), dtype=np.intp)
        all_cols = np.arange(C)
        gb, ga, _ = self.grad(all_cols)
        Kga = Kop @ ga  # the one product of iteration 0
        self.n_products += 1
        za, Kza = pre.apply(ga, Kga)
        # the lean iteration keeps no K g (apply_lean: its inner products read
        # K z); the classical 'gradient' criterion needs it
        self.lean = hasattr(pre, "apply_lean") and bool(getattr(pre, "fused", False))
        self.lean &= self.tol_criterion != "gradient" and not self.keep_Kg
        self.gb, self.ga = gb, ga
        self.Kga: np.ndarray | None = None if self.lean else Kga
        self.d_b, self.d_a, self.Kd = -gb, -za, -Kza
        self.pg_dot = gb * gb + _coldot(za, Kga)  # z^T grad (M^-1-norm of the gradient)
        self.mixed = gb * gb + _coldot(ga, Kga)  # ghat^T grad, the paper's quantity
        self.obj = self.objective(all_cols)
        self.obj0 = np.maximum(self.obj, self.tols.tiny)
        crit0 = self.crit_values(gb, ga, Kga, self.mixed, self.obj, self.obj)
        if alpha0 is not None or b0 is not None:
            crit0 = self._zero_start_criterion()
        crit0 = np.where(crit0 > 0, crit0, 1.0)
        self.crit0 = np.ones(C) if self.tol_criterion == "objective" else crit0
        # initial gradient may already be zero (e.g. warm start at the optimum)
        zero = np.sqrt(np.maximum(self.mixed, 0)) <= self.tols.zero_gradient
        self.active[zero], self.converged[zero], self.reason[zero] = False, True, "tol"

    def _zero_start_criterion(self) -> np.ndarray:
        """Normalise by the values at z = 0 (the paper's t = 0), not at the warm start."""
        Yl, Wl, C = self.Yl, self.Wl, self.C
        WYl = Yl if Wl is None else Wl * Yl
        gb0 = -WYl.sum(axis=0) if self.fit_intercept else np.zeros(C)
        ga0 = np.zeros((self.n, C))
        ga0[self.lab] = -WYl
        Kga0 = self.Kop @ ga0
        self.n_products += 1
        mix0 = gb0 * gb0 + _coldot(ga0, Kga0)
        obj_zero = 0.5 * (WYl * Yl).sum(axis=0)
        self.obj0 = np.maximum(obj_zero, self.tols.tiny)
        return self.crit_values(gb0, ga0, Kga0, mix0, obj_zero, obj_zero)

    # ------------------------------------------------------------------- iteration
    def run(
        self,
        max_iter: int,
        rule: DataStoppingRule | None,
        history: _History | None,
        callback: Callable[[dict], Any] | None,
    ) -> None:
        """The loop: iterate the active columns, then the hooks, in this order.

        The data-based rule, the history record, then the user's callback (whose
        time the history excludes).
        """
        user = None if callback is None else UserCallback(callback)
        t_cb = 0.0
        for it in range(1, max_iter + 1):
            cols = np.flatnonzero(self.active)
            if cols.size == 0:
                break
            self.iterate(cols)
            state = self.hook_state(it)
            if rule is not None:
                self.run_hook(rule, state)
            if history is not None:
                history.append(self, t_cb)
            if user is not None:
                t0 = time.perf_counter()
                self.run_hook(user, state)
                t_cb += time.perf_counter() - t0
        self.reason[self.active] = "max_iter"

    def iterate(self, cols: np.ndarray) -> None:
        """One iteration of the active columns: step, new direction, tol check."""
        full = cols.size == self.C
        sel = slice(None) if full else cols
        self._step(cols, sel, full)
        mix_new, pg_new, ghat = self._new_direction(cols, sel, full)
        obj_prev = self.obj[cols].copy()
        self.obj[cols] = self.objective(cols)
        crit = self.crit_values(*ghat, mix_new, obj_prev, self.obj[cols])
        cand = (crit / self.crit0[cols] <= self.tol) | (mix_new <= 0) | (pg_new <= 0)
        if cand.any():
            self._check_tol(cols[cand], obj_prev[cand])

    def _step(self, cols: np.ndarray, sel: Any, full: bool) -> None:
        """Exact line search on all active columns at once, then the update."""
        ga_, gi = self.gamma_a, self.gamma_i
        lab, Yl, L1, LKa = self.lab, self.Yl, self.L1, self.LKa
        Kd_c = self.Kd[:, sel]
        db_c = self.d_b[sel]
        fd_l = Kd_c[lab] + db_c
        # L K d, with LKa (None without the intrinsic term, use_L False)
        LKd = None if self.Lop is None else self.Lop @ Kd_c
        if L1 is not None and LKd is not None:
            LKd += L1[:, None] * db_c
        A = ga_ * _coldot(self.alpha[:, sel], Kd_c)
        B = ga_ * _coldot(self.d_a[:, sel], Kd_c)
        if LKa is not None and LKd is not None:
            if L1 is not None:
                dI = Kd_c + db_c
                A += gi * _coldot(LKa[:, sel], dI)
                B += gi * _coldot(dI, LKd)
            else:
                A += gi * _coldot(self.Ka[:, sel], LKd)
                B += gi * _coldot(Kd_c, LKd)
        F_l = self.Ka[lab][:, sel] + self.b[sel]
        if self.squared:
            wfd = fd_l if self.Wl is None else self.Wl * fd_l
            a = A + _coldot(F_l - Yl[:, sel], wfd)
            cc = B + _coldot(fd_l, wfd)
            with np.errstate(divide="ignore", invalid="ignore"):
                steps = np.where(cc > 0, -a / cc, 0.0)
            nls = np.ones(cols.size, dtype=np.intp)
        else:
            steps, nls = exact_line_search_batch(F_l, fd_l, Yl[:, sel], A, B, self.Wl)
        # an unbounded direction cannot happen with gamma_a > 0
        steps = np.where(np.isfinite(steps), steps, 0.0)
        self.n_ls[cols] += nls
        if full:
            self.alpha += steps * self.d_a
            self.b += steps * self.d_b
            self.Ka += steps * self.Kd
            if LKa is not None and LKd is not None:
                LKa += steps * LKd
        else:
            self.alpha[:, cols] += steps * self.d_a[:, cols]
            self.b[cols] += steps * self.d_b[cols]
            self.Ka[:, cols] += steps * Kd_c
            if LKa is not None and LKd is not None:
                LKa[:, cols] += steps * LKd
        self.n_iter[cols] += 1

    def _new_direction(
        self, cols: np.ndarray, sel: Any, full: bool
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, Any]]:
        """New gradient (one product with K) and the Polak-Ribiere direction
        (``K ghat`` None in the lean step)."""
        gb_new, ga_new, _ = self.grad(cols)
        self.n_products[cols] += 1
        Kga_new: np.ndarray | None = None
        if self.lean:  # K g only through inner products: moved onto K z
            za_new, Kza_new, gKg = self.pre.apply_lean(ga_new)
            pg_new = gb_new * gb_new + _coldot(Kza_new, ga_new)
            mix_new = gb_new * gb_new + gKg
            cross = gb_new * self.gb[sel] + _coldot(Kza_new, self.ga[:, sel])
        else:
            if getattr(self.pre, "fused", False):  # T on the product's passes
                Kga_new, za_new, Kza_new = self.pre.apply_with_product(ga_new)
            else:
                Kga_new = self.Kop @ ga_new
                za_new, Kza_new = self.pre.apply(ga_new, Kga_new)
            pg_new = gb_new * gb_new + _coldot(za_new, Kga_new)
            if za_new is ga_new:  # the paper's preconditioner: z = ghat
                mix_new = pg_new.copy()
            else:
                mix_new = gb_new * gb_new + _coldot(ga_new, Kga_new)
            assert self.Kga is not None
            cross = gb_new * self.gb[sel] + _coldot(za_new, self.Kga[:, sel])
        # Polak-Ribiere: z_t^T (grad_t - grad_{t-1}) / z_{t-1}^T grad_{t-1}
        denom = self.pg_dot[sel]
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(denom > 0, (pg_new - cross) / denom, 0.0)
        rho = np.maximum(rho, 0.0)
        if full:  # in place: rho d - z is -z + rho d, bit for bit
            self.d_b = -gb_new + rho * self.d_b
            self.d_a *= rho
            self.d_a -= za_new
            self.Kd *= rho
            self.Kd -= Kza_new
            self.gb, self.ga, self.Kga = gb_new, ga_new, Kga_new
            self.pg_dot, self.mixed = pg_new, mix_new
        else:
            self.d_b[cols] = -gb_new + rho * self.d_b[cols]
            self.d_a[:, cols] = -za_new + rho * self.d_a[:, cols]
            self.Kd[:, cols] = -Kza_new + rho * self.Kd[:, cols]
            self.gb[cols], self.ga[:, cols] = gb_new, ga_new
            if self.Kga is not None:
                self.Kga[:, cols] = Kga_new
            self.pg_dot[cols], self.mixed[cols] = pg_new, mix_new
        return mix_new, pg_new, (gb_new, ga_new, Kga_new)

    # -------------------------------------------------------------------- stopping
    def _check_tol(self, cs: np.ndarray, obj_before: np.ndarray) -> None:
        """Classical stopping of candidate columns, confirmed on the true residual."""
        ok, true_crit, indefinite = self._confirm(cs, obj_before)
        self.n_products[cs] += 2
        # no progress of the true criterion since the last failed check, or an
        # indefinite K: the arithmetic (e.g. a float32 K) cannot resolve tol
        stalled = ~ok & (
            (true_crit >= self.tols.stall_ratio * self.last_true_crit[cs]) | indefinite
        )
        self.saw_indefinite |= bool(indefinite.any())
        self.last_true_crit[cs] = np.where(ok, self.last_true_crit[cs], true_crit)
        self.n_refresh[cs] += ~ok
        done = cs[ok]
        self.active[done], self.converged[done], self.reason[done] = False, True, "tol"
        st = cs[stalled]
        self.active[st], self.reason[st] = False, "precision"

    def _confirm(self, cs: np.ndarray, obj_before: np.ndarray) -> tuple:
        """Stopping check on the true residual of columns ``cs``.

        The recurrences for K alpha, L K alpha and K d drift from the true values
        (most with a float32 K, whose products round at ~1e-7); a stop is only
        granted when the criterion recomputed from alpha itself (two products with
        K) is below tol.  Columns that fail restart from steepest descent at the
        refreshed state.
        """
        self.Ka[:, cs] = _accurate_product(self.Kop, self.alpha[:, cs])
        if self.Lop is not None and self.LKa is not None:  # the intrinsic term
            self.LKa[:, cs] = self.Lop @ self.Ka[:, cs]
            if self.L1 is not None:
                self.LKa[:, cs] += self.L1[:, None] * self.b[cs]
        gb_t, ga_t, _ = self.grad(cs)
        Kga_t = _accurate_product(self.Kop, ga_t)
        mix_t = gb_t * gb_t + _coldot(ga_t, Kga_t)
        obj_t = self.objective(cs)
        crit_t = self.crit_values(gb_t, ga_t, Kga_t, mix_t, obj_before, obj_t)
        crit_t = crit_t / self.crit0[cs]
        # g^T K g <= 0 with g != 0 is impossible for a PSD K: the products (or K
        # itself, e.g. rounded to float32) are indefinite at this scale
        indefinite = (mix_t <= 0) & (np.abs(ga_t).max(axis=0) > 0)
        ok = (crit_t <= self.tol) & ~indefinite
        self.obj[cs] = obj_t
        bad = cs[~ok]
        if bad.size:
            za_t, Kza_t = self.pre.apply(ga_t[:, ~ok], Kga_t[:, ~ok])
            self.gb[bad], self.ga[:, bad] = gb_t[~ok], ga_t[:, ~ok]
            if self.Kga is not None:
                self.Kga[:, bad] = Kga_t[:, ~ok]
            self.mixed[bad] = mix_t[~ok]
            self.pg_dot[bad] = gb_t[~ok] ** 2 + _coldot(za_t, Kga_t[:, ~ok])
            self.d_b[bad], self.d_a[:, bad], self.Kd[:, bad] = -gb_t[~ok], -za_t, -Kza_t
        return ok, crit_t, indefinite

    # ----------------------------------------------------------------------- hooks
    def hook_state(self, it: int) -> dict:
        """The state a hook sees (arrays are the solver's own: read, never write)."""
        return {
            "iteration": it,
            "Ka": self.Ka,
            "b": self.b,
            "alpha": self.alpha,
            "active": self.active,
            "objective": self.obj,
        }

    def run_hook(self, hook: Any, state: dict) -> None:
        """Stop the columns a hook asks to stop (a bool, or a mask over the columns)."""
        stop = hook(state)
        if stop is None or stop is False:
            return
        act = np.flatnonzero(self.active)
        if stop is not True:
            act = act[np.asarray(stop)[act]]
        self.active[act], self.reason[act] = False, hook.reason

    # ---------------------------------------------------------------------- result
    def warn_precision(self) -> None:
        """ConvergenceWarning when a column gave up on tol (reason "precision")."""
        prec = self.reason == "precision"
        if not np.any(prec):
            return
        indefinite = ""
        if self.saw_indefinite:
            indefinite = (
                f" and K is numerically indefinite at the scale of "
                f"gamma_a={self.gamma_a:g} (g^T K g <= 0 for a nonzero g"
                + (
                    ": the float32 rounding of K exceeds the regularization)"
                    if self.Kop.dtype == np.float32
                    else ")"
                )
            )
        warnings.warn(
            f"PCG stopped before reaching tol={self.tol:g}: the stopping quantity, "
            "recomputed from the coefficients, no longer decreases (it reached "
            f"{np.min(self.last_true_crit[prec]):.3g} relative)"
            + indefinite
            + ". Use a float64 kernel, a larger gamma_a or a larger tol.",
            ConvergenceWarning,
            stacklevel=3,
        )

    def result(self, history: dict) -> SolveResult:
        return SolveResult(
            alpha=self.alpha,
            b=self.b,
            n_iter=self.n_iter,
            converged=self.converged,
            reason=self.reason.tolist(),
            n_products=self.n_products,
            preconditioner=self.pre.name,
            objective=self.obj,
            history=history,
            n_ls_iter=self.n_ls,
        )


class _History:
    """Per-iteration objective, gradient norms, time and error on (K_eval, Y_eval)."""

    def __init__(self, pcg: _PCG, K_eval: Any, Y_eval: Any) -> None:
        self.K_eval, self.Y_eval = K_eval, Y_eval
        self.rows: dict[str, list] = {
            k: []
            for k in (
                "objective",
                "gradient",
                "preconditioned_gradient",
                "mixed",
                "time",
            )
        }
        if K_eval is not None:
            self.rows["eval_error"] = []
        self.t_start = time.perf_counter()
        self.append(pcg, 0.0, t=0.0)

    def append(self, s: _PCG, t_callbacks: float, t: float | None = None) -> None:
        r = self.rows
        r["objective"].append(s.obj.copy())
        assert s.Kga is not None  # kept when a history is recorded (keep_Kg)
        r["gradient"].append(np.sqrt(s.gb * s.gb + _coldot(s.Kga, s.Kga)))
        r["preconditioned_gradient"].append(np.sqrt(s.gb * s.gb + _coldot(s.ga, s.ga)))
        r["mixed"].append(np.sqrt(np.maximum(s.mixed, 0)))
        r["time"].append(
            time.perf_counter() - self.t_start - t_callbacks if t is None else t
        )
        if self.K_eval is not None:
            r["eval_error"].append(
                validation_error(self.K_eval, s.alpha, s.b, self.Y_eval)
            )

    def arrays(self) -> dict:
        return {k: np.asarray(v) for k, v in self.rows.items()}


def _accurate_product(Kop: Any, V: np.ndarray) -> np.ndarray:
    """``K @ V`` accumulated in float64, also for a float32 K (row blocks, bounded memory).

    A float32 product rounds the input to float32 and accumulates in float32: with
    a small gamma_a the coefficients are large and cancel, and such a product can
    be off by more than the residual being measured.  Only the stopping check uses
    this (a few times per solve); other operators are used as they are.
    """
    acc = getattr(Kop, "accurate_matmul", None)
    if callable(acc):  # e.g. a kernel whose rows live on a cluster's workers
        return np.asarray(acc(V), dtype=np.float64)
    Kmat = getattr(Kop, "K", None)
    if not (isinstance(Kmat, np.ndarray) and Kmat.dtype == np.float32):
        return np.asarray(Kop @ V, dtype=np.float64)
    n = Kmat.shape[0]
    rows = max(1, min(n, (8 * 2**20) // (8 * n)))  # 8 MiB float64 blocks
    out = np.empty((n, V.shape[1]))
    with single_blas_thread():
        for i in range(0, n, rows):
            out[i : i + rows] = Kmat[i : i + rows].astype(np.float64) @ V
    return out


def _coldot(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Column-wise dot products (one pass, no temporary of shape (n, C))."""
    return np.einsum("ij,ij->j", P, Q)
