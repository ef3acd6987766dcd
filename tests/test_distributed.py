"""The estimators on a dask.distributed LocalCluster give the in-process answers."""

from __future__ import annotations

import functools
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from semisvm import LapRLS, LapSVM, SolverOptions  # noqa: E402
from semisvm.datasets import make_two_moons  # noqa: E402
from semisvm.graph import knn_graph  # noqa: E402
from semisvm.graph._distributed import knn_graph_distributed  # noqa: E402
from semisvm.kernels import kernel_matrix  # noqa: E402
from semisvm.kernels._distributed import (  # noqa: E402
    DistributedKernelOperator,
    DistributedNystroemOperator,
    distributed_kernel_dot,
    get_dask_client,
    is_distributed_array,
)
from semisvm.models._cluster_plan import cluster_plan  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=50,
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    return X, da.from_array(X, chunks=(130, 4))


def test_is_distributed_array(data):
    X, Xd = data
    assert is_distributed_array(Xd)
    assert not is_distributed_array(X)
    assert not is_distributed_array(None)


@pytest.mark.slow
@pytest.mark.parametrize("store", ["dense", "streamed"])
def test_kernel_operator_products_equal_in_memory(client, data, store):
    X, Xd = data
    K = kernel_matrix(X, gamma=0.2)
    op = DistributedKernelOperator(
        Xd, store=store, gamma=0.2, dtype=np.float64, tile=97
    )
    V = np.random.default_rng(1).normal(size=(500, 3))
    np.testing.assert_allclose(op @ V, K @ V, rtol=0, atol=1e-10)
    np.testing.assert_allclose(op @ V[:, 0], K @ V[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(op.diagonal(), np.diag(K), atol=1e-12)
    idx = np.array([3, 140, 499])
    np.testing.assert_allclose(op[idx], K[idx], atol=1e-10)
    Xt = np.random.default_rng(2).normal(size=(9, 4))
    np.testing.assert_allclose(
        op.dot_cross(Xt, V), kernel_matrix(Xt, X, gamma=0.2) @ V, atol=1e-10
    )
    # communication: V to each worker and K V back -- O(n C), not O(n^2)
    # O(n) numbers per column: V to each of the 4 blocks' tasks, K V back once
    per_product = (op.bytes_sent_ + op.bytes_received_) / op.n_products
    assert per_product <= (len(Xd.chunks[0]) + 1) * 500 * 8


@pytest.mark.slow
@pytest.mark.parametrize("inline", [True, False])
def test_communication_is_order_n_times_classes(client, data, monkeypatch, inline):
    from semisvm.kernels import _distributed

    if not inline:  # force the scatter path: V goes once to each worker
        monkeypatch.setattr(_distributed, "_INLINE_BYTES", 0)
    X, Xd = data
    op = DistributedKernelOperator(Xd, store="dense", gamma=0.2, dtype=np.float64)
    V = np.ones((500, 4))
    np.testing.assert_allclose(op @ V, kernel_matrix(X, gamma=0.2) @ V, atol=1e-10)
    n_blocks = len(Xd.chunks[0])
    assert op.bytes_sent_ == (n_blocks if inline else 2) * V.nbytes
    # the product came back once, whatever the number of blocks
    assert op.bytes_received_ == V.nbytes


def test_nystroem_operator_equals_low_rank_formula(client, data):
    X, Xd = data
    op = DistributedNystroemOperator(Xd, n_components=60, gamma=0.2, dtype=np.float64)
    Z = op.landmarks_
    C = kernel_matrix(X, Z, gamma=0.2)
    W = kernel_matrix(Z, gamma=0.2)
    Kt = C @ np.linalg.pinv(W, rcond=1e-6, hermitian=True) @ C.T
    V = np.random.default_rng(3).normal(size=(500, 2))
    np.testing.assert_allclose(op @ V, Kt @ V, atol=1e-7 * np.abs(Kt @ V).max())
    np.testing.assert_allclose(op.diagonal(), np.diag(Kt), atol=1e-8)
    # the landmarks are rows of X
    assert all(np.any(np.all(X == z, axis=1)) for z in Z)


@pytest.mark.parametrize("weight", ["binary", "heat"])
def test_distributed_graph_equals_in_process(client, data, weight):
    X, Xd = data
    W1 = knn_graph_distributed(Xd, 7, weight=weight)
    W2 = knn_graph(X, 7, weight=weight)
    assert (W1 != W2).nnz == 0 or abs(W1 - W2).max() < 1e-12
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_graph_distributed(Xd, 500)


@pytest.mark.parametrize(
    ("est", "converged"),
    [
        (LapSVM(gamma_a=1e-2, early_stopping=None, tol=1e-10, max_iter=3000), True),
        (LapSVM(), False),
        (LapRLS(solver="pcg", gamma_a=1e-2, tol=1e-10, max_iter=3000), True),
    ],
    ids=["lapsvm-converged", "lapsvm-default", "laprls-pcg"],
)
def test_estimators_same_answers_on_cluster(client, est, converged):
    X, y, _ = make_two_moons(240, n_labeled_per_class=3, random_state=0)
    Xd = da.from_array(X, chunks=(70, 2))
    a = est.fit(X, y)
    with cluster_plan("distributed"):  # the distributed pieces, not the gather plan
        b = type(est)(**est.get_params(deep=False)).fit(Xd, y)
    Fa, Fb = a.decision_function(X), b.decision_function(X)
    if converged:
        assert a.termination_condition_ == b.termination_condition_ == "tol"
        # same optimum: objectives to solver tolerance, decisions to its square root
        assert abs(a.objective_ - b.objective_) <= 1e-7 * abs(a.objective_)
        np.testing.assert_allclose(Fb, Fa, atol=1e-5)
    # early stopping may stop at another check; the labels agree up to points on
    # the decision boundary
    assert (a.transduction_ == b.transduction_).mean() >= 0.99
    assert b.n_features_in_ == 2


def test_dense_solvers_refuse_dask_input(client):
    X, y, _ = make_two_moons(100, n_labeled_per_class=2, random_state=0)
    Xd = da.from_array(X, chunks=(50, 2))
    # the gather plan runs the in-process code, every solver included
    a = LapSVM(solver="newton").fit(X, y)
    b = LapSVM(solver="newton").fit(Xd, y)
    assert b.cluster_plan_["plan"] == "gather"
    Fa = a.decision_function(X)  # equal up to the BLAS threads' rounding
    np.testing.assert_allclose(
        b.decision_function(X), Fa, rtol=1e-7, atol=1e-9 * np.abs(Fa).max()
    )
    with (
        cluster_plan("distributed"),
        pytest.raises(ValueError, match="solver='newton'.*solver='pcg'"),
    ):
        LapSVM(solver="newton").fit(Xd, y)
    with pytest.raises(ValueError, match="precomputed"):
        LapSVM(kernel="precomputed").fit(Xd, y)
    with pytest.raises(ValueError, match="one entry per row"):
        LapSVM().fit(Xd, y[:-1])


def test_kernel_dot_with_dask_training_points(client, data):
    X, Xd = data
    Xt = np.random.default_rng(4).normal(size=(11, 4))
    coef = np.random.default_rng(5).normal(size=(500, 2))
    got = distributed_kernel_dot(Xt, Xd, coef, kernel="rbf", gamma=0.3)
    np.testing.assert_allclose(got, kernel_matrix(Xt, X, gamma=0.3) @ coef, atol=1e-10)


@pytest.mark.slow
def test_no_client_gives_clear_error():
    code = (
        "import numpy as np, dask.array as da\n"
        "from semisvm import LapSVM\n"
        "X = da.from_array(np.random.default_rng(0).normal(size=(20, 2)))\n"
        "y = np.r_[0, 1, -np.ones(18, int)]\n"
        "try:\n    LapSVM().fit(X, y)\nexcept ValueError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert "no dask.distributed Client is running" in out.stdout, out.stderr
    assert get_dask_client is not None


@pytest.mark.slow
def test_package_works_without_dask():
    code = (
        "import sys\n"
        "sys.modules['dask'] = None\nsys.modules['distributed'] = None\n"
        "import numpy as np\nfrom semisvm import LapSVM\n"
        "from semisvm.datasets import make_two_moons\n"
        "X, y, yt = make_two_moons(100, n_labeled_per_class=1, random_state=0)\n"
        "print((LapSVM().fit(X, y).transduction_ == yt).mean())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) > 0.5


def test_grid_search_through_joblib_dask_backend(client):
    """Embarrassingly parallel work goes to the cluster through joblib, unchanged."""
    import joblib
    from sklearn.model_selection import GridSearchCV, KFold

    X, y, _ = make_two_moons(120, n_labeled_per_class=10, random_state=0)
    grid = {"gamma_a": [1e-3, 1e-1], "gamma_i": [0.0, 1.0]}
    cv = KFold(3, shuffle=True, random_state=0)
    local = GridSearchCV(LapSVM(solver="newton"), grid, cv=cv).fit(X, y)
    with joblib.parallel_backend("dask"):
        remote = GridSearchCV(LapSVM(solver="newton"), grid, cv=cv, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(
        remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]
    )
    assert remote.best_params_ == local.best_params_


def test_distributed_approximate_graph_recall(client):
    pytest.importorskip("hnswlib")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1200, 6))
    Xd = da.from_array(X, chunks=(300, 6))
    W_exact = knn_graph(X, 8)
    W_apx = knn_graph_distributed(Xd, 8, method="approx")
    # recall of the symmetric edge sets; exact search per block would give 1
    exact_edges = set(zip(*W_exact.nonzero(), strict=True))
    apx_edges = set(zip(*W_apx.nonzero(), strict=True))
    recall = len(exact_edges & apx_edges) / len(exact_edges)
    assert recall >= 0.98
    assert (W_apx != W_apx.T).nnz == 0 and W_apx.diagonal().sum() == 0
    with pytest.raises(ValueError, match="method"):
        knn_graph_distributed(Xd, 8, method="fast")


def test_distributed_approximate_graph_on_a_projection_has_exact_distances(
    client, monkeypatch
):
    """Wide rows: the partitioned HNSW search runs on 64 principal directions and
    each pair task re-ranks its candidates in the full rows, so the edges are the
    exact graph's (recall) and their heat weights are the exact distances' (a
    search that kept the projected distances would give other weights)."""
    pytest.importorskip("hnswlib")
    rng = np.random.default_rng(3)
    X = (rng.normal(size=(1600, 12)) @ rng.normal(size=(12, 200))).astype(np.float32)
    X += 0.05 * rng.normal(size=X.shape).astype(np.float32)
    Xd = da.from_array(X, chunks=(400, 200))
    W_exact = knn_graph(X, 8, weight="heat", t=30.0)
    W_apx = knn_graph_distributed(
        Xd, 8, method="approx", pca_components="auto", weight="heat", t=30.0
    )
    exact_edges = set(zip(*W_exact.nonzero(), strict=True))
    apx_edges = set(zip(*W_apx.nonzero(), strict=True))
    assert len(exact_edges & apx_edges) / len(exact_edges) >= 0.98
    both = W_exact.multiply(W_apx > 0)
    np.testing.assert_allclose(
        W_apx.multiply(W_exact > 0).toarray(), both.toarray(), rtol=1e-4, atol=1e-6
    )
    # issue 30, point 5: no task of the approximate search receives all of X
    import semisvm.graph._distributed as gd

    guard = _refuse_all_of_x(X.shape[0])
    for name in ("_block_index", "_pair_index_query", "_merge_two"):
        monkeypatch.setattr(gd, name, guard(getattr(gd, name)))
    W_guarded = knn_graph_distributed(
        Xd, 8, method="approx", pca_components="auto", weight="heat", t=30.0
    )
    assert abs(W_guarded - W_apx).max() == 0.0


@pytest.mark.parametrize("est_cls", [LapSVM, LapRLS])
def test_nystroem_on_cluster_equals_in_process(client, est_cls):
    """Same landmarks, same m-space problem: the cluster's C gives the same model."""
    X, y, _ = make_two_moons(500, n_labeled_per_class=4, random_state=1)
    Xd = da.from_array(X, chunks=(130, 2))
    est = est_cls(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=80, graph_width=None
        )
    )
    # the graph-width rule runs in process only: the cluster's model is the
    # default graph's, the in-process fit's with the rule off
    a = est.fit(X, y)
    with cluster_plan("distributed"):
        b = est_cls(**est.get_params(deep=False)).fit(Xd, y)
    assert b.graph_selection_ is None
    assert a.kernel_operator_ == b.kernel_operator_ == "nystroem"
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)
    # the two sum C^T L C in different orders; T = U S^{-1/2} magnifies that rounding
    # by up to 1/sqrt(rcond) = 1e3 (relative 1e-13 -> about 1e-10 in M, 1e-6 in f)
    np.testing.assert_allclose(
        b.decision_function(X), a.decision_function(X), atol=1e-5
    )
    assert (a.transduction_ == b.transduction_).mean() >= 0.998


def test_loo_features_stay_on_the_workers_and_equal_in_process(client):
    """Above the exact-root size the LOO features of a dask array are k(X, X_I) T
    kept as row blocks: their rows and Phi^T L Phi (with and without the column
    of ones of the intrinsic-bias engine) are the in-process numbers, and the
    columns never reach the client."""
    from semisvm.graph import graph_laplacian
    from semisvm.kernels import kernel_matrix
    from semisvm.kernels._distributed import DistributedKernelColumns
    from semisvm.solvers._loo import graph_gram, loo_features

    X, y, _ = make_two_moons(900, n_labeled_per_class=3, random_state=4)
    L = graph_laplacian(knn_graph(X, 7), normalized=True)
    lab = np.flatnonzero(y != -1)
    cols = DistributedKernelColumns(da.from_array(X, chunks=(200, 2)), gamma=3.0)

    def refuse(self, idx):
        raise AssertionError("the columns were gathered to the client")

    orig = DistributedKernelColumns.__call__
    DistributedKernelColumns.__call__ = refuse
    try:
        F = loo_features(cols, 900, lab, max_features=120, random_state=0)
    finally:
        DistributedKernelColumns.__call__ = orig
    Phi = loo_features(
        lambda idx: kernel_matrix(X, X[idx], gamma=3.0),
        900,
        lab,
        max_features=120,
        random_state=0,
    )
    assert F.shape == Phi.shape
    rows = np.r_[lab, 5, 17, 899]
    np.testing.assert_allclose(F[rows], Phi[rows], atol=1e-9)
    B = graph_gram(Phi, L)
    np.testing.assert_allclose(graph_gram(F, L), B, atol=1e-9 * np.abs(B).max())
    P1 = np.c_[Phi, np.ones(900)]
    B1 = graph_gram(P1, L)
    F1 = F.with_ones()
    np.testing.assert_allclose(F1[rows], P1[rows], atol=1e-9)
    np.testing.assert_allclose(graph_gram(F1, L), B1, atol=1e-9 * np.abs(B1).max())


@pytest.mark.slow
def test_auto_rule_on_cluster_nystroem_equals_in_process(client, monkeypatch):
    """The auto rule's LOO evidence on the distributed Nystroem plan (features on
    the workers, never gathered) scores the candidates as in process and picks
    the same pair."""
    from semisvm.kernels._distributed import DistributedKernelColumns

    def refuse(self, idx):
        raise AssertionError("the LOO columns were gathered to the client")

    monkeypatch.setattr(DistributedKernelColumns, "__call__", refuse)
    X, y, _ = make_two_moons(2400, n_labeled_per_class=5, random_state=6)
    # the graph-width rule runs in process only (the narrow graph's refit)
    est = LapSVM(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=100, graph_width=None
        )
    )
    a = est.fit(X, y)
    with cluster_plan("distributed"):
        b = LapSVM(**est.get_params(deep=False)).fit(
            da.from_array(X, chunks=(600, 2)), y
        )
    sa, sb = a.regularization_selection_, b.regularization_selection_
    assert sa["n_features"] == sb["n_features"] < X.shape[0]  # not the exact root
    np.testing.assert_allclose(sb["scores"], sa["scores"], rtol=1e-6, atol=1e-9)
    assert (sa["gamma_a"], sa["gamma_i"]) == (sb["gamma_a"], sb["gamma_i"])
    np.testing.assert_allclose(
        b.decision_function(X), a.decision_function(X), atol=1e-5
    )


@pytest.mark.parametrize("power", [1, 2])
def test_feature_gram_equals_in_process_intrinsic_gram(client, power):
    # power 2: the workers sum (L C~)_g^T (L C~)_g instead of C~_g^T (L^2 C~)_g
    from semisvm.graph import graph_laplacian
    from semisvm.kernels import NystroemFactor
    from semisvm.kernels._distributed import DistributedNystroemFactor
    from semisvm.solvers._lowrank import intrinsic_gram

    X, _, _ = make_two_moons(300, n_labeled_per_class=1, random_state=2)
    L = graph_laplacian(knn_graph(X, 6), normalized=True, power=power, form="operator")
    f_in = NystroemFactor(40, gamma=2.0).fit(X)
    f_cl = DistributedNystroemFactor(40, gamma=2.0).fit(
        da.from_array(X, chunks=(70, 2))
    )
    np.testing.assert_array_equal(f_in.landmarks_, f_cl.landmarks_)
    for ib in (False, True):
        Phi = f_in.C_.astype(np.float64) @ f_in.components_  # float64 features
        M = intrinsic_gram(Phi, L, intrinsic_bias=ib)
        np.testing.assert_allclose(
            f_cl.feature_gram(L, intrinsic_bias=ib), M, atol=1e-8 * np.abs(M).max()
        )


def test_streamed_on_cluster_equals_in_process(client):
    X, y, _ = make_two_moons(240, n_labeled_per_class=3, random_state=0)
    Xd = da.from_array(X, chunks=(70, 2))
    est = LapSVM(
        gamma_a=1e-2,
        early_stopping=None,
        tol=1e-8,
        max_iter=3000,
        options=SolverOptions(kernel_approximation="streamed"),
    )
    a = est.fit(X, y)
    with cluster_plan("distributed"):
        b = LapSVM(**est.get_params(deep=False)).fit(Xd, y)
    assert b.kernel_operator_ == "streamed"
    # the cluster's tiles keep X's float64 and converge to tol; the in-process
    # streamed operator computes float32 tiles and may stop on "precision" there
    assert b.termination_condition_ == "tol"
    assert a.termination_condition_ in ("tol", "precision")
    assert abs(a.objective_ - b.objective_) <= 1e-6 * abs(b.objective_)
    np.testing.assert_allclose(
        b.decision_function(X), a.decision_function(X), atol=1e-5
    )
    with cluster_plan("distributed"), pytest.raises(ValueError, match="solver='pcg'"):
        LapSVM(
            options=SolverOptions(kernel_approximation="streamed"), solver="newton"
        ).fit(Xd, y)


def test_distributed_graph_local_weights(client, data):
    X, Xd = data
    W1 = knn_graph_distributed(Xd, 7, weight="local")
    W2 = knn_graph(X, 7, weight="local")
    assert abs(W1 - W2).max() < 1e-12


def test_default_knn_width_on_cluster_equals_in_process(client, data):
    from semisvm.kernels import knn_gamma
    from semisvm.kernels._distributed import distributed_gamma

    X, Xd = data
    assert distributed_gamma(Xd, "knn", "rbf", 7) == pytest.approx(
        knn_gamma(X, 7), rel=1e-12
    )


@pytest.mark.parametrize("n", [600, 2500])
def test_laplacian_power_on_cluster_equals_in_process(client, n):
    """``laplacian_power="auto"`` reads the same sample of rows on a dask array
    (above 2,000 points the same random rows): the same dimension, the same
    power."""
    from semisvm.models._problem import resolve_laplacian_power

    X = np.random.default_rng(1).normal(size=(n, 30))
    p, dim = resolve_laplacian_power(LapSVM(), X)
    assert p == 3 and dim > 16
    p2, dim2 = resolve_laplacian_power(LapSVM(), da.from_array(X, chunks=(700, 30)))
    assert p2 == p
    assert dim2 == pytest.approx(dim, rel=1e-12)


def test_graph_length_ratio_on_cluster_equals_in_process(client):
    """The graph term's length normalization is the same number on a cluster
    (n > 2,000, so the blockwise n-point search is exercised)."""
    import dask.array as da

    from semisvm.kernels import knn_scale_ratio
    from semisvm.kernels._distributed import distributed_scale_ratio

    X = np.random.default_rng(5).uniform(size=(3000, 2))
    Xd = da.from_array(X, chunks=(700, 2))
    rho = knn_scale_ratio(X, 7)
    assert rho > 1.2  # 1.5x the sample: edges shorter, ratio ~ n/2000 in 2-D
    assert distributed_scale_ratio(Xd, 7) == pytest.approx(rho, rel=1e-12)


def _manifold(n: int, d: int = 20, seed: int = 0):
    """The benchmark's synthetic manifold (benchmarks/dask/bench_dask.py), float64."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 6))
    X = np.tanh(Z @ (rng.normal(size=(6, d)) / np.sqrt(6)))
    yt = (np.sin(2 * Z[:, 0]) + Z[:, 1] > 0).astype(int)
    y = -np.ones(n, dtype=int)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), 12, replace=False)] = c
    return X, y


@functools.cache
def _default_fit_2500() -> LapSVM:
    X, y = _manifold(2500)
    return LapSVM(random_state=0, laplacian_power=1).fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["auto", "distributed"])
def test_default_fit_on_cluster_equals_in_process(client, plan):
    """Issue 30: LapSVM() with its defaults gives the in-process model on a cluster.

    n = 2,500 > MIN_COARSE_N, so the coarse start, the Nystroem preconditioner,
    the LOO choice of the weights and early stopping are all exercised.  'auto'
    gathers X on one worker (the fit fits there) and runs the in-process code;
    'distributed' keeps the kernel rows on the workers and reads the graph, the
    LOO columns and the preconditioner's columns off them: the same model, the
    same stop iteration, decisions to 1e-5.  The Laplacian power is pinned to 1:
    at the default's second power (this 6-dimensional manifold, 12 labels per
    class) the outputs interpolate at the rule's width and the extension check
    keeps it, while here it must narrow it to run on the distributed K
    (``K.power``).
    """
    X, y = _manifold(2500)
    a = _default_fit_2500()  # one in-process reference for both plans
    Xd = da.from_array(X, chunks=(700, X.shape[1]))
    with cluster_plan(plan):
        b = LapSVM(random_state=0, laplacian_power=1, verbose=1).fit(Xd, y)
    assert b.cluster_plan_["plan"] == ("gather" if plan == "auto" else "distributed")
    assert a.kernel_operator_ == b.kernel_operator_ == "dense"
    assert (a.gamma_a_, a.gamma_i_) == pytest.approx((b.gamma_a_, b.gamma_i_), rel=1e-9)
    assert a.solver_ == b.solver_
    # the extension check narrows the width here (x2): on the distributed rows
    # too (K.power), with the same judgement
    assert a.extension_check_["factor"] > 1
    assert b.extension_check_["factor"] == a.extension_check_["factor"]
    # the same width chosen; at every width one sampled point whose
    # leave-one-out output (the interpolant's, through K^{-1} at a 1e-8 ridge)
    # lies within the plans' rounding of zero may flip: one of 500 at each width
    # with one BLAS thread, whose outputs agree to 6e-6 of their scale
    da_, db_ = a.extension_check_["disagreement"], b.extension_check_["disagreement"]
    one = 1.0 / a.extension_check_["n_sample"]
    assert np.abs(np.subtract(db_, da_)).max() <= one + 1e-12
    assert b.gamma_ == pytest.approx(a.gamma_, rel=1e-12)
    assert getattr(a, "n_iter_", None) == getattr(b, "n_iter_", None)
    assert a.termination_condition_ == b.termination_condition_
    Fa, Fb = a.decision_function(X), b.decision_function(X)
    scale = np.abs(Fa).max()
    if plan == "auto":
        # the same code on the same data: equal up to the BLAS rounding of the
        # worker's thread count (bit-equal with one BLAS thread on both sides)
        np.testing.assert_allclose(Fb, Fa, rtol=1e-7, atol=1e-9 * np.abs(Fa).max())
    else:
        np.testing.assert_allclose(Fb, Fa, rtol=0, atol=1e-5 * scale)
    assert (a.transduction_ == b.transduction_).all()


def test_verbose_states_the_cluster_plan(client, capsys):
    X, y = _manifold(600)
    Xd = da.from_array(X, chunks=(200, X.shape[1]))
    LapSVM(verbose=1).fit(Xd, y)
    out = capsys.readouterr().out
    assert "X is a dask array" in out and "plan: gather" in out
    assert "in-process fit needs" in out


@pytest.mark.slow
def test_scheduler_in_a_separate_process(tmp_path):
    """The same code against a scheduler and workers that are their own processes
    (``dask scheduler`` / ``dask worker``, as on a real cluster), connected by
    address: both plans give the in-process model."""
    import os
    import time
    from pathlib import Path

    import semisvm

    env = dict(os.environ)
    src = str(Path(semisvm.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    sched_file = tmp_path / "scheduler.json"
    common = ["--no-dashboard"]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--scheduler-file",
                str(sched_file),
                *common,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 20
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), "the scheduler did not start"
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    "--scheduler-file",
                    str(sched_file),
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    *common,
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        import json

        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        with distributed.Client(address, timeout=20) as c:
            c.wait_for_workers(2, timeout=30)
            X, y = _manifold(700)
            a = LapSVM(random_state=0).fit(X, y)
            Xd = da.from_array(X, chunks=(250, X.shape[1]))
            b = LapSVM(random_state=0).fit(Xd, y)
            assert b.cluster_plan_["plan"] == "gather"
            Fa = a.decision_function(X)
            np.testing.assert_allclose(  # equal up to the BLAS threads' rounding
                b.decision_function(X), Fa, rtol=1e-7, atol=1e-9 * np.abs(Fa).max()
            )
            with cluster_plan("distributed"):
                e = LapSVM(random_state=0).fit(Xd, y)
            Fa = a.decision_function(X)
            np.testing.assert_allclose(
                e.decision_function(X), Fa, rtol=0, atol=1e-5 * np.abs(Fa).max()
            )
            assert e.termination_condition_ == a.termination_condition_
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def _refuse_all_of_x(n):
    """A wrapper of a task function that fails when an array argument has n rows."""

    def wrap(fn):
        def guarded(*args, **kwargs):
            for a in args:
                if isinstance(a, np.ndarray) and a.ndim == 2 and a.shape[0] >= n:
                    raise AssertionError(f"a task received all of X: {a.shape}")
            return fn(*args, **kwargs)

        return guarded

    return wrap


@pytest.mark.slow
def test_clustered_partitions_keep_the_recall_and_never_hold_all_of_x(
    client, monkeypatch
):
    """Clustered partitions (k-means on a sample, each row searched in the
    partitions of its nearest centres only): 8 partitions on a 10-d manifold keep
    the recall at 0.99 or more against the exact search, the distances are exact
    squared distances, and no task receives all of X."""
    pytest.importorskip("hnswlib")
    import semisvm.graph._distributed as gd
    from semisvm._dask import _row_block_futures
    from semisvm.graph._knn import exact_knn

    rng = np.random.default_rng(3)
    X = np.tanh(rng.normal(size=(6000, 8)) @ rng.normal(size=(8, 30)))
    ind_e, d2_e = exact_knn(X, 10)
    guard = _refuse_all_of_x(X.shape[0])
    for name in ("_block_index", "_query_rows", "_merge_visits", "_rows"):
        monkeypatch.setattr(gd, name, guard(getattr(gd, name)))
    futures, offsets = _row_block_futures(
        da.from_array(X, chunks=(750, 30)), client, None
    )
    D, ind = gd._clustered_approx(client, futures, offsets, 11, 100, 0, None, 8)
    D, ind = gd._drop_self(D, ind, 10)
    recall = np.mean([np.intersect1d(ind[i], ind_e[i]).size / 10 for i in range(6000)])
    assert recall >= 0.99
    exact = ((X[ind] - X[:, None, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(D, exact, rtol=1e-5, atol=1e-6)
    # the public function: 'clustered' forced, a symmetric graph with that recall
    W = knn_graph_distributed(
        da.from_array(X, chunks=(750, 30)),
        10,
        method="approx",
        partitioning="clustered",
    )
    assert (W != W.T).nnz == 0
    with pytest.raises(ValueError, match="partitioning"):
        knn_graph_distributed(
            da.from_array(X, chunks=(750, 30)), 10, method="approx", partitioning="x"
        )


@pytest.mark.slow
def test_exact_graph_never_ships_all_of_x(client, monkeypatch):
    """Issue 30, point 5: the exact graph by a partitioned search with candidate
    exchange (pairs of blocks, merged on the workers) equals the in-process kNN
    graph, and no task receives all of X (every task function is wrapped to fail
    on an argument with n rows)."""
    import semisvm.graph._distributed as gd

    X = np.random.default_rng(3).normal(size=(900, 5))
    guard = _refuse_all_of_x(900)
    for name in ("_pair_neighbours", "_merge_two"):
        monkeypatch.setattr(gd, name, guard(getattr(gd, name)))
    with pytest.raises(Exception, match="all of X"):
        knn_graph_distributed(da.from_array(X, chunks=(900, 5)), 9)
    for chunks in (250, 97):
        Xd = da.from_array(X, chunks=(chunks, 5))
        for weight in ("binary", "heat", "local"):
            W1 = knn_graph_distributed(Xd, 9, weight=weight)
            W2 = knn_graph(X, 9, weight=weight)
            assert (W1 != 0).sum() == (W2 != 0).sum()
            assert abs(W1 - W2).max() < 1e-12
