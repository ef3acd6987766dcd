"""The Nyström-plus-diagonal (FITC) kernel operator and the models fitted on it."""

import numpy as np
import pytest

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import make_two_moons
from semisvm.kernels import FITCOperator, NystroemFactor, kernel_diagonal, kernel_matrix
from semisvm.models._params import fit_params
from semisvm.models._problem import prepare_problem
from semisvm.solvers._newton import laprls_direct

rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3))


def _operator(m, kernel="rbf", **kw):
    f = NystroemFactor(m, kernel=kernel, random_state=0, **kw).fit(X)
    return FITCOperator(f, kernel_diagonal(X, kernel=kernel, **kw))


@pytest.mark.parametrize(
    "kernel,kw",
    [
        ("rbf", {"gamma": 0.4}),
        ("poly", {"gamma": 0.3, "degree": 2, "coef0": 1.0}),
        ("linear", {}),
        (lambda A, B: (A @ B.T + 2.0) ** 2, {}),
    ],
)
def test_kernel_diagonal_is_the_gram_diagonal(kernel, kw):
    K = kernel_matrix(X, kernel=kernel, **kw)
    np.testing.assert_allclose(kernel_diagonal(X, kernel=kernel, **kw), np.diag(K))


def test_operator_is_low_rank_plus_the_exact_diagonal():
    op = _operator(30, gamma=0.4)
    K = kernel_matrix(X, gamma=0.4)
    P = op.Phi.astype(np.float64)
    dense = op.toarray()
    # exact on the diagonal, the Nystroem kernel off it
    np.testing.assert_allclose(np.diag(dense), np.diag(K), atol=1e-6)
    off = ~np.eye(X.shape[0], dtype=bool)
    np.testing.assert_allclose(dense[off], (P @ P.T)[off], atol=1e-12)
    assert op.residual_.min() >= 0 and op.residual_.max() > 0.05
    V = rng.normal(size=(200, 3))
    np.testing.assert_allclose(op @ V, dense @ V, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op @ V[:, 0], dense @ V[:, 0], rtol=1e-5, atol=1e-5)
    idx = np.array([3, 0, 17])
    np.testing.assert_allclose(op.rows(idx), dense[idx], atol=1e-6)
    np.testing.assert_allclose(op.diagonal(), np.diag(dense), atol=1e-6)
    # new points: the landmark kernel only; the training rows' cross kernel is
    # the operator without its diagonal
    np.testing.assert_allclose(op.cross(X[:5]), (P @ P.T)[:5], atol=1e-5)


def test_every_point_a_landmark_gives_the_exact_kernel():
    op = _operator(200, gamma=0.4)
    K = kernel_matrix(X, gamma=0.4)
    np.testing.assert_allclose(op.toarray(), K, atol=2e-5)


def test_fitted_model_is_the_laprls_optimum_on_the_explicit_kernel():
    Xm, y, _ = make_two_moons(300, noise=0.1, n_labeled_per_class=3, random_state=0)
    est = LapRLS(
        gamma_a=1e-2,
        gamma_i=1e-1,
        solver="pcg",
        tol=1e-8,
        max_iter=5000,
        early_stopping=None,
        options=SolverOptions(
            kernel_approximation="fitc", n_components=40, graph_width=None
        ),
    ).fit(Xm, y)
    assert est.kernel_operator_ == "fitc" and est.landmarks_.shape == (40, 2)
    # the reference: the direct solve of Eq. 15 on the explicit n x n K_hat, the
    # same graph
    problem = prepare_problem(Xm, y, fit_params(est))
    Khat = problem.ops.K.toarray()
    ref = laprls_direct(
        Khat,
        problem.targets.Y,
        L=problem.ops.L,
        gamma_a=est.gamma_a_,
        gamma_i=est.gamma_i_,
        intrinsic_bias=True,
    )
    np.testing.assert_allclose(est.objective_, ref.objective[0], rtol=1e-6)
    beta = problem.ops.K.landmark_coef(ref.alpha)
    np.testing.assert_allclose(est.dual_coef_, beta, rtol=1e-4, atol=1e-6)
    # prediction at new points: k(x, Z) beta + b
    Xt = Xm[:7] + 0.01
    Kt = kernel_matrix(Xt, est.landmarks_, gamma=est.gamma_)
    np.testing.assert_allclose(
        est.decision_function(Xt),
        (Kt @ beta)[:, 0] + est.intercept_[0],
        rtol=1e-4,
        atol=1e-6,
    )


def test_fitc_keeps_the_dense_accuracy_where_nystroem_loses_it():
    from sklearn.datasets import load_digits

    Xd, yd = load_digits(return_X_y=True)
    Xd = Xd / 16.0
    r = np.random.default_rng(0)
    lab = np.concatenate(
        [r.choice(np.flatnonzero(yd == c), 3, replace=False) for c in range(10)]
    )
    y = np.full(yd.size, -1)
    y[lab] = yd[lab]
    unl = y == -1
    err = {}
    for ka in ("dense", "nystroem", "fitc"):
        clf = LapRLS(
            gamma_a=1e-4,
            gamma_i=1.0,
            options=SolverOptions(kernel_approximation=ka, n_components=150),
        ).fit(Xd, y)
        err[ka] = np.mean(clf.transduction_[unl] != yd[unl])
    # 150 landmarks (the 30 labeled points among them): the Nystroem model
    # loses 3.2 points to the dense one (13.8 against 10.6%), the FITC model 0.4
    assert err["fitc"] <= err["dense"] + 0.005
    assert err["nystroem"] >= err["fitc"] + 0.02


def test_fitc_needs_pcg_and_auto_picks_it_past_memory(monkeypatch):
    Xm, y, _ = make_two_moons(1500, noise=0.1, n_labeled_per_class=3, random_state=0)
    with pytest.raises(ValueError, match="kernel_approximation='fitc'.*solver='pcg'"):
        LapSVM(solver="newton", options=SolverOptions(kernel_approximation="fitc")).fit(
            Xm, y
        )
    # the dense K (1500^2 float64 = 17 MiB) does not fit in 70% of 20 MiB: two
    # classes keep the Nystroem model, three take the block operator (with PCG)
    # when it fits (26 MiB), else FITC (20 MiB: its 7 MiB of blocks do not)
    y3 = y.copy()
    y3[np.flatnonzero(y == 0)[:2]] = 2  # a third class
    opts = SolverOptions(n_components=50, graph_width=None)
    monkeypatch.setenv("SEMISVM_MEMORY_LIMIT", "26M")
    clf = LapSVM(max_iter=50, options=opts).fit(Xm, y3)
    assert clf.kernel_operator_ == "blocks"
    assert clf.operator_selection_["reason"] == "the dense K does not fit in memory"
    monkeypatch.setenv("SEMISVM_MEMORY_LIMIT", "20M")
    assert LapSVM(options=opts).fit(Xm, y).kernel_operator_ == "nystroem"
    clf = LapSVM(max_iter=50, options=opts).fit(Xm, y3)
    assert clf.kernel_operator_ == "fitc"
    clf = LapSVM(solver="newton", options=opts).fit(Xm, y3)
    assert clf.kernel_operator_ == "nystroem"
