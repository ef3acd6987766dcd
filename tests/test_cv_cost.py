"""The cost cuts of the LOO search (issue 27) compute exactly what the plain
search computes: the kNN adjacency shared by the Laplacians of one (kernel,
n_neighbors), the kernel kept between the rounds and for the refit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_moons

from semisvm import LapRLS, LapSVM
from semisvm.kernels import kernel_matrix
from semisvm.model_selection import LapRLSCV, LapSVMCV, _search
from semisvm.models._adaptive import _mass_shift
from semisvm.models._params import fit_params
from semisvm.models._problem import (
    build_laplacian,
    prepare_operators,
    resolve_graph_weight,
)
from semisvm.solvers._loo import SpectralLOO, balanced_loo, loo_features
from semisvm.solvers._newton import laprls_direct


def _moons(n=200, per=6, seed=0):
    X, yt = make_moons(n, noise=0.12, random_state=seed)
    rng = np.random.default_rng(seed)
    y = np.full(n, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), per, replace=False)] = c
    return X, y, yt


def _blobs(seed=5):
    X, yt = make_classification(
        240, n_features=12, n_informative=5, n_clusters_per_class=3, random_state=seed
    )
    rng = np.random.default_rng(seed)
    y = np.full(yt.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), 12, replace=False)] = c
    return X, y, yt


def _scorer(cls, X, y):
    cv = cls()
    template = cv._template()
    kconfs, gconfs = cv._configs(template, X)
    scorer = _search._LOOScorer(
        template,
        X,
        y,
        sup_pairs=[(1e-6, 0.0)],
        graph_pairs=[(1e-3, 1.0)],
        default_pair=(1e-6, 1.0),
        progress=_search._Progress(0, "test", 0),
        max_neighbors=max(g["n_neighbors"] for g in gconfs),
    )
    return scorer, kconfs, gconfs


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
def test_shared_adjacency_gives_the_estimators_own_operators(cls):
    # every (kernel, graph) of the search: the Laplacian from the shared kNN
    # adjacency and the kept K are those the estimator's fit builds itself
    X, y, _ = _moons()
    scorer, kconfs, gconfs = _scorer(cls, X, y)
    V = np.random.default_rng(0).normal(size=(X.shape[0], 3))
    for kc in kconfs:
        est, ops = scorer.kernel(kc)
        for gc in gconfs:
            _, L, scale, weight = scorer.graph(est, ops, gc)
            ref = fit_params(clone(scorer.template).set_params(**kc, **gc))
            own = prepare_operators(ref, X, need_graph=True)
            np.testing.assert_array_equal(ops.K, own.K)
            np.testing.assert_array_equal(L @ V, own.L @ V)
            assert scale == own.graph_scale
            assert weight == own.graph_weight
    # one K per kernel, one adjacency per (kernel, n_neighbors); the linear
    # kernel's graphs read off one kNN search of X (the largest k's)
    assert scorer._knn is not None and scorer._knn[0].shape[1] == 21
    assert scorer.n_kernels == len(kconfs)
    assert len(scorer._adjacency) == len(kconfs) * len(
        {g["n_neighbors"] for g in gconfs}
    )


def _brute_balanced_loo(K, L, lab, Yl, ga, gi, target):
    """LapRLS refitted without each label, balanced on the unlabeled points."""
    n = K.shape[0]
    unl = np.setdiff1d(np.arange(n), lab)
    Y = np.zeros((n, 1))
    Y[lab] = Yl
    out = np.empty(lab.size)
    for t, i in enumerate(lab):
        Y2 = Y.copy()
        Y2[i] = 0.0
        r = laprls_direct(K, Y2, L=L, gamma_a=ga, gamma_i=gi)
        F = (K @ r.alpha + r.b)[:, 0]
        out[t] = F[i] + _mass_shift(F[unl], target)
    return out


@pytest.mark.parametrize(
    "gc",
    [
        {"n_neighbors": 5, "normalize_laplacian": True, "laplacian_power": 2},
        {"n_neighbors": 20, "normalize_laplacian": False, "laplacian_power": 1},
    ],
)
def test_loo_on_the_shared_operators_equals_refits(gc):
    # the closed-form held-out outputs on the search's shared K and Laplacian
    # (a graph read off the adjacency built for another Laplacian first) equal
    # refits without each label
    X, y, _ = _moons(n=120, per=5, seed=4)
    scorer, kconfs, _ = _scorer(LapRLSCV, X, y)
    est, ops = scorer.kernel(kconfs[1])
    K = ops.K
    other = dict(gc, normalize_laplacian=not gc["normalize_laplacian"])
    scorer.graph(est, ops, other)  # builds the shared adjacency
    _, L, _, _ = scorer.graph(est, ops, gc)
    lab = np.flatnonzero(y != -1)
    unl = np.flatnonzero(y == -1)
    Yl = np.where(y[lab] == 1, 1.0, -1.0)[:, None]
    Phi = loo_features(lambda idx: K[:, idx], X.shape[0], lab)
    eng = SpectralLOO(Phi, L, lab, Yl, unlabeled_idx=unl)
    for ga, gi in [(1e-2, 1e-3), (1e-4, 1e-1)]:
        O, FU, D = eng.fold_outputs(ga, gi, "squared")
        O_bal, _ = balanced_loo(O, FU, D, np.array([0.0]))
        ref = _brute_balanced_loo(K, L.tocsr(), lab, Yl, ga, gi, 0.0)
        np.testing.assert_allclose(O_bal[:, 0], ref, atol=1e-6 * np.abs(ref).max())


def _unshared(monkeypatch):
    """The search without any sharing: every kernel and graph built afresh."""

    def kernel(self, kc):
        est = fit_params(clone(self.template).set_params(**kc))
        return est, prepare_operators(est, self.X, need_graph=False)

    def graph(self, est, ops, gc):
        from semisvm.models._options import resolved_options
        from semisvm.models._problem import graph_scale

        e_g = est.replace(**gc)
        scale = graph_scale(self.X, e_g.kernel, gc["n_neighbors"])
        weight = resolve_graph_weight(e_g.graph_weight, scale)
        L = build_laplacian(
            self.X,
            ops.K,
            kernel=e_g.kernel,
            gamma_=ops.gamma_,
            n_neighbors=gc["n_neighbors"],
            graph_weight=weight,
            heat_t=resolved_options(e_g).heat_t,
            normalize_laplacian=gc["normalize_laplacian"],
            laplacian_power=gc["laplacian_power"],
        )
        return e_g, L, scale, weight

    monkeypatch.setattr(_search._LOOScorer, "kernel", kernel)
    monkeypatch.setattr(_search._LOOScorer, "graph", graph)
    monkeypatch.setattr(_search._LOOScorer, "refit_cache", lambda self, est: None)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
@pytest.mark.parametrize("problem", [_moons, _blobs])
def test_shared_search_chooses_as_the_unshared_one(cls, problem, monkeypatch):
    X, y, _ = problem()
    shared = cls().fit(X, y)
    # each kernel of round 1 built once, the defaults' kept for round 2
    r2 = {(p["kernel"], p.get("gamma")) for p in shared.cv_results_["params"]}
    n_kc = len(cls()._configs(cls()._template(), X)[0])
    assert shared._n_kernel_builds == n_kc + len(r2) - 1
    with monkeypatch.context() as m:
        _unshared(m)
        plain = cls().fit(X, y)
    assert shared.best_params_ == plain.best_params_
    assert shared.selection_ == plain.selection_
    assert shared.cv_results_["params"] == plain.cv_results_["params"]
    for key in ("mean_test_loss", "mean_test_score", "rank_test_score"):
        np.testing.assert_array_equal(shared.cv_results_[key], plain.cv_results_[key])
    # the refit through the factorization of I + rLK: the same minimiser
    np.testing.assert_allclose(
        shared.decision_function(X), plain.decision_function(X), rtol=1e-8, atol=1e-10
    )


def test_cv_template_is_the_base_estimator_with_its_defaults():
    # the search fits and refits what the user gets from LapSVM() / LapRLS():
    # the same solver and stopping rule (LapSVM: PCG, early stop "auto"), with
    # estimator_params on top and the search's seed
    for cvcls, base in ((LapSVMCV, LapSVM), (LapRLSCV, LapRLS)):
        assert (
            cvcls(random_state=4)._template().get_params()
            == base(random_state=4).get_params()
        )
    kept = LapSVMCV(estimator_params={"solver": "newton"})._template()
    assert kept.solver == "newton" and kept.early_stopping == "auto"


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_one_factorization_per_ratio_equals_the_spectral_engine(loss):
    # SpectralLOO(spectral='ratio'): pairs with the same gamma_i / gamma_a share
    # a Cholesky solve of I + rho B; the held-out outputs are the
    # eigendecomposition's (and brute force's, test_loo_on_the_shared_...)
    X, y, _ = _moons(n=150, per=8, seed=6)
    scorer, kconfs, gconfs = _scorer(LapRLSCV, X, y)
    est, ops = scorer.kernel(kconfs[0])
    K = ops.K
    _, L, _, _ = scorer.graph(est, ops, gconfs[3])
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    Yl = np.where(y[lab] == 1, 1.0, -1.0)[:, None]
    Phi = loo_features(lambda idx: K[:, idx], X.shape[0], lab, max_features=100)
    kw = dict(unlabeled_idx=unl, weights=np.linspace(0.5, 2.0, lab.size))
    eig = SpectralLOO(Phi, L, lab, Yl, spectral=True, **kw)
    rat = SpectralLOO(Phi, L, lab, Yl, spectral="ratio", **kw)
    pairs = [(1e-3, 1e-3), (1e-2, 1e-2), (1e-4, 1e-1), (1e-1, 1e1), (1e-2, 0.0)]
    for ga, gi in pairs:
        outs = zip(
            eig.fold_outputs(ga, gi, loss), rat.fold_outputs(ga, gi, loss), strict=True
        )
        for a, b in outs:
            np.testing.assert_allclose(
                np.asarray(b), np.asarray(a), rtol=1e-7, atol=1e-9 * np.abs(a).max()
            )
    # the first two pairs share one ratio: 3 factorizations for 4 graph pairs,
    # and one product with the labeled and the unlabeled rows per ratio (and for
    # the supervised pair, rho = 0)
    assert len(rat._factor) == 3
    assert sorted(rat._unit) == sorted(
        (w, rho) for w in ("A", "U") for rho in (0.0, 1.0, 1e3, 1e2)
    )


def test_round_two_rescores_the_best_pairs_of_each_graph():
    # round 2 re-scores, per graph, the ROUND2_PAIRS pairs round 1 ranks first
    # (ties in grid order) and, on the defaults' graph, the defaults' pair
    class Ev:
        def __init__(self, pairs, scores):
            self.pairs, self.scores = pairs, np.asarray(scores, dtype=float)

    grid = [(a, i) for a in (1e-6, 1e-3, 1.0) for i in (1e-3, 1.0, 10.0)]
    rng = np.random.default_rng(0)
    k1 = {"kernel": "rbf", "gamma": 1.0}
    k2 = {"kernel": "linear"}
    g = [{"n_neighbors": k} for k in (5, 10, 20)]
    rows = [
        ({**k1, "graph": None}, Ev([(1e-6, 0.0)], [0.5])),
        # the defaults' graph: its best pairs exclude (1e-6, 1.0)
        ({**k1, "graph": g[0]}, Ev(grid, [0.1, 9, 9, 0.2, 0.3, 0.4, 0.5, 9, 9])),
        ({**k1, "graph": g[1]}, Ev(grid, rng.uniform(0.6, 1.0, 9))),
        ({**k2, "graph": g[2]}, Ev(grid, [0.05] * 9)),
        ({**k2, "graph": g[1]}, Ev(grid, rng.uniform(0.1, 0.2, 9))),
        ({**k2, "graph": g[0]}, Ev(grid, rng.uniform(0.3, 0.4, 9))),
        ({**k1, "graph": g[2]}, Ev(grid, rng.uniform(2.0, 3.0, 9))),
    ]
    out = _search._round2_kernels(rows, (1e-6, 1.0), top=3)
    key1, key2 = tuple(sorted(k1.items())), tuple(sorted(k2.items()))
    assert list(out) == [key1, key2]
    # kernel 1: the supervised row (all pairs) and the defaults' graph with its
    # three best pairs in grid order and the defaults' pair in front; rows 2 and
    # 6 are not among the three best others
    assert out[key1] == [
        (None, None),
        (g[0], [(1e-6, 1.0), (1e-6, 1e-3), (1e-3, 1e-3), (1e-3, 1.0)]),
    ]
    # kernel 2: the three best other graphs; equal scores keep grid order
    assert [gc for gc, _ in out[key2]] == [g[2], g[1], g[0]]
    assert out[key2][0][1] == grid[:3]
    for gc, pairs in out[key2]:
        ev = next(
            e for c, e in rows if c.get("kernel") == "linear" and c["graph"] == gc
        )
        best = np.sort(ev.scores)[:3]
        assert sorted(ev.scores[[grid.index(p) for p in pairs]]) == list(best)


def test_gram_of_the_second_power_reuses_the_first():
    # B = Phi^T L^p Phi: (L Phi)^T (L Phi) for p = 2 with the L Phi of p = 1,
    # (L Phi)^T (L^2 Phi) for p = 3, (L^2 Phi)^T (L^2 Phi) for p = 4, the
    # triangular product for the exact root (every point a landmark); each
    # against the explicit power of the sparse Laplacian
    X, y, _ = _moons(n=150, per=8, seed=7)
    scorer, kconfs, gconfs = _scorer(LapSVMCV, X, y)
    est, ops = scorer.kernel(kconfs[0])
    K = ops.K
    lab = np.flatnonzero(y != -1)
    extra = [dict(gconfs[0], laplacian_power=p) for p in (3, 4, 1)]
    for r in (60, 150):
        Phi = loo_features(lambda idx: K[:, idx], X.shape[0], lab, max_features=r)
        for gc in gconfs[:4] + extra:
            _, L, _, _ = scorer.graph(est, ops, gc)
            Lp = L.base.tocsr()
            for _ in range(gc["laplacian_power"] - 1):
                Lp = Lp @ L.base.tocsr()
            ref = Phi.T @ (Lp @ Phi)
            B = scorer.gram(Phi, L, gc)
            np.testing.assert_allclose(
                B, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max()
            )


@pytest.mark.parametrize("power", [1, 2])
def test_intrinsic_bias_engine_borders_the_search_gram(power):
    # the normalized Laplacian with the intrinsic bias needs a second engine on
    # [Phi, 1]: its graph Gram bordered from the search's B equals the product
    from semisvm.graph import graph_laplacian
    from semisvm.models._autoreg import _loo_engines

    X, y, _ = _moons(n=150, per=8, seed=8)
    scorer, kconfs, gconfs = _scorer(LapRLSCV, X, y)
    est, ops = scorer.kernel(kconfs[0])
    K = ops.K
    gc = dict(gconfs[0], normalize_laplacian=True, laplacian_power=power)
    _, L, _, _ = scorer.graph(est, ops, gc)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    Yl = np.where(y[lab] == 1, 1.0, -1.0)[:, None]
    Phi = loo_features(lambda idx: K[:, idx], X.shape[0], lab, max_features=60)
    B = scorer.gram(Phi, L, gc)
    assert B is not None
    kw = dict(spectral="ratio", intrinsic_bias=True)
    _, shared = _loo_engines(Phi, L, lab, Yl, None, unl, gram=B, **kw)
    _, plain = _loo_engines(Phi, L, lab, Yl, None, unl, gram=None, **kw)
    Lp = graph_laplacian(
        scorer._adjacency[next(iter(scorer._adjacency))],
        normalized=True,
        power=power,
    )
    P1 = np.c_[Phi, np.ones(X.shape[0])]
    ref = P1.T @ (Lp @ P1)
    for eng in (shared, plain):
        np.testing.assert_allclose(
            eng.B, 0.5 * (ref + ref.T), rtol=1e-9, atol=1e-11 * np.abs(ref).max()
        )
    for ga, gi in [(1e-3, 1e-2), (1e-1, 1.0)]:
        for a, b in zip(
            shared.fold_outputs(ga, gi, "squared"),
            plain.fold_outputs(ga, gi, "squared"),
            strict=True,
        ):
            np.testing.assert_allclose(
                np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-9 * np.abs(b).max()
            )


def _balanced_by_brentq(O, FU, D, targets):
    """The held-out outputs balanced column by column with the library's scalar
    root (brentq): the definition :func:`balanced_loo` computes faster."""
    t = np.broadcast_to(np.asarray(targets, dtype=float), (O.shape[1],))
    out = np.array(O, dtype=float)
    for c in range(O.shape[1]):
        Dc = np.asarray(D[c])
        for i in range(O.shape[0]):
            out[i, c] += _mass_shift(FU[:, c] + Dc[:, i], t[c])
    return out


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_balanced_loo_equals_the_root_of_every_held_out_fit(loss):
    """The search's balance of the held-out fits (the full fit's shift by one
    sort, every held-out fit's by Newton from a first-order start, LapRLS's
    moves read off their rank-one factors) gives each fit's own root: the same
    numbers as the blocks of ``D`` balanced one by one, to rounding."""
    from semisvm.solvers._loo import RankOneDeltas

    X, y, _ = _blobs()
    rng = np.random.default_rng(2)
    classes = rng.integers(0, 3, size=y.size)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    Yl = np.where(classes[lab][:, None] == np.arange(3), 1.0, -1.0)
    scorer, kconfs, gconfs = _scorer(LapRLSCV, X, y)
    est, ops = scorer.kernel(kconfs[0])
    K = ops.K
    _, L, _, _ = scorer.graph(est, ops, gconfs[0])
    Phi = loo_features(lambda idx: K[:, idx], X.shape[0], lab, max_features=100)
    eng = SpectralLOO(Phi, L, lab, Yl, unlabeled_idx=unl, spectral="ratio")
    targets = np.array([-0.4, -0.3, -0.5])
    for ga, gi in [(1e-3, 1e-2), (1e-2, 1.0), (1e-1, 0.0)]:
        O, FU, D = eng.fold_outputs(ga, gi, loss)
        assert isinstance(D, RankOneDeltas) == (loss == "squared")
        ref = _balanced_by_brentq(O, FU, D, targets)
        tol = 1e-9 * np.abs(ref).max()
        for Dx in (D, [np.asarray(D[c]) for c in range(len(D))]):
            O_bal, FU_bal = balanced_loo(O, FU, Dx, targets)
            np.testing.assert_allclose(O_bal, ref, rtol=0, atol=tol)
        shifts = [_mass_shift(FU[:, c], targets[c]) for c in range(3)]
        np.testing.assert_allclose(FU_bal, FU + shifts, rtol=0, atol=tol)


def test_sorted_mass_shifts_equal_newton():
    """The full fit's shifts by one sort per column are Newton's roots (ties,
    a constant column, targets near -1 and 1 included)."""
    from semisvm.solvers._loo import mass_shifts, sorted_mass_shifts

    rng = np.random.default_rng(4)
    V = rng.normal(size=(250, 8)) * rng.uniform(1e-2, 4, 8) + rng.normal(size=8)
    V[:, 0] = 0.3  # every output equal
    V[:, 1] = np.round(V[:, 1])  # many ties
    t = np.array([-0.8, -0.99, -0.5, 0.0, 0.3, 0.95, -1.0, 1.0])
    ref = np.array([_mass_shift(V[:, k], t[k]) for k in range(8)])
    scale = np.abs(V).max()
    np.testing.assert_allclose(sorted_mass_shifts(V, t), ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        sorted_mass_shifts(V, t), mass_shifts(V, t), rtol=0, atol=1e-12 * scale
    )


def test_nested_neighbors_give_the_graph_of_their_own_search():
    """The graph of k neighbours read off a search for more is the graph of
    its own search (every weight); with ties at the k-th neighbour (integer
    coordinates) the larger search is not used."""
    from semisvm.graph import knn_graph
    from semisvm.graph._graph import knn_query, nested_neighbors

    X, _, _ = _moons(300)
    big = knn_query(X, 20)
    for k in (5, 10, 20):
        nb = nested_neighbors(X, big, k)
        assert nb is not None
        for w in ("binary", "heat", "local"):
            A = knn_graph(X, k, weight=w, neighbors=nb)
            np.testing.assert_array_equal(
                A.toarray(), knn_graph(X, k, weight=w).toarray()
            )
    Xi = np.round(np.random.default_rng(0).normal(size=(300, 3)) * 2.0)
    assert nested_neighbors(Xi, knn_query(Xi, 20), 5) is None
    with pytest.raises(ValueError, match="6 columns"):
        knn_graph(X, 5, neighbors=big)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factor_columns_are_the_kernel_columns(dtype):
    """The columns read from a Nyström factor's C equal the kernel's own, for
    landmark rows, other rows and a mix (order kept)."""
    from semisvm.kernels._nystroem import NystroemFactor
    from semisvm.models._problem import FactorColumns

    X = np.random.default_rng(3).normal(size=(3000, 4)).astype(dtype)
    f = NystroemFactor(100, gamma=0.3, include=np.arange(7)).fit(X)
    calls = []

    def compute(idx):
        calls.append(idx.size)
        return kernel_matrix(X, X[idx], gamma=0.3).astype(np.float64)

    cols = FactorColumns(f.C_, f.landmark_indices_, compute)
    others = np.setdiff1d(np.arange(3000), f.landmark_indices_)
    idx = np.r_[f.landmark_indices_[[5, 0, 40]], others[[2, 9]], 3]
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(cols(idx), compute(idx), atol=tol)
    assert calls == [2, 6]  # the two non-landmark columns computed, then the check
    A = cols(f.landmark_indices_[:20])
    assert A.dtype == np.float64 and calls == [2, 6]
    np.testing.assert_allclose(A, compute(f.landmark_indices_[:20]), atol=tol)


def test_loo_features_draw_their_landmarks_among_the_preferred_rows():
    """With ``columns.preferred`` the LOO landmarks are the labeled rows and
    others drawn among the preferred ones; with too few of those, among all."""
    X = np.random.default_rng(4).normal(size=(900, 3))
    K = kernel_matrix(X, gamma=0.5)
    lab = np.arange(10)
    seen = []

    class Columns:
        def __init__(self, preferred):
            self.preferred = preferred

        def __call__(self, idx):
            seen.append(np.asarray(idx))
            return K[:, idx]

    pool = np.arange(300, 600)
    Phi = loo_features(Columns(pool), 900, lab, max_features=100)
    assert Phi.shape == (900, 100)
    np.testing.assert_array_equal(seen[-1][:10], lab)
    assert np.isin(seen[-1][10:], pool).all() and np.unique(seen[-1]).size == 100
    loo_features(Columns(pool[:50]), 900, lab, max_features=100)
    assert not np.isin(seen[-1][10:], pool[:50]).all()
