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
    idx = np.array([3, 150, 77])
    np.testing.assert_allclose(op.rows(idx), dense[idx], atol=1e-6)
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
