"""Graph at scale: blocked exact kNN, approximate kNN (hnswlib), PCA projection."""

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from semisvm import LapSVM, SolverOptions
from semisvm.graph import knn_graph
from semisvm.graph._knn import approximate_knn, exact_knn, knn_search, pca_project

rng = np.random.default_rng(0)
X = rng.normal(size=(500, 6))


def _recall(a, b):
    return np.mean([len(set(p) & set(q)) / len(p) for p, q in zip(a, b, strict=True)])


def test_exact_knn_in_small_blocks_matches_sklearn():
    ind, d2 = exact_knn(X, 7, max_block_bytes=8 * 500 * 3 * 13)  # blocks of 13 rows
    dist, ref = NearestNeighbors(n_neighbors=8).fit(X).kneighbors(X)
    np.testing.assert_array_equal(ind, ref[:, 1:])
    np.testing.assert_allclose(d2, dist[:, 1:] ** 2, rtol=1e-9, atol=1e-12)
    q = np.array([5, 17, 499])
    iq, _ = exact_knn(X, 7, queries=q)
    np.testing.assert_array_equal(iq, ref[q, 1:])


def test_exact_knn_duplicates_stay_neighbours():
    Xd = np.r_[X[:50], X[:1]]  # row 50 duplicates row 0
    ind, d2 = exact_knn(Xd, 3)
    assert ind[0, 0] == 50 and ind[50, 0] == 0 and d2[0, 0] <= 1e-12


def test_hnswlib_recall():
    pytest.importorskip("hnswlib")
    ind, d2 = approximate_knn(X, 10, backend="hnswlib")
    ex, exd2 = exact_knn(X, 10)
    assert _recall(ind, ex) >= 0.98
    assert np.all(ind != np.arange(500)[:, None])
    assert np.all(np.diff(d2, axis=1) >= -1e-5)


def test_pca_projection_keeps_low_dimensional_neighbours():
    Z = rng.normal(size=(800, 3))
    W = rng.normal(size=(3, 40))
    Xh = Z @ W + 1e-3 * rng.normal(size=(800, 40))
    P = pca_project(Xh, 3)
    assert P.shape == (800, 3) and P.dtype == np.float32
    a, _ = knn_search(Xh, 8, method="exact", pca_components=3)
    b, _ = exact_knn(Xh, 8)
    assert _recall(a, b) >= 0.95
    with pytest.raises(ValueError, match="graph_method"):
        knn_search(Xh, 8, method="nope")


def test_estimator_graph_methods_build_the_same_graph():
    from semisvm.datasets import make_two_moons

    X2, y, yt = make_two_moons(400, noise=0.1, n_labeled_per_class=3, random_state=0)
    est = LapSVM(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=80, graph_method="exact"
        )
    )
    # 'auto' is the self-tuning weights at 400 points (length ratio 1)
    W = knn_graph(X2, 10, weight="local")
    from semisvm.models._scale import scalable_adjacency

    A = scalable_adjacency(est, X2)
    assert est.graph_method_ == "exact"
    assert (A.astype(bool) != W.astype(bool)).nnz == 0
    assert abs(A - W).max() < 1e-10
    est.graph_method = "approx"
    A2 = scalable_adjacency(est, X2)
    # the same edges up to 1% (hnswlib's float32 distances move the weights slightly)
    assert (A2.astype(bool) != W.astype(bool)).nnz <= 0.01 * W.nnz
    clf = est.fit(X2, y)
    exact = LapSVM(
        solver="newton", options=SolverOptions(kernel_approximation="dense")
    ).fit(X2, y)
    assert (clf.transduction_ == yt).mean() >= (exact.transduction_ == yt).mean() - 0.01


@pytest.mark.parametrize("weight", ["local", "heat", "binary"])
def test_scalable_adjacency_weights_equal_in_memory_graph(weight):
    """Blocked search + weights = knn_graph, for every weight (the default 'local')."""
    from semisvm import LapSVM
    from semisvm.graph import knn_graph
    from semisvm.models._scale import scalable_adjacency

    X = np.random.default_rng(3).normal(size=(300, 4))
    est = LapSVM(
        n_neighbors=8, graph_weight=weight, options=SolverOptions(graph_method="exact")
    )
    W = scalable_adjacency(est, X)
    W_ref = knn_graph(X, 8, weight=weight)
    assert (W != W_ref).nnz == 0 or abs(W - W_ref).max() < 1e-10
