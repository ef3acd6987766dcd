"""The paper's data-based stopping rules as PCG hooks (solvers/_early_stopping.py)."""

from __future__ import annotations

import numpy as np

from semisvm.solvers._early_stopping import DataStoppingRule, UserCallback


def _state(it, Ka, b=None, alpha=None, active=None):
    C = Ka.shape[1]
    return {
        "iteration": it,
        "Ka": Ka,
        "b": np.zeros(C) if b is None else b,
        "alpha": alpha if alpha is not None else np.zeros_like(Ka),
        "active": np.ones(C, dtype=bool) if active is None else active,
        "objective": np.zeros(C),
    }


def test_stability_last_window_stops_when_labels_settle():
    unl = np.arange(4)
    rule = DataStoppingRule(
        "stability",
        theta=2,
        unlabeled=unl,
        n_columns=2,
        stability_tol=0.3,
        stability_value_tol=None,
        window="last",
    )
    f1 = np.array([[1.0, -1.0], [2.0, 1.0], [-1.0, 1.0], [-2.0, -1.0]])
    assert rule(_state(1, f1)) is None  # not a check iteration
    assert not rule(_state(2, f1)).any()  # first check: no reference yet
    f2 = f1.copy()
    f2[0, 1] = 0.5  # column 1: one of 4 labels flips (25% < 30%); column 0 none
    np.testing.assert_array_equal(rule(_state(4, f2)), [True, True])
    f3 = -f2  # every label flips
    np.testing.assert_array_equal(rule(_state(6, f3)), [False, False])


def test_stability_value_guard_waits_for_the_outputs():
    # same signs, but the outputs still move by 50%: the guard (5%) says go on
    unl = np.arange(3)
    rule = DataStoppingRule(
        "stability",
        theta=1,
        unlabeled=unl,
        n_columns=1,
        stability_tol=0.5,
        stability_value_tol=0.05,
        window="last",
    )
    f = np.array([[1.0], [2.0], [-1.0]])
    rule(_state(1, f))
    assert not rule(_state(2, 1.5 * f)).any()
    assert rule(_state(3, 1.5 * f)).all()


def test_validation_needs_one_more_correct_example():
    unl = np.arange(2)
    K_val = np.eye(4)
    Y_val = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    rule = DataStoppingRule(
        "validation",
        theta=1,
        unlabeled=unl,
        n_columns=1,
        stability_tol=0.1,
        stability_value_tol=None,
        window="last",
        K_val=K_val,
        Y_val=Y_val,
    )
    Ka = np.zeros((2, 1))
    a1 = np.array([[1.0], [-1.0], [-1.0], [-1.0]])  # 1 error of 4
    assert not rule(_state(1, Ka, alpha=a1)).any()
    a2 = np.array([[1.0], [1.0], [-1.0], [-1.0]])  # 0 errors: improved
    assert not rule(_state(2, Ka, alpha=a2)).any()
    assert rule(_state(3, Ka, alpha=a2)).all()  # no gain of one example


def test_user_callback_hook_sees_the_public_state():
    seen = []
    hook = UserCallback(lambda s: seen.append(sorted(s)) or s["iteration"] >= 2)
    assert hook.reason == "callback"
    assert hook(_state(1, np.zeros((2, 1)))) is False
    assert hook(_state(2, np.zeros((2, 1)))) is True
    assert seen[0] == ["active", "alpha", "b", "iteration", "objective"]
