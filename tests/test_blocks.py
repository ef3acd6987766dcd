"""The Nyström kernel with the exact kernel on blocks (PIC): against the explicit matrix."""

import numpy as np

from semisvm.kernels import (
    BlockResidualOperator,
    FITCOperator,
    NystroemFactor,
    kernel_diagonal,
    kernel_matrix,
    kmeans_blocks,
)
from semisvm.solvers._newton import laprls_direct

rng = np.random.default_rng(0)
X = np.r_[rng.normal(size=(120, 3)), rng.normal(size=(80, 3)) + 4.0]


def _factor(m=25, gamma=0.4):
    return NystroemFactor(m, gamma=gamma, random_state=0).fit(X)


def _explicit(op, gamma=0.4):
    """Phi Phi^T, and K where two points share a block (brute force)."""
    K = kernel_matrix(X, gamma=gamma)
    P = op.Phi.astype(np.float64)
    same = op.block_of_[:, None] == op.block_of_[None, :]
    return np.where(same, K, P @ P.T)


def test_operator_is_low_rank_plus_the_exact_kernel_within_blocks():
    op = BlockResidualOperator(_factor(), X, block_size=40)
    assert len(op.blocks_) >= 4
    dense = _explicit(op)
    np.testing.assert_allclose(op.toarray(), dense, atol=1e-10)
    V = rng.normal(size=(200, 3))
    # the low-rank part runs in the factor's float32, as FITCOperator's
    np.testing.assert_allclose(op @ V, dense @ V, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(op @ V[:, 0], dense @ V[:, 0], rtol=1e-5, atol=1e-5)
    # the stopping checks' product: float64 throughout
    np.testing.assert_allclose(op.accurate_matmul(V), dense @ V, rtol=1e-9, atol=1e-9)
    # the residual alone (the preconditioner's lean step), float64 out, and the
    # product's two passes with it (expand) against the brute force
    P = op.Phi.astype(np.float64)
    R = dense - P @ P.T
    RV = op.residual(V)
    assert RV.dtype == np.float64 and RV.shape == V.shape
    np.testing.assert_allclose(RV, R @ V, rtol=1e-5, atol=1e-5)
    KV, _ = op.expand(V, op.project(V), np.zeros((P.shape[1], 0)))
    np.testing.assert_allclose(KV, dense @ V, rtol=1e-5, atol=1e-5)
    idx = np.array([3, 150, 77])
    np.testing.assert_allclose(op.rows(idx), dense[idx], atol=1e-6)
    np.testing.assert_allclose(op.columns(idx), dense[:, idx], atol=1e-6)
    np.testing.assert_allclose(op.diagonal(), np.diag(dense), atol=1e-6)
    # PSD: principal blocks of the Schur complement K - Phi Phi^T
    assert np.linalg.eigvalsh(dense).min() > -1e-8
    # a training point as a new point gets its row (the float32 factor's rounding)
    np.testing.assert_allclose(op.cross(X[idx]), dense[idx], atol=1e-5)


def test_extremes_are_fitc_and_the_exact_kernel():
    f = _factor()
    one = BlockResidualOperator(f, X, block_size=10_000)  # one block: K itself
    np.testing.assert_allclose(one.toarray(), kernel_matrix(X, gamma=0.4), atol=1e-10)
    each = BlockResidualOperator(f, X, block_size=1)  # a point per block: FITC
    if len(each.blocks_) == X.shape[0]:
        fitc = FITCOperator(f, kernel_diagonal(X, gamma=0.4))
        np.testing.assert_allclose(each.toarray(), fitc.toarray(), atol=1e-10)
    else:  # k-means left some centres empty: still the exact kernel within blocks
        np.testing.assert_allclose(each.toarray(), _explicit(each), atol=1e-10)


def test_new_points_take_the_block_of_their_nearest_centre():
    op = BlockResidualOperator(_factor(), X, block_size=40)
    Xn = rng.normal(size=(15, 3)) * 2
    got = op.cross(Xn)
    near = ((Xn[:, None, :] - op.centres_[None]) ** 2).sum(-1).argmin(1)
    low = op.factor.transform(Xn) @ op.Phi.T
    K = kernel_matrix(Xn, X, gamma=0.4)
    ref = np.where(near[:, None] == op.block_of_[None, :], K, low)
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_blocks_are_deterministic_and_cover_every_point():
    c1, b1 = kmeans_blocks(X, 40, random_state=3)
    c2, b2 = kmeans_blocks(X, 40, random_state=3)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_allclose(c1, c2)
    assert b1.shape == (200,) and b1.min() >= 0 and b1.max() < len(c1)


def test_lapsvm_pcg_on_the_operator_reaches_the_direct_solve_on_its_matrix():
    # the solvers see only products: LapRLS's objective minimised by PCG on the
    # operator is the direct solve of Eq. 15 on the explicit matrix
    from scipy.sparse import csgraph

    from semisvm.graph import knn_graph
    from semisvm.solvers._pcg import lapsvm_pcg

    op = BlockResidualOperator(_factor(), X, block_size=40)
    dense = _explicit(op)
    L = csgraph.laplacian(knn_graph(X, n_neighbors=6))
    Y = np.zeros((200, 1))
    Y[[0, 1, 2], 0] = 1.0
    Y[[130, 140, 150], 0] = -1.0
    ref = laprls_direct(dense, Y, gamma_a=1e-2, gamma_i=1e-2, L=L.toarray())
    got = lapsvm_pcg(
        op, Y, L=L, gamma_a=1e-2, gamma_i=1e-2, loss="squared", tol=1e-5, max_iter=2000
    )
    np.testing.assert_allclose(
        dense @ got.alpha + got.b, dense @ ref.alpha + ref.b, atol=1e-4
    )


def test_decision_model_is_the_operators_cross_kernel_times_alpha():
    op = BlockResidualOperator(_factor(), X, block_size=40)
    A = rng.normal(size=(X.shape[0], 3))
    f = op.decision_model(A)
    Xt = np.r_[X[:9], rng.normal(size=(20, 3)) * 2.0]
    # brute force: the PIC kernel row of each point (exact within the block of
    # its nearest centre, the landmarks' kernel elsewhere) times alpha
    np.testing.assert_allclose(f(Xt), op.cross(Xt) @ A, rtol=1e-4, atol=1e-5)
    # at training points: the rows of the operator
    np.testing.assert_allclose(f(X[:9]), op.toarray()[:9] @ A, rtol=1e-4, atol=1e-5)


def test_fitted_model_is_the_laprls_optimum_on_the_explicit_kernel():
    from semisvm import LapRLS, SolverOptions
    from semisvm.datasets import make_two_moons
    from semisvm.models._params import fit_params
    from semisvm.models._problem import prepare_problem

    Xm, y, _ = make_two_moons(300, noise=0.1, n_labeled_per_class=3, random_state=0)
    est = LapRLS(
        gamma_a=1e-2,
        gamma_i=1e-1,
        solver="pcg",
        tol=1e-8,
        max_iter=5000,
        early_stopping=None,
        options=SolverOptions(
            kernel_approximation="blocks",
            n_components=30,
            block_size=50,
            graph_width=None,
        ),
    ).fit(Xm, y)
    assert est.kernel_operator_ == "blocks" and est.n_components_ == 30
    # the reference: the direct solve of Eq. 15 on the explicit n x n K_hat, the
    # same graph
    problem = prepare_problem(Xm, y, fit_params(est))
    op = problem.ops.K
    assert isinstance(op, BlockResidualOperator) and len(op.blocks_) == 6
    ref = laprls_direct(
        op.toarray(),
        problem.targets.Y,
        L=problem.ops.L,
        gamma_a=est.gamma_a_,
        gamma_i=est.gamma_i_,
        intrinsic_bias=True,
    )
    np.testing.assert_allclose(est.objective_, ref.objective[0], rtol=1e-6)
    np.testing.assert_allclose(est.dual_coef_, ref.alpha, rtol=1e-4, atol=1e-6)
    # prediction: k_hat(x, X) alpha + b, at training rows and at new points
    Xt = np.r_[Xm[:7], Xm[:7] + 0.05]
    expect = (op.cross(Xt) @ ref.alpha)[:, 0] + est.intercept_[0]
    np.testing.assert_allclose(est.decision_function(Xt), expect, rtol=1e-4, atol=1e-5)
    F = est.decision_function(Xm)
    pred = est.classes_[(F > 0).astype(int)]
    unl = y == -1
    np.testing.assert_array_equal(pred[unl], est.transduction_[unl])


def test_blocks_keep_the_dense_accuracy_on_ten_classes():
    from sklearn.datasets import load_digits

    from semisvm import LapRLS, SolverOptions

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
    for ka in ("dense", "nystroem", "blocks"):
        clf = LapRLS(
            gamma_a=1e-4,
            gamma_i=1.0,
            options=SolverOptions(kernel_approximation=ka, n_components=150),
        ).fit(Xd, y)
        err[ka] = np.mean(clf.transduction_[unl] != yd[unl])
        if ka == "blocks":
            # the model predicts its own transduction at the training points
            np.testing.assert_array_equal(clf.predict(Xd)[unl], clf.transduction_[unl])
    # 150 landmarks (the labeled points among them), blocks of ~300 points:
    # dense 10.6%, blocks 10.9%, Nystroem 13.8%
    assert err["blocks"] <= err["dense"] + 0.005
    assert err["nystroem"] >= err["blocks"] + 0.02


def test_blocks_need_pcg_and_features():
    import pytest

    from semisvm import LapSVM, SolverOptions
    from semisvm.datasets import make_two_moons

    Xm, y, _ = make_two_moons(200, noise=0.1, n_labeled_per_class=3, random_state=0)
    opts = SolverOptions(kernel_approximation="blocks")
    with pytest.raises(ValueError, match="kernel_approximation='blocks'.*solver='pcg'"):
        LapSVM(solver="newton", options=opts).fit(Xm, y)
    with pytest.raises(ValueError, match="kernel_approximation='blocks'.*precomputed"):
        LapSVM(kernel="precomputed", options=opts).fit(Xm @ Xm.T, y)
    with pytest.raises(ValueError, match="block_size"):
        LapSVM(options=SolverOptions(kernel_approximation="blocks", block_size=0)).fit(
            Xm, y
        )


def test_accurate_product_with_and_without_the_float64_copy(monkeypatch):
    import semisvm.kernels._nystroem as ny

    V = rng.normal(size=(200, 3))
    kept = BlockResidualOperator(_factor(), X, block_size=40)
    dense = _explicit(kept)
    got = kept.accurate_matmul(V)
    assert kept.float64_features() is not None  # small: the copy is kept
    monkeypatch.setattr(ny, "ACCURATE_COPY_MAX_BYTES", 0)
    blocked = BlockResidualOperator(_factor(), X, block_size=40)
    assert blocked.float64_features() is None
    np.testing.assert_allclose(got, dense @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(blocked.accurate_matmul(V), got, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(
        kept.accurate_matmul(V[:, 0]), dense @ V[:, 0], rtol=1e-12, atol=1e-12
    )
