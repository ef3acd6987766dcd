"""One problem preparation and one prediction kernel for every estimator
(issue 29 point 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _problem_cases import CASES

REFERENCE = Path(__file__).parent / "data" / "problem_reference.npz"


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_did_not_move(name, reference):
    """Decision values (and K, L, targets of the reproduction) as stored from the
    code before the estimators moved onto models/_problem.py."""
    got = CASES[name]()
    for key, value in got.items():
        ref = reference[f"{name}__{key}"]
        value = np.asarray(value)
        assert value.shape == ref.shape, key
        scale = max(float(np.abs(ref).max()), 1e-300) if ref.size else 1.0
        np.testing.assert_allclose(
            value, ref, rtol=1e-6, atol=1e-9 * scale, err_msg=f"{name}: {key}"
        )


# ------------------------------------------------------- one prediction kernel
def _moons():
    from semisvm.datasets import make_two_moons

    return make_two_moons(60, n_labeled_per_class=3, random_state=0)


def _estimators():
    from semisvm import LapRLS, LapSVM
    from semisvm.models._path import LapSVMPath
    from semisvm.models._ssk import LapSVC
    from semisvm.models._tsvm import ExactTSVM

    return [
        LapSVM(gamma=2.0, n_neighbors=6, solver="newton"),
        LapRLS(gamma=2.0, n_neighbors=6),
        LapSVC(gamma=2.0, n_neighbors=6),
        LapSVMPath(gamma=2.0, n_neighbors=6, cv=None),
        ExactTSVM(method="branch_and_bound", gamma=2.0, time_limit=5),
    ]


def _data(est):
    """Two moons (30 points for the exponential ExactTSVM)."""
    X, y, _ = _moons()
    return (X[:30], y[:30]) if type(est).__name__ == "ExactTSVM" else (X, y)


_MODULES = ("_base", "_lapsvm", "_deformed", "_path", "_tsvm")


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_decision_function_goes_through_prediction_kernel(est, monkeypatch):
    """Every estimator's decision_function evaluates k(X, X_train) through
    models._problem.prediction_kernel, and no estimator module holds another
    kernel evaluation (kernel_matrix)."""
    import importlib
    import warnings

    from semisvm.models import _problem

    X, y = _data(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    calls = []
    real = _problem.prediction_kernel

    def counting(e, A, *args, **kwargs):
        calls.append(type(e).__name__)
        return real(e, A, *args, **kwargs)

    for name in _MODULES:
        mod = importlib.import_module(f"semisvm.models.{name}")
        assert not hasattr(mod, "kernel_matrix"), name
        if hasattr(mod, "prediction_kernel"):
            monkeypatch.setattr(mod, "prediction_kernel", counting)
    f = est.decision_function(X[:7])
    assert f.shape[0] == 7
    assert calls, type(est).__name__
    monkeypatch.undo()
    np.testing.assert_array_equal(est.decision_function(X[:7]), f)


def test_ssk_and_reproduction_use_prediction_kernel(monkeypatch):
    from semisvm.experiments import _reproduce
    from semisvm.models import _deformed, _problem
    from semisvm.models._deformed import SemiSupervisedKernel

    calls = []
    real = _problem.prediction_kernel

    def counting(e, A, *args, **kwargs):
        calls.append(type(e).__name__)
        return real(e, A, *args, **kwargs)

    monkeypatch.setattr(_deformed, "prediction_kernel", counting)
    monkeypatch.setattr(_reproduce, "prediction_kernel", counting)
    X, _, _ = _moons()
    SemiSupervisedKernel(gamma=2.0, n_neighbors=6).fit(X).gram(X[:5], X[5:9])
    assert calls.count("SemiSupervisedKernel") == 3  # k(A, X), k(B, X), k(A, B)
    CASES["reproduction"]()
    assert calls.count("FittedKernel") == 2  # the validation and test rows


# ------------------------------------------------------------ string labels
@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("marker", ["-1", -1])
def test_string_labels_with_minus_one_marker(est, marker):
    """Class names as strings, unlabeled rows marked "-1" (or the integer -1 in an
    object array): the same model as with 0/1 labels, for every estimator."""
    import warnings

    from sklearn.base import clone

    X, y = _data(est)
    names = np.array(["lower", "upper"])
    ys = np.where(y == -1, "-1", names[np.maximum(y, 0)]).astype(object)
    ys[y == -1] = marker
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = clone(est).fit(X, y)
        b = clone(est).fit(X, ys)
    assert list(b.classes_) == ["lower", "upper"]
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X))
    np.testing.assert_array_equal(b.predict(X), names[a.predict(X)])
    lab = y != -1
    if hasattr(b, "transduction_"):
        np.testing.assert_array_equal(b.transduction_, names[a.transduction_])
        assert set(b.transduction_[~lab]) <= set(names)


# ------------------------------------------------- gamma_a means one thing
@pytest.mark.parametrize(("gamma_a", "gamma_i"), [(1e-6, 1.0), (1e-2, 0.5)])
def test_lapsvc_is_lapsvm_dual_with_the_same_gamma_a(gamma_a, gamma_i):
    """The same gamma_a, gamma_i (and their default reading, 'normalized') give the
    same model in LapSVC as in LapSVM(solver='dual', loss='hinge')."""
    from semisvm import LapSVM, SolverOptions
    from semisvm.models._ssk import LapSVC

    X, y, _ = _moons()
    common = dict(gamma=2.0, n_neighbors=6, gamma_a=gamma_a, gamma_i=gamma_i)
    a = LapSVM(
        solver="dual",
        loss="hinge",
        tol=1e-10,
        options=SolverOptions(class_balance=None),
        **common,
    ).fit(X, y)
    b = LapSVC(tol=1e-10, **common).fit(X, y)
    assert b.gamma_a_ == pytest.approx(a.gamma_a_, rel=1e-12)
    assert b.gamma_i_ == pytest.approx(a.gamma_i_, rel=1e-12)
    fa = a.decision_function(X)
    # measured: 1.4e-5 and 4e-8 (the two QPs' tolerances)
    np.testing.assert_allclose(b.decision_function(X), fa, atol=1e-4 * np.abs(fa).max())
    c = LapSVC(tol=1e-10, regularization="paper", **common).fit(X, y)
    assert c.gamma_a_ == gamma_a and c.gamma_i_ == gamma_i
    assert b.kernel_.c_ == pytest.approx(b.gamma_a_ / b.gamma_i_)


def test_exact_tsvm_default_width_is_the_shared_one():
    from semisvm import _defaults
    from semisvm.models._tsvm import ExactTSVM

    assert ExactTSVM().gamma == _defaults.GAMMA
