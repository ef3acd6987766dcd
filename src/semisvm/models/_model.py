r"""From a prepared problem to a fitted model: the regularization choice, the
solve, the extension check and the output adaptation.

Each step is a function over a :class:`~semisvm.models._problem.Problem` and a
:class:`~semisvm.models._params.FitParams` that returns a record;
:class:`FittedModel` carries every fitted attribute for the estimator to store.
Nothing here reads or writes an estimator.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._validation import resolve_seed
from ..kernels import (
    FITCOperator,
    NystroemFactor,
    as_operator,
)
from ..kernels._distributed import DistributedNystroemFactor
from ._adaptive import adapt_outputs, paper_regularization, prior_reading_applies
from ._autoreg import operator_features, select_regularization
from ._baseline import BaselineChoice, choose_baseline, fit_baseline
from ._components import (
    auto_early_stopping,
    unreachable_message,
    unreachable_points,
)
from ._extension import choose_width_factor, kernel_power
from ._problem import MAX_DIMENSION, Problem, data_dimension, kernel_columns
from ._solve import Solution, solve

__all__ = [
    "EARLY_STOP_REASONS",
    "RECHECK_DISAGREEMENT",
    "FittedModel",
    "Regularization",
    "choose_regularization",
    "fit_model",
]

#: PCG stopping reasons of the early-stopping rules
EARLY_STOP_REASONS = {"stability", "validation", "mixed"}
#: leave-one-out disagreement at the rule's width from which an early-stopped
#: PCG fit whose check kept the width is judged again on its iterate continued
#: to ``tol``: an early-stopped iterate has the optimum's labels but not its
#: smoothness, so narrower widths would look worse than they are
RECHECK_DISAGREEMENT = 0.15


@dataclass(frozen=True)
class Regularization:
    """The regularization decision (``regularization_selection_``).

    Attributes
    ----------
    gamma_a, gamma_i : float
        The normalized weights chosen (``lambda_A``, ``lambda_I``).
    gamma_a_, gamma_i_ : float
        The paper's weights the solver minimises with.
    info : dict
        The rule, its reason and its evidence; ``info["baseline"]`` the
        comparison with the labels-only models (:mod:`semisvm.models._baseline`).
    seconds : float
    baseline : BaselineChoice or None
        The labels-only model the fit falls back to (``kind`` 'majority' or
        'supervised'), ``kind='none'`` when the chosen model stands, None when
        no comparison ran.
    """

    gamma_a: float
    gamma_i: float
    gamma_a_: float
    gamma_i_: float
    info: dict
    seconds: float
    baseline: BaselineChoice | None = None

    @property
    def falls_back(self) -> bool:
        return self.baseline is not None and self.baseline.kind != "none"


@dataclass(frozen=True)
class FittedModel:
    """Every fitted attribute of a fit, by name, and the warnings it raised.

    ``attributes`` maps attribute names (``dual_coef_``, ``transduction_``,
    ...) to values; ``warnings`` holds ``(category, message)`` pairs for the
    estimator to emit; ``dimension`` is the data dimension measured by the fit
    (None when not measured).
    """

    attributes: dict
    warnings: tuple = ()
    dimension: float | None = None
    times: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.attributes[name]


def choose_regularization(problem: Problem, params: Any) -> Regularization:
    """The ``(gamma_a, gamma_i)`` of the fit: the user's numbers, or the
    ``"auto"`` rule's choice by leave-one-out on the labeled points
    (:func:`~semisvm.models._autoreg.select_regularization`), mapped to the
    paper's weights (:func:`~semisvm.models._adaptive.paper_regularization`)."""
    t0 = time.perf_counter()
    ops, t = problem.ops, problem.targets
    gamma_a, gamma_i, info = select_regularization(
        params,
        columns=kernel_columns(params, problem.X, ops.K, ops.gamma_),
        L=ops.L,
        Y=t.Y,
        labeled=t.labeled,
        sample_weight=problem.sample_weight,
        loss=params.objective,
        power=ops.laplacian_power,
        scale=ops.graph_scale,
        features=lambda: operator_features(ops.K, t.labeled_idx),
        gram=None if problem.landmarks is None else (lambda: problem.landmarks.gram),
    )
    seconds = time.perf_counter() - t0
    if params.verbose:
        _print_selection(
            params.name, info, gamma_a, gamma_i, int(t.labeled.sum()), seconds
        )
    ga_, gi_ = paper_regularization(
        params.options.regularization,
        gamma_a,
        gamma_i,
        n=problem.X.shape[0],
        weight_sum=problem.weight_sum,
        L=None if gamma_i == 0 else ops.L,
        power=ops.laplacian_power,
        scale=ops.graph_scale,
    )
    info = dict(info, gamma_a=gamma_a, gamma_i=gamma_i)
    reg = Regularization(gamma_a, gamma_i, ga_, gi_, info, seconds)
    # never worse than the labels alone (semisvm.models._baseline)
    baseline = choose_baseline(problem, params, reg)
    if baseline is None:
        return reg
    info = dict(info, baseline=baseline.info)
    seconds = time.perf_counter() - t0
    if params.verbose:
        print(f"[{params.name}] labels-only check: {baseline.info['reason']}")
    return Regularization(gamma_a, gamma_i, ga_, gi_, info, seconds, baseline)


def fit_model(problem: Problem, params: Any, reg: Regularization) -> FittedModel:
    """Solve the problem at the chosen weights, check the extension, adapt the
    outputs; every fitted attribute in one record.

    The early stop is switched off where a graph component holds no label
    (:func:`~semisvm.models._components.auto_early_stopping`); the extension
    check may refit at a narrower width (:func:`check_extension`); the outputs
    are balanced and the probability slope fitted
    (:func:`~semisvm.models._adaptive.adapt_outputs`).
    """
    ops, t = problem.ops, problem.targets
    if reg.falls_back:
        return _fallback_model(problem, params, reg)
    X, y, labeled, classes = problem.X, problem.y, t.labeled, t.classes
    L = None if reg.gamma_i == 0 else ops.L
    es, components = auto_early_stopping(params, problem.early_stopping, L, labeled)
    kw = dict(
        Y=t.Y,
        kind=problem.kind,
        solver=problem.solver,
        gamma_a=reg.gamma_a_,
        gamma_i=reg.gamma_i_,
        sample_weight=problem.sample_weight,
        K_val=problem.K_val,
        Y_val=problem.Y_val,
    )
    t0 = time.perf_counter()
    sol = solve(
        params,
        K=ops.K,
        L=L,
        early_stopping=es,
        cache=problem.cache,
        landmarks=problem.landmarks,
        **kw,
    )
    t_solver = time.perf_counter() - t0
    # the graph of class_prior='auto''s cut tests (the in-process full-rank
    # models the cost rule chooses between)
    graph_L = None
    if (
        problem.kind in ("dense", "blocks")
        and getattr(L, "shape", (None,))[0] == X.shape[0]
    ):
        graph_L = L
    # one label of a class: the graph reads the proportions (below 3-d);
    # the dimension, measured once, serves the graph-width rule's gate too
    dim = None
    if (
        params.options.prior_reading == "auto"
        and prior_reading_applies(graph_L, y[labeled], classes)
        and params.kernel != "precomputed"
    ):
        dim = data_dimension(ops.intrinsic_dimension, X, params.n_neighbors)
    reading = graph_L if dim is not None and dim < MAX_DIMENSION else None
    t0 = time.perf_counter()
    check = check_extension(problem, params, sol, L, es, kw, reading)
    times = dict(ops.times, selection=reg.seconds, solver=t_solver)
    if check is not None:
        times["extension"] = time.perf_counter() - t0
    sol2, K, gamma_, ext_info = check or (sol, ops.K, ops.gamma_, None)
    attrs = _outputs(problem, params, sol2.result, K, graph_L, reading, times)
    coarse = sol2.coarse_start or sol.coarse_start
    attrs.update(
        gamma_=gamma_,
        gamma_a_=reg.gamma_a_,
        gamma_i_=reg.gamma_i_,
        regularization_selection_=reg.info,
        solver_=sol2.solver,
        kernel_operator_=problem.kind,
        operator_selection_=problem.operator_info,
        **_graph_attributes(ops),
        graph_components_=components,
        extension_check_=ext_info,
        graph_selection_=None,
    )
    if ops.graph_method is not None:
        attrs["graph_method_"] = ops.graph_method
    if coarse is not None:
        attrs["coarse_start_"] = coarse
    attrs["fit_times_"] = times
    warn = _convergence_warnings(params, sol2, classes, es)
    # points no label reaches through the graph: counted and said once
    unreached = unreachable_points(L, labeled)
    attrs["unreachable_"] = unreached
    if unreached is not None and unreached.size:
        message = unreachable_message(params.name, unreached.size, X.shape[0])
        warn += ((UserWarning, message),)
    return FittedModel(attrs, warn, dim, times)


def _graph_attributes(ops: Any) -> dict:
    """The graph's resolved settings, stored by every fit."""
    return dict(
        laplacian_power_=ops.laplacian_power,
        graph_scale_=ops.graph_scale,
        graph_weight_=ops.graph_weight,
        intrinsic_dimension_=ops.intrinsic_dimension,
    )


def _fallback_model(problem: Problem, params: Any, reg: Regularization) -> FittedModel:
    """The labels-only model the regularization record falls back to."""
    assert reg.baseline is not None
    attrs = fit_baseline(problem, params, reg.baseline)
    ops = problem.ops
    times = dict(ops.times, selection=reg.seconds, solver=attrs.pop("seconds"))
    attrs.update(
        regularization_selection_=reg.info,
        operator_selection_=problem.operator_info,
        **_graph_attributes(ops),
        graph_components_=None,
        extension_check_=None,
        graph_selection_=None,
        unreachable_=None,
        fit_times_=times,
    )
    return FittedModel(attrs, (), None, times)


def check_extension(
    problem: Problem,
    params: Any,
    sol: Solution,
    L: Any,
    es: str | None,
    kw: dict,
    reading: Any,
) -> tuple[Solution, Any, float, dict] | None:
    """The extension check of :mod:`semisvm.models._extension`: the
    graph-trusting fit refitted with a narrower RBF width when its training
    outputs do not extend to points left out of their interpolant.

    Runs when the graph term is on, the kernel is the RBF, K is dense, there
    are unlabeled points and ``extension_width`` is ``'auto'`` with a width
    rule (``gamma`` a string) and no shared operators, or ``'always'``.
    Returns None where it does not run, else the (possibly refitted) solution,
    its K, its width and the check's record (``extension_check_``).
    """
    ew = params.options.extension_width
    K, t = problem.ops.K, problem.targets
    if (
        ew is None
        or (
            ew == "auto"
            and (not isinstance(params.gamma, str) or problem.cache is not None)
        )
        or not (isinstance(params.kernel, str) and params.kernel == "rbf")
        or problem.kind != "dense"
        # the in-process K, or the cluster's distributed one (K.power)
        or not (isinstance(K, np.ndarray) or hasattr(K, "power"))
        or L is None
        or kw["gamma_i"] == 0
        or t.labeled.all()
        or K.shape[0] < 20
        or not isinstance(kw["K_val"], np.ndarray | type(None))
    ):
        return None
    seed = resolve_seed(params.random_state)
    m, info = _judge_extension(problem, params, sol.result, K, L, reading, seed)
    info["judged_on"] = "the fit"
    continued = (
        m == 1.0
        and info["disagreement"][0] >= RECHECK_DISAGREEMENT
        and kw["solver"] == "pcg"
        and bool(set(np.atleast_1d(sol.result.reason).tolist()) & EARLY_STOP_REASONS)
    )
    if continued:
        # judge the optimum: PCG continued to tol from the early-stopped iterate
        start = {"alpha0": sol.result.alpha, "b0": sol.result.b}
        opt = solve(params, K=K, L=L, early_stopping=None, start=start, **kw)
        m, info = _judge_extension(problem, params, opt.result, K, L, reading, seed)
        info["judged_on"] = "pcg continued to tol"
    gamma_ = float(problem.ops.gamma_ or 1.0)  # the RBF kernel: a width
    info["gamma"] = gamma_
    if m != 1.0:
        K = K.power(m) if hasattr(K, "power") else kernel_power(K, m)
        if kw["K_val"] is not None:
            kw = dict(kw, K_val=kernel_power(kw["K_val"], m))
        gamma_ *= m
        # judged on the optimum: refit to tol (an early-stopped iterate at the
        # new width does not extend either)
        sol = solve(params, K=K, L=L, early_stopping=None if continued else es, **kw)
    info["gamma_used"] = gamma_
    return sol, K, gamma_, info


def _judge_extension(problem, params, res, K, L, reading, seed):
    """:func:`~semisvm.models._extension.choose_width_factor` on the training
    outputs of ``res``, balanced as the fit balances them."""
    opts, t = params.options, problem.targets
    b = np.asarray(res.b, dtype=np.float64).reshape(-1)
    # through the operator: a float32 K times float64 alpha in numpy would
    # upcast a copy of K
    Kop = as_operator(K) if isinstance(K, np.ndarray) else K
    F = np.asarray(Kop @ res.alpha, dtype=np.float64).reshape(K.shape[0], -1) + b
    _, off, _, _ = adapt_outputs(
        F,
        t.labeled,
        np.searchsorted(t.classes, problem.y[t.labeled]),
        t.classes.size,
        class_balance=opts.class_balance,
        class_prior=opts.class_prior,
        laplacian=L if hasattr(L, "shape") else None,
        reading=reading,
    )
    return choose_width_factor(K, F, b, off, random_state=seed)


def labels_from_scores(F: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class labels of outputs: the sign for two classes, the largest
    one-vs-rest score otherwise."""
    if F.shape[1] == 1:
        return classes[(F[:, 0] > 0).astype(int)]
    return classes[np.argmax(F, axis=1)]


def _outputs(problem, params, res, K, graph_L, reading, times) -> dict:
    """The coefficients, the balanced training outputs and the transduction."""
    t = problem.targets
    y, labeled, classes = problem.y, t.labeled, t.classes
    n_iter = res.n_iter
    attrs: dict[str, Any] = dict(
        classes_=classes,
        dual_coef_=res.alpha,
        n_iter_=int(n_iter[0]) if n_iter.size == 1 else n_iter,
        termination_condition_=res.reason[0] if len(res.reason) == 1 else res.reason,
        objective_=float(res.objective[0])
        if res.objective.size == 1
        else res.objective,
        n_ls_iter_=res.n_ls_iter,
        history_=res.history,
        X_fit_=None if params.kernel == "precomputed" else problem.X,
        landmarks_=None,
    )
    t0 = time.perf_counter()
    if isinstance(K, NystroemFactor | DistributedNystroemFactor):
        # res.alpha holds the feature coefficients eta; predict with beta = T eta.
        # The transduction is k(X, Z) beta + b from the stored C = k(X, Z), as
        # predict computes it (not from the float32 features), so that both agree
        attrs["dual_coef_"] = K.coef_from_features(res.alpha)
        attrs["landmarks_"] = K.landmarks_
        attrs["n_components_"] = K.landmarks_.shape[0]
        F = K.training_decision(attrs["dual_coef_"]) + res.b
    elif isinstance(K, FITCOperator):
        # the transduction keeps each point's own component (d_i alpha_i); new
        # points are predicted from the landmarks (semisvm.kernels._fitc)
        attrs["dual_coef_"] = K.landmark_coef(res.alpha)
        attrs["landmarks_"] = K.factor.landmarks_
        attrs["n_components_"] = K.factor.landmarks_.shape[0]
        F = np.asarray(K @ res.alpha) + res.b
    elif hasattr(K, "decision_model"):  # the block operators (PIC)
        # coefficients over the training points; new points take the block of
        # their nearest centre (semisvm.kernels._blocks.BlockDecision)
        attrs["block_decision_"] = K.decision_model(res.alpha)
        attrs["n_components_"] = K.factor.landmarks_.shape[0]
        F = np.asarray(K @ res.alpha).reshape(K.shape[0], -1) + res.b
    else:
        F = np.asarray(as_operator(K) @ res.alpha) + res.b
    times["transduction"] = time.perf_counter() - t0
    opts = params.options
    F, off, slope, prior = adapt_outputs(
        F,
        labeled,
        np.searchsorted(classes, y[labeled]),
        classes.size,
        class_balance=opts.class_balance,
        class_prior=opts.class_prior,
        classes=classes,
        laplacian=graph_L,
        reading=reading,
    )
    pred = labels_from_scores(F, classes)
    pred[labeled] = y[labeled]
    attrs.update(
        intercept_=np.asarray(res.b, dtype=np.float64) + off,
        class_balance_offset_=off,
        class_prior_=prior,
        proba_slope_=slope,
        transduction_=pred,
    )
    return attrs


def _convergence_warnings(params, sol: Solution, classes, es) -> tuple:
    """A ``ConvergenceWarning`` when a solver stopped at ``max_iter``."""
    res = sol.result
    if not any(r == "max_iter" for r in res.reason):
        return ()
    hit = [i for i, r in enumerate(res.reason) if r == "max_iter"]
    which = (
        ""
        if len(res.reason) == 1
        else f" on {len(hit)} of {len(res.reason)} one-vs-rest problems "
        f"(classes {', '.join(str(c) for c in classes[hit].tolist())})"
    )
    rule = es if sol.solver == "pcg" else None
    crit = f"tol={params.tol!r}"
    if sol.solver == "pcg":
        crit += f" on the {params.options.tol_criterion!r} criterion"
    if rule is not None:
        crit += f" nor the {rule!r} early-stopping rule"
        advice = (
            f"Loosen the {rule!r} rule (a larger stability_tol or "
            "stability_value_tol, or another check_every) or loosen tol."
            if rule in ("stability", "mixed")
            else f"Loosen the {rule!r} rule (a smaller check_every) or loosen tol."
        )
    else:
        advice = "Increase max_iter or loosen tol" + (
            ", or use early_stopping='stability'." if sol.solver == "pcg" else "."
        )
    obj = np.atleast_1d(res.objective)[hit]
    message = (
        f"{params.name} solver {sol.solver!r} stopped at max_iter="
        f"{params.max_iter} iterations{which} without meeting {crit}; the "
        f"model is the last iterate (objective {', '.join(f'{o:.6g}' for o in obj)}"
        f"), not a converged solution. {advice}"
    )
    return ((ConvergenceWarning, message),)


def _print_selection(
    name: str,
    info: dict,
    gamma_a: float,
    gamma_i: float,
    n_labeled: int,
    seconds: float,
) -> None:
    """``verbose``: the regularization pairs scored and the one chosen."""
    if info["rule"] == "loo":
        print(
            f"[{name}] choosing (gamma_a, gamma_i) by {info['criterion']} "
            f"on {n_labeled} labeled points ({seconds:.2f} s):"
        )
        for p, v, e in zip(
            info["pairs"], info["scores"], info["loo_error"], strict=True
        ):
            mark = " <- chosen" if p == (gamma_a, gamma_i) else ""
            print(
                f"[{name}]   gamma_a={p[0]:g}, gamma_i={p[1]:g}: "
                f"criterion {v:.4g}, LOO error {e:.1%}{mark}"
            )
    print(f"[{name}] gamma_a={gamma_a:g}, gamma_i={gamma_i:g} ({info['reason']})")
