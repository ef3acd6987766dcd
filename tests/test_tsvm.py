"""Exact transductive SVM: inner L2-SVM, branch and bound, randomized method."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisvm.kernels import kernel_matrix
from semisvm.models._tsvm import ExactTSVM
from semisvm.solvers._l2svm import add_point_bounds, l2svm_objective, l2svm_primal
from semisvm.solvers._tsvm import (
    balance_bounds,
    tsvm_branch_and_bound,
    tsvm_randomized,
)

# ----------------------------------------------------------------------------
# helpers


def _random_problem(seed, n=14, n_lab=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    t = np.zeros(n)
    t[0], t[1] = 1.0, -1.0
    if n_lab > 2:
        t[2] = 1.0
    K = kernel_matrix(X, kernel="rbf", gamma=float(rng.uniform(0.2, 2.0)))
    return K, t, float(rng.uniform(0.5, 10.0)), float(rng.uniform(0.1, 3.0))


def _blobs(seed, n_per=21, sep=3.0):
    rng = np.random.default_rng(seed)
    X = np.r_[
        rng.normal(size=(n_per, 2)) + [sep, 0], rng.normal(size=(n_per, 2)) - [sep, 0]
    ]
    t = np.zeros(2 * n_per)
    t[0], t[n_per] = 1.0, -1.0
    return X, t


def _objective_of(K, t, labels, C, C_star):
    tt = t.copy()
    tt[t == 0] = labels
    return l2svm_primal(K, tt, np.where(t != 0, C, C_star)).objective


def _brute_force(K, t, C, C_star, lo, hi):
    U = np.flatnonzero(t == 0)
    best = (np.inf, None)
    for bits in itertools.product((-1.0, 1.0), repeat=U.size):
        lab = np.array(bits)
        if not lo <= np.count_nonzero(lab > 0) <= hi:
            continue
        obj = _objective_of(K, t, lab, C, C_star)
        if obj < best[0]:
            best = (obj, lab)
    return best


# ----------------------------------------------------------------------------
# inner L2-SVM


@pytest.mark.parametrize("seed", range(3))
def test_l2svm_matches_scipy_minimize_and_kkt(seed):
    rng = np.random.default_rng(seed)
    n = 30
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) >= 0, 1.0, -1.0)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    cost = np.where(rng.random(n) < 0.5, 3.0, 0.7)
    cost[:4] = 0.0  # not in the problem
    res = l2svm_primal(K, y, cost)
    assert res.converged

    # reference: the same primal over explicit features K = Phi Phi^T (well
    # conditioned, unlike the alpha parametrisation), by L-BFGS
    lam, V = np.linalg.eigh(K)
    Phi = V * np.sqrt(np.maximum(lam, 0.0))

    def fun(w):
        f = Phi @ w[:n] + w[n]
        xi = np.maximum(0.0, 1.0 - y * f)
        gf = -2.0 * cost * y * xi
        val = 0.5 * w[:n] @ w[:n] + np.sum(cost * xi**2)
        return val, np.r_[w[:n] + Phi.T @ gf, gf.sum()]

    ref = minimize(
        fun,
        np.zeros(n + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10},
    )
    assert res.objective <= ref.fun + 1e-9
    np.testing.assert_allclose(res.objective, ref.fun, rtol=1e-7)
    np.testing.assert_allclose(
        res.objective, l2svm_objective(K, y, cost, res.alpha, res.b), rtol=1e-12
    )
    np.testing.assert_allclose(res.f, Phi @ ref.x[:n] + ref.x[n], atol=1e-4)
    # KKT in closed form: alpha_i = 2 C_i y_i max(0, 1 - y_i f_i), sum alpha = 0
    f = K @ res.alpha + res.b
    np.testing.assert_allclose(res.f, f, atol=1e-10)
    kkt = 2.0 * cost * y * np.maximum(0.0, 1.0 - y * f)
    np.testing.assert_allclose(res.alpha, kkt, atol=1e-10)
    assert abs(res.alpha.sum()) < 1e-10


def test_l2svm_warm_start_same_solution_and_inputs_untouched():
    K, t, C, C_star = _random_problem(5, n=25)
    rng = np.random.default_rng(0)
    y = np.where(rng.random(25) < 0.5, 1.0, -1.0)
    cost = np.where(np.arange(25) < 15, C, 0.0)
    first = l2svm_primal(K, y, cost)
    cost2 = cost.copy()
    cost2[15:18] = C_star
    a0, f0 = first.alpha.copy(), first.f.copy()
    warm = l2svm_primal(K, y, cost2, alpha0=first.alpha, b0=first.b, f0=first.f)
    cold = l2svm_primal(K, y, cost2)
    np.testing.assert_allclose(warm.objective, cold.objective, rtol=1e-12)
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-9)
    np.testing.assert_array_equal(first.alpha, a0)
    np.testing.assert_array_equal(first.f, f0)


def test_add_point_bounds_are_lower_bounds():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = 20
        X = rng.normal(size=(n, 2))
        y = np.where(X[:, 0] >= 0, 1.0, -1.0)
        K = kernel_matrix(X, kernel="rbf", gamma=float(rng.uniform(0.2, 2.0)))
        cost = np.where(rng.random(n) < 0.5, float(rng.uniform(0.5, 5)), 0.0)
        if len(set(y[cost > 0])) < 2:
            continue
        base = l2svm_primal(K, y, cost)
        idx = np.flatnonzero(cost == 0)
        c_new = float(rng.uniform(0.1, 5))
        d_pos, d_neg = add_point_bounds(K, base, cost, idx, c_new)
        for k, j in enumerate(idx):
            for s, d in ((1.0, d_pos[k]), (-1.0, d_neg[k])):
                y2, c2 = y.copy(), cost.copy()
                y2[j], c2[j] = s, c_new
                inc = l2svm_primal(K, y2, c2).objective - base.objective
                assert inc >= d - 1e-10


# ----------------------------------------------------------------------------
# branch and bound against brute force


@pytest.mark.parametrize("seed", range(6))
def test_branch_and_bound_equals_brute_force(seed):
    K, t, C, C_star = _random_problem(
        seed, n=14 if seed % 2 == 0 else 13, n_lab=2 + seed % 2
    )
    tol = 0.0 if seed < 3 else 0.2
    u = int(np.count_nonzero(t == 0))
    frac = float(np.mean(t[t != 0] > 0))
    lo, hi = balance_bounds(u, frac, tol)
    obj_bf, lab_bf = _brute_force(K, t, C, C_star, lo, hi)
    res = tsvm_branch_and_bound(K, t, C=C, C_star=C_star, balance_tol=tol)
    assert res.is_global_optimum and res.termination == "complete"
    assert abs(res.objective - obj_bf) <= 1e-8 * max(1.0, obj_bf)
    assert lo <= np.count_nonzero(res.labels > 0) <= hi
    # the returned labeling itself is optimal (labels may differ from the brute
    # force's only by a tie), and the reported objective is its objective
    obj_lab = _objective_of(K, t, res.labels, C, C_star)
    assert abs(obj_lab - obj_bf) <= 1e-8 * max(1.0, obj_bf)
    np.testing.assert_allclose(obj_lab, res.objective, rtol=1e-10)
    assert res.lower_bound == res.objective and res.gap == 0.0


def test_branch_and_bound_positive_fraction_is_respected():
    K, t, C, C_star = _random_problem(11, n=12)
    lo, hi = balance_bounds(10, 0.3)
    obj_bf, _ = _brute_force(K, t, C, C_star, lo, hi)
    res = tsvm_branch_and_bound(K, t, C=C, C_star=C_star, positive_fraction=0.3)
    assert np.count_nonzero(res.labels > 0) == 3
    assert abs(res.objective - obj_bf) <= 1e-8 * max(1.0, obj_bf)


def test_branch_and_bound_node_limit_returns_best_found():
    X, t = _blobs(0, n_per=15, sep=1.0)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    res = tsvm_branch_and_bound(K, t, C=10.0, C_star=1.0, max_nodes=5)
    assert not res.is_global_optimum
    assert res.termination == "max_nodes"
    assert np.count_nonzero(res.labels > 0) == 14
    full = tsvm_branch_and_bound(K, t, C=10.0, C_star=1.0)
    assert full.objective <= res.objective + 1e-12
    # the open nodes' bound is a valid lower bound of the optimum
    assert res.lower_bound <= full.objective + 1e-12
    assert 0.0 <= res.gap == (res.objective - res.lower_bound) / res.objective


# ----------------------------------------------------------------------------
# randomized method


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_randomized_equals_branch_and_bound(seed, keep):
    X, t = _blobs(seed)  # u = 40
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    bb = tsvm_branch_and_bound(K, t, C=10.0, C_star=100.0)
    rnd = tsvm_randomized(
        K,
        t,
        C=10.0,
        C_star=100.0,
        sample_size=20,
        max_iter=100,
        random_state=seed,
        keep_incumbent_margin=keep,
    )
    assert bb.is_global_optimum
    assert rnd.is_global_optimum and rnd.termination == "certificate"
    assert abs(rnd.objective - bb.objective) <= 1e-8 * max(1.0, bb.objective)
    np.testing.assert_array_equal(rnd.labels, bb.labels)
    assert abs(rnd.lower_bound - bb.objective) <= 1e-8 * max(1.0, bb.objective)
    assert rnd.weights.shape == (40,) and np.all(rnd.weights >= 1)


def test_randomized_is_reproducible():
    X, t = _blobs(1)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    kw = dict(C=10.0, C_star=10.0, sample_size=15, max_iter=8)
    a = tsvm_randomized(K, t, random_state=3, **kw)
    b = tsvm_randomized(K, t, random_state=3, **kw)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.objective == b.objective and a.n_nodes == b.n_nodes


def _moons(seed, u, p_pos, noise=0.1):
    """Small two moons whose unlabeled part holds a fraction ``p_pos`` of +1."""
    rng = np.random.default_rng(seed)
    n = u + 2
    cls = np.where(rng.random(n) < p_pos, 1.0, -1.0)
    cls[0], cls[1] = 1.0, -1.0
    a = rng.uniform(0, np.pi, n)
    X = np.c_[np.cos(a), np.sin(a)]
    X[cls < 0] = np.c_[1 - np.cos(a[cls < 0]), 0.5 - np.sin(a[cls < 0])]
    X += noise * rng.normal(size=X.shape)
    t = np.zeros(n)
    t[:2] = cls[:2]
    return X, t


@pytest.mark.parametrize("tol", [0.0, 0.3, 0.99])
def test_randomized_certificate_on_unbalanced_moons_matches_branch_and_bound(tol):
    # the settings where the earlier (windowed) certificate was wrong: small
    # two moons, 60-90% of U in one class, wide balance tolerances
    n_cert = 0
    for seed in range(12):
        X, t = _moons(seed, u=14, p_pos=0.6 + 0.3 * (seed % 2))
        K = kernel_matrix(X, kernel="rbf", gamma=2.0)
        bb = tsvm_branch_and_bound(K, t, C=10.0, C_star=10.0, balance_tol=tol)
        rnd = tsvm_randomized(
            K,
            t,
            C=10.0,
            C_star=10.0,
            balance_tol=tol,
            sample_size=10,
            max_iter=10,
            random_state=seed,
            full_search_after=None,
        )
        lo, hi = balance_bounds(14, 0.5, tol)
        assert lo <= np.count_nonzero(rnd.labels > 0) <= hi
        assert rnd.lower_bound <= bb.objective * (1 + 1e-9)
        assert rnd.objective >= bb.objective * (1 - 1e-9)
        if rnd.is_global_optimum:
            n_cert += 1
            assert abs(rnd.objective - bb.objective) <= 1e-8 * bb.objective
    if tol == 0.0:
        # with a strict balance, the relaxation of a 10-of-14 sample keeps a
        # count window and proves some of them; wide tolerances may prove none
        assert n_cert >= 1


def test_randomized_whole_set_search_closes_the_gap():
    # with the whole-set search after one failed proof, the run ends proven
    X, t = _moons(3, u=16, p_pos=0.8)
    K = kernel_matrix(X, kernel="rbf", gamma=2.0)
    bb = tsvm_branch_and_bound(K, t, C=10.0, C_star=10.0)
    rnd = tsvm_randomized(
        K,
        t,
        C=10.0,
        C_star=10.0,
        sample_size=4,
        max_iter=50,
        random_state=0,
        full_search_after=1,
    )
    assert rnd.is_global_optimum
    assert abs(rnd.objective - bb.objective) <= 1e-8 * bb.objective
    assert rnd.gap <= 1e-8


def test_randomized_stopped_early_is_balanced_with_valid_bound():
    X, t = _moons(5, u=30, p_pos=0.7, noise=0.2)
    K = kernel_matrix(X, kernel="rbf", gamma=3.0)
    for kw in (dict(max_iter=1), dict(max_nodes=3), dict(time_limit=1e-4)):
        rnd = tsvm_randomized(
            K,
            t,
            C=10.0,
            C_star=1.0,
            sample_size=8,
            random_state=0,
            full_search_after=None,
            **kw,
        )
        lo, hi = balance_bounds(30, 0.5)
        assert lo <= np.count_nonzero(rnd.labels > 0) <= hi
        np.testing.assert_allclose(
            _objective_of(K, t, rnd.labels, 10.0, 1.0), rnd.objective, rtol=1e-8
        )
        assert rnd.lower_bound <= rnd.objective
        if not rnd.is_global_optimum:
            assert rnd.termination in ("max_iter", "max_nodes", "time_limit")
            assert rnd.gap > 0


def test_verbose_log_reports_incumbent_bound_gap(capsys):
    X, t = _blobs(0, n_per=10)
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    tsvm_randomized(
        K, t, C=10.0, C_star=100.0, sample_size=8, random_state=0, verbose=1
    )
    out = capsys.readouterr().out
    assert "incumbent" in out and "lower_bnd" in out and "gap" in out
    assert "certificate" in out.splitlines()[-1]
    tsvm_branch_and_bound(K, t, C=10.0, C_star=100.0, verbose=1)
    out = capsys.readouterr().out
    assert "branch and bound" in out and "complete" in out.splitlines()[-1]


# ----------------------------------------------------------------------------
# estimator


def test_estimator_fit_predict_and_attributes():
    X, t = _blobs(0)
    y = np.where(t == 0, -1, np.where(t > 0, 7, 3))  # arbitrary class labels
    clf = ExactTSVM(
        method="randomized",
        C=10.0,
        C_star=100.0,
        gamma=0.2,
        sample_size=20,
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [3, 7])
    assert clf.transduction_.shape == (42,)
    assert set(np.unique(clf.transduction_)) <= {3, 7}
    np.testing.assert_array_equal(clf.transduction_[y != -1], y[y != -1])
    assert clf.is_global_optimum_ and clf.n_rounds_ >= 1 and clf.n_nodes_ >= 1
    assert clf.weights_.shape == (40,)
    # predict uses the decision function and maps back to the class labels
    f = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(f >= 0, 7, 3))
    assert clf.predict(X).dtype == y.dtype
    # same result from branch and bound
    bb = ExactTSVM(method="branch_and_bound", C=10.0, C_star=100.0, gamma=0.2)
    bb.fit(X, y)
    assert abs(bb.objective_ - clf.objective_) <= 1e-8 * clf.objective_
    np.testing.assert_array_equal(bb.transduction_, clf.transduction_)
    assert bb.weights_ is None and bb.n_rounds_ == 1


def test_estimator_float32_input_is_converted():
    X, t = _blobs(0, n_per=8)
    y = np.where(t == 0, -1, np.where(t > 0, 1, 0))
    a = ExactTSVM(method="branch_and_bound", gamma=0.2, C_star=10.0).fit(X, y)
    b = ExactTSVM(method="branch_and_bound", gamma=0.2, C_star=10.0).fit(
        X.astype(np.float32), y
    )
    assert b.support_vectors_.dtype == np.float64
    assert b.decision_function(X.astype(np.float32)).dtype == np.float64
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-6)


def test_estimator_time_limit_warns_and_is_not_certified():
    # 30 unlabeled points: the exact reference below certifies in well under a second
    # (38 points took 12 s) while 3 nodes still stop short of it
    X, t = _blobs(0, n_per=16, sep=0.5)
    y = np.where(t == 0, -1, np.where(t > 0, 1, 0))
    clf = ExactTSVM(method="branch_and_bound", gamma=1.0, C_star=0.5, max_nodes=3)
    with pytest.warns(ConvergenceWarning, match="without a certificate"):
        clf.fit(X, y)
    assert not clf.is_global_optimum_
    assert clf.termination_condition_ == "max_nodes"
    # the incumbent is balanced; its gap is measured against a proven bound
    assert np.count_nonzero(clf.transduction_[y == -1] == 1) == 15
    exact = ExactTSVM(method="branch_and_bound", gamma=1.0, C_star=0.5).fit(X, y)
    assert exact.is_global_optimum_ and exact.gap_ == 0.0
    assert clf.lower_bound_ <= exact.objective_ + 1e-12 <= clf.objective_ + 2e-12
    assert clf.gap_ == pytest.approx(
        (clf.objective_ - clf.lower_bound_) / clf.objective_
    )


@pytest.mark.parametrize("method", ["randomized", "branch_and_bound"])
def test_estimator_limits_warn_with_gap(method):
    X, t = _blobs(1, n_per=20, sep=0.5)
    y = np.where(t == 0, -1, np.where(t > 0, 1, 0))
    clf = ExactTSVM(method=method, gamma=1.0, C_star=0.5, max_nodes=2, sample_size=8)
    with pytest.warns(ConvergenceWarning, match=r"relative gap .*%.*gap_"):
        clf.fit(X, y)
    assert not clf.is_global_optimum_ and clf.gap_ > 0
    assert clf.termination_condition_ == "max_nodes"
    assert np.count_nonzero(clf.transduction_[y == -1] == 1) == 19
    assert ExactTSVM().time_limit == 60.0  # a default budget


def test_estimator_verbose_log(capsys):
    X, t = _blobs(0, n_per=8)
    y = np.where(t == 0, -1, np.where(t > 0, 1, 0))
    ExactTSVM(gamma=0.2, C_star=10.0, sample_size=6, verbose=1, random_state=0).fit(
        X, y
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[ExactTSVM] randomized")
    assert lines[1].split()[:6] == [
        "time_s",
        "rounds",
        "nodes",
        "incumbent",
        "lower_bnd",
        "gap",
    ]


def test_estimator_one_vs_rest_matches_binary_problems():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 4.0], [4.0, -2.0], [-4.0, -2.0]])
    X = np.concatenate([rng.normal(size=(5, 2)) + c for c in centres])
    y = np.full(15, -1)
    y[[0, 5, 10]] = [10, 20, 30]
    clf = ExactTSVM(method="branch_and_bound", gamma=0.2, C=10.0, C_star=10.0)
    clf.fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [10, 20, 30])
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    F = np.empty((15, 3))
    for c, lab in enumerate([10, 20, 30]):
        t = np.where(y == -1, 0.0, np.where(y == lab, 1.0, -1.0))
        ref = tsvm_branch_and_bound(K, t, C=10.0, C_star=10.0)
        assert abs(clf.objective_[c] - ref.objective) <= 1e-8 * ref.objective
        F[:, c] = K @ ref.alpha + ref.b
    assert clf.is_global_optimum_ and clf.gap_ == 0.0
    np.testing.assert_allclose(clf.decision_function(X), F, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X), np.array([10, 20, 30])[F.argmax(1)])
    np.testing.assert_array_equal(clf.transduction_, np.repeat([10, 20, 30], 5))
    with pytest.raises(ValueError, match="positive_fraction applies to two"):
        ExactTSVM(positive_fraction=0.3).fit(X, y)


@parametrize_with_checks(
    [ExactTSVM(), ExactTSVM(method="branch_and_bound")],
    expected_failed_checks=lambda est: {
        # -1 is the "unlabeled" marker (scikit-learn's semi-supervised
        # convention): a check that trains on labels {-1, 1} sees one class
        "check_classifiers_classes": "-1 marks unlabeled points",
    },
)
def test_sklearn_common_checks(estimator, check):
    check(estimator)


# ----------------------------------------------------------------------------
# bad input


def _xy():
    X, t = _blobs(0, n_per=6)
    return X, np.where(t == 0, -1, np.where(t > 0, 1, 0))


def test_continuous_target_is_rejected():
    X, y = _xy()
    with pytest.raises(ValueError, match="Unknown label type"):
        ExactTSVM().fit(X, y + 0.5)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5])
def test_positive_fraction_outside_unit_interval(bad):
    X, y = _xy()
    with pytest.raises(ValueError, match="positive_fraction"):
        ExactTSVM(positive_fraction=bad).fit(X, y)


def test_sample_size_larger_than_u():
    X, y = _xy()
    with pytest.raises(ValueError, match="sample_size=50 is larger than.*u=10"):
        ExactTSVM(sample_size=50).fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    t = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    with pytest.raises(ValueError, match="sample_size"):
        tsvm_randomized(K, t, sample_size=11)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_X(value):
    X, y = _xy()
    X = X.copy()
    X[2, 1] = value
    with pytest.raises(ValueError, match="NaN or infinity"):
        ExactTSVM().fit(X, y)


def test_no_labeled_point():
    X, _ = _xy()
    with pytest.raises(ValueError, match="No labeled point"):
        ExactTSVM().fit(X, np.full(X.shape[0], -1))


def test_bad_method_name():
    X, y = _xy()
    with pytest.raises(ValueError, match="'method' parameter"):
        ExactTSVM(method="annealing").fit(X, y)


def test_one_vs_rest_classes_in_parallel_equal_sequential():
    """n_jobs runs the one-vs-rest problems through joblib: the same certified model."""
    rng = np.random.default_rng(5)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    X = np.concatenate([c + rng.normal(0, 0.6, (6, 2)) for c in centers])
    y = np.full(18, -1)
    y[[0, 6, 12]] = [0, 1, 2]
    kw = dict(method="branch_and_bound", gamma=0.5, balance_tol=0.5, time_limit=None)
    a = ExactTSVM(**kw).fit(X, y)
    b = ExactTSVM(n_jobs=2, **kw).fit(X, y)
    assert a.is_global_optimum_ and b.is_global_optimum_
    np.testing.assert_array_equal(a.transduction_, b.transduction_)
    np.testing.assert_allclose(
        a.decision_function(X), b.decision_function(X), atol=1e-10
    )


# ----------------------------------------------------------------------------
# reduced-cost fixing in the branch and bound (issue 31, point 1)

FIXING_SEEDS = range(12)


def _fixing_problem(seed):
    K, t, C, C_star = _random_problem(100 + seed, n=12, n_lab=2 + seed % 2)
    tol = (0.0, 0.2)[seed % 2]
    u = int(np.count_nonzero(t == 0))
    lo, hi = balance_bounds(u, float(np.mean(t[t != 0] > 0)), tol)
    return K, t, C, C_star, lo, hi


@pytest.mark.parametrize("seed", FIXING_SEEDS)
def test_fixing_branch_and_bound_equals_brute_force(seed):
    from semisvm.solvers._tsvm import _branch_and_bound

    K, t, C, C_star, lo, hi = _fixing_problem(seed)
    obj_bf, _ = _brute_force(K, t, C, C_star, lo, hi)
    scale = 1e-8 * max(1.0, obj_bf)
    on = _branch_and_bound(K, t, C=C, C_star=C_star, lo=lo, hi=hi)
    off = _branch_and_bound(K, t, C=C, C_star=C_star, lo=lo, hi=hi, fixing=False)
    for s in (on, off):
        assert s.termination == "complete"
        assert abs(s.best_obj - obj_bf) <= scale
        assert lo <= np.count_nonzero(s.best_labels > 0) <= hi
        assert abs(_objective_of(K, t, s.best_labels, C, C_star) - obj_bf) <= scale
    # stopped early, the open-node bound stays below the optimum
    for budget in (2, 5, 10, 20):
        part = _branch_and_bound(
            K, t, C=C, C_star=C_star, lo=lo, hi=hi, max_nodes=budget
        )
        assert part.lower_bound() <= obj_bf + scale


def test_fixing_is_exercised_and_saves_nodes():
    from semisvm.solvers._tsvm import _branch_and_bound

    fixed = 0
    for seed in FIXING_SEEDS:
        K, t, C, C_star, lo, hi = _fixing_problem(seed)
        fixed += _branch_and_bound(K, t, C=C, C_star=C_star, lo=lo, hi=hi).n_fixed
    assert fixed > 0
    # two moons, u = 58: same optimum, fewer nodes
    from sklearn.datasets import make_moons

    X, yt = make_moons(60, noise=0.05, random_state=1)
    t = np.zeros(60)
    t[np.flatnonzero(yt == 1)[0]], t[np.flatnonzero(yt == 0)[0]] = 1.0, -1.0
    K = kernel_matrix(X, kernel="rbf", gamma=4.0)
    on = _branch_and_bound(K, t, C=10.0, C_star=1.0, lo=29, hi=29)
    off = _branch_and_bound(K, t, C=10.0, C_star=1.0, lo=29, hi=29, fixing=False)
    assert on.termination == off.termination == "complete"
    np.testing.assert_allclose(on.best_obj, off.best_obj, rtol=1e-9)
    assert on.n_fixed > 0 and on.n_nodes < off.n_nodes


def test_verbose_final_line_reports_gap_without_certificate(capsys):
    X, t = _blobs(0, n_per=15, sep=1.0)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    for solve in (
        lambda: tsvm_branch_and_bound(K, t, C=10.0, C_star=1.0, max_nodes=5, verbose=1),
        lambda: tsvm_randomized(
            K,
            t,
            C=10.0,
            C_star=1.0,
            sample_size=10,
            max_nodes=5,
            verbose=1,
            random_state=0,
        ),
    ):
        res = solve()
        last = capsys.readouterr().out.splitlines()[-1].split()
        assert not res.is_global_optimum and res.gap > 0
        assert last[-1] == "max_nodes"
        # time, rounds, nodes, incumbent, lower bound, gap (in %)
        assert float(last[3]) == pytest.approx(res.objective, rel=1e-5)
        assert float(last[4]) == pytest.approx(res.lower_bound, rel=1e-5, abs=1e-9)
        assert float(last[5].rstrip("%")) == pytest.approx(100 * res.gap, abs=1e-3)


def test_randomized_whole_set_search_without_incumbent():
    # the samples (r = 5 of u = 38) leave too many violators to give an
    # incumbent; after full_search_after rounds without one the whole-set
    # branch and bound starts from its own root labeling and proves the optimum
    from sklearn.datasets import make_moons

    X, yt = make_moons(40, noise=0.05, random_state=1)
    t = np.zeros(40)
    t[np.flatnonzero(yt == 1)[0]], t[np.flatnonzero(yt == 0)[0]] = 1.0, -1.0
    K = kernel_matrix(X, kernel="rbf", gamma=4.0)
    bb = tsvm_branch_and_bound(K, t, C=10.0, C_star=1.0)
    # (the graph hints would give an incumbent at once: off for this path)
    res = tsvm_randomized(
        K,
        t,
        C=10.0,
        C_star=1.0,
        sample_size=5,
        max_iter=3,
        random_state=0,
        graph_hints=False,
    )
    assert res.history[0]["incumbent"] == np.inf
    assert res.history[-1]["whole_set_searches"] == 1
    assert res.is_global_optimum and res.termination == "certificate"
    np.testing.assert_allclose(res.objective, bb.objective, rtol=1e-9)


def test_verbose_shows_the_whole_set_search(capsys):
    from sklearn.datasets import make_moons

    X, yt = make_moons(40, noise=0.05, random_state=1)
    t = np.zeros(40)
    t[np.flatnonzero(yt == 1)[0]], t[np.flatnonzero(yt == 0)[0]] = 1.0, -1.0
    K = kernel_matrix(X, kernel="rbf", gamma=4.0)
    tsvm_randomized(
        K, t, C=10.0, C_star=1.0, sample_size=5, max_iter=3, random_state=0, verbose=1
    )
    out = capsys.readouterr().out
    assert "whole set" in out and "certificate" in out.splitlines()[-1]
