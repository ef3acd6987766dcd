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
