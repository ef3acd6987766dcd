"""Data-adaptive defaults: normalized regularization, one model for every solver,
class weights, class balance, probabilities (issue 11 points 1, 2, 5; issue 15 item 4)."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import cross_val_score
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils.class_weight import compute_class_weight

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import hide_labels, make_two_moons
from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.solvers._dual import lapsvm_dual
from semisvm.solvers._newton import laprls_direct, lapsvm_newton
from semisvm.solvers._objective import primal_objective
from semisvm.solvers._pcg import lapsvm_pcg


def _problem(n=80, n_lab=5, seed=0, normalized=True):
    X, y, _ = make_two_moons(n, n_labeled_per_class=n_lab, random_state=seed)
    K = kernel_matrix(X, gamma=2.0)
    L = graph_laplacian(knn_graph(X, 6), normalized=normalized)
    Y = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    return X, y, K, L, Y


# ------------------------------------------------------ solvers with weights


def _gradient(K, L, Y, alpha, b, ga, gi, w, loss="squared_hinge"):
    """Plain gradient of the weighted objective (written out independently).

    The objective is convex, so a zero gradient certifies the minimum."""
    Ka = K @ alpha
    f = Ka + b
    lab = Y != 0
    r = np.zeros(K.shape[0])
    if loss == "squared":
        r[lab] = f[lab] - Y[lab]
    else:
        v = lab & (Y * f < 1)
        r[v] = f[v] - Y[v]
    r = r * (w if w is not None else 1.0)
    return np.r_[r.sum(), K @ (r + ga * alpha + gi * np.asarray(L @ Ka))]


@pytest.mark.parametrize("weighted", [False, True])
def test_weighted_solvers_are_stationary_and_agree(weighted):
    X, y, K, L, Y = _problem()
    w = np.where(y == 1, 3.0, 0.5) if weighted else None
    ga, gi = 1e-2, 0.1
    nw = lapsvm_newton(K, Y[:, None], L=L, gamma_a=ga, gamma_i=gi, sample_weight=w)
    pc = lapsvm_pcg(
        K,
        Y[:, None],
        L=L,
        gamma_a=ga,
        gamma_i=gi,
        sample_weight=w,
        tol=1e-13,
        max_iter=20000,
    )
    du = lapsvm_dual(
        K,
        L,
        Y,
        gamma_a=ga,
        gamma_i=gi,
        loss="squared_hinge",
        sample_weight=w,
        tol=1e-10,
    )
    for r in (nw, pc, du):
        g = _gradient(K, L, Y, r.alpha[:, 0], r.b[0], ga, gi, w)
        assert np.abs(g).max() < 1e-6, np.abs(g).max()
        obj = primal_objective(
            K, Y, r.alpha[:, 0], r.b[0], L=L, gamma_a=ga, gamma_i=gi, sample_weight=w
        )[0]
        np.testing.assert_allclose(r.objective[0], obj, rtol=1e-10)
    np.testing.assert_allclose(pc.alpha, nw.alpha, atol=1e-6)
    np.testing.assert_allclose(du.alpha, nw.alpha, atol=1e-5)
    np.testing.assert_allclose(du.b, nw.b, atol=1e-5)
    # weights change the solution (the test can fail)
    if weighted:
        plain = lapsvm_newton(K, Y[:, None], L=L, gamma_a=ga, gamma_i=gi)
        assert abs(plain.objective[0] - nw.objective[0]) > 1e-4


def test_weighted_laprls_direct_is_stationary_and_equals_pcg():
    X, y, K, L, Y = _problem(seed=1)
    w = np.where(y == 1, 2.0, 1.0)
    d = laprls_direct(K, Y[:, None], L=L, gamma_a=1e-2, gamma_i=0.1, sample_weight=w)
    g = _gradient(K, L, Y, d.alpha[:, 0], d.b[0], 1e-2, 0.1, w, loss="squared")
    assert np.abs(g).max() < 1e-8
    p = lapsvm_pcg(
        K,
        Y[:, None],
        L=L,
        gamma_a=1e-2,
        gamma_i=0.1,
        loss="squared",
        sample_weight=w,
        tol=1e-13,
        max_iter=20000,
    )
    np.testing.assert_allclose(p.alpha, d.alpha, atol=1e-6)


def test_weighted_line_search_is_exact():
    from semisvm.solvers._linesearch import (
        exact_line_search,
        exact_line_search_batch,
        objective_along,
    )

    rng = np.random.default_rng(0)
    for _ in range(20):
        m = 15
        f, fd = rng.normal(size=m), rng.normal(size=m)
        y = rng.choice([-1.0, 1.0], size=m)
        w = rng.uniform(0.2, 5.0, size=m)
        A, B = rng.normal(), rng.uniform(0.1, 2.0)
        s, _ = exact_line_search(f, fd, y, A, B, w)
        grid = np.linspace(0, 3 * max(s, 1.0), 3001)
        vals = [objective_along(t, f, fd, y, 0.0, A, B, w) for t in grid]
        assert objective_along(s, f, fd, y, 0.0, A, B, w) <= min(vals) + 1e-9
        sb, _ = exact_line_search_batch(
            f[:, None], fd[:, None], y[:, None], np.array([A]), np.array([B]), w
        )
        np.testing.assert_allclose(sb[0], s, rtol=1e-12, atol=1e-14)


# ------------------------------------------------ dual: issue 15 item 4, issue 12


def test_dual_without_graph_is_supervised_l2_svm():
    X, y, _ = make_two_moons(60, n_labeled_per_class=6, random_state=0)
    d = LapSVM(solver="dual", gamma_i=0.0).fit(X, y)  # used to raise AttributeError
    n = LapSVM(solver="newton", gamma_i=0.0).fit(X, y)
    np.testing.assert_allclose(
        d.decision_function(X), n.decision_function(X), atol=1e-5
    )


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_same_model_whichever_solver(class_weight):
    """Default (normalized, squared hinge) parameters: dual, Newton and PCG give
    the same decision function to solver tolerance, binary and multi-class."""
    X, yt = load_digits(n_class=3, return_X_y=True)
    X, yt = X[:150], yt[:150]
    y = hide_labels(yt, 4, random_state=0)
    y[np.flatnonzero(yt == 0)[:6]] = 0  # unequal labeled classes
    kw = dict(class_weight=class_weight, normalize_laplacian=False)
    models = {
        s: LapSVM(solver=s, tol=1e-12 if s != "dual" else 1e-10, max_iter=20000, **kw)
        .set_params(early_stopping=None if s == "pcg" else "auto")
        .fit(X, y)
        for s in ("newton", "pcg", "dual")
    }
    Fn = models["newton"].decision_function(X)
    # LIBSVM stops on the dual's KKT violation (tol=1e-10); alpha = A^{-1} J^T Y beta
    # amplifies the error in beta by the conditioning of A = gamma_A I + gamma_I L K
    # (gamma_A = l * 1e-6 here): measured 4.5e-5 on the outputs, 3e-8 on the objective
    for s, atol in (("pcg", 1e-6), ("dual", 2e-4)):
        np.testing.assert_allclose(models[s].decision_function(X), Fn, atol=atol)
        np.testing.assert_allclose(
            models[s].objective_, models["newton"].objective_, rtol=1e-6
        )
        assert np.array_equal(models[s].predict(X), models["newton"].predict(X))


def test_dual_hinge_is_the_paper_dual():
    X, y, K, L, Y = _problem(normalized=False)
    m = LapSVM(
        solver="dual",
        loss="hinge",
        gamma_a=1e-2,
        gamma_i=0.1,
        kernel="precomputed",
        normalize_laplacian=False,
        options=SolverOptions(regularization="paper", class_balance=None),
    ).fit(
        K,
        y,
        adjacency=knn_graph(
            make_two_moons(80, n_labeled_per_class=5, random_state=0)[0], 6
        ),
    )
    r = lapsvm_dual(K, L, Y, gamma_a=1e-2, gamma_i=0.1, loss="hinge")
    np.testing.assert_allclose(m.dual_coef_[:, 0], r.alpha[:, 0], atol=1e-6)
    np.testing.assert_allclose(m.intercept_, r.b, atol=1e-6)


def test_dual_honours_or_rejects_every_parameter():
    X, y, _ = make_two_moons(60, n_labeled_per_class=6, random_state=0)
    with pytest.raises(ValueError, match="intrinsic_bias"):
        LapSVM(
            solver="dual",
            normalize_laplacian=True,
            options=SolverOptions(intrinsic_bias=True),
        ).fit(X, y)
    LapSVM(
        solver="dual",
        normalize_laplacian=True,
        options=SolverOptions(intrinsic_bias=False),
    ).fit(X, y)
    for rule in ("stability", "validation", "mixed"):
        with pytest.raises(ValueError, match="applies to solver='pcg' only"):
            LapSVM(solver="dual", early_stopping=rule).fit(X, y)
        with pytest.raises(ValueError, match="applies to solver='pcg' only"):
            LapSVM(solver="newton", early_stopping=rule).fit(X, y)
    with pytest.raises(ValueError, match="loss='hinge'"):
        LapSVM(solver="pcg", loss="hinge").fit(X, y)
    # max_iter reaches LIBSVM
    with pytest.warns(Warning, match="max_iter"):
        m = LapSVM(solver="dual", max_iter=1, tol=1e-12).fit(X, y)
    assert m.termination_condition_ == "max_iter"


def test_hinge_dual_bias_is_not_unique_when_every_label_is_bounded():
    """The G50C dual collapse (issue 12): with strong regularization every labeled
    point is a bounded support vector and the hinge objective is flat in b over
    an interval; LIBSVM's midpoint is one optimum among many.  The squared hinge
    has one b."""
    X, y, K, L, Y = _problem(normalized=False)
    ga = 10.0  # C = 1/(2 gamma_A) = 0.05: every labeled point inside the margin
    r = lapsvm_dual(K, L, Y, gamma_a=ga, gamma_i=1.0, loss="hinge")
    beta = r.history["beta"][0][Y != 0]
    assert np.allclose(beta, 1.0)  # all at the bound (C = 1 in the Eq. 5 scaling)
    from semisvm.solvers._dual import lapsvm_dual_objective

    objs = [
        lapsvm_dual_objective(
            K, L, Y, r.alpha, r.b + db, gamma_a=ga, gamma_i=1.0, loss="hinge"
        )[0]
        for db in (-0.05, 0.0, 0.05)
    ]
    np.testing.assert_allclose(objs, objs[1], rtol=1e-12)


# ------------------------------------------------ normalized regularization


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("power", [1, 2])
def test_normalized_regularization_maps_to_paper_weights(normalized, power):
    X, y, _ = make_two_moons(90, n_labeled_per_class=4, random_state=2)
    kw = dict(
        solver="newton",
        gamma=2.0,
        n_neighbors=6,
        graph_weight="binary",
        normalize_laplacian=normalized,
        laplacian_power=power,
    )
    a = LapSVM(
        gamma_a=1e-3, gamma_i=0.5, **kw, options=SolverOptions(class_balance=None)
    ).fit(X, y)
    n, l_ = X.shape[0], int((y != -1).sum())
    Lb = graph_laplacian(knn_graph(X, 6), normalized=normalized)
    dbar = Lb.diagonal().mean()
    ga, gi = l_ * 1e-3, l_ * 0.5 / (n * dbar**power)
    b = LapSVM(
        gamma_a=ga,
        gamma_i=gi,
        **kw,
        options=SolverOptions(regularization="paper", class_balance=None),
    ).fit(X, y)
    np.testing.assert_allclose([a.gamma_a_, a.gamma_i_], [ga, gi], rtol=1e-12)
    np.testing.assert_allclose(
        a.decision_function(X), b.decision_function(X), atol=1e-9
    )


def test_graph_term_is_summed_beyond_graph_mean_points(monkeypatch):
    """Above GRAPH_MEAN_POINTS training points the intrinsic term is divided by
    that number, not by n: the estimator's raw weights and its fit equal the
    paper-weight fit at lambda_I W / (N_G dbar) (N_G lowered to 40 to test it on
    90 points), and below N_G nothing changes."""
    from semisvm.models import _adaptive

    X, y, _ = make_two_moons(90, n_labeled_per_class=4, random_state=2)
    kw = dict(solver="newton", gamma=2.0, n_neighbors=6, graph_weight="binary")
    opts = SolverOptions(class_balance=None)
    before = LapSVM(gamma_a=1e-3, gamma_i=0.5, **kw, options=opts).fit(X, y)
    monkeypatch.setattr(_adaptive, "GRAPH_MEAN_POINTS", 40)
    a = LapSVM(gamma_a=1e-3, gamma_i=0.5, **kw, options=opts).fit(X, y)
    l_ = int((y != -1).sum())
    dbar = graph_laplacian(knn_graph(X, 6), normalized=False).diagonal().mean()
    ga, gi = l_ * 1e-3, l_ * 0.5 / (40 * dbar)
    np.testing.assert_allclose([a.gamma_a_, a.gamma_i_], [ga, gi], rtol=1e-12)
    np.testing.assert_allclose(a.gamma_i_ / before.gamma_i_, 90 / 40, rtol=1e-12)
    b = LapSVM(
        gamma_a=ga,
        gamma_i=gi,
        **kw,
        options=SolverOptions(regularization="paper", class_balance=None),
    ).fit(X, y)
    np.testing.assert_allclose(
        a.decision_function(X), b.decision_function(X), atol=1e-9
    )
    monkeypatch.setattr(_adaptive, "GRAPH_MEAN_POINTS", 90)
    c = LapSVM(gamma_a=1e-3, gamma_i=0.5, **kw, options=opts).fit(X, y)
    assert c.gamma_i_ == before.gamma_i_


def test_normalized_regularization_uses_weight_sum():
    X, y, _ = make_two_moons(90, n_labeled_per_class=4, random_state=2)
    cw = {0: 2.0, 1: 0.5}
    a = LapSVM(solver="newton", class_weight=cw).fit(X, y)
    b = LapSVM(solver="newton").fit(X, y)
    np.testing.assert_allclose(a.gamma_a_ / b.gamma_a_, (4 * 2.0 + 4 * 0.5) / 8)


def test_class_weight_balanced_equals_dict():
    X, yt = load_iris(return_X_y=True)
    y = hide_labels(yt, 5, random_state=0)
    y[np.flatnonzero(yt == 2)[:12]] = 2
    cw = compute_class_weight("balanced", classes=np.arange(3), y=y[y != -1])
    a = LapRLS(class_weight="balanced").fit(X, y)
    b = LapRLS(class_weight=dict(enumerate(cw))).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    c = LapRLS().fit(X, y)
    assert not np.allclose(a.decision_function(X), c.decision_function(X))
    with pytest.raises(ValueError, match="class_weight"):
        LapRLS(class_weight={7: 1.0}).fit(X, y)


# ------------------------------------------------------------- class balance


def _mass_fraction(F):
    return np.maximum(F, 0).sum(axis=0) / np.abs(F).sum(axis=0)


def test_class_balance_mass_and_mean_rules():
    X, yt = load_digits(n_class=4, return_X_y=True)
    y = hide_labels(yt, 2, random_state=0)
    u = y == -1
    m = LapRLS().fit(X, y)  # class_balance='mass'
    np.testing.assert_allclose(
        _mass_fraction(m.decision_function(X[u])), 0.25, atol=1e-9
    )
    prior = [0.4, 0.3, 0.2, 0.1]
    m2 = LapRLS(options=SolverOptions(class_prior=prior)).fit(X, y)
    np.testing.assert_allclose(
        _mass_fraction(m2.decision_function(X[u])), prior, atol=1e-9
    )
    mm = LapRLS(options=SolverOptions(class_balance="mean", class_prior=prior)).fit(
        X, y
    )
    np.testing.assert_allclose(
        mm.decision_function(X[u]).mean(axis=0), 2 * np.array(prior) - 1, atol=1e-10
    )
    m0 = LapRLS(options=SolverOptions(class_balance=None)).fit(X, y)
    np.testing.assert_allclose(m0.class_balance_offset_, 0.0)
    for est in (m, mm):
        np.testing.assert_allclose(
            est.intercept_ - est.class_balance_offset_, m0.intercept_
        )
    # the mass rule is scale-invariant: scaling the outputs scales the shift
    from semisvm.models._adaptive import balance_offsets

    F = m0.decision_function(X)
    off = balance_offsets(F, u, np.full(4, 0.25))
    np.testing.assert_allclose(
        balance_offsets(3.0 * F, u, np.full(4, 0.25)), 3.0 * off, rtol=1e-9
    )
    with pytest.raises(ValueError, match="class_prior"):
        LapRLS(options=SolverOptions(class_prior=[0.5, 0.5])).fit(X, y)
    with pytest.raises(ValueError, match="class_balance='mass' or 'mean'"):
        LapRLS(options=SolverOptions(class_prior=prior, class_balance=None)).fit(X, y)


@pytest.mark.parametrize("seed", range(5))
def test_defaults_never_predict_a_constant(seed):
    """One label per class on data without a clean manifold (iris, digits pairs)."""
    X, yt = load_digits(n_class=2, return_X_y=True)
    y = hide_labels(yt, 1, random_state=seed)
    for est in (LapSVM(), LapRLS(), LapSVM(solver="dual")):
        pred = est.fit(X, y).transduction_
        assert np.unique(pred[y == -1]).size == 2


# ------------------------------------------------------------- probabilities


@pytest.mark.parametrize("est", [LapSVM(), LapRLS(), LapSVM(solver="dual")])
def test_predict_proba_consistent(est):
    X, yt = load_digits(n_class=3, return_X_y=True)
    y = hide_labels(yt, 3, random_state=0)
    est.fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (X.shape[0], 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[P.argmax(axis=1)], est.predict(X))
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), P, rtol=1e-10)
    assert est.proba_slope_ > 0
    # binary
    Xb, ybt = X[yt < 2], yt[yt < 2]
    yb = hide_labels(ybt, 2, random_state=0)
    est.fit(Xb, yb)
    P = est.predict_proba(Xb)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[P.argmax(axis=1)], est.predict(Xb))
    f = est.decision_function(Xb)
    assert np.all(np.diff(P[np.argsort(f), 1]) >= 0)


def test_proba_slope_is_the_likelihood_optimum():
    from semisvm.models._adaptive import _targets_platt, log_proba_from_scores

    X, yt = load_digits(n_class=3, return_X_y=True)
    y = hide_labels(yt, 3, random_state=1)
    m = LapSVM(solver="newton").fit(X, y)
    lab = y != -1
    F = m.decision_function(X[lab])
    T = _targets_platt(np.searchsorted(m.classes_, y[lab]), 3)

    def nll(a):
        return -(T * log_proba_from_scores(F, a)).sum()

    a = m.proba_slope_
    assert nll(a) <= min(nll(a * 1.01), nll(a / 1.01)) + 1e-9


def test_sklearn_wrappers_that_need_probabilities():
    X, yt = load_digits(n_class=2, return_X_y=True)
    X, yt = X[:200], yt[:200]
    y = hide_labels(yt, 5, random_state=0)
    # the wrapper fits its base estimator on the labeled rows only (10 here):
    # n_neighbors must stay below that (n_neighbors >= n is an error)
    st = SelfTrainingClassifier(LapSVM(n_neighbors=5), max_iter=3).fit(X, y)
    assert np.mean(st.predict(X) == yt) > 0.9
    cal = CalibratedClassifierCV(LapSVM(), cv=3).fit(X, yt)
    P = cal.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    s = cross_val_score(LapRLS(), X, yt, cv=3, scoring="neg_log_loss")
    assert np.all(np.isfinite(s)) and np.all(s < 0)
