"""Safe semi-supervision: LOO-chosen regularization, CV that scores the refit model,
class prior from the unlabeled points."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.model_selection import StratifiedKFold

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.model_selection import LapRLSCV, LapSVMCV
from semisvm.solvers._loo import SpectralLOO, loo_features
from semisvm.solvers._newton import laprls_direct, lapsvm_newton


def _problem(n=90, n_lab=12, seed=0):
    rng = np.random.default_rng(seed)
    X, yt = make_moons(n, noise=0.2, random_state=seed)
    K = kernel_matrix(X, kernel="rbf", gamma=2.0)
    L = graph_laplacian(knn_graph(X, 6, weight="binary"))
    lab = rng.choice(n, n_lab, replace=False)
    ys = np.where(yt[lab] == 1, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, size=n_lab)
    return K, L, lab, ys, c


def _brute_loo(solve, K, L, lab, ys, c, ga, gi):
    n = K.shape[0]
    Y = np.zeros((n, 1))
    Y[lab, 0] = ys
    sw = np.ones(n)
    sw[lab] = c
    out = []
    for t in range(lab.size):
        Y2 = Y.copy()
        Y2[lab[t]] = 0.0
        r = solve(K, Y2, L=L, gamma_a=ga, gamma_i=gi, sample_weight=sw)
        out.append((K @ r.alpha[:, 0] + r.b[0])[lab[t]])
    return np.array(out)


@pytest.mark.parametrize("ga, gi", [(1e-2, 1e-3), (1.0, 0.0), (1e-3, 1e-1)])
def test_laprls_loo_equals_refits(ga, gi):
    # exact features (n <= max_features): the closed form must equal n refits
    K, L, lab, ys, c = _problem()
    Phi = loo_features(lambda idx: K[:, idx], K.shape[0], lab)
    eng = SpectralLOO(Phi, L, lab, ys[:, None], weights=c)
    F, O = eng.rls(ga, gi)
    ref = _brute_loo(laprls_direct, K, L, lab, ys, c, ga, gi)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(O[:, 0], ref, atol=1e-6 * scale)
    # and the training outputs equal the direct solve's
    Y = np.zeros((K.shape[0], 1))
    Y[lab, 0] = ys
    sw = np.ones(K.shape[0])
    sw[lab] = c
    r = laprls_direct(K, Y, L=L, gamma_a=ga, gamma_i=gi, sample_weight=sw)
    np.testing.assert_allclose(F[:, 0], (K @ r.alpha[:, 0] + r.b[0])[lab], atol=1e-6)


@pytest.mark.parametrize("ga, gi", [(1e-2, 1e-3), (1e-3, 1e-1)])
def test_lapsvm_loo_equals_newton_refits(ga, gi):
    K, L, lab, ys, c = _problem(seed=1)
    Phi = loo_features(lambda idx: K[:, idx], K.shape[0], lab)
    eng = SpectralLOO(Phi, L, lab, ys[:, None], weights=c)
    F, O = eng.l2svm(ga, gi)
    ref = _brute_loo(lapsvm_newton, K, L, lab, ys, c, ga, gi)
    np.testing.assert_allclose(O[:, 0], ref, atol=1e-6 * np.abs(ref).max())
    # the one-step approximation differs where an error set changes: it is not
    # what the exact path returns on this problem (the test can see a fallback)
    eng.exact_max = 0
    _, O_approx = eng.l2svm(ga, gi)
    assert np.all(np.isfinite(O_approx))


def _tanh_family(n, d, seed, n_lab=50):
    W = np.random.default_rng(123).normal(size=(10, d))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 10))
    X = np.tanh(Z @ W / 3)
    yt = (Z[:, 0] > 0).astype(int)
    y = np.full(n, -1)
    lab = rng.choice(n, n_lab, replace=False)
    y[lab] = yt[lab]
    return X, y, yt


def test_auto_leaves_a_misleading_graph():
    # the class boundary crosses the dense regions: the graph-trusting model is
    # much worse than the supervised one, and 'auto' must notice it
    X, y, yt = _tanh_family(600, 20, seed=0)
    U = y == -1
    auto = LapRLS().fit(X, y)
    trusting = LapRLS(gamma_a=1e-6, gamma_i=1.0).fit(X, y)
    sel = auto.regularization_selection_
    assert sel["rule"] == "loo"
    assert sel["gamma_i"] < 1.0
    acc_auto = (auto.transduction_[U] == yt[U]).mean()
    acc_trust = (trusting.transduction_[U] == yt[U]).mean()
    assert acc_auto > acc_trust + 0.03


def test_auto_keeps_defaults_with_few_labels():
    X, yt = make_moons(200, noise=0.1, random_state=0)
    y = np.full(200, -1)
    y[[np.flatnonzero(yt == c)[0] for c in (0, 1)]] = (0, 1)
    for est in (LapSVM(), LapRLS()):
        est.fit(X, y)
        sel = est.regularization_selection_
        assert sel["rule"] == "defaults" and "too few" in sel["reason"]
        assert (sel["gamma_a"], sel["gamma_i"]) == (1e-6, 1.0)


def test_auto_verbose_says_what_and_why(capsys):
    X, y, _ = _tanh_family(300, 10, seed=1, n_lab=40)
    LapSVM(verbose=1, max_iter=50).fit(X, y)
    out = capsys.readouterr().out
    assert (
        "gamma_a=" in out
        and "gamma_i=" in out
        and "LOO" in out
        or "standard error" in out
    )


def test_gamma_i_zero_is_the_supervised_solution():
    # gamma_i = 0: alpha lives on the labeled points and equals Newton on K_LL
    X, y, _ = _tanh_family(200, 10, seed=2, n_lab=30)
    est = LapSVM(
        gamma_a=1e-2, gamma_i=0.0, options=SolverOptions(class_balance=None)
    ).fit(X, y)
    assert est.solver_ == "newton-labeled"
    lab = y != -1
    K = kernel_matrix(X, kernel="rbf", gamma=est.gamma_)
    Y = np.zeros((X.shape[0], 1))
    Y[lab, 0] = np.where(y[lab] == 1, 1.0, -1.0)
    ref = lapsvm_newton(K, Y, gamma_a=est.gamma_a_, gamma_i=0.0)
    f_ref = K @ ref.alpha[:, 0] + ref.b[0]
    np.testing.assert_allclose(est.decision_function(X), f_ref, atol=1e-6)


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
def test_cv_scores_the_refitted_model(cls):
    # every candidate's split scores equal the plain estimator fitted on the
    # fold's training labels (the others hidden) and scored on the held-out ones
    X, yt = make_moons(120, noise=0.2, random_state=3)
    rng = np.random.default_rng(3)
    y = np.full(120, -1)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(yt == c), 6, replace=False) for c in (0, 1)]
    )
    y[lab] = yt[lab]
    cv = cls(
        gamma_a=(1e-3, 1e-1), gamma_i=(0.0, 1.0), gamma=[2.0], cv=3, random_state=0
    ).fit(X, y)
    Q = np.flatnonzero(y != -1)
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(
        np.zeros((Q.size, 1)), y[Q]
    )
    folds = list(folds)
    base = cv.best_estimator_
    for i, params in enumerate(cv.cv_results_["params"]):
        for f, (_tr, te) in enumerate(folds):
            y_f = y.copy()
            y_f[Q[te]] = -1
            est = type(base)(**{**base.get_params(deep=False), **params}).fit(X, y_f)
            acc = float(np.mean(est.predict(X[Q[te]]) == y[Q[te]]))
            assert acc == pytest.approx(cv.cv_results_[f"split{f}_test_score"][i]), (
                params,
                f,
            )
    best = cv.cv_results_["params"][cv.best_index_]
    assert best == cv.best_params_
    assert cv.cv_results_["rank_test_score"][cv.best_index_] == 1


def test_class_prior_auto_on_imbalanced_moons_with_balanced_labels():
    # 1:4 two moons, 2 labels per class: the labels' 50/50 is the wrong prior
    X, yt = make_moons((100, 400), noise=0.1, random_state=0)
    rng = np.random.default_rng(0)
    y = np.full(yt.size, -1)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(yt == c), 2, replace=False) for c in (0, 1)]
    )
    y[lab] = yt[lab]
    U = y == -1
    est = LapSVM(options=SolverOptions(class_prior="auto")).fit(X, y)
    frac = np.mean(est.transduction_[U] == 0)
    assert abs(frac - np.mean(yt[U] == 0)) < 0.05
    assert np.mean(est.transduction_[U] == yt[U]) >= 0.95


def test_edge_expansion_closed_form():
    import scipy.sparse as sp

    from semisvm.models._adaptive import edge_expansion

    # path 0 - 1 - 2 - 3 with weights 1, 2, 3: the cut {0, 1} | {2, 3} has
    # weight 2 and a smaller side of 2 points; {0} | {1, 2, 3} weight 1 over 1
    W = sp.csr_array(
        np.array([[0, 1, 0, 0], [1, 0, 2, 0], [0, 2, 0, 3], [0, 0, 3, 0]], dtype=float)
    )
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    assert edge_expansion(L, np.array([True, True, False, False])) == pytest.approx(1.0)
    assert edge_expansion(L, np.array([True, False, False, False])) == pytest.approx(
        1.0
    )
    assert edge_expansion(L, np.array([False, False, False, True])) == pytest.approx(
        3.0
    )
    assert edge_expansion(L, np.zeros(4, dtype=bool)) == np.inf


@pytest.mark.data
def test_class_prior_auto_keeps_overlapping_gaussians_balanced():
    # G50C (two overlapping Gaussians in 50-D, balanced), 5 labels per class: a
    # dip in the tail of the outputs is not a gap between the classes; the
    # ratio-cut test keeps the labels' proportions (before: 6.5% / 93.5%, 44.5%
    # error on this draw; 14.2% with the labels' proportions)
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    data = Path(
        __import__("os").environ.get("SEMISVM_DATA", root.parent / "shared" / "data")
    )
    if not (data / "g50c.npz").exists():
        pytest.skip(f"G50C data not found in {data}")
    sys.path.insert(0, str(root / "benchmarks" / "accuracy"))
    sys.path.insert(0, str(root / "benchmarks"))
    import bench_accuracy as B

    X, y, test = B.load("g50c", data)
    lab, unl, _ = B.draw_split(y, test, "5/class", 1, "g50c")
    tr = np.sort(np.r_[lab, unl])
    labm = np.isin(tr, lab)
    yin = np.where(labm, y[tr], -1)
    est = LapSVM(gamma_a=1e-6, gamma_i=1.0).fit(X[tr], yin)
    assert abs(est.class_prior_[0] - 0.5) < 0.1
    assert np.mean(est.transduction_[~labm] != y[tr][~labm]) < 0.2


def test_shifted_boundary_densities_equal_one_per_shift():
    # the valley search of class_prior='auto' reads 201 shifted densities at
    # once; each must equal boundary_density of the shifted outputs (two blocks
    # of shifts at 30,000 outputs, a constant vector, one output)
    from semisvm.models._adaptive import boundary_density, boundary_density_shifted

    rng = np.random.default_rng(2)
    f = np.sort(np.r_[rng.normal(-1, 0.3, 22_000), rng.normal(1.2, 0.5, 8_000)])
    grid = np.linspace(-f[-1], -f[0], 201)
    ref = np.array([boundary_density(f + d) for d in grid])
    np.testing.assert_allclose(boundary_density_shifted(f, grid), ref, rtol=1e-12)
    assert 0 < ref.min() < 0.5 * ref.max()  # a valley between the two modes
    np.testing.assert_array_equal(boundary_density_shifted(np.ones(7), grid[:3]), 1.0)
    np.testing.assert_allclose(
        boundary_density_shifted(np.array([0.3]), np.array([0.0, -0.3])), 1.0
    )
