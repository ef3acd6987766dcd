"""The block-residual (PIC) operator on a dask.distributed LocalCluster: against
the explicit matrix and the in-process fit."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from semisvm import LapRLS, LapSVM, SolverOptions  # noqa: E402
from semisvm.datasets import make_two_moons  # noqa: E402
from semisvm.kernels import (  # noqa: E402
    BlockResidualOperator,
    NystroemFactor,
    kernel_matrix,
)
from semisvm.kernels._distributed_blocks import (  # noqa: E402
    DistributedBlockResidualOperator,
)
from semisvm.models._cluster_plan import cluster_plan  # noqa: E402

GAMMA = 0.4
rng = np.random.default_rng(0)
X = np.r_[rng.normal(size=(120, 3)), rng.normal(size=(80, 3)) + 4.0]


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
def ops(client):
    """The in-process operator and the cluster's, from the same factor and centres."""
    f = NystroemFactor(25, gamma=GAMMA, random_state=0).fit(X)
    op = BlockResidualOperator(f, X, block_size=40)
    Xd = da.from_array(X, chunks=(60, 3))
    dop = DistributedBlockResidualOperator(
        Xd, factor=f, centres=op.centres_, gamma=GAMMA, block_size=40
    )
    return op, dop


def _explicit(Phi, block_of, Xa=X):
    """Phi Phi^T, and K where two points share a block (brute force)."""
    K = kernel_matrix(Xa, gamma=GAMMA)
    P = Phi.astype(np.float64)
    return np.where(block_of[:, None] == block_of[None, :], K, P @ P.T)


def _new_kernel(op, centres, Xn):
    """k_hat(x, X) of new points: K on the block of the nearest centre, else the
    landmarks' kernel (brute force)."""
    near = ((Xn[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    low = op.factor.transform(Xn).astype(np.float64) @ op.Phi.T.astype(np.float64)
    K = kernel_matrix(Xn, X, gamma=GAMMA)
    return np.where(near[:, None] == op.block_of_[None, :], K, low)


def test_operator_equals_the_explicit_matrix(ops):
    op, dop = ops
    assert len(op.blocks_) >= 4
    np.testing.assert_array_equal(dop.block_of_, op.block_of_)
    dense = _explicit(op.Phi, op.block_of_)
    np.testing.assert_allclose(dop.toarray(), dense, atol=1e-12)
    np.testing.assert_allclose(dop.toarray(), op.toarray(), atol=1e-12)
    V = rng.normal(size=(200, 3))
    # float64 throughout on the float32 factor's values
    np.testing.assert_allclose(dop @ V, dense @ V, atol=1e-11)
    np.testing.assert_allclose(dop @ V[:, 0], dense @ V[:, 0], atol=1e-11)
    np.testing.assert_allclose(dop.accurate_matmul(V), dense @ V, atol=1e-11)
    np.testing.assert_allclose(
        dop.accurate_matmul(V[:, 1]), dense @ V[:, 1], atol=1e-11
    )
    np.testing.assert_allclose(dop.diagonal(), np.diag(dense), atol=1e-12)
    idx = np.array([3, 150, 77, 4])
    np.testing.assert_allclose(dop.rows(idx), dense[idx], atol=1e-12)
    np.testing.assert_allclose(dop.columns(idx), dense[:, idx], atol=1e-12)
    assert dop.shape == (200, 200) and dop.dtype == np.float64


def test_products_move_order_n_numbers(ops):
    _, dop = ops
    V = rng.normal(size=(200, 4))
    s0, r0, p0 = dop.bytes_sent_, dop.bytes_received_, dop.n_products
    dop @ V
    moved = (dop.bytes_sent_ - s0 + dop.bytes_received_ - r0) / (dop.n_products - p0)
    G, r = len(dop.group_rows_), dop.factor.rank_
    # V_g out, Phi_g^T V_g back, W out, the product back: 2n + 2 G r per column
    assert moved == (2 * 200 + 2 * G * r) * 8
    assert moved < 200 * 200 * 8 / 10  # never the kernel


def test_each_block_lives_in_one_group(ops):
    op, dop = ops
    rows = np.concatenate(dop.group_rows_)
    np.testing.assert_array_equal(np.sort(rows), np.arange(200))
    for B in op.blocks_:
        assert np.unique(dop.group_[B]).size == 1


def test_cross_kernel_of_new_points(ops):
    op, dop = ops
    Xn = np.r_[X[:5], rng.normal(size=(12, 3)) * 2.0]
    ref = _new_kernel(op, op.centres_, Xn)
    np.testing.assert_allclose(dop.cross(Xn), ref, atol=1e-6)
    # the low-rank part in float32 on both sides (sums in another order)
    np.testing.assert_allclose(dop.cross(Xn), op.cross(Xn), atol=1e-6)


def test_decision_model_is_the_cross_kernel_times_alpha(client):
    f = NystroemFactor(25, gamma=GAMMA, random_state=0).fit(X)
    op = BlockResidualOperator(f, X, block_size=40)
    # a centre far from every training point: its block is empty, the points
    # nearest to it get the landmarks' kernel only
    centres = np.r_[op.centres_, np.full((1, 3), 30.0)]
    dop = DistributedBlockResidualOperator(
        da.from_array(X, chunks=(60, 3)), factor=f, centres=centres, gamma=GAMMA
    )
    assert np.all(dop.block_of_ < len(op.centres_))
    A = rng.normal(size=(200, 2))
    model = dop.decision_model(A)
    Xn = np.r_[X[:9], rng.normal(size=(20, 3)) * 2.0, np.full((3, 3), 29.0)]
    ref = _new_kernel(op, centres, Xn) @ A
    np.testing.assert_allclose(model(Xn), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        model(da.from_array(Xn, chunks=(8, 3))), ref, rtol=1e-5, atol=1e-5
    )
    # at training points: the operator's rows
    np.testing.assert_allclose(model(X[:9]), op.toarray()[:9] @ A, rtol=1e-5, atol=1e-5)
    vec = dop.decision_model(A[:, 0])
    np.testing.assert_allclose(vec(Xn)[:, 0], ref[:, 0], rtol=1e-5, atol=1e-5)


def test_default_landmarks_and_blocks_are_the_in_process_ones(client):
    f = NystroemFactor(25, gamma=GAMMA, random_state=3).fit(X)
    op = BlockResidualOperator(f, X, block_size=40, random_state=5)
    dop = DistributedBlockResidualOperator(
        da.from_array(X, chunks=(70, 3)),
        n_components=25,
        gamma=GAMMA,
        random_state=3,
        block_size=40,
        block_random_state=5,
    )
    np.testing.assert_array_equal(dop.factor.landmark_indices_, f.landmark_indices_)
    np.testing.assert_allclose(dop.centres_, op.centres_)
    np.testing.assert_array_equal(dop.block_of_, op.block_of_)
    np.testing.assert_allclose(dop.toarray(), op.toarray(), atol=1e-12)
    # the groups are spread over both workers
    assert len({p["workers"][0] for p in dop._pins}) == 2


def test_centres_from_a_sample_when_x_is_large(client):
    big = np.random.default_rng(1).normal(size=(600, 2))
    dop = DistributedBlockResidualOperator(
        da.from_array(big, chunks=(150, 2)),
        n_components=20,
        gamma=GAMMA,
        block_size=50,
        kmeans_sample=100,
    )
    assert dop.centres_.shape == (12, 2)
    near = ((big[:, None] - dop.centres_[None]) ** 2).sum(-1).argmin(1)
    np.testing.assert_array_equal(dop.block_of_, near)
    sizes = np.bincount(dop.block_of_, minlength=12)
    # the in-process features: C = k(X, Z) in X's float64 times T, stored float32
    C = kernel_matrix(big, dop.factor.landmarks_, gamma=GAMMA)
    P = (C @ dop.factor.components_).astype(np.float32)
    K = kernel_matrix(big, gamma=GAMMA)
    same = dop.block_of_[:, None] == dop.block_of_[None, :]
    dense = np.where(same, K, P.astype(np.float64) @ P.T.astype(np.float64))
    np.testing.assert_allclose(dop.toarray(), dense, atol=1e-10)
    assert sizes.sum() == 600


@pytest.mark.parametrize("est_cls", [LapRLS, LapSVM])
def test_fit_on_cluster_equals_in_process(client, est_cls):
    Xm, y, _ = make_two_moons(300, noise=0.1, n_labeled_per_class=3, random_state=0)
    Xd = da.from_array(Xm, chunks=(70, 2))
    est = est_cls(
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
    )
    a = est.fit(Xm, y)
    with cluster_plan("distributed"):
        b = est_cls(**est.get_params(deep=False)).fit(Xd, y)
    assert a.kernel_operator_ == b.kernel_operator_ == "blocks"
    assert b.cluster_plan_["plan"] == "distributed"
    assert b.n_components_ == 30
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-6)
    Xn = np.r_[Xm[::7], np.random.default_rng(2).uniform(-1.5, 2.5, size=(40, 2))]
    Fa, Fb = a.decision_function(Xn), b.decision_function(Xn)
    assert np.abs(Fb - Fa).max() <= 1e-4 * np.abs(Fa).max()
    np.testing.assert_array_equal(b.predict(Xn), a.predict(Xn))
    np.testing.assert_array_equal(b.transduction_, a.transduction_)


def test_refused_where_it_cannot_run(client):
    Xm, y, _ = make_two_moons(120, n_labeled_per_class=3, random_state=0)
    Xd = da.from_array(Xm, chunks=(40, 2))
    with (
        cluster_plan("distributed"),
        pytest.raises(ValueError, match="kernel_approximation='blocks'.*solver='pcg'"),
    ):
        LapSVM(
            solver="newton", options=SolverOptions(kernel_approximation="blocks")
        ).fit(Xd, y)
    with (
        cluster_plan("distributed"),
        pytest.raises(ValueError, match="kernel_approximation='fitc' is not available"),
    ):
        LapSVM(solver="pcg", options=SolverOptions(kernel_approximation="fitc")).fit(
            Xd, y
        )


def test_near_duplicate_landmarks_as_in_process(client):
    """A numerically singular landmark kernel (near-duplicate rows among the
    landmarks): the cluster's operator keeps its residual off the landmark
    rows as the in-process one does -- the same matrix, cross kernel and
    predictive function."""
    moved = X[:20] + 1e-3 * rng.normal(size=(20, 3))
    Xd = np.r_[X, moved]
    include = np.r_[np.arange(20), 200 + np.arange(20)]
    f = NystroemFactor(60, gamma=GAMMA, include=include, random_state=0).fit(Xd)
    assert f.rank_ < f.landmark_indices_.size  # directions dropped
    op = BlockResidualOperator(f, Xd, block_size=40)
    dop = DistributedBlockResidualOperator(
        da.from_array(Xd, chunks=(70, 3)), factor=f, centres=op.centres_, gamma=GAMMA
    )
    np.testing.assert_allclose(dop.toarray(), op.toarray(), atol=1e-12)
    Xn = np.r_[Xd[:5], Xd[205:210], rng.normal(size=(6, 3)) * 2.0]
    np.testing.assert_allclose(dop.cross(Xn), op.cross(Xn), atol=1e-6)
    A = rng.normal(size=(Xd.shape[0], 2))
    np.testing.assert_allclose(
        dop.decision_model(A)(Xn), op.decision_model(A)(Xn), rtol=1e-5, atol=1e-5
    )
