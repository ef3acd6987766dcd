"""Property-based agreement of independent solvers on random small problems.

Each property compares two solvers that minimise the same objective by
different methods (or a solver with a closed form), on problems drawn by
hypothesis: random points, labels, graphs and regularisation weights.

* LapRLS: PCG with the squared loss (iterative) = the direct solve of Eq. 15.
* LapSVM primal: PCG (exact line search) = Newton (finite active-set method).
* LapSVM path: the path at a random lambda (including above lambda^0) = the
  dual QP (LIBSVM, polished) with ``gamma_A = lambda rho / 2``,
  ``gamma_I = lambda / 2``: same objective, same f where f is unique.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.solvers import laprls_direct, lapsvm_newton, lapsvm_pcg
from semisvm.solvers._path import PathWarning, lapsvm_path
from test_path import reference_dual

# derandomize: the same examples on every run (CI stays deterministic)
SETTINGS = dict(
    deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def problems(draw, n_max=40):
    """(K, L, Y, X) with Y in {-1, 0, +1}: two labeled classes, the rest unlabeled."""
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(16, n_max))
    n_lab = draw(st.integers(4, min(12, n - 4)))
    d = draw(st.integers(1, 4))
    normalized = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    lab = rng.choice(n, n_lab, replace=False)
    y = np.zeros(n)
    y[lab] = np.where(np.arange(n_lab) % 2 == 0, 1.0, -1.0)  # both classes present
    K = kernel_matrix(X, gamma=float(draw(st.floats(0.1, 2.0))))
    L = graph_laplacian(knn_graph(X, min(5, n - 1)), normalized=normalized)
    return K, L, y[:, None], X


weights = st.tuples(st.floats(-4, 0), st.floats(-3, 1)).map(
    lambda t: (10.0 ** t[0], 10.0 ** t[1])
)


@settings(max_examples=25, **SETTINGS)
@given(prob=problems(), w=weights)
def test_laprls_pcg_equals_direct_solve(prob, w):
    K, L, Y, _ = prob
    gamma_a, gamma_i = w
    ref = laprls_direct(K, Y, L=L, gamma_a=gamma_a, gamma_i=gamma_i)
    res = lapsvm_pcg(
        K,
        Y,
        L=L,
        gamma_a=gamma_a,
        gamma_i=gamma_i,
        loss="squared",
        tol=1e-12,
        max_iter=5000,
    )
    f_ref = K @ ref.alpha + ref.b
    f = K @ res.alpha + res.b
    scale = max(1.0, np.abs(f_ref).max())
    assert np.abs(f - f_ref).max() <= 1e-5 * scale
    assert res.objective[0] == pytest.approx(ref.objective[0], rel=1e-7, abs=1e-10)


@settings(max_examples=25, **SETTINGS)
@given(prob=problems(), w=weights)
def test_lapsvm_pcg_equals_newton(prob, w):
    K, L, Y, _ = prob
    gamma_a, gamma_i = w
    ref = lapsvm_newton(K, Y, L=L, gamma_a=gamma_a, gamma_i=gamma_i, max_iter=200)
    res = lapsvm_pcg(
        K, Y, L=L, gamma_a=gamma_a, gamma_i=gamma_i, tol=1e-12, max_iter=5000
    )
    # the same strictly convex objective in f: the minima agree
    assert res.objective[0] == pytest.approx(ref.objective[0], rel=1e-7, abs=1e-10)
    f_ref = K @ ref.alpha + ref.b
    f = K @ res.alpha + res.b
    assert np.abs(f - f_ref).max() <= 1e-4 * max(1.0, np.abs(f_ref).max())


def _path_vs_dual(K, L, Y, lam_u, rho=1e-3):
    """Objectives and decision values of the path and of the dual at one lambda."""
    t = Y[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PathWarning)
        [path] = lapsvm_path(K, L, Y[:, [0]], rho=rho)
    lo = path.lambdas[-1] * (1.0 if path.tail == "none" else 0.1)
    lam = float(np.exp(np.log(lo) + lam_u * (np.log(2 * path.lambdas[0]) - np.log(lo))))
    beta, beta0 = path.expansion(lam)
    # independent reference: LIBSVM on the dual QP, its active set re-solved in
    # double precision (tests/test_path.py)
    try:
        _, coef_ref, b_ref = reference_dual(K, L.toarray(), t, lam, rho=rho)
    except AssertionError:  # the reference could not polish LIBSVM to a KKT point
        assume(False)
    lab = t != 0

    def objective(coef, b):
        # sum of hinges + (lambda / 2) coef^T (rho K + K L K) coef
        f = K @ coef + b
        Kc = K @ coef
        reg = rho * coef @ Kc + Kc @ (L @ Kc)
        return np.maximum(0, 1 - t[lab] * f[lab]).sum() + 0.5 * lam * reg, f

    obj, f = objective(beta, beta0)
    obj_ref, f_ref = objective(coef_ref, b_ref)
    # with every alpha at a bound (above lambda^0, or on a segment with an empty
    # elbow) the offset is not unique; a free alpha pins it
    a = path.coefficients(lam)[0][0]
    unique = bool(np.any((a > 1e-8) & (a < 1 - 1e-8)))
    return obj, obj_ref, f, f_ref, unique


def _check(obj, obj_ref, f, f_ref, unique):
    # the reference is polished to KKT residuals of ~1e-8; both sides factor
    # rho I + L K (rho = 1e-3), whose conditioning limits agreement to ~1e-5
    assert obj == pytest.approx(obj_ref, rel=1e-4, abs=1e-9)
    if unique:
        assert np.abs(f - f_ref).max() <= 1e-6 * max(1.0, np.abs(f_ref).max())


@settings(max_examples=20, **SETTINGS)
@given(prob=problems(), lam_u=st.floats(0.05, 1.0))
def test_path_equals_dual_at_random_lambda(prob, lam_u):
    K, L, Y, _ = prob
    _check(*_path_vs_dual(K, L, Y, lam_u))
