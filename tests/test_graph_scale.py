"""Graph at scale: blocked exact kNN, approximate kNN (hnswlib), PCA projection."""

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.graph import knn_graph
from semisvm.graph._knn import (
    approximate_knn,
    exact_knn,
    knn_search,
    pca_project,
    rerank_exact,
)

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


@pytest.mark.parametrize("sparse", [False, True])
def test_rerank_exact_keeps_the_nearest_candidates_by_brute_force(sparse):
    import scipy.sparse as sps

    Xr = rng.normal(size=(300, 9))
    full = ((Xr[:, None, :] - Xr[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(full, np.inf)
    # candidates: the 5 true neighbours and 10 random others, shuffled per row
    true = np.argsort(full, axis=1)[:, :5]
    cand = np.empty((300, 15), dtype=np.intp)
    for i in range(300):
        others = rng.choice(np.setdiff1d(np.arange(300), np.r_[true[i], i]), 10)
        cand[i] = rng.permutation(np.r_[true[i], others])
    Xin = sps.csr_array(Xr) if sparse else Xr
    ind, d2 = rerank_exact(Xin, cand, 5, max_block_bytes=9 * 8 * 15 * 7)
    np.testing.assert_array_equal(ind, true)
    np.testing.assert_allclose(d2, np.take_along_axis(full, true, 1), rtol=1e-9)
    with pytest.raises(ValueError, match="candidates"):
        rerank_exact(Xr, cand[:, :3], 5)


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_pca_search_returns_exact_distances_of_its_neighbours(method):
    # a 3-dimensional manifold in 200 features: the projection finds the
    # neighbours, the distances are those of the full rows, not the projection
    Z = rng.normal(size=(600, 3))
    Xh = np.tanh(Z @ rng.normal(size=(3, 200))) + 0.05 * rng.normal(size=(600, 200))
    ind, d2 = knn_search(Xh, 6, method=method, pca_components=4)
    np.testing.assert_allclose(
        d2, ((Xh[ind] - Xh[:, None, :]) ** 2).sum(-1), rtol=1e-5, atol=1e-6
    )
    ref, _ = exact_knn(Xh, 6)
    assert _recall(ind, ref) >= 0.97


def test_auto_pca_projects_only_the_approximate_search_on_wide_rows(monkeypatch):
    import semisvm.graph._knn as knnmod

    calls = []
    orig = knnmod.pca_project
    monkeypatch.setattr(
        knnmod, "pca_project", lambda X, p, **kw: calls.append(p) or orig(X, p, **kw)
    )
    wide = rng.normal(size=(300, 129)).astype(np.float32)
    knn_search(wide, 5, method="approx", pca_components="auto")
    assert calls == [64]
    knn_search(wide, 5, method="exact", pca_components="auto")
    knn_search(wide[:, :128], 5, method="approx", pca_components="auto")
    assert calls == [64]
    with pytest.raises(ValueError, match="graph_pca"):
        LapSVM(options=SolverOptions(graph_pca="always")).fit(
            wide[:, :4], np.r_[0, 1, [-1] * 298]
        )


def test_estimator_graph_methods_build_the_same_graph():
    from semisvm.datasets import make_two_moons

    X2, y, yt = make_two_moons(400, noise=0.1, n_labeled_per_class=3, random_state=0)
    # m = 150: at 80 landmarks the Nystroem rank alone costs 2.75 points against
    # the dense model (either graph), which would hide what this test checks
    est = LapSVM(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=150, graph_method="exact"
        )
    )
    # 'auto' is the self-tuning weights at 400 points (length ratio 1)
    W = knn_graph(X2, 10, weight="local")
    from semisvm.models._scale import scalable_adjacency

    A = scalable_adjacency(est, X2)
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


def test_scale_ratio_read_off_the_graph_search_equals_the_second_search():
    # rho = sigma_S^2 / sigma_n^2: sigma_n^2 from the graph's own kNN lists (the
    # scalable fit) must equal the separate search of the sample among all n
    from semisvm.kernels import knn_scale_ratio

    Xs = np.r_[rng.normal(size=(2600, 4)), rng.normal(size=(900, 4))[:5]]
    Xs = np.r_[Xs, Xs[:3]]  # duplicates stay neighbours in both
    _, d2 = exact_knn(Xs, 10)
    ref = knn_scale_ratio(Xs, 10)
    assert ref > 1.0
    np.testing.assert_allclose(knn_scale_ratio(Xs, 10, knn_dist2=d2), ref, rtol=1e-9)
    est = LapSVM(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=60, graph_method="exact"
        )
    ).fit(Xs, np.r_[0, 1, [-1] * (Xs.shape[0] - 2)])
    np.testing.assert_allclose(est.graph_scale_, ref, rtol=1e-9)


def test_exact_knn_float32_screen_is_exact():
    """The float32 screen with its certificate gives the float64 search's
    neighbours (brute force on the full distance matrix), also with duplicate
    points and rows the certificate sends back to float64."""
    from semisvm.graph import _knn

    r = np.random.default_rng(3)
    X = np.r_[r.normal(size=(300, 40)), r.normal(size=(200, 40)) * 50.0]
    X[10] = X[11]  # a duplicate
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    k = 7
    ind, d2 = _knn.exact_knn(X, k)
    np.testing.assert_allclose(d2, np.sort(D, axis=1)[:, :k], rtol=1e-9, atol=1e-9)
    assert _knn._screened_knn(X, k + 1, np.einsum("ij,ij->i", X, X), 2**26) is not None
    # the certificate: points far from the origin and close to each other,
    # which float32 cannot tell apart, go back to the float64 search
    F = 1e4 + r.normal(size=(100, 5)) * 1e-2
    _, _, bad = _knn._screened_knn(F, k + 1, np.einsum("ij,ij->i", F, F), 2**26)
    assert bad.size == F.shape[0]
    ref = _knn._brute_knn(F, np.arange(100), k + 1, np.einsum("ij,ij->i", F, F), 2**26)
    np.testing.assert_array_equal(
        _knn.exact_knn(F, k, exclude_self=False)[0], ref[0][:, :k]
    )
    # rows that share the k-th distance with an outside point (ties) are found
    # again exactly: a grid of equal distances
    g = np.array([[i, j] for i in range(12) for j in range(12)], dtype=np.float64)
    ind, d2 = _knn.exact_knn(g, 4)
    Dg = ((g[:, None] - g[None]) ** 2).sum(-1)
    np.fill_diagonal(Dg, np.inf)
    np.testing.assert_array_equal(d2, np.sort(Dg, axis=1)[:, :4])


@pytest.mark.parametrize("n", [10_000, 20_000])
def test_approximate_knn_gives_the_same_neighbours_every_build(n):
    # hnswlib's insertions on two threads race (two builds of 10,000 of these rows
    # differed): each index is built on one thread; from 20,000 rows on two
    # indices (halves of the rows), built side by side: the same at any n_jobs
    pytest.importorskip("hnswlib")
    from semisvm.graph._knn import HNSW_MIN_PART

    assert (n >= 2 * HNSW_MIN_PART) == (n == 20_000)
    X = np.random.default_rng(0).standard_normal((n, 16)).astype(np.float32)
    first, d_first = approximate_knn(X, 10, n_jobs=2)
    for jobs in (2, 1, 3):
        ind, d2 = approximate_knn(X, 10, n_jobs=jobs)
        np.testing.assert_array_equal(ind, first)
        np.testing.assert_array_equal(d2, d_first)
    # against the exact neighbours of some rows
    q = np.arange(0, n, 97)
    ref = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X[q])[1][:, 1:]
    recall = np.mean([np.isin(a, b).mean() for a, b in zip(first[q], ref, strict=True)])
    assert recall >= 0.95


@pytest.mark.slow
def test_same_fit_twice_past_the_exact_graph_gives_the_same_model():
    # above EXACT_GRAPH_MAX_N the graph comes from hnswlib: two fits of the same
    # data must still give the same model, bit for bit (16 dimensions: there
    # the search is approximate, and two racing builds differ)
    pytest.importorskip("hnswlib")
    from semisvm.models._scale import EXACT_GRAPH_MAX_N

    rng = np.random.default_rng(0)
    X = rng.standard_normal((EXACT_GRAPH_MAX_N + 2000, 16))
    y = np.full(X.shape[0], -1)
    lab = rng.choice(X.shape[0], 20, replace=False)
    y[lab] = (X[lab, 0] > 0).astype(int)
    first = LapRLS().fit(X, y)
    again = LapRLS().fit(X, y)
    np.testing.assert_array_equal(
        first.decision_function(X[:2000]), again.decision_function(X[:2000])
    )


def test_candidate_search_breadth_and_recall(monkeypatch):
    """The approximate search of the re-ranking's candidates is built at breadth
    CANDIDATE_EF_FACTOR x (candidates + 1) and searched at candidates + 1, and
    the re-ranked neighbours keep a recall >= 0.99 against the exact search on a
    curved manifold."""
    pytest.importorskip("hnswlib")
    import semisvm.graph._knn as knnmod

    seen = []
    orig = knnmod.approximate_knn
    monkeypatch.setattr(
        knnmod,
        "approximate_knn",
        lambda X, k, **kw: (
            seen.append((k, kw["ef"], kw["ef_construction"])) or orig(X, k, **kw)
        ),
    )
    Z = rng.normal(size=(3000, 4))
    Xh = np.tanh(Z @ rng.normal(size=(4, 150))) + 0.02 * rng.normal(size=(3000, 150))
    ind, _ = knn_search(Xh, 10, method="approx", pca_components="auto")
    kk = knnmod.CANDIDATE_FACTOR * 10
    assert seen == [(kk, kk + 1, knnmod.CANDIDATE_EF_FACTOR * (kk + 1))]
    ref, _ = exact_knn(Xh, 10)
    assert _recall(ind, ref) >= 0.99
