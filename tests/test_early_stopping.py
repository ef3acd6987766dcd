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


def test_auto_value_guard_is_five_percent_below_five_labels_per_class():
    from semisvm.models._solve import VALUE_TOL_FEW, VALUE_TOL_MANY, value_tolerance

    def targets(counts):
        # one-vs-rest ±1 targets (one column for two classes), 0 unlabeled
        y = np.repeat(np.arange(len(counts)), counts)
        y = np.r_[y, np.full(7, -1)]
        if len(counts) == 2:
            return np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))[:, None]
        Y = np.where(y[:, None] == np.arange(len(counts)), 1.0, -1.0)
        Y[y == -1] = 0.0
        return Y

    assert value_tolerance("auto", targets([5, 5])) == VALUE_TOL_MANY
    assert value_tolerance("auto", targets([9, 4])) == VALUE_TOL_FEW
    assert value_tolerance("auto", targets([5, 6, 7])) == VALUE_TOL_MANY
    assert value_tolerance("auto", targets([5, 1, 7])) == VALUE_TOL_FEW
    assert value_tolerance(0.2, targets([1, 1])) == 0.2
    assert value_tolerance(None, targets([1, 1])) is None


def test_auto_value_guard_is_the_fit_with_that_number():
    from sklearn.datasets import load_digits

    from semisvm import LapSVM, SolverOptions
    from semisvm.datasets import make_two_moons

    # one label per class (5%) and five per class (10%): each a fit where the
    # guard binds, so the other number stops at another iteration
    X1, y1, _ = make_two_moons(2400, noise=0.1, n_labeled_per_class=1, random_state=0)
    X5, yt = load_digits(return_X_y=True)
    r = np.random.default_rng(0)
    y5 = np.full(yt.size, -1)
    for c in range(10):
        pick = r.choice(np.flatnonzero(yt == c), 5, replace=False)
        y5[pick] = c
    for X, y, number, other in ((X1, y1, 0.05, 0.1), (X5, y5, 0.1, 0.05)):
        fits = [
            LapSVM(random_state=0, options=SolverOptions(stability_value_tol=v))
            for v in ("auto", number, other)
        ]
        auto, fixed, elsewhere = (est.fit(X, y) for est in fits)
        np.testing.assert_array_equal(auto.dual_coef_, fixed.dual_coef_)
        np.testing.assert_array_equal(auto.n_iter_, fixed.n_iter_)
        assert np.max(elsewhere.n_iter_) != np.max(auto.n_iter_)
