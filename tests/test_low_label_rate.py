"""Few labels, many points (issue 28): widths and graph terms that converge in n.

Each test compares against a brute-force computation (all pairwise distances)
or a closed form; the last one is the end-to-end regression the pieces exist for.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.graph import HEAT_SCALE_RATIO, resolve_graph_weight
from semisvm.kernels import knn_gamma, knn_scale_ratio
from semisvm.models._adaptive import paper_regularization


def _kth_sq(Q: np.ndarray, R: np.ndarray, k: int) -> np.ndarray:
    """Squared distance from each row of Q to its k-th nearest row of R (self = 0th)."""
    return np.sort(cdist(Q, R, "sqeuclidean"), axis=1)[:, k]


def _sample_rows(n: int, m: int) -> np.ndarray:
    return np.sort(np.random.default_rng(0).choice(n, size=m, replace=False))


def test_knn_gamma_small_n_is_the_all_points_rule():
    X = np.random.default_rng(1).normal(size=(300, 3))
    sigma2 = _kth_sq(X, X, 10).mean()
    assert knn_gamma(X, 10) == pytest.approx(1 / (2 * sigma2), rel=1e-10)


def test_knn_gamma_large_n_is_the_sample_rule():
    X = np.random.default_rng(2).normal(size=(900, 3))
    S = X[_sample_rows(900, 250)]
    sigma2 = _kth_sq(S, S, 10).mean()
    assert knn_gamma(X, 10, max_samples=250) == pytest.approx(
        1 / (2 * sigma2), rel=1e-10
    )


def test_knn_width_converges_as_n_grows():
    """Uniform square: the default width at n = 4,000 and 40,000 agrees (the
    all-point rule would shrink sigma^2 tenfold in 2-D)."""
    rng = np.random.default_rng(3)
    g_small = knn_gamma(rng.uniform(size=(4000, 2)), 10)
    g_large = knn_gamma(rng.uniform(size=(40000, 2)), 10)
    assert g_large == pytest.approx(g_small, rel=0.15)


def test_scale_ratio_brute_force_and_growth():
    X = np.random.default_rng(4).uniform(size=(1200, 2))
    assert knn_scale_ratio(X, 10) == 1.0  # n <= max_samples: nothing changes
    S = X[_sample_rows(1200, 300)]
    expected = _kth_sq(S, S, 10).mean() / _kth_sq(S, X, 10).mean()
    assert knn_scale_ratio(X, 10, max_samples=300) == pytest.approx(expected, rel=1e-10)
    # 2-D: the k-th neighbour distance^2 scales like 1/n, so rho ~ n / |S| = 4
    assert 3.0 < expected < 5.5


def test_graph_weight_auto_rule():
    assert resolve_graph_weight("auto", 1.0) == "local"
    assert resolve_graph_weight("auto", HEAT_SCALE_RATIO) == "heat"
    assert resolve_graph_weight("binary", 50.0) == "binary"
    assert resolve_graph_weight("local", 50.0) == "local"


def test_normalized_graph_weight_scales_with_rho_to_the_power():
    import scipy.sparse as sp

    from semisvm.graph import graph_laplacian

    W = sp.random(50, 50, density=0.2, random_state=0)
    W = W + W.T
    L = graph_laplacian(W)
    dbar = float(L.diagonal().mean())
    for p in (1, 2):
        _, gi = paper_regularization(
            "normalized", 1e-6, 2.0, n=50, weight_sum=3.0, L=L, power=p, scale=4.0
        )
        assert gi == pytest.approx(3.0 * 2.0 * 4.0**p / (50 * dbar**p), rel=1e-12)
    # past GRAPH_MEAN_POINTS the divisor stops growing (continuous at N_G)
    from semisvm.models._adaptive import GRAPH_MEAN_POINTS as NG

    at = [
        paper_regularization(
            "normalized", 1e-6, 2.0, n=m, weight_sum=3.0, L=L, power=1, scale=4.0
        )[1]
        for m in (NG - 1, NG, NG + 1, 40 * NG)
    ]
    assert at[0] == pytest.approx(3.0 * 2.0 * 4.0 / ((NG - 1) * dbar), rel=1e-12)
    assert at[1] == at[2] == at[3] == pytest.approx(3.0 * 2.0 * 4.0 / (NG * dbar))
    # the paper's raw weights ignore it
    assert paper_regularization(
        "paper", 1e-6, 2.0, n=50, weight_sum=3.0, L=L, power=1, scale=4.0
    ) == (1e-6, 2.0)


def test_small_data_unchanged_by_the_length_normalization():
    """n <= 2,000: rho = 1 and 'auto' = 'local', so the fit equals the explicit
    local-weight fit exactly (the defaults validated on small sets stay)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(300, noise=0.1, random_state=0)
    yy = np.full(300, -1)
    yy[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    a = LapRLS(gamma_a=1e-6, gamma_i=1.0).fit(X, yy)
    b = LapRLS(gamma_a=1e-6, gamma_i=1.0, graph_weight="local").fit(X, yy)
    assert a.graph_scale_ == 1.0 and a.graph_weight_ == "local"
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))


@pytest.mark.slow
def test_one_label_per_class_stays_right_as_n_grows():
    """Two moons, one label per class, n = 12,000 (the regime of issue 28; the
    previous defaults gave about 0.8 at 20,000): the default LapSVM is right on
    at least 99% of the points, and the graph is the heat one (rho >= 2)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(12000, noise=0.1, random_state=0)
    rng = np.random.default_rng(0)
    yy = np.full(y.size, -1)
    for c in (0, 1):
        i = rng.choice(np.flatnonzero(y == c))
        yy[i] = c
    m = LapSVM(options=SolverOptions(kernel_approximation="nystroem")).fit(X, yy)
    assert m.graph_weight_ == "heat" and m.graph_scale_ >= HEAT_SCALE_RATIO
    assert np.mean(m.transduction_ == y) >= 0.99


@pytest.mark.parametrize("gamma_a", [1e-1, 1e-3, 1e-6])
@pytest.mark.parametrize("est_cls", [LapSVM, LapRLS])
def test_rkhs_norm_bound_that_makes_low_label_rates_well_posed(est_cls, gamma_a):
    """docs/low_label_rates.rst: the zero function costs 1 in the normalized
    objective, so lambda_A ||g||_K^2 <= 1 for the kernel part g of the minimizer,
    at any n: g is Lipschitz with sqrt(2 gamma / lambda_A).  Fails if the solver
    does not reach a point below the zero function's objective or if the
    normalization of gamma_a is not the documented one."""
    rng = np.random.default_rng(0)
    n = 300
    t = rng.uniform(0, np.pi, n)
    X = np.c_[np.cos(t), np.sin(t)] + 0.1 * rng.normal(size=(n, 2))
    X[n // 2 :] = np.c_[1 - np.cos(t[n // 2 :]), 0.5 - np.sin(t[n // 2 :])]
    y = np.full(n, -1)
    y[0], y[-1] = 0, 1
    solver = "newton" if est_cls is LapSVM else "direct"
    est = est_cls(solver=solver, gamma_a=gamma_a, gamma_i=1.0).fit(X, y)
    K = np.exp(-est.gamma_ * cdist(est.X_fit_, est.X_fit_, "sqeuclidean"))
    a = np.asarray(est.dual_coef_, dtype=np.float64).reshape(n, -1)
    norm2 = float(np.einsum("ic,ij,jc->", a, K, a))
    assert gamma_a * norm2 <= 1.0 + 1e-6
    # the Lipschitz constant of g on the data, against the bound
    g = K @ a
    D = cdist(X, X)
    iu = np.triu_indices(n, 1)
    lip = float(np.max(np.abs(g[iu[0]] - g[iu[1]]).ravel() / D[iu]))
    assert lip <= np.sqrt(2 * est.gamma_ / gamma_a) * (1 + 1e-9)
    if gamma_a == 1e-1:  # the bound is not vacuous: the fit uses a good part of it
        assert gamma_a * norm2 > 1e-3
