r"""The solve step of the fit path: one call to a solver of :mod:`semisvm.solvers`.

:func:`solve` picks the solver that computes the requested minimiser fastest and
returns a :class:`Solution`; it reads its settings from a
:class:`~semisvm.models._params.FitParams` and writes nothing.  In order:

* :math:`\gamma_I = 0` on an exact kernel: the minimiser lives on the labeled
  points (representer theorem), solved on :math:`K_{\mathcal{LL}}`;
* an :class:`~semisvm.models._base.OperatorCache` with labeled superset: the
  shared factorizations of :math:`I + rLK` (:mod:`semisvm.models._factorized`);
* otherwise the estimator's own solver: PCG (started from the exact optimum on
  landmarks above :data:`MIN_COARSE_N` points), Newton, the dual, the direct
  LapRLS solve, or the m-space solver of the Nyström operator.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import resolve_seed
from ..kernels._operators import as_operator
from ..solvers._coarse import coarse_start
from ..solvers._lowrank import lapsvm_lowrank
from ..solvers._newton import laprls_direct, lapsvm_newton
from ..solvers._pcg import lapsvm_pcg
from ._options import MIN_LABELS_PER_CLASS

__all__ = ["MIN_COARSE_N", "Solution", "solve", "resolve_solver"]

#: PCG starts from the exact optimum on landmarks (solvers._coarse) above this many
#: points; below, it converges in few iterations from zero.
MIN_COARSE_N = 2000

#: ``stability_value_tol="auto"``: the guard where a class has fewer than
#: :data:`~semisvm.models._options.MIN_LABELS_PER_CLASS` labels, and from there on
VALUE_TOL_FEW, VALUE_TOL_MANY = 0.05, 0.1

#: ``LapRLS(solver="auto")`` factorizes up to this many training points, PCG above
LAPRLS_DIRECT_MAX_N = 10_000


@dataclass(frozen=True)
class Solution:
    """A solver's result and how it was obtained.

    Attributes
    ----------
    result : SolveResult
        Coefficients, bias, iterations, stopping reasons, objective.
    solver : str
        The solver that ran (``solver_``): the estimator's, or
        ``'newton-labeled'`` / ``'direct-labeled'`` (:math:`\\gamma_I = 0`),
        ``'lowrank-newton'`` / ``'lowrank-direct'`` (Nyström).
    coarse_start : dict or None
        The landmark start of PCG (``coarse_start_``), when used.
    """

    result: Any
    solver: str
    coarse_start: dict | None = None


def resolve_solver(params: Any, n_samples: int) -> str:
    """The solver a fit runs: ``params.solver``, with LapRLS' ``'auto'`` as the
    direct solve up to :data:`LAPRLS_DIRECT_MAX_N` points and PCG above."""
    if params.solver != "auto":
        return str(params.solver)
    return "direct" if n_samples <= LAPRLS_DIRECT_MAX_N else "pcg"


def solve(
    params: Any,
    *,
    K: Any,
    L: Any,
    Y: np.ndarray,
    kind: str,
    solver: str,
    gamma_a: float,
    gamma_i: float,
    sample_weight: np.ndarray | None,
    early_stopping: str | None,
    K_val: Any = None,
    Y_val: Any = None,
    cache: Any = None,
    start: dict | None = None,
    landmarks: Any = None,
) -> Solution:
    """Minimise the estimator's objective for the paper's ``(gamma_a, gamma_i)``.

    Parameters
    ----------
    params : FitParams
    K, L : kernel operator (or Nyström factor) and Laplacian (None: no graph term)
    Y : ndarray of shape (n, C)
        ±1/0 one-vs-rest targets.
    kind : {'dense', 'streamed', 'nystroem', 'fitc'}
    solver : str
        The resolved solver (:func:`resolve_solver`).
    gamma_a, gamma_i : float
        The paper's weights.
    sample_weight : ndarray or None
    early_stopping : str or None
        PCG's rule (resolved).
    K_val, Y_val : validation kernel rows and targets, or None
    cache : OperatorCache, optional
        Shared factorizations of many fits on one (K, L).
    start : dict, optional
        PCG's start ``{"alpha0", "b0"}`` (default: the landmark start or zero).
    landmarks : LandmarkSpace, optional
        K's landmark space with L (:mod:`semisvm.solvers._landmarks`): the
        coarse start and the Nyström preconditioner then share its graph Gram.
    """
    hinge = getattr(params, "loss", "squared_hinge") == "hinge"
    if gamma_i == 0 and kind in ("dense", "streamed") and not hinge:
        sol = _solve_supervised(params, K, Y, gamma_a, sample_weight)
        if sol is not None:
            return sol
    if cache is not None and kind == "dense" and not hinge:
        sol = _solve_factorized(
            params, cache, K, L, Y, solver, gamma_a, gamma_i, sample_weight
        )
        if sol is not None:
            return sol
    if hinge and solver != "dual":
        raise ValueError(
            f"loss='hinge' is solved by solver='dual' only; solver={solver!r} "
            "minimises the squared hinge (loss='squared_hinge')."
        )
    if kind == "nystroem":
        res = _solve_lowrank(params, K, L, Y, gamma_a, gamma_i, sample_weight)
        name = "lowrank-direct" if params.objective == "squared" else "lowrank-newton"
        return Solution(res, name)
    opts = params.options
    if solver == "newton":
        res = lapsvm_newton(
            K,
            Y,
            L=L,
            gamma_a=gamma_a,
            gamma_i=gamma_i,
            max_iter=params.max_iter,
            intrinsic_bias=opts.intrinsic_bias,
            sample_weight=sample_weight,
        )
        return Solution(res, solver)
    if solver == "direct":
        res = laprls_direct(
            K,
            Y,
            L=L,
            gamma_a=gamma_a,
            gamma_i=gamma_i,
            intrinsic_bias=opts.intrinsic_bias,
            sample_weight=sample_weight,
        )
        return Solution(res, solver)
    if solver == "dual":
        return Solution(
            _solve_dual(params, K, L, Y, gamma_a, gamma_i, sample_weight), solver
        )
    info = None
    if start is None:
        start, info = _pcg_start(
            params, K, L, Y, gamma_a, gamma_i, sample_weight, landmarks
        )
    res = lapsvm_pcg(
        as_operator(K),
        Y,
        L=L,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss=params.objective,
        sample_weight=sample_weight,
        **start,
        **_pcg_kwargs(params, K_val, Y_val, early_stopping, Y),
        landmarks=landmarks,
    )
    return Solution(res, solver, info)


def _solve_dual(params, K, L, Y, gamma_a, gamma_i, sample_weight):
    from ..solvers._dual import lapsvm_dual

    if params.options.intrinsic_bias and L is not None and gamma_i != 0:
        L1 = np.asarray(L @ np.ones(K.shape[0]))
        if np.abs(L1).max() > 1e-10:
            raise ValueError(
                "solver='dual' penalises K alpha only, but intrinsic_bias=True "
                "asks to penalise K alpha + b with a Laplacian whose rows do not "
                "sum to 0 (normalize_laplacian=True). Set "
                "options=SolverOptions(intrinsic_bias=False), or "
                "normalize_laplacian=False (then both forms are equal), or "
                "use solver='newton' or 'pcg'."
            )
    return lapsvm_dual(
        K,
        L,
        Y,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss=params.loss,
        sample_weight=sample_weight,
        tol=params.tol if params.tol > 0 else 1e-12,
        max_iter=params.max_iter,
    )


def _solve_supervised(
    params: Any, K: Any, Y: np.ndarray, gamma_a: float, sw: Any
) -> Solution | None:
    r""":math:`\gamma_I = 0`: the exact solution lives on the labeled points.

    Without the intrinsic term the objective depends on :math:`\alpha` only
    through the :math:`K`-rows of the labeled points, and the representer
    theorem puts the minimiser in their span: :math:`\alpha_U = 0` and
    :math:`\alpha_{\mathcal L}` solves the same problem on
    :math:`K_{\mathcal L\mathcal L}` (l x l), by Newton or one direct solve.
    """
    lab = np.flatnonzero(np.any(Y != 0, axis=1))
    if isinstance(K, np.ndarray):
        KLL = np.asarray(K[np.ix_(lab, lab)], dtype=np.float64)
    elif hasattr(K, "rows"):
        KLL = np.asarray(K.rows(lab)[:, lab], dtype=np.float64)
    else:
        return None
    KLL = 0.5 * (KLL + KLL.T)
    w = None if sw is None else np.asarray(sw)[lab]
    if params.objective == "squared":
        res = laprls_direct(KLL, Y[lab], gamma_a=gamma_a, gamma_i=0.0, sample_weight=w)
        name = "direct-labeled"
    else:
        res = lapsvm_newton(
            KLL,
            Y[lab],
            gamma_a=gamma_a,
            gamma_i=0.0,
            sample_weight=w,
            max_iter=max(params.max_iter, 50),
        )
        name = "newton-labeled"
    alpha = np.zeros((Y.shape[0], Y.shape[1]))
    alpha[lab] = res.alpha
    return Solution(dataclasses.replace(res, alpha=alpha), name)


def _solve_factorized(
    params: Any,
    cache: Any,
    K: Any,
    L: Any,
    Y: np.ndarray,
    solver: str,
    gamma_a: float,
    gamma_i: float,
    sample_weight: Any,
) -> Solution | None:
    """The exact solve from the factorizations a cache shares between many fits
    on one K and L (:mod:`semisvm.models._factorized`), or None.

    Only for the exact solvers (LapRLS ``'direct'``, LapSVM ``'newton'``) with
    a graph term; the minimiser is the one those solvers compute.
    """
    exact = {"squared": "direct", "squared_hinge": "newton"}.get(params.objective)
    if solver != exact or L is None or gamma_i == 0:
        return None
    F = cache.factors(K, L)
    if F is None:
        return None
    from ._factorized import factorized_solve

    sw = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    res = factorized_solve(
        F,
        Y,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        intrinsic_bias=bool(params.options.intrinsic_bias),
        sample_weight=sw,
        loss=params.objective,
        max_iter=max(int(params.max_iter), 1),
    )
    return None if res is None else Solution(res, solver)


def _solve_lowrank(params, factor, L, Y, gamma_a, gamma_i, sample_weight=None):
    if sample_weight is not None:
        raise ValueError(
            "class_weight is not available with kernel_approximation='nystroem' "
            "(the m-space solver has unit loss weights); use class_weight=None, "
            "or kernel_approximation='dense' / 'streamed'."
        )
    # a factor whose C lives elsewhere (a cluster) computes the m-space
    # intrinsic matrix where C is; the in-process one lets the solver do it
    opts = params.options
    M = None
    if L is not None and gamma_i != 0 and hasattr(factor, "feature_gram"):
        M = factor.feature_gram(L, intrinsic_bias=opts.intrinsic_bias)
    return lapsvm_lowrank(
        factor.C_,
        Y,
        L=L,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss=params.objective,
        intrinsic_bias=opts.intrinsic_bias,
        max_iter=max(params.max_iter, 1),
        T=factor.components_,
        M=M,
    )


def _pcg_start(params, K, L, Y, gamma_a, gamma_i, sample_weight, landmarks):
    """PCG's start: the exact optimum on landmarks (solvers._coarse), or zero.

    Used whenever the graph term is on and the loss is unweighted: PCG then
    starts from outputs already spread over the graph instead of zero, so that
    early stopping cannot fire before the labels have spread.
    """
    if (
        not params.options.coarse_start
        or L is None
        or gamma_i == 0
        or sample_weight is not None
        or Y.shape[0] <= MIN_COARSE_N
    ):
        return {}, None
    alpha0, b0, info = coarse_start(
        K,
        Y,
        L=L,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss=params.objective,
        intrinsic_bias=params.options.intrinsic_bias,
        random_state=resolve_seed(params.random_state),
        landmarks=landmarks,
    )
    if params.verbose:
        print(
            f"[{params.name}] coarse start: exact optimum on "
            f"{info['n_landmarks']} landmarks (rank {info['rank']})"
        )
    return {"alpha0": alpha0, "b0": b0}, info


def fewest_labels(Y: np.ndarray, labeled: np.ndarray) -> int:
    """Labeled points of the class with the fewest, from the ±1/0 targets.

    Parameters
    ----------
    Y : ndarray of shape (n, C)
        One-vs-rest targets (C = 1: two classes, +1 and -1).
    labeled : ndarray of bool of shape (n,)

    Returns
    -------
    int
    """
    Yl = Y[labeled]
    if Yl.shape[1] == 1:
        return int(min((Yl[:, 0] > 0).sum(), (Yl[:, 0] < 0).sum()))
    return int((Yl > 0).sum(axis=0).min())


def value_tolerance(option: float | str | None, Y: np.ndarray) -> float | None:
    """The stability check's value guard (``stability_value_tol``).

    ``'auto'``: :data:`VALUE_TOL_FEW` where a class has fewer than
    :data:`~semisvm.models._options.MIN_LABELS_PER_CLASS` labels (the labels
    still diffusing along the graph when the signs stop moving),
    :data:`VALUE_TOL_MANY` from there on, where every point is near a label.
    """
    if option != "auto":
        return None if option is None else float(option)
    fewest = fewest_labels(Y, np.any(Y != 0, axis=1))
    return VALUE_TOL_FEW if fewest < MIN_LABELS_PER_CLASS else VALUE_TOL_MANY


def _pcg_kwargs(params, K_val, Y_val, es, Y):
    opts = params.options
    return dict(
        max_iter=params.max_iter,
        tol=params.tol,
        tol_criterion=opts.tol_criterion,
        early_stopping=es,
        check_every=opts.check_every,
        stability_tol=opts.stability_tol,
        stability_value_tol=value_tolerance(opts.stability_value_tol, Y),
        stability_window=opts.stability_window,
        preconditioner=opts.preconditioner,
        random_state=resolve_seed(params.random_state),
        K_val=K_val,
        Y_val=Y_val,
        K_eval=K_val if opts.record_history else None,
        Y_eval=Y_val if opts.record_history else None,
        record_history=opts.record_history,
        intrinsic_bias=opts.intrinsic_bias,
        callback=_verbose_callback(params) if params.verbose else None,
    )


def _verbose_callback(params):
    verbose = params.verbose
    every = max(1, int(verbose) if not isinstance(verbose, bool) else 10)
    name = params.name

    def cb(state):
        it = state["iteration"]
        if it % every == 0:
            obj = np.atleast_1d(np.asarray(state["objective"], dtype=np.float64))
            n_act = int(np.sum(state["active"]))
            # one line whatever the number of columns (one per class)
            text = (
                f"{obj[0]:.6g}"
                if obj.size == 1
                else f"sum {obj.sum():.6g} (max {obj.max():.6g} of {obj.size} "
                f"columns, {n_act} still active)"
            )
            print(f"[{name}] iter {it:5d}  objective {text}")
        return False

    return cb
