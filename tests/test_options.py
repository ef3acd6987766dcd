"""Keyword-only constructors of at most 20 parameters; the expert options object.

Issue 29, point 5: every public estimator takes keyword arguments only and at
most 20 of them; the expert knobs of LapSVM and LapRLS live in one
:class:`semisvm.SolverOptions`, which follows scikit-learn's parameter protocol
(``clone``, ``set_params(options__x=...)``, ``GridSearchCV``) and means the same
in every estimator.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV

import semisvm
import semisvm.model_selection
import semisvm.models
from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import make_two_moons
from semisvm.model_selection import LabeledStratifiedKFold, LapSVMCV
from semisvm.models._options import OPTION_DEFAULTS, resolved_options

DATA = Path(__file__).parent / "data"
MAX_PARAMS = 20


def _public_estimators() -> list[type]:
    found: dict[str, type] = {}
    for mod in (semisvm, semisvm.models, semisvm.model_selection):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


ESTIMATORS = _public_estimators()


def test_the_estimators_are_found():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {
        "LapSVM",
        "LapRLS",
        "LapSVMCV",
        "LapRLSCV",
        "LapSVC",
        "SemiSupervisedKernel",
        "ExactTSVM",
        "LapSVMPath",
    } <= names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_constructor_has_at_most_20_keyword_only_parameters(cls):
    params = [
        p
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self"
    ]
    assert len(params) <= MAX_PARAMS, (
        f"{cls.__name__} takes {len(params)} parameters (at most {MAX_PARAMS}): "
        "group the expert ones (SolverOptions)"
    )
    if cls.__name__ == "LabeledCalibratedClassifierCV":
        return  # scikit-learn's CalibratedClassifierCV signature (estimator first)
    assert all(p.kind is p.KEYWORD_ONLY for p in params), cls.__name__
    with pytest.raises(TypeError, match="positional"):
        cls(params[0].default)


def test_lapsvm_and_laprls_parameter_lists():
    svm = list(inspect.signature(LapSVM).parameters)
    rls = list(inspect.signature(LapRLS).parameters)
    assert svm == [
        "solver",
        "gamma_a",
        "gamma_i",
        "kernel",
        "gamma",
        "degree",
        "coef0",
        "kernel_params",
        "n_neighbors",
        "graph_weight",
        "normalize_laplacian",
        "laplacian_power",
        "loss",
        "class_weight",
        "early_stopping",
        "tol",
        "max_iter",
        "random_state",
        "verbose",
        "options",
    ]
    assert rls == [p for p in svm if p != "loss"]
    # an option is never also a parameter of these estimators
    assert not set(OPTION_DEFAULTS) & set(svm)


def test_same_name_same_meaning_everywhere():
    """A name is a parameter or an option with the same default everywhere."""
    defaults: dict[str, set] = {}
    for cls in ESTIMATORS:
        for name, p in inspect.signature(cls).parameters.items():
            if name in OPTION_DEFAULTS:
                defaults.setdefault(name, set()).add(repr(p.default))
    for name, seen in defaults.items():
        assert seen == {repr(OPTION_DEFAULTS[name])}, name
    sig = inspect.signature(SolverOptions)
    assert {n: p.default for n, p in sig.parameters.items() if n != "unknown"} == (
        OPTION_DEFAULTS
    )


def test_docstring_example_runs():
    import doctest

    import semisvm.models._options as mod

    res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 4 and res.failed == 0


def test_every_option_is_documented():
    doc = SolverOptions.__doc__ or ""
    for name in OPTION_DEFAULTS:
        assert f"\n    {name} : " in doc, name


# ------------------------------------------------------------ the protocol
def test_options_repr_eq_and_params():
    o = SolverOptions(preconditioner="paper", stability_tol=0.01)
    assert repr(o) == "SolverOptions(preconditioner='paper', stability_tol=0.01)"
    assert repr(SolverOptions()) == "SolverOptions()"
    assert o == SolverOptions(stability_tol=0.01, preconditioner="paper")
    assert o != SolverOptions()
    assert SolverOptions(class_prior=np.array([0.3, 0.7])) == SolverOptions(
        class_prior=[0.3, 0.7]
    )
    assert o.get_params()["preconditioner"] == "paper"
    assert set(o.get_params()) == set(OPTION_DEFAULTS)
    o2 = o.replace(tol_criterion="gradient")
    assert o2.tol_criterion == "gradient" and o.tol_criterion == "mixed"
    assert o.set_params(check_every=3) is o and o.check_every == 3
    assert repr(LapSVM(options=SolverOptions(preconditioner="paper"))) == (
        "LapSVM(options=SolverOptions(preconditioner='paper'))"
    )


def test_unknown_option_names_are_refused():
    with pytest.raises(ValueError, match="'precondtioner'"):
        SolverOptions(precondtioner="paper")
    with pytest.raises(ValueError, match="'max_iter'.*Valid options"):
        SolverOptions(max_iter=3)
    with pytest.raises(ValueError, match="'stabilty_tol'"):
        SolverOptions().set_params(stabilty_tol=0.1)
    with pytest.raises(ValueError, match="'stabilty_tol'"):
        LapSVM().set_params(options__stabilty_tol=0.1)


def test_bad_option_values_are_refused_at_fit():
    X, y, _ = make_two_moons(40, n_labeled_per_class=2, random_state=0)
    with pytest.raises(
        ValueError, match="'preconditioner' parameter of SolverOptions must be"
    ):
        LapSVM(options=SolverOptions(preconditioner="jacobi")).fit(X, y)
    with pytest.raises(ValueError, match="'options' parameter"):
        LapSVM(options={"preconditioner": "paper"}).fit(X, y)


def test_clone_get_params_set_params_round_trip():
    opts = SolverOptions(preconditioner="paper", class_balance=None)
    est = LapSVM(solver="pcg", options=opts)
    params = est.get_params(deep=True)
    assert params["options"] is opts
    assert params["options__preconditioner"] == "paper"
    assert params["options__class_balance"] is None
    c = clone(est)
    assert c.options is not opts and c.options == opts
    c.set_params(options__tol_criterion="gradient")
    assert c.options.tol_criterion == "gradient"
    assert opts.tol_criterion == "mixed"  # the original is left alone
    # a default estimator: options__x creates the options object
    d = LapRLS().set_params(options__stability_window="last", tol=1e-5)
    assert d.options == SolverOptions(stability_window="last") and d.tol == 1e-5
    assert LapSVM().get_params()["options"] is None
    # options=None together with options__x in one call
    e = LapSVM(options=opts).set_params(options=None, options__landmarks="kmeans")
    assert e.options == SolverOptions(landmarks="kmeans")


def test_fit_does_not_modify_the_options():
    X, y, _ = make_two_moons(60, n_labeled_per_class=2, random_state=0)
    opts = SolverOptions(preconditioner="paper")
    before = opts.get_params()
    est = LapSVM(gamma_a=1e-3, gamma_i=1.0, options=opts).fit(X, y)
    assert est.options is opts and opts.get_params() == before


def test_resolved_options_reads_own_parameters_first():
    from semisvm import SemiSupervisedKernel

    assert resolved_options(LapSVM()) == SolverOptions()
    assert resolved_options(SemiSupervisedKernel(heat_t=0.5)).heat_t == 0.5
    r = resolved_options(LapSVM(options=SolverOptions(heat_t=0.25)))
    assert r.heat_t == 0.25


def test_grid_search_over_an_option_selects_and_refits_with_it():
    X, y, _ = make_two_moons(80, n_labeled_per_class=6, random_state=1)
    est = LapRLS(gamma_a=1e-2, gamma_i=1.0)
    gs = GridSearchCV(
        est,
        {"options__class_balance": [None, "mean"], "options__heat_t": [None]},
        cv=LabeledStratifiedKFold(3, shuffle=True, random_state=0),
        error_score="raise",
    ).fit(X, y)
    assert gs.best_params_["options__class_balance"] in (None, "mean")
    best = gs.best_estimator_
    assert best.options.class_balance == gs.best_params_["options__class_balance"]
    assert est.options is None  # the template is not touched
    ref = clone(est).set_params(**gs.best_params_).fit(X, y)
    np.testing.assert_allclose(best.decision_function(X), ref.decision_function(X))


def test_cv_estimator_takes_options_through_estimator_params():
    X, y, _ = make_two_moons(60, n_labeled_per_class=5, random_state=0)
    opts = SolverOptions(class_balance=None)
    cv = LapSVMCV(
        gamma_a=[1e-3],
        gamma_i=[0.0, 1.0],
        gamma=[2.0],
        n_neighbors=[6],
        kernel=["rbf"],
        normalize_laplacian=[False],
        laplacian_power=[1],
        estimator_params={"options": opts},
        cv=3,
    ).fit(X, y)
    # the user's options, with the refit's check of the searched weights
    assert cv.best_estimator_.options == opts.replace(labels_only_check="always")
    assert opts.labels_only_check == "auto"  # the user's object is not touched
    with pytest.raises(ValueError, match="'stability_window' parameter of Solver"):
        LapSVMCV(estimator_params={"options": SolverOptions(stability_window="x")}).fit(
            X, y
        )


# ------------------------------------------------------ the numbers kept
def test_fitted_values_equal_those_before_the_options_object():
    """Decision values saved before the change (the settings then given as
    constructor keywords: ``LapSVM(preconditioner='paper', ...)``); the LapSVM
    array re-saved once when the self-tuning weights moved to half the distance
    to the 10th neighbour (issue 27; the LapRLS array, heat weights, unchanged)."""
    ref = np.load(DATA / "options_reference.npz")
    X, y, Xt = ref["X"], ref["y"], ref["Xt"]
    svm = LapSVM(
        solver="pcg",
        gamma_a=1e-3,
        gamma_i=1.0,
        early_stopping=None,
        random_state=0,
        options=SolverOptions(
            preconditioner="paper",
            tol_criterion="gradient",
            stability_window="last",
            class_balance="mean",
        ),
    ).fit(X, y)
    np.testing.assert_allclose(
        svm.decision_function(Xt), ref["svm"], rtol=1e-6, atol=1e-9
    )
    rls = LapRLS(
        solver="direct",
        gamma_a=1e-2,
        gamma_i=0.5,
        normalize_laplacian=True,
        graph_weight="heat",
        options=SolverOptions(
            intrinsic_bias=False,
            regularization="paper",
            class_prior=None,
            heat_t=0.3,
        ),
    ).fit(X, y)
    np.testing.assert_allclose(
        rls.decision_function(Xt), ref["rls"], rtol=1e-6, atol=1e-9
    )
