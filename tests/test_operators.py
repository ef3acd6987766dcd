"""Kernel operators (streamed, Nystroem), the m-space solver, memory plans, batching."""

import numpy as np
import pytest
import scipy.sparse as sp

import semisvm.models._scale as scale
from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm._memory import MemoryPlan, available_memory, block_rows
from semisvm.datasets import make_two_moons
from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import (
    LowRankOperator,
    NystroemFactor,
    StreamedKernelOperator,
    kernel_matrix,
)
from semisvm.solvers._lowrank import intrinsic_gram, lapsvm_lowrank
from semisvm.solvers._pcg import lapsvm_pcg

rng = np.random.default_rng(0)
X = rng.normal(size=(240, 4))


def _targets(n, n_lab, C, seed=0):
    r = np.random.default_rng(seed)
    Y = np.zeros((n, C))
    idx = r.choice(n, n_lab, replace=False)
    if C == 1:
        Y[idx, 0] = np.where(X[idx, 0] > 0, 1.0, -1.0)
    else:
        cls = r.integers(0, C, n_lab)
        Y[idx] = -1.0
        Y[idx, cls] = 1.0
    return Y


@pytest.mark.parametrize(
    "kernel,params",
    [("rbf", {"gamma": 0.3}), ("poly", {"gamma": 0.2, "degree": 2}), ("linear", {})],
)
@pytest.mark.parametrize("tile_bytes", [4 * 17 * 68, 4 * 240 * 240, None])
def test_streamed_matches_dense_float32(kernel, params, tile_bytes):
    X32 = X.astype(np.float32)
    K = kernel_matrix(X32, kernel=kernel, **params).astype(np.float64)
    op = StreamedKernelOperator(X32, kernel=kernel, tile_bytes=tile_bytes, **params)
    if tile_bytes == 4 * 17 * 68:  # several tiles per row block, ragged last ones
        assert (op.tile_rows, op.tile_cols) == (17, 68)
    tol = dict(rtol=1e-5, atol=1e-5 * np.abs(K).max())
    for V in (
        rng.normal(size=(240, 3)),
        rng.normal(size=240),
        rng.normal(size=(240, 10)),
    ):
        KV = op @ V
        assert KV.flags.c_contiguous and KV.dtype == np.float64
        np.testing.assert_allclose(KV, K @ V, **tol)
    np.testing.assert_allclose(op.diagonal(), np.diag(K), rtol=1e-6)
    np.testing.assert_allclose(
        op.rows(np.array([3, 100])), K[[3, 100]], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(op.toarray(), K, rtol=1e-5, atol=1e-6)
    assert op.n_products == 14


def test_streamed_symmetric_and_exact_on_uncentred_data():
    """Off-centre data: the RBF tiles come from centred data (float32 rounding)."""
    r = np.random.default_rng(5)
    Xo = (r.normal(size=(300, 6)) + 50.0).astype(np.float32)
    K64 = kernel_matrix(Xo.astype(np.float64), gamma=0.2)
    op = StreamedKernelOperator(Xo, gamma=0.2, tile_bytes=4 * 32 * 128)
    Kt = op.toarray()
    assert np.abs(Kt - K64).max() < 2e-5  # float32 rounding of the centred data
    assert Kt.max() <= 1.0
    # duplicated points: entries 1 up to rounding, never above
    dup = StreamedKernelOperator(np.repeat(Xo[:50], 3, axis=0), gamma=0.2).toarray()
    assert dup.max() <= 1.0 and dup[0, 1] == dup[1, 0] > 1.0 - 1e-5
    V = r.normal(size=(300, 4))
    np.testing.assert_allclose(op @ V, K64 @ V, atol=1e-4 * np.abs(K64 @ V).max())
    # the product uses one triangle of tiles: K^T V and K V agree
    np.testing.assert_allclose(op @ V, Kt.T @ V, rtol=1e-5, atol=1e-5)


def test_streamed_fallback_sparse_and_callable():
    X32 = X.astype(np.float32)
    K = kernel_matrix(X32, gamma=0.3).astype(np.float64)
    V = rng.normal(size=(240, 2))
    op = StreamedKernelOperator(sp.csr_matrix(X32), gamma=0.3, tile_bytes=4 * 240 * 17)
    assert op._fallback_rows == 17
    np.testing.assert_allclose(op @ V, K @ V, rtol=1e-5, atol=1e-5)

    def lin(A, B):
        return A @ B.T

    op = StreamedKernelOperator(X32, kernel=lin, tile_bytes=4 * 240 * 17)
    KL = X32.astype(np.float64) @ X32.T.astype(np.float64)
    np.testing.assert_allclose(op @ V, KL @ V, rtol=1e-4, atol=1e-4 * np.abs(KL).max())
    np.testing.assert_allclose(op.rows(slice(0, 5)), KL[:5], rtol=1e-4, atol=1e-4)


def test_nystroem_full_rank_reproduces_kernel_and_woodbury():
    K = kernel_matrix(X, gamma=0.05)
    F = NystroemFactor(240, gamma=0.05, rcond=1e-10).fit(X)
    Kt = F.operator().toarray()
    # exact up to the dropped eigenvalues (below 1e-10 max) and float32 features
    assert np.abs(Kt - K).max() < 1e-4
    V = rng.normal(size=(240, 2))
    lam = 0.1
    np.testing.assert_allclose(
        F.solve_shifted(lam, V),
        np.linalg.solve(Kt + lam * np.eye(240), V),
        rtol=1e-4,
        atol=1e-4,
    )
    op = F.operator()
    assert isinstance(op, LowRankOperator)
    np.testing.assert_allclose(op.diagonal(), np.diag(Kt), rtol=1e-5)
    # predictions of the Nystroem RKHS: k(x, Z) beta == Phi eta
    # (default rcond: T = U S^-1/2 amplifies the float32 rounding by at most 1e3)
    F6 = NystroemFactor(100, gamma=0.05).fit(X)
    eta = rng.normal(size=(F6.rank_, 1))
    f_feat = F6.features_.astype(np.float64) @ eta
    np.testing.assert_allclose(
        F6.kernel_to_landmarks(X) @ F6.coef_from_features(eta),
        f_feat,
        atol=1e-3 * np.abs(f_feat).max(),
    )


def test_kmeans_landmarks_beat_uniform_on_clustered_data():
    r = np.random.default_rng(3)
    centres = r.normal(scale=6.0, size=(20, 5))
    Xc = centres[r.integers(0, 20, 800)] + r.normal(scale=0.5, size=(800, 5))
    K = kernel_matrix(Xc, gamma=0.5)
    err = {}
    for method in ("uniform", "kmeans"):
        e = []
        for seed in range(3):
            F = NystroemFactor(40, landmarks=method, gamma=0.5, random_state=seed).fit(
                Xc
            )
            e.append(np.linalg.norm(K - F.operator().toarray()) / np.linalg.norm(K))
        err[method] = np.median(e)
    assert err["kmeans"] < err["uniform"]


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
@pytest.mark.parametrize("C", [1, 3])
@pytest.mark.parametrize("intrinsic_bias", [False, True])
def test_lowrank_solver_matches_pcg_on_the_same_kernel(loss, C, intrinsic_bias):
    F = NystroemFactor(60, gamma=0.3, random_state=1).fit(X)
    Phi = F.features_.astype(np.float64)
    L = graph_laplacian(knn_graph(X, 6))
    Y = _targets(240, 30, C)
    kw = dict(L=L, gamma_a=5e-2, gamma_i=0.3, loss=loss, intrinsic_bias=intrinsic_bias)
    res = lapsvm_lowrank(Phi, Y, **kw)
    ref = lapsvm_pcg(Phi @ Phi.T, Y, tol=1e-12, max_iter=20000, **kw)
    assert all(res.converged)
    np.testing.assert_allclose(res.objective, ref.objective, rtol=1e-7)
    f = Phi @ res.alpha + res.b
    fref = Phi @ (Phi.T @ ref.alpha) + ref.b
    np.testing.assert_allclose(f, fref, atol=1e-5 * np.abs(fref).max())
    # the same problem from C = k(X, Z) and T (no n x r features formed)
    resT = lapsvm_lowrank(F.C_, Y, T=F.components_, **kw)
    fT = F.C_ @ (F.components_ @ resT.alpha) + resT.b
    np.testing.assert_allclose(fT, f, atol=1e-6 * np.abs(f).max())


@pytest.mark.parametrize("gamma_a", [1e-6, 1e-2])
@pytest.mark.parametrize("intrinsic_bias", [False, True])
def test_error_set_systems_by_woodbury_equal_the_direct_solve(gamma_a, intrinsic_bias):
    """Every error set's Newton system solved from the one shared factorisation
    (Woodbury on A = R + P^T P) equals its direct Cholesky / least-squares solve:
    random error sets, the full and the empty one (the direct fallback when the
    bias is unregularised), small and large gamma_A."""
    from semisvm.solvers._lowrank import _ErrorSetSolver, _solve_spd

    F = NystroemFactor(60, gamma=0.3, random_state=1).fit(X)
    Phi = F.features_.astype(np.float64)
    L = graph_laplacian(knn_graph(X, 6), normalized=True)
    M = intrinsic_gram(Phi, L, intrinsic_bias=intrinsic_bias)
    r = Phi.shape[1]
    R = 0.7 * M
    R[np.arange(r), np.arange(r)] += gamma_a
    lab = np.random.default_rng(5).choice(240, 40, replace=False)
    P = np.c_[Phi[lab], np.ones(40)]
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    systems = _ErrorSetSolver(R, P)
    assert systems.W is not None  # the shared path, not the fallback
    g = np.random.default_rng(6)
    sets = [np.ones(40, bool), np.zeros(40, bool)]
    sets += [g.random(40) < q for q in (0.2, 0.5, 0.9, 0.97)]
    for E in sets:
        th = systems.solve(E, y)
        ref = _solve_spd(R + P[E].T @ P[E], P[E].T @ y[E])
        H = R + P[E].T @ P[E]
        # compare the residuals of the system (the solution may not be unique
        # when E is empty and the bias unregularised)
        res = H @ th - P[E].T @ y[E]
        assert np.linalg.norm(res) <= 1e-8 * max(1.0, np.linalg.norm(P[E].T @ y[E]))
        if E.any() or intrinsic_bias:
            np.testing.assert_allclose(
                P @ th, P @ ref, atol=1e-7 * max(1.0, np.abs(P @ ref).max())
            )


def test_lowrank_squared_loss_closed_form():
    Phi = rng.normal(size=(50, 5))
    L = graph_laplacian(knn_graph(Phi, 4))
    Y = _targets(50, 12, 1)
    res = lapsvm_lowrank(
        Phi, Y, L=L, gamma_a=0.5, gamma_i=2.0, loss="squared", intrinsic_bias=True
    )
    # brute force: normal equations of the (r+1)-variable least-squares problem
    lab = np.flatnonzero(Y[:, 0] != 0)
    Pt = np.c_[Phi, np.ones(50)]
    Lm = L.toarray()
    A = Pt[lab].T @ Pt[lab] + 2.0 * Pt.T @ Lm @ Pt
    A[:5, :5] += 0.5 * np.eye(5)
    th = np.linalg.solve(A, Pt[lab].T @ Y[lab, 0])
    np.testing.assert_allclose(np.r_[res.alpha[:, 0], res.b], th, rtol=1e-9, atol=1e-10)
    G = intrinsic_gram(Phi.astype(np.float32), L, intrinsic_bias=True)
    P32 = np.c_[Phi.astype(np.float32).astype(np.float64), np.ones(50)]
    np.testing.assert_allclose(G, P32.T @ Lm @ P32, atol=1e-10)


def _moons(n=600):
    X2, y, yt = make_two_moons(
        n, noise=0.1, n_labeled_per_class=4, random_state=0, sampling="uniform"
    )
    return X2, y, yt


def test_estimators_with_each_operator_agree_with_dense():
    X2, y, yt = _moons(300)
    X32 = X2.astype(np.float32)
    kw = dict(solver="pcg", gamma_a=1e-2, tol=1e-10, max_iter=3000)
    dense = LapRLS(**kw, options=SolverOptions(kernel_approximation="dense")).fit(
        X32, y
    )
    streamed = LapRLS(**kw, options=SolverOptions(kernel_approximation="streamed")).fit(
        X32, y
    )
    assert dense.kernel_operator_ == "dense" and streamed.kernel_operator_ == "streamed"
    # same kernel entries (float32), same graph: the same optimum (well conditioned
    # with gamma_a = 1e-2), up to float32 products
    f_d, f_s = dense.decision_function(X32), streamed.decision_function(X32)
    np.testing.assert_allclose(f_s, f_d, atol=1e-4 * np.abs(f_d).max())
    np.testing.assert_allclose(streamed.objective_, dense.objective_, rtol=1e-5)
    assert np.array_equal(streamed.transduction_, dense.transduction_)
    X2, y, yt = _moons()
    # all points as landmarks: the same model up to the eigenvalues of K below
    # rcond * max (gamma_a = 1e-2 keeps those directions out of the solution)
    nys = LapRLS(
        gamma_a=1e-2,
        options=SolverOptions(kernel_approximation="nystroem", n_components=600),
    ).fit(X2, y)
    ref = LapRLS(gamma_a=1e-2, options=SolverOptions(kernel_approximation="dense")).fit(
        X2, y
    )
    assert nys.kernel_operator_ == "nystroem" and nys.solver_ == "lowrank-direct"
    assert nys.landmarks_.shape == (600, 2) and nys.dual_coef_.shape == (600, 1)
    assert (nys.transduction_ == ref.transduction_).mean() >= 0.99
    svm = LapSVM(
        options=SolverOptions(
            kernel_approximation="nystroem", n_components=200, landmarks="kmeans"
        )
    ).fit(X2, y)
    assert (svm.transduction_ == yt).mean() >= 0.95
    # transduction_ is the model's own prediction on the training points
    pred = svm.predict(X2)
    unl = y == -1
    assert np.array_equal(pred[unl], svm.transduction_[unl])
    assert set(svm.fit_times_) >= {"kernel", "graph", "solver", "transduction"}


def test_multiclass_nystroem():
    r = np.random.default_rng(0)
    Xm = np.r_[
        r.normal(size=(100, 2)),
        r.normal(size=(100, 2)) + 6,
        r.normal(size=(100, 2)) + [6, -6],
    ]
    yt = np.repeat([0, 1, 2], 100)
    y = np.full(300, -1)
    for c in range(3):
        y[np.flatnonzero(yt == c)[:3]] = c
    clf = LapSVM(
        options=SolverOptions(kernel_approximation="nystroem", n_components=80)
    ).fit(Xm, y)
    assert clf.dual_coef_.shape == (80, 3)
    assert (clf.transduction_ == yt).mean() >= 0.98
    assert (
        clf.predict_proba(Xm).shape == (300, 3)
        if hasattr(clf, "predict_proba")
        else True
    )


def test_batched_decision_identical(monkeypatch):
    X2, y, _ = _moons(400)
    for ka in ("dense", "nystroem"):
        clf = LapSVM(
            options=SolverOptions(kernel_approximation=ka, n_components=100)
        ).fit(X2, y)
        centers = X2 if ka == "dense" else clf.landmarks_
        Kt = kernel_matrix(X2, centers, gamma=clf.gamma_)
        whole = (Kt @ clf.dual_coef_)[:, 0] + clf.intercept_[0]
        monkeypatch.setattr(scale, "block_rows", lambda *a, **k: 7)
        f_small = clf.decision_function(X2)
        monkeypatch.undo()
        # blocks change only the rounding: of the sum, n eps sum |k_ij a_j|, and
        # of each entry exp(-g d2) (d2 = |x|^2 + |z|^2 - 2 x.z from a GEMM whose
        # blocking follows the rows), g |k_ij| 8 eps (|x_i|^2 + |z_j|^2)
        a = np.abs(clf.dual_coef_)[:, 0]
        norms = (X2**2).sum(1)[:, None] + (centers**2).sum(1)[None, :]
        bound = Kt.shape[1] * 2.3e-16 * (np.abs(Kt) @ a) + (
            clf.gamma_ * 8 * 2.3e-16 * (np.abs(Kt) * norms) @ a
        )
        assert np.all(np.abs(f_small - whole) <= bound)
        assert np.array_equal(clf.predict(X2), np.where(whole > 0, 1, 0))


def test_memory_guard_switches_and_refuses(monkeypatch, capsys):
    X2, y, _ = _moons(3000)
    # dense K (3000^2 float64 = 69 MiB) does not fit in 70% of 60 MiB
    monkeypatch.setenv("SEMISVM_MEMORY_LIMIT", "60M")
    clf = LapRLS(verbose=1, options=SolverOptions(n_components=100)).fit(X2, y)
    assert clf.kernel_operator_ == "nystroem"
    assert "kernel operator: nystroem" in capsys.readouterr().out
    with pytest.raises(
        MemoryError, match="kernel_approximation='nystroem' needs .*fits"
    ):
        LapRLS(options=SolverOptions(kernel_approximation="dense")).fit(X2, y)
    monkeypatch.setenv("SEMISVM_MEMORY_LIMIT", "2M")
    with pytest.raises(MemoryError, match="does not fit"):
        LapSVM().fit(X2, y)
    assert available_memory() == 2 * 2**20


def test_solver_operator_errors_name_the_option():
    X2, y, _ = _moons(100)
    with pytest.raises(ValueError, match="streamed.*solver='pcg'"):
        LapSVM(
            solver="newton", options=SolverOptions(kernel_approximation="streamed")
        ).fit(X2, y)
    with pytest.raises(ValueError, match="solver='dual' needs the dense kernel"):
        LapSVM(
            solver="dual", options=SolverOptions(kernel_approximation="nystroem")
        ).fit(X2, y)
    with pytest.raises(ValueError, match="kernel='precomputed' use 'dense'"):
        LapSVM(
            kernel="precomputed", options=SolverOptions(kernel_approximation="nystroem")
        ).fit(kernel_matrix(X2), y)
    with pytest.raises(ValueError, match="kernel_approximation"):
        LapSVM(options=SolverOptions(kernel_approximation="lowrank")).fit(X2, y)


def test_memory_plan_and_blocks():
    plan = MemoryPlan("x").add("a", 10).add("b", 5)
    assert plan.total == 15 and plan.fits(available=100) and not plan.fits(available=20)
    with pytest.raises(MemoryError, match="use less"):
        MemoryPlan("x").add("a", 2**62).check("use less")
    assert block_rows(1000, 8, cap_bytes=80_000) == 10
    assert block_rows(1000, 8, cap_bytes=80_000, n_rows=3) == 3


def test_gram_in_row_blocks_is_exactly_symmetric(monkeypatch):
    import semisvm.kernels._kernels as kk

    monkeypatch.setattr(kk, "_GEMM_BLOCK_BYTES", 8 * 240 * 13)
    K = kernel_matrix(X, gamma=0.2)
    assert np.array_equal(K, K.T)
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.testing.assert_allclose(K, np.exp(-0.2 * D2), atol=1e-14)
    Kl = kernel_matrix(sp.csr_matrix(X), kernel="linear")
    np.testing.assert_allclose(Kl, X @ X.T, atol=1e-12)


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("power", [1, 2, 3, 4])
def test_intrinsic_gram_in_row_blocks_equals_brute_force(normalized, power):
    # many row blocks (a tiny block budget), float32 features: every block's
    # gathered rows and the bias row/column against the dense Phi~^T L Phi~;
    # even powers go through (S Phi~)^T (S Phi~) with S = L^(p/2), odd ones > 1
    # through column blocks of L^p Phi
    rng = np.random.default_rng(3)
    Xg = rng.normal(size=(300, 3))
    W = knn_graph(Xg, 6, weight="heat")
    L = graph_laplacian(W, normalized=normalized, power=power, form="operator")
    Phi = rng.normal(size=(300, 7)).astype(np.float32)
    Lm = L.toarray() if hasattr(L, "toarray") else L @ np.eye(300)
    P = np.c_[Phi.astype(np.float64), np.ones(300)]
    for ib in (True, False):
        G = intrinsic_gram(Phi, L, intrinsic_bias=ib, max_block_bytes=7 * 8 * 40)
        ref = P.T @ Lm @ P
        if not ib:
            ref[:, -1] = ref[-1, :] = 0.0
        np.testing.assert_allclose(G, ref, atol=1e-10 * np.abs(ref).max())
