"""Warnings say what happened, with plain values and advice that applies."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from semisvm import LapRLS, LapSVM
from semisvm.datasets import make_two_moons


def _convergence_messages(est, X, y) -> list[str]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est.fit(X, y)
    msgs = [str(x.message) for x in w if issubclass(x.category, ConvergenceWarning)]
    assert msgs, "no ConvergenceWarning"
    return msgs


def _three_classes():
    X, y, _ = make_two_moons(90, n_labeled_per_class=2, random_state=0)
    rng = np.random.default_rng(0)
    X3 = np.vstack([X, rng.normal(loc=(4.0, 4.0), scale=0.3, size=(30, 2))])
    y3 = np.concatenate([y, np.full(30, -1)])
    y3[[90, 91]] = 2
    return X3, y3


def test_max_iter_warning_prints_plain_class_values():
    X, y = _three_classes()
    (msg,) = _convergence_messages(
        LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping=None, max_iter=2), X, y
    )
    assert "one-vs-rest problems (classes 0, 1, 2)" in msg, msg
    assert "np." not in msg and "int64" not in msg, msg


def test_max_iter_warning_names_the_rule_actually_used():
    X, y, _ = make_two_moons(120, n_labeled_per_class=2, random_state=0)
    (msg,) = _convergence_messages(
        LapSVM(gamma_a=1e-6, gamma_i=1.0, max_iter=2), X, y
    )  # early_stopping='auto'
    assert "'stability' early-stopping rule" in msg, msg
    assert "'auto'" not in msg, msg


@pytest.mark.parametrize(
    "est",
    [
        LapSVM(gamma_a=1e-6, gamma_i=1.0, max_iter=2),
        LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping="stability", max_iter=2),
        LapRLS(
            gamma_a=1e-6,
            gamma_i=1.0,
            solver="pcg",
            early_stopping="stability",
            max_iter=2,
        ),
    ],
    ids=["lapsvm-auto", "lapsvm-stability", "laprls-stability"],
)
def test_max_iter_advice_with_early_stopping_on_loosens_the_rule(est):
    X, y, _ = make_two_moons(120, n_labeled_per_class=2, random_state=0)
    (msg,) = _convergence_messages(est, X, y)
    assert "Increase max_iter" not in msg, msg
    assert "use early_stopping" not in msg, msg
    assert "stability_tol" in msg and "stability_value_tol" in msg, msg
    assert "check_every" in msg and "tol" in msg, msg


def test_max_iter_advice_without_early_stopping():
    X, y, _ = make_two_moons(120, n_labeled_per_class=2, random_state=0)
    (msg,) = _convergence_messages(
        LapSVM(gamma_a=1e-6, gamma_i=1.0, early_stopping=None, max_iter=2), X, y
    )
    assert "Increase max_iter" in msg and "early_stopping='stability'" in msg, msg


# ------------------------------------------------------- bad inputs, plain values
# numpy 2 writes a numpy scalar as np.int64(0) and an array as array([7]); every
# message of a bad input shows the value as the user wrote it.


def _one_class():
    X, y, _ = make_two_moons(60, n_labeled_per_class=3, random_state=0)
    return X, np.where(y == 1, -1, y)  # class 0 and unlabeled points only


def _continuous():
    X, y, _ = make_two_moons(20, n_labeled_per_class=3, random_state=0)
    return X, np.where(y == -1, -1.0, y + 0.5)


def _bad_inputs():
    from semisvm import ExactTSVM, LapSVC, LapSVMPath
    from semisvm._validation import check_semi_supervised_targets, split_labeled
    from semisvm.datasets import split_labeled_unlabeled
    from semisvm.kernels import DenseKernelOperator
    from semisvm.solvers import lapsvm_path

    X, y1 = _one_class()
    Xc, yc = _continuous()
    Xm, ym, _ = make_two_moons(60, n_labeled_per_class=3, random_state=0)
    eye = np.eye(4)
    return {
        "LapSVM one class": (lambda: LapSVM().fit(X, y1), "single class (0)"),
        "LapRLS one class": (lambda: LapRLS().fit(X, y1), "single class (0)"),
        "ExactTSVM one class": (
            lambda: ExactTSVM().fit(X[:20], y1[:20]),
            "single class (0)",
        ),
        "LapSVMPath one class": (lambda: LapSVMPath().fit(X, y1), "single class (0)"),
        "LapSVC one class": (lambda: LapSVC().fit(X, y1), "single class (0)"),
        "split_labeled one class": (
            lambda: split_labeled(np.array(["a", "-1", "a"])),
            "single class ('a')",
        ),
        "continuous labels": (
            lambda: ExactTSVM().fit(Xc, yc),
            "(e.g. 0.5)",
        ),
        "continuous labels (check)": (
            lambda: check_semi_supervised_targets(np.array([0.25, -1.0])),
            "(e.g. 0.25)",
        ),
        "numpy float parameter": (
            lambda: LapSVM(gamma_a=np.float64(-1.0)).fit(Xm, ym),
            "Got -1.0 instead",
        ),
        "numpy int parameter": (
            lambda: LapSVM(n_neighbors=np.int64(0)).fit(Xm, ym),
            "Got 0 instead",
        ),
        "blas_threads": (
            lambda: DenseKernelOperator(eye, blas_threads=np.int64(0)),
            "got 0.",
        ),
        "blas_threads bool": (
            lambda: DenseKernelOperator(eye, blas_threads=np.True_),
            "got True.",
        ),
        "path rho": (
            lambda: lapsvm_path(
                eye, eye, np.array([1.0, -1, 0, 0]), rho=np.float64(-1)
            ),
            "got -1.0.",
        ),
        "LapSVMPath y_val": (
            lambda: LapSVMPath().fit(Xm, ym, X_val=Xm[:3], y_val=np.array([0, 1, 7])),
            "holds labels [7] that are not among the training classes [0, 1]",
        ),
        "split with too few of a class": (
            lambda: split_labeled_unlabeled(
                np.r_[np.zeros(6), np.ones(1)], 4, min_per_class=2, random_state=0
            ),
            "Class 1.0 has 1 point(s)",
        ),
    }


@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_bad_input_messages_print_plain_values(case):
    fit, expected = _bad_inputs()[case]
    with pytest.raises(ValueError) as exc:
        fit()
    msg = str(exc.value)
    assert expected in msg, msg
    assert "np." not in msg and "array(" not in msg, msg


def _bad_inputs_pending():
    from semisvm import SolverOptions

    Xm, ym, _ = make_two_moons(60, n_labeled_per_class=3, random_state=0)
    prior = SolverOptions(class_prior=np.array([0.5, 0.2, 0.3]))
    return {
        "y_val unknown label": (
            lambda: LapSVM(early_stopping="validation").fit(
                Xm, ym, X_val=Xm[:3], y_val=np.array([0, 1, 7])
            ),
            "labels [7] are not among the classes of the labeled training points "
            "[0, 1]",
        ),
        "class_weight numpy key": (
            lambda: LapSVM(class_weight={np.int64(5): 1.0}).fit(Xm, ym),
            "keys [5]",
        ),
        "class_prior array": (
            lambda: LapSVM(options=prior).fit(Xm, ym),
            "got [0.5, 0.2, 0.3]",
        ),
    }


# these messages are written in models/_problem.py (one_vs_rest) and
# models/_adaptive.py, which wrap their values in plain() in the same way
@pytest.mark.parametrize("case", list(_bad_inputs_pending()))
def test_bad_input_messages_print_plain_values_pending(case):
    fit, expected = _bad_inputs_pending()[case]
    with pytest.raises(ValueError) as exc:
        fit()
    msg = str(exc.value)
    assert expected in msg, msg
    assert "np." not in msg and "array(" not in msg, msg
