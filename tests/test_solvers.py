"""Solver-level checks: Newton vs PCG, LapRLS direct vs PCG, gradients, line search."""

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.solvers._linesearch import exact_line_search, objective_along
from semisvm.solvers._newton import laprls_direct, lapsvm_newton
from semisvm.solvers._objective import primal_objective
from semisvm.solvers._pcg import lapsvm_pcg


def _problem(seed, n=90, n_lab=16, C=1, normalized=True, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    K = kernel_matrix(X, gamma=0.4)
    L = graph_laplacian(knn_graph(X, 6), normalized=normalized)
    Y = np.zeros((n, C))
    lab = rng.choice(n, n_lab, replace=False)
    if C == 1:
        Y[lab, 0] = np.sign(X[lab, 0] + 0.3 * rng.normal(size=n_lab))
    else:
        cls = np.arange(n_lab) % C
        Y[lab] = -1.0
        Y[lab, cls] = 1.0
    return K, L, Y


CASES = [
    (seed, C, normalized, ib)
    for seed in (0, 1)
    for C in (1, 3)
    for normalized in (False, True)
    for ib in (False, True)
]


@pytest.mark.parametrize("seed,C,normalized,ib", CASES)
def test_newton_equals_pcg_to_convergence(seed, C, normalized, ib):
    K, L, Y = _problem(seed, C=C, normalized=normalized)
    kw = dict(L=L, gamma_a=1e-2, gamma_i=0.5, intrinsic_bias=ib)
    rn = lapsvm_newton(K, Y, **kw)
    rp = lapsvm_pcg(K, Y, tol=1e-12, max_iter=20000, **kw)
    assert all(r == "error_vectors" for r in rn.reason)
    assert all(r == "tol" for r in rp.reason)
    np.testing.assert_allclose(rp.objective, rn.objective, rtol=1e-6)
    Fn = K @ rn.alpha + rn.b
    Fp = K @ rp.alpha + rp.b
    assert np.array_equal(np.sign(Fn), np.sign(Fp))
    np.testing.assert_allclose(Fp, Fn, atol=1e-5 * np.abs(Fn).max())
    # the solver's own objective equals the directly evaluated one
    for c in range(C):
        obj, _, _ = primal_objective(
            K,
            Y[:, c],
            rp.alpha[:, c],
            rp.b[c],
            L=L,
            gamma_a=1e-2,
            gamma_i=0.5,
            intrinsic_bias=ib,
        )
        assert obj == pytest.approx(rp.objective[c], rel=1e-10)


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("ib", [False, True])
def test_laprls_direct_equals_pcg(normalized, ib):
    K, L, Y = _problem(3, C=3, normalized=normalized)
    kw = dict(L=L, gamma_a=1e-3, gamma_i=0.2, intrinsic_bias=ib)
    rd = laprls_direct(K, Y, **kw)
    rp = lapsvm_pcg(K, Y, loss="squared", tol=1e-13, max_iter=20000, **kw)
    np.testing.assert_allclose(rp.objective, rd.objective, rtol=1e-7)
    np.testing.assert_allclose(K @ rp.alpha + rp.b, K @ rd.alpha + rd.b, atol=1e-6)


def test_intrinsic_bias_irrelevant_for_plain_laplacian():
    K, L, Y = _problem(4, normalized=False)
    r0 = lapsvm_newton(K, Y, L=L, gamma_a=1e-2, gamma_i=1.0, intrinsic_bias=False)
    r1 = lapsvm_newton(K, Y, L=L, gamma_a=1e-2, gamma_i=1.0, intrinsic_bias=True)
    np.testing.assert_allclose(K @ r0.alpha + r0.b, K @ r1.alpha + r1.b, atol=1e-8)


@pytest.mark.parametrize("loss", ["squared_hinge", "squared"])
@pytest.mark.parametrize("ib", [False, True])
def test_gradient_matches_finite_differences(loss, ib):
    K, L, Y = _problem(5, n=40, n_lab=10)
    rng = np.random.default_rng(0)
    alpha = rng.normal(scale=0.3, size=40)
    b = 0.1
    kw = dict(L=L, gamma_a=0.05, gamma_i=0.3, loss=loss, intrinsic_bias=ib)
    obj, gb, ga = primal_objective(K, Y[:, 0], alpha, b, **kw)
    eps = 1e-6
    num_b = (
        primal_objective(K, Y[:, 0], alpha, b + eps, **kw)[0]
        - primal_objective(K, Y[:, 0], alpha, b - eps, **kw)[0]
    ) / (2 * eps)
    num_a = np.empty(40)
    for i in range(40):
        e = np.zeros(40)
        e[i] = eps
        num_a[i] = (
            primal_objective(K, Y[:, 0], alpha + e, b, **kw)[0]
            - primal_objective(K, Y[:, 0], alpha - e, b, **kw)[0]
        ) / (2 * eps)
    assert gb == pytest.approx(num_b, rel=1e-5, abs=1e-7)
    np.testing.assert_allclose(ga, num_a, rtol=1e-5, atol=1e-7)


def test_pcg_solution_has_zero_gradient():
    K, L, Y = _problem(6)
    r = lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-12, max_iter=20000)
    obj, gb, ga = primal_objective(
        K, Y[:, 0], r.alpha[:, 0], r.b[0], L=L, gamma_a=1e-2, gamma_i=0.5
    )
    g0 = primal_objective(K, Y[:, 0], np.zeros(90), 0.0, L=L, gamma_a=1e-2, gamma_i=0.5)
    norm0 = np.hypot(g0[1], np.linalg.norm(g0[2]))
    assert np.hypot(gb, np.linalg.norm(ga)) < 1e-8 * norm0


@pytest.mark.parametrize("seed", range(8))
def test_exact_line_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    l = 30
    y = rng.choice([-1.0, 1.0], l)
    f = rng.normal(size=l)
    fd = rng.normal(size=l)
    B = rng.uniform(0.01, 2.0)
    A = rng.normal()
    # make d a descent direction: psi(0) < 0
    margin = 1 - y * f
    psi0 = A + ((f - y) * fd)[margin > 0].sum()
    if psi0 > 0:
        fd, A = -fd, -A
    s, n_int = exact_line_search(f, fd, y, A, B)
    # intervals visited = 1 + the break points (a point crossing y f = 1) passed
    # on the way to s, counted by brute force
    with np.errstate(divide="ignore"):
        s_cross = (1 - y * f) / (y * fd)
    crossed = s_cross[np.isfinite(s_cross) & (s_cross > 0)]
    assert 1 + np.sum(crossed < s) <= n_int <= 1 + np.sum(crossed <= s)

    def phi(t):
        return objective_along(t, f, fd, y, 0.0, A, B)

    res = minimize_scalar(
        phi, bounds=(0, 50), method="bounded", options={"xatol": 1e-12}
    )
    grid = np.linspace(0, 2 * max(s, 1e-3) + 1, 20001)
    best_grid = min(phi(t) for t in grid)
    assert phi(s) <= min(res.fun, best_grid) + 1e-10
    assert s == pytest.approx(res.x, abs=1e-5)


def test_gamma_i_zero_equals_l2svm_on_labeled_points():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 2))
    y = np.zeros(80)
    lab = rng.choice(80, 20, replace=False)
    y[lab] = np.sign(X[lab, 0] - 0.5 * X[lab, 1] + 0.2 * rng.normal(size=20))
    K = kernel_matrix(X, gamma=0.5)
    ga = 0.1
    r = lapsvm_pcg(K, y[:, None], gamma_a=ga, gamma_i=0.0, tol=1e-12, max_iter=5000)
    rn = lapsvm_newton(K, y[:, None], gamma_a=ga, gamma_i=0.0)
    # reference: kernel L2-SVM on the labeled points alone, by a generic optimizer
    Kll = K[np.ix_(lab, lab)]
    yl = y[lab]

    def fun(z):
        beta, b = z[:-1], z[-1]
        fl = Kll @ beta + b
        h = np.maximum(0, 1 - yl * fl)
        obj = 0.5 * (h @ h + ga * beta @ Kll @ beta)
        r_ = -yl * h
        return obj, np.r_[Kll @ r_ + ga * Kll @ beta, r_.sum()]

    z = minimize(
        fun,
        np.zeros(21),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-10, "maxiter": 5000},
    ).x
    Xt = rng.normal(size=(50, 2))
    Kt = kernel_matrix(Xt, X, gamma=0.5)
    f_ref = Kt[:, lab] @ z[:-1] + z[-1]
    np.testing.assert_allclose(Kt @ r.alpha[:, 0] + r.b[0], f_ref, atol=1e-5)
    np.testing.assert_allclose(Kt @ rn.alpha[:, 0] + rn.b[0], f_ref, atol=1e-5)
    # representer theorem: unlabeled coefficients vanish
    unl = np.setdiff1d(np.arange(80), lab)
    assert np.abs(rn.alpha[unl]).max() < 1e-8


def test_block_pcg_equals_columns_solved_alone():
    K, L, Y = _problem(8, C=3)
    kw = dict(L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-8, max_iter=3000)
    rb = lapsvm_pcg(K, Y, **kw)
    for c in range(3):
        rc = lapsvm_pcg(K, Y[:, [c]], **kw)
        np.testing.assert_allclose(
            rb.alpha[:, c], rc.alpha[:, 0], rtol=1e-9, atol=1e-12
        )
        assert rb.n_iter[c] == rc.n_iter[0]


def test_each_column_stops_by_its_own_rule():
    K, L, Y = _problem(9, C=3, n=150, n_lab=30)
    r = lapsvm_pcg(
        K, Y, L=L, gamma_a=1e-4, gamma_i=1.0, early_stopping="stability", max_iter=2000
    )
    assert set(r.reason) <= {"stability", "tol"}
    # the columns stop at different iterations (a global stop would give one count)
    assert len(set(r.n_iter.tolist())) > 1
    theta = int(np.ceil(np.sqrt(150) / 2))
    assert all(
        it % theta == 0 or reason == "tol"
        for it, reason in zip(r.n_iter, r.reason, strict=True)
    )


def test_history_and_callback():
    K, L, Y = _problem(10)
    calls = []

    def cb(state):
        calls.append(state["iteration"])
        return state["iteration"] >= 5

    r = lapsvm_pcg(
        K,
        Y,
        L=L,
        gamma_a=1e-2,
        gamma_i=0.5,
        record_history=True,
        callback=cb,
        K_eval=K,
        Y_eval=np.where(Y == 0, 1.0, Y),
    )
    assert calls == [1, 2, 3, 4, 5]
    assert r.reason == ["callback"]
    assert r.history["objective"].shape == (6, 1)
    assert np.all(np.diff(r.history["objective"][:, 0]) <= 1e-12)  # monotone
    assert r.history["eval_error"].shape == (6, 1)


def test_warm_start_does_not_modify_x0_and_converges_at_once():
    K, L, Y = _problem(11)
    r = lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-12, max_iter=20000)
    a0 = r.alpha.copy()
    r2 = lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-6, alpha0=a0, b0=r.b)
    np.testing.assert_array_equal(a0, r.alpha)
    assert r2.n_iter[0] <= 2


def test_float32_kernel_close_to_float64():
    K, L, Y = _problem(12)
    r64 = lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-10, max_iter=5000)
    r32 = lapsvm_pcg(
        K.astype(np.float32), Y, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-5, max_iter=5000
    )
    np.testing.assert_allclose(r32.objective, r64.objective, rtol=1e-3)


def test_batched_line_search_equals_per_column():
    from semisvm.solvers._linesearch import exact_line_search_batch

    rng = np.random.default_rng(3)
    for t in range(100):
        l, C = rng.integers(1, 30), rng.integers(1, 6)
        Y = rng.choice([-1.0, 1.0], (l, C))
        F = rng.normal(size=(l, C))
        FD = rng.normal(size=(l, C))
        if t % 4 == 0:
            F[:2] = Y[:2]  # points exactly on the margin
        if t % 5 == 0:
            FD[:1] = 0.0
        A = rng.normal(size=C)
        B = rng.uniform(0, 2, C)
        s, n_int = exact_line_search_batch(F, FD, Y, A, B)
        for c in range(C):
            s1, n1 = exact_line_search(F[:, c], FD[:, c], Y[:, c], A[c], B[c])
            assert n1 == n_int[c]
            assert s1 == pytest.approx(s[c]) or (np.isinf(s1) and np.isinf(s[c]))


# ------------------------------------------------ convention, results, tolerances
def test_every_solver_takes_the_same_targets_and_rejects_labels():
    from semisvm.solvers._lowrank import lapsvm_lowrank
    from semisvm.solvers._path import lapsvm_path

    K, L, Y = _problem(13)
    Phi = np.linalg.cholesky(K + 1e-8 * np.eye(K.shape[0]))
    labels = np.where(Y[:, 0] == 0, -1, (Y[:, 0] > 0).astype(int))  # 0/1, -1 unlabeled
    solvers = {
        "pcg": lambda T: lapsvm_pcg(K, T, L=L, gamma_a=1e-2, gamma_i=0.5, tol=1e-9),
        "newton": lambda T: lapsvm_newton(K, T, L=L, gamma_a=1e-2, gamma_i=0.5),
        "direct": lambda T: laprls_direct(K, T, L=L, gamma_a=1e-2, gamma_i=0.5),
        "lowrank": lambda T: lapsvm_lowrank(Phi, T, L=L, gamma_a=1e-2, gamma_i=0.5),
        "path": lambda T: lapsvm_path(K, L, np.reshape(T, (K.shape[0], -1))),
    }
    for name, solve in solvers.items():
        Y_in = Y.copy()
        solve(Y_in)
        np.testing.assert_array_equal(Y_in, Y)  # never modified
        with pytest.raises(ValueError, match="target convention"):
            solve(np.where(Y == 0, -1.0, (Y > 0).astype(float)) * 2)
        if name != "path":  # 1-D labels are the path's deprecated signature
            with pytest.raises(ValueError, match="target convention"):
                solve(np.where(labels == -1, 2, labels))
    # 1-D targets are one column
    a = lapsvm_newton(K, Y[:, 0], L=L, gamma_a=1e-2, gamma_i=0.5)
    b = lapsvm_newton(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5)
    np.testing.assert_array_equal(a.alpha, b.alpha)


def test_results_share_one_base_and_one_reason_vocabulary():
    from semisvm.solvers import (
        STOP_REASONS,
        LapSVMPathResult,
        SolveResult,
        SolverResult,
    )
    from semisvm.solvers._path import lapsvm_path

    K, L, Y = _problem(14)
    runs = [
        lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5),
        lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, early_stopping="stability"),
        lapsvm_pcg(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5, max_iter=2),
        lapsvm_newton(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5),
        laprls_direct(K, Y, L=L, gamma_a=1e-2, gamma_i=0.5),
    ]
    assert [r.reason for r in runs] == [
        ["tol"],
        ["stability"],
        ["max_iter"],
        ["error_vectors"],
        ["direct"],
    ]
    for r in runs:
        assert isinstance(r, SolveResult) and isinstance(r, SolverResult)
        assert not hasattr(r, "stop_reason")  # one stop-reason field, no alias
    [path] = lapsvm_path(K, L, Y)
    assert isinstance(path, LapSVMPathResult) and isinstance(path, SolverResult)
    assert path.reason in STOP_REASONS
    with pytest.raises(TypeError):  # keyword-only: no positional field order to break
        SolveResult(np.zeros((1, 1)), np.zeros(1))


def test_tolerance_table_per_dtype():
    from semisvm.solvers._tolerances import TOLERANCES, tolerances

    t64, t32 = tolerances(np.float64), tolerances(np.float32)
    assert set(TOLERANCES) == {np.dtype(np.float64), np.dtype(np.float32)}
    assert t64.eps == np.finfo(np.float64).eps and t32.eps == np.finfo(np.float32).eps
    assert t64.tiny == np.finfo(np.float64).tiny
    # what measures rounding is coarser in float32; the rest is the same algorithm
    for f in ("zero_gradient", "sign_dead_zone", "uphill_rtol", "uphill_atol"):
        assert getattr(t32, f) > getattr(t64, f), f
    for f in ("stall_ratio", "count_slack", "path_lambda_floor", "path_direction"):
        assert getattr(t32, f) == getattr(t64, f), f
    # every dead zone is far above the rounding it absorbs and far below a label
    assert 1e3 * t64.eps < t64.sign_dead_zone < 1e-6
    assert 1e2 * t32.eps < t32.sign_dead_zone < 1e-2
    assert tolerances(np.int64) is t64 and tolerances(None) is t64


def test_early_stopping_labels_do_not_depend_on_the_rounding_of_zero_outputs():
    # outputs that are 0 in exact arithmetic come out as +-1e-17 depending on the
    # summation order: with the dead zone the stability rule decides the same way
    # for every such rounding; without it (dead_zone=0) it does not
    from semisvm.solvers._early_stopping import DataStoppingRule, predicted_labels

    rng = np.random.default_rng(0)
    f = np.r_[rng.normal(size=40), np.zeros(10)][:, None]  # 10 outputs exactly 0

    def decisions(dead_zone, noise_seed):
        noise = np.random.default_rng(noise_seed)
        rule = DataStoppingRule(
            "stability",
            theta=1,
            unlabeled=np.arange(50),
            n_columns=1,
            stability_tol=0.1,
            stability_value_tol=None,
            window="last",
            dead_zone=dead_zone,
        )
        out = []
        for it in range(1, 5):
            g = f.copy()
            g[40:] += noise.choice([-1e-17, 1e-17], (10, 1))  # this check's rounding
            st = {
                "iteration": it,
                "Ka": g,
                "b": np.zeros(1),
                "alpha": g,
                "active": np.ones(1, dtype=bool),
                "objective": np.zeros(1),
            }
            out.append(bool(rule(st)[0]))
        return out

    robust = {tuple(decisions(1e-10, s)) for s in range(8)}
    assert robust == {(False, True, True, True)}
    # without the dead zone the stop depends on how many of the 10 zeros changed
    # sign (5 of 50 = 10% is not below stability_tol): it changes with the rounding
    fragile = {tuple(decisions(0.0, s)) for s in range(8)}
    assert len(fragile) > 1
    np.testing.assert_array_equal(predicted_labels(np.zeros((3, 2))), np.ones((3, 2)))


def test_newton_singular_system_warns_with_cause_and_remedy():
    # gamma_a = 0 and gamma_i = 0: the rows of the unlabeled points are zero, the
    # system is singular; the least-squares fallback says so (it used to be silent)
    import scipy.linalg as sla

    from semisvm.solvers._newton import _solve_newton_system

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    Y = np.zeros(20)
    Y[:3], Y[3:6] = 1.0, -1.0
    with pytest.warns(sla.LinAlgWarning, match="singular.*raise gamma_a") as rec:
        lapsvm_newton(X @ X.T, Y, gamma_a=0.0)
    assert rec[0].filename == __file__  # points at the caller of lapsvm_newton
    # an empty error set leaves the bias undetermined: the cause is named
    A = np.eye(3)
    A[0, 0] = 0.0
    with pytest.warns(sla.LinAlgWarning, match="bias b is not determined"):
        z = _solve_newton_system(A, np.r_[0.0, 1.0, 2.0], step=3, n_errors=0)
    np.testing.assert_allclose(z, [0.0, 1.0, 2.0])


def test_l2svm_result_is_a_solver_result_and_takes_the_target_convention():
    from semisvm.solvers import STOP_REASONS, SolverResult
    from semisvm.solvers._l2svm import L2SVMResult, l2svm_primal

    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 2))
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    t[:5] = 0.0  # not in the problem
    cost = np.ones(25)
    res = l2svm_primal(K, t, cost)
    assert isinstance(res, L2SVMResult) and isinstance(res, SolverResult)
    assert res.converged and res.reason == "error_vectors" in STOP_REASONS
    col = l2svm_primal(K, t[:, None], cost)  # (n, 1): the same one column
    np.testing.assert_array_equal(col.alpha, res.alpha)
    assert l2svm_primal(K, np.zeros(25), cost).reason == "direct"
    capped = l2svm_primal(K, t, cost, max_iter=1)
    assert capped.reason == ("error_vectors" if capped.converged else "max_iter")
    with pytest.raises(ValueError, match="target convention"):
        l2svm_primal(K, np.where(t == 0, -1, (t > 0).astype(float)) * 2, cost)
    with pytest.raises(ValueError, match="one problem"):
        l2svm_primal(K, np.c_[t, -t], cost)
    with pytest.raises(TypeError):  # keyword-only, like every solver result
        L2SVMResult(res.alpha, res.b)


def test_l2svm_singular_system_warns():
    # K_EE + diag(1/(2C)) = [[1, 1], [1, 1]] (an indefinite K): singular, the
    # least-squares fallback says so
    import scipy.linalg as sla

    from semisvm.solvers._l2svm import l2svm_primal

    K = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.warns(sla.LinAlgWarning, match="singular.*positive semi-definite"):
        l2svm_primal(K, np.array([1.0, -1.0]), np.array([0.5, 0.5]), max_iter=1)
