"""The coarse-to-fine start (solvers._coarse): an exact restricted optimum.

Checked against closed forms: the restricted normal equations of LapRLS, the
full direct solve when every point is a landmark, and the objective of the
full problem evaluated at the start.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons

from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.solvers._coarse import coarse_start
from semisvm.solvers._landmarks import LandmarkSpace
from semisvm.solvers._newton import laprls_direct


@pytest.fixture(scope="module")
def problem():
    X, y = make_moons(160, noise=0.1, random_state=0)
    K = kernel_matrix(X, X, kernel="rbf", gamma=2.0)
    L = graph_laplacian(knn_graph(X, 8, weight="heat")).toarray()
    Y = np.zeros((160, 1))
    Y[[0, 1, 2, 5], 0] = np.where(y[[0, 1, 2, 5]] == 1, 1.0, -1.0)
    return K, L, Y


def _objective(K, L, Y, alpha, b, ga, gi, loss):
    f = K @ alpha + b
    lab = np.any(Y != 0, axis=1)
    r = (Y - f)[lab] if loss == "squared" else np.maximum(0, 1 - Y * f)[lab]
    return 0.5 * (
        (r**2).sum(axis=0)
        + ga * np.einsum("ic,ic->c", alpha, K @ alpha)
        + gi * np.einsum("ic,ic->c", f, L @ f)
    )


def test_every_point_a_landmark_gives_the_direct_optimum(problem):
    K, L, Y = problem
    a0, b0, info = coarse_start(
        K,
        Y,
        L=L,
        gamma_a=1e-3,
        gamma_i=0.1,
        loss="squared",
        intrinsic_bias=True,
        n_landmarks=160,
    )
    ref = laprls_direct(K, Y, L=L, gamma_a=1e-3, gamma_i=0.1, intrinsic_bias=True)
    np.testing.assert_allclose(K @ a0 + b0, K @ ref.alpha + ref.b, atol=1e-6)


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_start_objective_is_the_full_objective(problem, loss):
    K, L, Y = problem
    ga, gi = 1e-3, 0.1
    a0, b0, info = coarse_start(
        K,
        Y,
        L=L,
        gamma_a=ga,
        gamma_i=gi,
        loss=loss,
        intrinsic_bias=True,
        n_landmarks=30,
    )
    full = _objective(K, L, Y, a0, b0, ga, gi, loss)
    np.testing.assert_allclose(full, info["objective"], rtol=1e-6)
    # a feasible point of the full problem, no worse than alpha = 0, b = 0
    assert (
        full[0] <= _objective(K, L, Y, np.zeros_like(a0), np.zeros(1), ga, gi, loss)[0]
    )


def test_squared_loss_start_is_the_restricted_minimizer(problem):
    """Brute force: minimize over alpha supported on the same landmarks by the
    restricted normal equations (variables alpha_Z and b)."""
    K, L, Y = problem
    ga, gi = 1e-3, 0.1
    a0, b0, info = coarse_start(
        K,
        Y,
        L=L,
        gamma_a=ga,
        gamma_i=gi,
        loss="squared",
        intrinsic_bias=True,
        n_landmarks=30,
        random_state=3,
    )
    Z = np.flatnonzero(a0[:, 0] != 0)
    n = K.shape[0]
    lab = np.flatnonzero(Y[:, 0] != 0)
    # f = A v, v = (alpha_Z, b): A = [K_{:Z}, 1]
    A = np.c_[K[:, Z], np.ones(n)]
    R = np.zeros((Z.size + 1, Z.size + 1))
    R[:-1, :-1] = ga * K[np.ix_(Z, Z)]
    H = A[lab].T @ A[lab] + R + gi * A.T @ L @ A
    v = np.linalg.lstsq(H, A[lab].T @ Y[lab, 0], rcond=None)[0]
    np.testing.assert_allclose(K @ a0[:, 0] + b0[0], A @ v, atol=1e-5)


@pytest.mark.slow
def test_estimator_optimum_unchanged_by_the_start():
    """Above MIN_COARSE_N the converged LapSVM is the same model with and
    without the coarse start (only the start differs)."""
    from semisvm import LapSVM, SolverOptions

    X, y = make_moons(2100, noise=0.1, random_state=1)
    yy = np.full(y.size, -1)
    yy[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    kw = dict(gamma_a=1e-6, gamma_i=1.0, early_stopping=None, tol=1e-10, max_iter=3000)
    a = LapSVM(**kw).fit(X, yy)
    assert a.coarse_start_["n_landmarks"] >= 4
    b = LapSVM(**kw, options=SolverOptions(coarse_start=False)).fit(X, yy)
    assert not hasattr(b, "coarse_start_")
    fa, fb = a.decision_function(X), b.decision_function(X)
    assert np.abs(fa - fb).max() <= 1e-4 * np.abs(fb).max()


@pytest.mark.parametrize("kind", ["blocks", "fitc"])
def test_operator_basis_start_is_the_restricted_optimum_on_its_landmarks(problem, kind):
    """On a Nystroem-based operator the start reuses the operator's features:
    with a full-rank factor its columns at the landmarks times T are the
    features, and the start is the restricted minimizer over alpha_Z = T eta
    (brute-force normal equations on the explicit matrix)."""
    from semisvm.kernels import (
        BlockResidualOperator,
        FITCOperator,
        NystroemFactor,
        kernel_diagonal,
        kernel_matrix,
    )

    _, L, Y = problem
    X, _ = make_moons(160, noise=0.1, random_state=0)
    lab = np.flatnonzero(Y[:, 0] != 0)
    f = NystroemFactor(16, gamma=5.0, include=lab, random_state=0).fit(X)
    assert np.isin(lab, f.landmark_indices_).all() and f.rank_ == 16
    op = (
        BlockResidualOperator(f, X, block_size=40)
        if kind == "blocks"
        else FITCOperator(f, kernel_diagonal(X, gamma=5.0))
    )
    Z, Phi, T = op.landmark_basis()
    # the residual vanishes on the landmark columns (exact arithmetic: float64
    # features; the operator holds them in float32)
    K = kernel_matrix(X, gamma=5.0)
    P = f.C_ @ T
    if kind == "blocks":
        same = op.block_of_[:, None] == op.block_of_[None, :]
        K64 = np.where(same, K, P @ P.T)
    else:
        K64 = P @ P.T
        K64[np.diag_indices_from(K64)] = np.diag(K)
    np.testing.assert_allclose(K64[:, Z] @ T, P, atol=1e-9)
    Kh = op.toarray()
    ga, gi = 1e-3, 0.1
    a0, b0, info = coarse_start(
        op,
        Y,
        L=L,
        gamma_a=ga,
        gamma_i=gi,
        loss="squared",
        intrinsic_bias=True,
        landmarks=LandmarkSpace(Z, Phi, T, L),
    )
    assert set(np.flatnonzero(a0[:, 0] != 0)) <= set(Z)
    full = _objective(Kh, L, Y, a0, b0, ga, gi, "squared")
    np.testing.assert_allclose(full, info["objective"], rtol=1e-5)
    # brute force over alpha_Z = T eta: f = A v, v = (eta, b), A = [K_hat[:, Z] T, 1]
    n = Kh.shape[0]
    A = np.c_[Kh[:, Z] @ T, np.ones(n)]
    R = np.zeros((T.shape[1] + 1, T.shape[1] + 1))
    R[:-1, :-1] = T.T @ Kh[np.ix_(Z, Z)] @ T
    H = A[lab].T @ A[lab] + ga * R + gi * A.T @ L @ A
    v = np.linalg.solve(H, A[lab].T @ Y[lab, 0])
    np.testing.assert_allclose((Kh @ a0 + b0)[:, 0], A @ v, atol=1e-5)
