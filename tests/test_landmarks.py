"""The landmark space (solvers._landmarks): one graph Gram for three steps.

Checked against the independent computations it replaces: the bordered Gram
against ``intrinsic_gram`` formed from the features, the preconditioner built on
the space against the explicit operator (its K T and, with every point a
landmark, the exact inverse on its span), and PCG with it against PCG with the
paper's preconditioner at the optimum.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons

from semisvm.graph import LaplacianPower, graph_laplacian, knn_graph
from semisvm.kernels import BlockResidualOperator, NystroemFactor, kernel_matrix
from semisvm.solvers import lapsvm_pcg
from semisvm.solvers._landmarks import LandmarkSpace, landmark_space
from semisvm.solvers._loo import graph_gram
from semisvm.solvers._lowrank import intrinsic_gram
from semisvm.solvers._preconditioners import NystroemPreconditioner


def _blocks(n=200, m=24, seed=0):
    X, y = make_moons(n, noise=0.1, random_state=seed)
    lab = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    f = NystroemFactor(m, gamma=5.0, include=lab, random_state=0).fit(X)
    op = BlockResidualOperator(f, X, block_size=50)
    L = graph_laplacian(knn_graph(X, 8), normalized=True)  # rows do not sum to 0
    Y = np.zeros((n, 1))
    Y[lab, 0] = np.where(y[lab] == 1, 1.0, -1.0)
    return X, op, L, Y, lab


@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("intrinsic_bias", [True, False])
def test_bordered_gram_is_the_intrinsic_gram(power, intrinsic_bias):
    _, op, L, _, _ = _blocks()
    Lp = LaplacianPower(L, power)
    space = landmark_space(op, Lp)
    assert space is not None and space.exact
    # the space's Gram is formed in the float32 factor's precision
    want = intrinsic_gram(
        op.Phi, Lp, intrinsic_bias=intrinsic_bias, precision=op.Phi.dtype
    )
    got = space.bordered_gram(intrinsic_bias)
    # the border Phi^T L 1 is summed in float64 there, from float32 products here
    tol = 2e-6 if intrinsic_bias else 1e-12
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    # the selection's Gram of the float64 features is the same matrix, to the
    # float32 rounding of the products
    r = space.rank
    ref = graph_gram(np.asarray(op.Phi, dtype=np.float64), Lp)
    np.testing.assert_allclose(space.gram, ref, rtol=0, atol=2e-6 * np.abs(ref).max())
    assert space.bordered_gram(intrinsic_bias)[:r, :r] is not space.gram


def test_no_landmark_space_for_a_dense_kernel():
    X, _ = make_moons(50, noise=0.1, random_state=0)
    assert landmark_space(kernel_matrix(X, gamma=1.0), None) is None
    with pytest.raises(ValueError, match="no Laplacian"):
        _ = LandmarkSpace(np.arange(3), np.eye(3), np.eye(3), None).gram


def test_preconditioner_on_the_space_matches_the_operator():
    _, op, L, _, lab = _blocks()
    Lp = LaplacianPower(L, 2)
    space = landmark_space(op, Lp)
    pre = NystroemPreconditioner(op, lab, Lp, 1e-3, 0.5, 24, landmarks=space)
    np.testing.assert_array_equal(pre.landmarks_, space.Z)
    n = op.shape[0]
    E = np.eye(n)
    T, KT = pre.apply(E, op @ E)
    Kh = op.toarray()
    # K V is Phi R: the operator's own product up to its float32 factor
    np.testing.assert_allclose(KT, Kh @ T, atol=2e-5 * np.abs(KT).max())
    S = 0.5 * (KT + KT.T)
    np.testing.assert_allclose(KT, S, atol=2e-5 * np.abs(KT).max())
    # positive semi-definite up to the float32 factor (K itself is nearly
    # singular: an RBF kernel on 200 points)
    ev = np.linalg.eigvalsh(S)
    assert ev.min() > -1e-6 * ev.max()


class _Opaque:
    """The operator without its pass-sharing methods (the preconditioner then
    forms K V = Phi R itself)."""

    def __init__(self, op):
        self.op, self.Phi, self.shape, self.dtype = op, op.Phi, op.shape, op.dtype
        self.product_dtype = op.product_dtype

    def __matmul__(self, V):
        return self.op @ V


@pytest.mark.parametrize("fitc", [False, True])
def test_preconditioner_rides_on_the_operators_passes(fitc):
    from semisvm.kernels import FITCOperator, kernel_diagonal

    X, op, L, _, lab = _blocks()
    if fitc:
        op = FITCOperator(op.factor, kernel_diagonal(X, gamma=5.0))
    Lp = LaplacianPower(L, 2)
    space = landmark_space(op, Lp)
    fused = NystroemPreconditioner(op, lab, Lp, 1e-3, 0.5, 24, landmarks=space)
    plain = NystroemPreconditioner(_Opaque(op), lab, Lp, 1e-3, 0.5, 24, landmarks=space)
    assert fused.fused and not plain.fused
    G = np.random.default_rng(0).normal(size=(op.shape[0], 3))
    before = op.n_products
    KG, Z, KZ = fused.apply_with_product(G)
    assert op.n_products - before == 3  # one product per column, as op @ G
    KG_ref = op @ G
    Z_ref, KZ_ref = plain.apply(G, KG_ref)
    # the same map: float32 factor products in another order of summation
    tol = 1e-5
    np.testing.assert_allclose(KG, KG_ref, atol=tol * np.abs(KG_ref).max())
    np.testing.assert_allclose(Z, Z_ref, atol=tol * np.abs(Z_ref).max())
    np.testing.assert_allclose(KZ, KZ_ref, atol=tol * np.abs(KZ_ref).max())
    # and apply on the fused preconditioner is that map too
    Z2, KZ2 = fused.apply(G, KG_ref)
    np.testing.assert_allclose(Z2, Z_ref, atol=tol * np.abs(Z_ref).max())
    np.testing.assert_allclose(KZ2, KZ_ref, atol=tol * np.abs(KZ_ref).max())


def test_preconditioner_on_a_full_space_inverts_a_on_its_span():
    """Every point a landmark: the space is all of R^n, so on the deflated
    Ritz vectors V the preconditioned operator T A is the identity."""
    X, y = make_moons(60, noise=0.1, random_state=1)
    f = NystroemFactor(60, gamma=20.0, random_state=0).fit(X)
    op = BlockResidualOperator(f, X, block_size=30)
    L = graph_laplacian(knn_graph(X, 6), normalized=True)
    lab = np.arange(0, 60, 7)
    space = landmark_space(op, L)
    assert space.exact and space.rank == 60
    pre = NystroemPreconditioner(op, lab, L, 1e-3, 0.7, 60, landmarks=space)
    Kh = op.toarray()
    G = np.diag(np.isin(np.arange(60), lab).astype(float)) + 0.7 * L.toarray()
    A = G @ Kh + 1e-3 * np.eye(60)
    V = np.zeros((60, pre._Y.shape[1]))
    V[pre.landmarks_] = pre._Y
    T, _ = pre.apply(A @ V, Kh @ (A @ V))
    np.testing.assert_allclose(T, V, atol=1e-6 * np.abs(V).max())


def test_pcg_on_the_space_reaches_the_optimum():
    _, op, L, Y, _ = _blocks()
    Lp = LaplacianPower(L, 2)
    kw = dict(
        L=Lp, gamma_a=1e-4, gamma_i=0.3, intrinsic_bias=True, tol=1e-9, max_iter=5000
    )
    ref = lapsvm_pcg(op, Y, preconditioner="paper", **kw)
    res = lapsvm_pcg(
        op, Y, preconditioner="nystroem", landmarks=landmark_space(op, Lp), **kw
    )
    assert list(ref.reason) == ["tol"] and list(res.reason) == ["tol"]
    np.testing.assert_allclose(res.objective, ref.objective, rtol=1e-6)
    assert res.n_iter[0] < ref.n_iter[0]
    with pytest.raises(ValueError, match="landmark space of K and of this L"):
        lapsvm_pcg(
            op, Y, preconditioner="nystroem", landmarks=landmark_space(op, L), **kw
        )


@pytest.mark.parametrize("fitc", [False, True])
def test_lean_step_is_the_fused_map(fitc):
    """apply_lean's (T G, K T G, diag(G^T K G)) against the fused apply's map
    and the explicit operator."""
    from semisvm.kernels import FITCOperator, kernel_diagonal

    X, op, L, _, lab = _blocks()
    if fitc:
        op = FITCOperator(op.factor, kernel_diagonal(X, gamma=5.0))
    Lp = LaplacianPower(L, 2)
    pre = NystroemPreconditioner(
        op, lab, Lp, 1e-3, 0.5, 24, landmarks=landmark_space(op, Lp)
    )
    G = np.random.default_rng(1).normal(size=(op.shape[0], 3))
    before = op.n_products
    Z, KZ, gKg = pre.apply_lean(G)
    assert op.n_products - before == 3  # one product per column
    _, Z_ref, KZ_ref = pre.apply_with_product(G)
    Kh = op.toarray()
    tol = 1e-5
    np.testing.assert_allclose(Z, Z_ref, atol=tol * np.abs(Z_ref).max())
    np.testing.assert_allclose(KZ, KZ_ref, atol=tol * np.abs(KZ_ref).max())
    np.testing.assert_allclose(KZ, Kh @ Z, atol=tol * np.abs(KZ).max())
    want = np.einsum("ij,ij->j", G, Kh @ G)
    np.testing.assert_allclose(gKg, want, rtol=tol)


def test_pcg_lean_step_follows_the_full_step():
    """PCG with the lean step (no K g kept) and with K g kept (a recorded
    history) take the same iterations (the iterates after 25 steps agree to the
    float32 products' rounding) to the same optimum, and only the lean
    preconditioner map runs in the first."""
    _, op, L, Y, _ = _blocks()
    Lp = LaplacianPower(L, 2)
    space = landmark_space(op, Lp)
    kw = dict(
        L=Lp,
        gamma_a=1e-4,
        gamma_i=0.3,
        intrinsic_bias=True,
        preconditioner="nystroem",
        landmarks=space,
    )
    calls = {"lean": 0, "full": 0}
    lean_fn = NystroemPreconditioner.apply_lean
    full_fn = NystroemPreconditioner.apply_with_product

    def count(name, fn):
        def run(self, G):
            calls[name] += 1
            return fn(self, G)

        return run

    import unittest.mock as um

    with (
        um.patch.object(NystroemPreconditioner, "apply_lean", count("lean", lean_fn)),
        um.patch.object(
            NystroemPreconditioner, "apply_with_product", count("full", full_fn)
        ),
    ):
        lean = lapsvm_pcg(op, Y, tol=1e-14, max_iter=25, **kw)
        assert calls["lean"] == 25 and calls["full"] == 0
        full = lapsvm_pcg(op, Y, tol=1e-14, max_iter=25, record_history=True, **kw)
        assert calls["full"] == 25
    np.testing.assert_allclose(
        lean.alpha, full.alpha, atol=1e-4 * np.abs(full.alpha).max()
    )
    # float32 products: the two recurrences round differently, ~1e-6 here
    np.testing.assert_allclose(lean.objective, full.objective, rtol=1e-5)
    # and both reach the optimum (the iteration counts there follow rounding)
    lean = lapsvm_pcg(op, Y, tol=1e-9, max_iter=5000, **kw)
    full = lapsvm_pcg(op, Y, tol=1e-9, max_iter=5000, record_history=True, **kw)
    assert list(lean.reason) == ["tol"] and list(full.reason) == ["tol"]
    np.testing.assert_allclose(lean.objective, full.objective, rtol=1e-7)


def _with_duplicates(n=160, seed=0):
    """Moons whose first 12 rows repeat, moved by 3e-3, as the last 12
    (near-duplicate images), and labels holding both copies of three of them:
    the landmark kernel is numerically singular and the factor drops an
    eigen-direction per pair (without the zeroed residual the identity below
    is off by 3e-3 here)."""
    X, _ = make_moons(n, noise=0.1, random_state=seed)
    lab = np.r_[0, 1, 2, n, n + 1, n + 2, 50]
    moved = X[:12] + 3e-3 * np.random.default_rng(1).normal(size=(12, 2))
    return np.vstack([X, moved]), lab


@pytest.mark.parametrize("fitc", [False, True])
def test_operator_reproduces_phi_on_the_span_when_directions_are_dropped(fitc):
    """K E_Z T = Phi (the solvers' identity) with a singular landmark kernel:
    the residual is kept off the landmark rows there; the operator stays
    positive semi-definite, and the block model's kernel at a training point
    that is not a landmark is its row of K."""
    from semisvm.kernels import FITCOperator, kernel_diagonal

    X, lab = _with_duplicates()
    n = X.shape[0]
    f = NystroemFactor(40, gamma=5.0, include=lab, random_state=0).fit(X)
    assert f.rank_ <= f.landmark_indices_.size - 3  # a direction per pair
    op = (
        FITCOperator(f, kernel_diagonal(X, gamma=5.0))
        if fitc
        else BlockResidualOperator(f, X, block_size=40)
    )
    space = landmark_space(op, None)
    assert space is not None and space.exact
    V = np.zeros((n, space.rank))
    V[space.Z] = space.T
    Kh = op.toarray()
    # up to the float32 factor's rounding (as in the full-rank case)
    np.testing.assert_allclose(Kh @ V, op.Phi, atol=2e-5 * np.abs(op.Phi).max())
    ev = np.linalg.eigvalsh(0.5 * (Kh + Kh.T))
    assert ev.min() > -1e-6 * ev.max()
    # the residual off the landmarks still carries the exact kernel there
    others = np.setdiff1d(np.arange(n), space.Z)
    K = kernel_matrix(X, gamma=5.0)
    np.testing.assert_allclose(np.diag(Kh)[others], np.diag(K)[others], atol=1e-6)
    if not fitc:
        # (new points' features recomputed in float32: that rounding)
        i = others[:5]
        np.testing.assert_allclose(op.cross(X[i]), Kh[i], atol=1e-5)
        a = np.random.default_rng(0).normal(size=(n, 2))
        np.testing.assert_allclose(
            op.decision_model(a)(X[i]), Kh[i] @ a, atol=1e-5 * np.abs(Kh @ a).max()
        )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("duplicate", [False, True])
def test_features_are_the_kernel_to_landmarks_times_t(dtype, duplicate):
    # Cholesky components (upper triangular: TRMM) and the eigen-basis ones
    # (a duplicated landmark drops a direction): the same Phi = C T
    X, _ = make_moons(300, noise=0.1, random_state=0)
    X = X.astype(dtype)
    if duplicate:
        X[1] = X[0]
    f = NystroemFactor(n_components=20, gamma=10.0, include=[0, 1]).fit(X)
    T = f.components_
    assert (not np.tril(T, -1).any()) == (not duplicate)
    assert f.rank_ == 20 - duplicate
    want = f.C_.astype(np.float64) @ T
    tol = 1e-6 if dtype == np.float32 else 1e-7  # Phi is stored in float32
    np.testing.assert_allclose(f.features_, want, rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("power", [1, 2])
def test_intrinsic_gram_on_threads_is_the_serial_gram(monkeypatch, power):
    import semisvm.solvers._lowrank as lr

    _, op, L, _, _ = _blocks()
    Lp = LaplacianPower(L, power)
    monkeypatch.setattr(lr, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(lr, "blas_threads", lambda: 1)
    serial = intrinsic_gram(op.Phi, Lp, intrinsic_bias=True, max_block_bytes=2**13)
    calls = []
    monkeypatch.setattr(
        lr,
        "map_threads",
        lambda f, items: calls.append(len(items)) or [f(i) for i in items],
    )
    monkeypatch.setattr(lr, "blas_threads", lambda: 3)
    got = intrinsic_gram(op.Phi, Lp, intrinsic_bias=True, max_block_bytes=2**13)
    assert len(calls) > 1 and calls[0] == 3  # several row blocks, 3 parts each
    np.testing.assert_array_equal(got, serial)  # the split does not change a bit
    Phi = op.Phi.astype(np.float64)
    P = np.hstack([Phi, np.ones((Phi.shape[0], 1))])
    ref = P.T @ (Lp @ P)
    np.testing.assert_allclose(
        got, 0.5 * (ref + ref.T), rtol=1e-9, atol=1e-10 * np.abs(ref).max()
    )


@pytest.mark.parametrize("power", [1, 2])
def test_intrinsic_gram_reads_a_float64_factor_in_place(power):
    """A float64 factor is read in place, a float32 one gathered and converted
    row block by row block: the same sums, bit for bit, for the same values."""
    _, op, L, _, _ = _blocks()
    Lp = LaplacianPower(L, power)
    g32 = intrinsic_gram(op.Phi, Lp, intrinsic_bias=True, max_block_bytes=2**13)
    g64 = intrinsic_gram(
        op.Phi.astype(np.float64), Lp, intrinsic_bias=True, max_block_bytes=2**13
    )
    np.testing.assert_array_equal(g64, g32)


def test_landmark_components_cholesky_when_conditioned_else_the_cut(monkeypatch):
    """A well-conditioned W gets the inverse Cholesky factor (upper triangular,
    no eigendecomposition; near the cutoff, where LAPACK's estimate is below it,
    after the eigenvalues said so); a W with eigenvalues below ``rcond`` times
    the largest -- positive definite or not -- gets the eigen-basis without
    them."""
    import scipy.linalg as sla

    from semisvm.kernels import _nystroem as ny

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(60, 60)))
    eigh, eigvalsh = sla.eigh, sla.eigvalsh
    cases = [(1e-3, 60, 0), (2e-6, 60, 1), (1e-9, 50, 1), (0.0, 50, 0)]
    for spread, rank, values in cases:
        s = np.r_[np.linspace(1.0, 0.1, 50), np.full(10, spread)]
        W = (Q * s) @ Q.T
        calls: list = []
        asked: list = []
        monkeypatch.setattr(
            ny.sla, "eigh", lambda A, calls=calls: calls.append(1) or eigh(A)
        )
        monkeypatch.setattr(
            ny.sla, "eigvalsh", lambda A, asked=asked: asked.append(1) or eigvalsh(A)
        )
        T = ny.landmark_components(W, 1e-6)
        assert T.shape == (60, rank)
        np.testing.assert_allclose(T.T @ W @ T, np.eye(rank), atol=1e-6)
        assert (calls == []) == (rank == 60)
        assert len(asked) == values
        if rank == 60:
            assert not np.tril(T, -1).any()  # the TRMM path of the features
        else:
            np.testing.assert_allclose(
                T @ T.T, Q[:, :50] @ np.diag(1 / s[:50]) @ Q[:, :50].T, atol=1e-8
            )


@pytest.mark.parametrize("power", [1, 2])
def test_intrinsic_gram_in_float32_is_the_float64_gram_to_float32_rounding(power):
    """The landmark space's Gram of a float32 factor, formed in float32 and
    summed in float64, is the float64 Gram to float32 rounding."""
    _, op, L, _, _ = _blocks()
    Lp = LaplacianPower(L, power)
    want = intrinsic_gram(op.Phi, Lp, intrinsic_bias=True, max_block_bytes=2**13)
    got = intrinsic_gram(
        op.Phi, Lp, intrinsic_bias=True, max_block_bytes=2**13, precision=np.float32
    )
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.abs(want).max())
    assert not np.array_equal(got, want)  # the float32 path did run


def test_intrinsic_gram_panels_are_the_full_product(monkeypatch):
    """The Gram formed on and below the diagonal panels and mirrored is the full
    GEMM's, exactly symmetric, for panels that do and do not divide r."""
    import semisvm.solvers._lowrank as lr

    _, op, L, _, _ = _blocks()
    Phi = op.Phi.astype(np.float64)
    P = np.hstack([Phi, np.ones((Phi.shape[0], 1))])
    ref = P.T @ (L @ P)
    for panel in (1, 5, 7, 1000):
        monkeypatch.setattr(lr, "GRAM_PANEL", panel)
        got = intrinsic_gram(Phi, L, intrinsic_bias=True, max_block_bytes=2**13)
        np.testing.assert_array_equal(got, got.T)
        np.testing.assert_allclose(
            got, 0.5 * (ref + ref.T), rtol=1e-10, atol=1e-12 * np.abs(ref).max()
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_accurate_projection_is_the_float64_product(monkeypatch, dtype):
    """P^T V summed in float64 over cache-sized row blocks of P (several blocks
    here) is the product of P's values in float64, for a vector and a block."""
    from semisvm.kernels import _nystroem as ny

    rng = np.random.default_rng(1)
    P = rng.normal(size=(1000, 30)).astype(dtype)
    monkeypatch.setattr(ny, "CONVERT_BLOCK_BYTES", 8 * 30 * 64)
    for V in (rng.normal(size=1000), rng.normal(size=(1000, 3))):
        want = P.astype(np.float64).T @ V
        got = ny.accurate_projection(P, V)
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
