"""Kernels, kNN graphs and Laplacians against closed forms and scikit-learn."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from semisvm.graph import (
    LaplacianPower,
    graph_laplacian,
    knn_graph,
    knn_graph_from_kernel,
)
from semisvm.kernels import as_operator, kernel_matrix, median_gamma, resolve_gamma

rng = np.random.default_rng(0)
X = rng.normal(size=(70, 4))
Z = rng.normal(size=(30, 4))


def test_kernels_match_sklearn():
    np.testing.assert_allclose(
        kernel_matrix(X, Z, gamma=0.7), rbf_kernel(X, Z, gamma=0.7), atol=1e-12
    )
    np.testing.assert_allclose(
        kernel_matrix(X, kernel="linear"), linear_kernel(X), atol=1e-12
    )
    np.testing.assert_allclose(
        kernel_matrix(X, Z, kernel="poly", gamma=0.5, degree=3, coef0=1.0),
        polynomial_kernel(X, Z, gamma=0.5, degree=3, coef0=1.0),
        rtol=1e-12,
    )
    K = kernel_matrix(X, gamma=0.3)
    assert np.array_equal(K, K.T)
    assert np.all(np.diag(K) == 1.0)


def test_sparse_input_and_float32_policy():
    Ks = kernel_matrix(sp.csr_matrix(X), sp.csr_matrix(Z), gamma=0.7)
    np.testing.assert_allclose(Ks, rbf_kernel(X, Z, gamma=0.7), atol=1e-12)
    K32 = kernel_matrix(X.astype(np.float32), gamma=0.7)
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, rbf_kernel(X, gamma=0.7), atol=1e-5)


def test_median_gamma_rule():
    g = median_gamma(X)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    sigma = np.median(D[np.triu_indices(70, 1)])
    assert g == pytest.approx(1 / (2 * sigma**2), rel=1e-6)
    assert resolve_gamma(X, 0.25, "rbf") == 0.25


def test_callable_kernel_checked():
    with pytest.raises(ValueError, match="returned shape"):
        kernel_matrix(X, kernel=lambda A, B: np.ones((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        kernel_matrix(X, kernel=lambda A, B: np.full((len(A), len(B)), np.nan))


def _brute_knn(X, k):
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    A = np.zeros_like(D, dtype=bool)
    for i in range(len(X)):
        A[i, np.argsort(D[i])[:k]] = True
    return A | A.T, D


@pytest.mark.parametrize("k", [1, 5, 12])
def test_knn_graph_is_symmetric_or_graph(k):
    A, D = _brute_knn(X, k)
    W = knn_graph(X, k).toarray()
    assert np.array_equal(W > 0, A)
    assert np.array_equal(W, W.T)
    t = 0.8
    H = knn_graph(X, k, weight="heat", t=t).toarray()
    np.testing.assert_allclose(H[A], np.exp(-D[A] / (2 * t * t)), rtol=1e-10)


def test_graph_from_kernel_equals_graph_from_X():
    K = kernel_matrix(X, gamma=0.2)
    for w in ("binary", "heat"):
        np.testing.assert_allclose(
            knn_graph_from_kernel(K, 0.2, 7, weight=w).toarray(),
            knn_graph(X, 7, weight=w).toarray(),
            atol=1e-8,
        )


def test_duplicates_give_no_nan():
    Xd = np.r_[X[:10], X[:10], X[:10]]
    for w in ("binary", "heat"):
        W = knn_graph(Xd, 4, weight=w)
        assert np.all(np.isfinite(W.data)) and W.diagonal().sum() == 0
        for normalized in (False, True):
            L = graph_laplacian(W, normalized=normalized)
            assert np.all(np.isfinite(L.data))


def test_laplacian_closed_forms():
    W = knn_graph(X, 5, weight="heat")
    Wd = W.toarray()
    d = Wd.sum(1)
    L = graph_laplacian(W, normalized=False).toarray()
    np.testing.assert_allclose(L, np.diag(d) - Wd, atol=1e-12)
    Ln = graph_laplacian(W, normalized=True).toarray()
    np.testing.assert_allclose(
        Ln, np.eye(70) - Wd / np.sqrt(np.outer(d, d)), atol=1e-12
    )
    L3 = graph_laplacian(W, normalized=True, power=3).toarray()
    np.testing.assert_allclose(L3, Ln @ Ln @ Ln, atol=1e-12)
    assert sp.issparse(graph_laplacian(W, power=2))
    ev = np.linalg.eigvalsh(Ln)
    assert ev.min() > -1e-10 and ev.max() < 2 + 1e-10
    np.testing.assert_allclose(L @ np.ones(70), 0, atol=1e-12)


def test_isolated_points_zero_rows():
    W = knn_graph(X, 3).tolil()
    W[5, :] = 0
    W[:, 5] = 0
    for normalized in (False, True):
        L = graph_laplacian(W.tocsr(), normalized=normalized).toarray()
        assert np.all(np.isfinite(L))
        assert np.all(L[5] == 0) and np.all(L[:, 5] == 0)


def test_operator_products():
    K = kernel_matrix(X, gamma=0.3)
    op = as_operator(K)
    v = rng.normal(size=70)
    V = rng.normal(size=(70, 4))
    np.testing.assert_allclose(op @ v, K @ v, atol=1e-12)
    np.testing.assert_allclose(op @ V, K @ V, atol=1e-12)
    op32 = as_operator(K.astype(np.float32))
    out = op32 @ V
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, K @ V, atol=1e-4)
    np.testing.assert_allclose(op.diagonal(), np.ones(70))


@pytest.mark.parametrize("p", [1, 2, 5])
def test_laplacian_power_operator_equals_matrix(p):
    from semisvm.graph import LaplacianPower
    from semisvm.graph._power import product_operand

    W = knn_graph(X, 5)
    L = graph_laplacian(W, power=p)
    op = graph_laplacian(W, power=p, form="operator")
    assert isinstance(op, LaplacianPower)
    V = rng.normal(size=(70, 3))
    np.testing.assert_allclose(op @ V, L @ V, atol=1e-12)
    np.testing.assert_allclose(op @ V[:, 0], L @ V[:, 0], atol=1e-12)
    np.testing.assert_allclose(op.toarray(), L.toarray(), atol=1e-12)
    np.testing.assert_allclose(op.diagonal(), L.diagonal(), atol=1e-12)
    M = rng.normal(size=(70, 70))
    np.testing.assert_allclose(np.asarray(product_operand(op) @ M), L @ M, atol=1e-10)
    with pytest.raises(ValueError, match="form"):
        graph_laplacian(W, form="lazy")


def test_solvers_accept_laplacian_operator():
    from semisvm.solvers import lapsvm_dual, lapsvm_newton, lapsvm_pcg

    K = kernel_matrix(X, gamma=0.3)
    W = knn_graph(X, 5)
    Y = np.zeros((70, 1))
    Y[:10, 0] = np.sign(X[:10, 0])
    for solver in (lapsvm_newton, lapsvm_pcg):
        kw = dict(gamma_a=1e-2, gamma_i=0.5, intrinsic_bias=True)
        if solver is lapsvm_pcg:
            kw.update(tol=1e-12, max_iter=5000)
        a = solver(K, Y, L=graph_laplacian(W, power=3), **kw)
        b = solver(K, Y, L=graph_laplacian(W, power=3, form="operator"), **kw)
        np.testing.assert_allclose(b.alpha, a.alpha, atol=1e-8)
    a = lapsvm_dual(
        K, graph_laplacian(W, power=3), Y, gamma_a=1e-2, gamma_i=0.5, loss="hinge"
    )
    b = lapsvm_dual(
        K,
        graph_laplacian(W, power=3, form="operator"),
        Y,
        gamma_a=1e-2,
        gamma_i=0.5,
        loss="hinge",
    )
    np.testing.assert_allclose(K @ b.alpha + b.b, K @ a.alpha + a.b, atol=1e-6)


# ------------------------------------------------- loud mistakes (issue 15, item 6)
def test_n_neighbors_not_below_n_samples_is_an_error():
    from semisvm.graph import knn_graph, knn_graph_from_kernel
    from semisvm.kernels import kernel_matrix

    X = np.random.default_rng(0).normal(size=(8, 2))
    knn_graph(X, 7)  # n - 1 neighbours: every other point
    for k in (8, 20):
        with pytest.raises(ValueError, match=f"n_neighbors={k} must be smaller"):
            knn_graph(X, k)
        with pytest.raises(ValueError, match=f"n_neighbors={k} must be smaller"):
            knn_graph_from_kernel(kernel_matrix(X, gamma=1.0), 1.0, k)


def test_unscaled_features_warn_only_when_unscaled():
    import warnings

    from semisvm._validation import DataScaleWarning, warn_if_unscaled
    from semisvm.graph import knn_graph

    rng = np.random.default_rng(0)
    age = rng.uniform(20, 70, 60)
    income = rng.lognormal(10, 1, 60) * 100  # dollars: std ~1e6 vs ~15
    X = np.c_[age, income]
    with pytest.warns(
        DataScaleWarning, match="feature 1 is .* times that of feature 0"
    ):
        knn_graph(X, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)
        # standardized features, pixel-like data in a fixed range with nearly
        # constant border pixels, constant columns, sparse input: no warning
        Z = (X - X.mean(0)) / X.std(0)
        assert not warn_if_unscaled(Z.copy())
        pix = rng.uniform(-1, 1, (60, 16))
        pix[:, 0] = -1.0
        pix[:3, 1] = -0.99
        pix[3:, 1] = -1.0
        assert not warn_if_unscaled(pix)
        assert not warn_if_unscaled(np.c_[Z, np.zeros(60)])
        import scipy.sparse as sp

        assert not warn_if_unscaled(sp.csr_array(X))
    assert warn_if_unscaled(X.copy())


def test_label_column_mistakes_are_loud():
    from semisvm._validation import check_semi_supervised_targets

    ok = check_semi_supervised_targets(
        np.array(["cat", "dog", -1, "cat"], dtype=object)
    )
    np.testing.assert_array_equal(ok, ["cat", "dog", "-1", "cat"])
    np.testing.assert_array_equal(
        check_semi_supervised_targets(np.array([0.0, 1.0, -1.0])), [0.0, 1.0, -1.0]
    )
    with pytest.raises(ValueError, match="continuous"):
        check_semi_supervised_targets(np.array([0.3, 1.7, -1.0]))
    # missing values mark unlabeled points (as pandas writes an empty cell)
    np.testing.assert_array_equal(
        check_semi_supervised_targets(np.array([0.0, 1.0, np.nan])), [0.0, 1.0, -1.0]
    )
    np.testing.assert_array_equal(
        check_semi_supervised_targets(np.array(["a", None, "b"], dtype=object)),
        ["a", "-1", "b"],
    )
    with pytest.raises(ValueError, match="infinity"):
        check_semi_supervised_targets(np.array([0.0, 1.0, np.inf]))
    with pytest.raises(ValueError, match="mixes strings with numbers"):
        check_semi_supervised_targets(np.array(["a", 2, "b"], dtype=object))


def test_string_labels_with_int_minus_one_through_the_path_estimator():
    from semisvm import LapSVMPath
    from semisvm.datasets import make_two_moons

    X, y, _ = make_two_moons(80, n_labeled_per_class=3, random_state=0)
    ys = np.array(
        [-1 if v == -1 else ("left" if v == 0 else "right") for v in y], dtype=object
    )
    clf = LapSVMPath(gamma=2.0, n_neighbors=6, random_state=0).fit(X, ys)
    np.testing.assert_array_equal(clf.classes_, ["left", "right"])
    ref = LapSVMPath(gamma=2.0, n_neighbors=6, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X) == "right", ref.predict(X) == 1)


def test_max_iter_warning_says_what_happened():
    from sklearn.exceptions import ConvergenceWarning

    from semisvm import LapSVM
    from semisvm.datasets import make_two_moons

    X, y, _ = make_two_moons(120, n_labeled_per_class=4, random_state=0)
    with pytest.warns(
        ConvergenceWarning,
        match=r"stopped at max_iter=2 iterations "
        r"without meeting tol=1e-06 .*last iterate \(objective [0-9.e+-]+\)",
    ):
        LapSVM(max_iter=2, early_stopping=None, n_neighbors=6).fit(X, y)


@pytest.mark.parametrize(
    "k, rank, shrink",
    [(10, 10, 2.0), (14, 10, 2.0), (8, 7, 1.0), (5, 5, 1.0)],
)
def test_local_weights_equal_the_self_tuning_formula_by_brute_force(k, rank, shrink):
    # sigma_i = d_10(i) / 2 with 10 or more neighbours, else the distance to the
    # 7th (or last) neighbour; every edge of the symmetric kNN graph carries
    # exp(-d_ij^2 / (sigma_i sigma_j)); from X and read off the RBF kernel alike
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D2, np.inf)
    order = np.argsort(D2, axis=1)
    sigma = np.sqrt(np.take_along_axis(D2, order[:, rank - 1 : rank], 1)[:, 0]) / shrink
    edges = np.zeros_like(D2, dtype=bool)
    edges[np.repeat(np.arange(120), k), order[:, :k].ravel()] = True
    edges |= edges.T
    expected = np.where(
        edges, np.exp(-np.where(edges, D2, 0) / np.outer(sigma, sigma)), 0
    )
    W = knn_graph(X, k, weight="local").toarray()
    np.testing.assert_allclose(W, expected, rtol=1e-9, atol=1e-12)
    Wk = knn_graph_from_kernel(rbf_kernel(X, gamma=0.1), 0.1, k, weight="local")
    np.testing.assert_allclose(Wk.toarray(), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("threads", [2, 3])
def test_laplacian_power_row_blocks_on_threads_equal_the_serial_product(
    monkeypatch, power, threads
):
    import semisvm.graph._power as pw

    X = np.random.default_rng(0).standard_normal((301, 4))
    L = graph_laplacian(knn_graph(X, 6))
    V = np.random.default_rng(1).standard_normal((301, 5))
    want = LaplacianPower(L, power) @ V  # small: serial
    monkeypatch.setattr(pw, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(pw, "blas_threads", lambda: threads)
    P = LaplacianPower(L, power)
    got = P @ V
    np.testing.assert_array_equal(got, want)  # every row summed as in serial
    assert (
        len(P._row_blocks) == 1 and len(next(iter(P._row_blocks.values()))) == threads
    )
    np.testing.assert_array_equal(P @ V[:, 0], want[:, 0])
    import pickle

    Q = pickle.loads(pickle.dumps(P))  # the row copies are not pickled
    assert Q._row_blocks == {}
    np.testing.assert_array_equal(Q @ V, want)
    ref = V.copy()
    for _ in range(power):
        ref = L @ ref
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
