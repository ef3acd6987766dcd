"""Solvers without a bias (``fit_intercept=False``), as the authors' code runs them.

Melacci's ``lapsvmp`` (``UseBias = 0``, its default and the only setting it allows
with the normalized Laplacian) minimises Eq. 7 with b = 0.  The references here are
independent: a dense solve of the stationarity system for LapRLS, and for LapSVM a
fixed point of the error-vector set checked by brute-force KKT conditions.
"""

from __future__ import annotations

import numpy as np
import pytest

from semisvm.graph import graph_laplacian, knn_graph_from_kernel
from semisvm.kernels import kernel_matrix
from semisvm.solvers._newton import laprls_direct, lapsvm_newton
from semisvm.solvers._pcg import lapsvm_pcg


def _problem(seed=0, n=60, l=10, C=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    gamma = 0.5
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    L = graph_laplacian(knn_graph_from_kernel(K, gamma, 6), normalized=True, power=2)
    Y = np.zeros((n, C))
    for c in range(C):
        Y[:l, c] = np.where(rng.random(l) < 0.5, 1.0, -1.0)
        Y[0, c], Y[1, c] = 1.0, -1.0
    return K, L.toarray() if hasattr(L, "toarray") else np.asarray(L), Y


@pytest.mark.parametrize("C", [1, 3])
def test_laprls_without_bias_solves_the_normal_equations(C):
    K, L, Y = _problem(C=C)
    ga, gi = 1e-2, 0.3
    res = laprls_direct(K, Y, L=L, gamma_a=ga, gamma_i=gi, fit_intercept=False)
    assert np.all(res.b == 0)
    # gradient of 1/2 (||J(K a) - y||^2 + ga a'Ka + gi a'KLKa) is K (J'(JKa - y) + ga a + gi LKa)
    n = K.shape[0]
    lab = np.flatnonzero(Y[:, 0] != 0)
    Jt = np.zeros((n, n))
    Jt[lab, lab] = 1.0
    ref = np.linalg.solve(Jt @ K + ga * np.eye(n) + gi * L @ K, Jt @ Y)
    np.testing.assert_allclose(res.alpha, ref, rtol=1e-8, atol=1e-10)
    # and it differs from the solution with a bias (the test can fail)
    with_b = laprls_direct(K, Y, L=L, gamma_a=ga, gamma_i=gi, fit_intercept=True)
    assert np.abs(with_b.b).max() > 1e-6


def test_newton_without_bias_meets_kkt_and_pcg_agrees():
    K, L, Y = _problem(seed=3)
    ga, gi = 1e-2, 0.3
    newton = lapsvm_newton(K, Y, L=L, gamma_a=ga, gamma_i=gi, fit_intercept=False)
    assert newton.converged.all() and np.all(newton.b == 0)
    a = newton.alpha[:, 0]
    y = Y[:, 0]
    lab = np.flatnonzero(y != 0)
    f = K @ a
    # gradient in alpha of the squared-hinge objective with b = 0, times K^{-1}
    g = ga * a + gi * L @ f
    E = lab[y[lab] * f[lab] < 1]
    g[E] += f[E] - y[E]
    np.testing.assert_allclose(K @ g, 0.0, atol=1e-8)
    pcg = lapsvm_pcg(
        K, Y, L=L, gamma_a=ga, gamma_i=gi, fit_intercept=False, max_iter=2000, tol=1e-12
    )
    assert np.all(pcg.b == 0)
    np.testing.assert_allclose(K @ pcg.alpha, K @ newton.alpha, atol=1e-6)
    np.testing.assert_allclose(pcg.objective, newton.objective, rtol=1e-9)
