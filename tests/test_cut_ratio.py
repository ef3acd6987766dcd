"""The unlabeled points' evidence of the auto rule (issue 27): the cut ratio of
the two candidates' labels on the graph and the threshold graded by it.

Every quantity is checked against an independent computation: the engine's
full-fit outputs against the primal problem solved by a general optimizer, the
edges against the Laplacian's pattern, the cut fractions against the
estimator's own refits of both candidates, the threshold against its closed
form.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.datasets import make_moons

from semisvm import LapRLS, LapSVM
from semisvm.graph import graph_laplacian, knn_graph
from semisvm.models._autoreg import (
    CUT_SLOPE,
    Z_MAX,
    Z_SWITCH,
    LOOEvidence,
    choose,
    cut_ratio,
    graded_threshold,
    graph_edges,
)
from semisvm.solvers._loo import SpectralLOO


def _problem(seed=0, n=60, r=12, l=14, C=1):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, r))
    X = rng.normal(size=(n, 2))
    L = graph_laplacian(knn_graph(X, 6), normalized=False)
    lab = np.sort(rng.choice(n, l, replace=False))
    cls = np.arange(l) % max(C, 2)
    Y = (
        np.where(cls == 1, 1.0, -1.0)[:, None]
        if C == 1
        else np.where(cls[:, None] == np.arange(C), 1.0, -1.0)
    )
    return Phi, L, lab, Y


def _primal(Phi, L, lab, y, ga, gi, loss, ones=False):
    """min_w,b sum_i loss(y_i, phi_i w + b) + ga |w|^2 + gi f^T L f by BFGS."""
    n, r = Phi.shape
    Ld = L.toarray()

    def parts(v):
        w, b = v[:r], v[r]
        f = Phi @ w + b
        res = y - f[lab] if loss == "squared" else np.maximum(0, 1 - y * f[lab])
        g = f if ones else Phi @ w  # the graph sees the bias only with `ones`
        return w, f, res, g

    def obj(v):
        w, f, res, g = parts(v)
        return res @ res + ga * w @ w + gi * g @ Ld @ g

    def grad(v):
        w, f, res, g = parts(v)
        d = np.zeros(n)
        d[lab] = -2 * res if loss == "squared" else -2 * y * res
        Lg = 2 * gi * (Ld @ g)
        gw = Phi.T @ d + 2 * ga * w + Phi.T @ Lg
        gb = d.sum() + (Lg.sum() if ones else 0.0)
        return np.r_[gw, gb]

    v = minimize(obj, np.zeros(r + 1), jac=grad, method="BFGS", tol=1e-12).x
    return Phi @ v[:r] + v[r]


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
@pytest.mark.parametrize("spectral", [True, False, "ratio"])
@pytest.mark.parametrize("gi", [0.0, 0.3])
def test_engine_outputs_equal_the_primal_optimum(loss, spectral, gi):
    """The outputs of the fit on every label at arbitrary rows are the primal
    optimum's: a wrong basis change, a missing intercept correction or a stale
    error set would move them."""
    Phi, L, lab, Y = _problem()
    ga = 0.7
    eng = SpectralLOO(Phi, L, lab, Y, spectral=spectral)
    rows = np.arange(0, 60, 3)
    F = eng.outputs(Phi[rows], ga, gi, loss)
    ref = _primal(Phi, L, lab, Y[:, 0], ga, gi, loss)[rows]
    np.testing.assert_allclose(F[:, 0], ref, atol=1e-5 * np.abs(ref).max())
    # after fold_outputs (which caches the error sets) the same numbers
    unl = np.setdiff1d(np.arange(60), lab)
    eng2 = SpectralLOO(Phi, L, lab, Y, spectral=spectral, unlabeled_idx=unl)
    eng2.fold_outputs(ga, gi, loss)
    np.testing.assert_allclose(eng2.outputs(Phi[rows], ga, gi, loss), F, atol=1e-9)


def test_engine_outputs_with_the_intrinsic_bias_equal_the_primal_optimum():
    """Features [Phi, 1] with the bias out of the ambient penalty and inside the
    graph term (the estimators' normalized-Laplacian model)."""
    Phi, _, lab, Y = _problem(seed=1)
    rng = np.random.default_rng(1)
    L = graph_laplacian(knn_graph(rng.normal(size=(60, 2)), 6), normalized=True)
    ga, gi = 0.5, 0.4
    eng = SpectralLOO(
        np.c_[Phi, np.ones(60)],
        L,
        lab,
        Y,
        fit_intercept=False,
        ambient_mask=np.r_[np.ones(12), 0.0],
    )
    rows = np.arange(1, 60, 4)
    for loss in ("squared", "squared_hinge"):
        F = eng.outputs(np.c_[Phi[rows], np.ones(rows.size)], ga, gi, loss)
        # the bias b is coefficient r+1, penalised only through the graph term
        ref = _primal(Phi, L, lab, Y[:, 0], ga, gi, loss, ones=True)[rows]
        np.testing.assert_allclose(F[:, 0], ref, atol=1e-5 * np.abs(ref).max())


def test_graph_edges_are_the_laplacians_off_diagonal_pattern():
    X = np.random.default_rng(2).normal(size=(50, 3))
    W = knn_graph(X, 5)
    L = graph_laplacian(W, normalized=True)
    i, j = graph_edges(L, 50)
    got = set(zip(i.tolist(), j.tolist(), strict=True))
    Wc = sp.coo_array(W)
    want = {(a, b) for a, b in zip(Wc.row, Wc.col, strict=True) if a != b}
    assert got == want
    # above max_rows: the edges of evenly spaced rows only, each a real edge
    i, j = graph_edges(L, 50, max_rows=10)
    assert np.unique(i).size == 10
    assert all((a, b) in want for a, b in zip(i.tolist(), j.tolist(), strict=True))
    assert graph_edges(None, 50) is None


def _evidence_with_labels(labels, edges, z):
    """Two candidates (defaults, alternative) whose per-point criteria differ by
    mean z standard errors, with fixed labels on the rows."""
    rng = np.random.default_rng(4)
    base = rng.random(30)
    noise = rng.normal(size=30)
    noise -= noise.mean()
    noise /= noise.std(ddof=1) / np.sqrt(30)
    pp = [base, base - z - noise]
    return LOOEvidence(
        [(1e-6, 1.0), (1e-3, 0.0)],
        pp,
        np.array([p.mean() for p in pp]),
        np.array([0.2, 0.2]),
        10,
        0,
        0.0,
        point_errors=[np.zeros(30), np.zeros(30)],
        labelers=[lambda idx, lab=lab: lab[idx] for lab in labels],
        edges=[edges, None],
    )


def test_cut_ratio_counts_cut_edges():
    # a path 0-1-2-3-4-5 (both ways): the defaults cut one edge, the other three
    i = np.r_[0:5, 1:6]
    j = np.r_[1:6, 0:5]
    lab_def = np.array([0, 0, 0, 1, 1, 1])
    lab_alt = np.array([0, 1, 0, 1, 0, 0])
    ev = _evidence_with_labels([lab_def, lab_alt], (i, j), 1.0)
    cut = cut_ratio(ev, 0, 1)
    assert cut["cut_default"] == pytest.approx(1 / 5)
    assert cut["cut_alternative"] == pytest.approx(4 / 5)
    assert cut["cut_ratio"] == pytest.approx(4.0)
    # no cut by the defaults: inf (the cap Z_MAX keeps the switch possible)
    ev = _evidence_with_labels([np.zeros(6, int), lab_alt], (i, j), 1.0)
    assert cut_ratio(ev, 0, 1)["cut_ratio"] == np.inf
    assert graded_threshold(np.inf) == Z_MAX


def test_graded_threshold_closed_form():
    assert CUT_SLOPE == 6.0
    for r in (0.5, 1.0, 1.1, 1.3, 2.0, 3.0, 100.0):
        assert graded_threshold(r) == pytest.approx(
            min(Z_MAX, max(0.0, CUT_SLOPE * np.log(r)))
        )
    # the fixed threshold is met at r = exp(Z_SWITCH / a)
    assert graded_threshold(np.exp(Z_SWITCH / CUT_SLOPE)) == pytest.approx(Z_SWITCH)


@pytest.mark.parametrize(
    "m, z, switch",
    [(0, 0.3, True), (0, -0.1, False), (1, 1.0, False), (1, 1.3, True),
     (5, 4.3, False), (5, 4.6, True), (None, 4.9, False), (None, 5.1, True)],
)  # fmt: skip
def test_choose_graded_switches_exactly_above_a_ln_r(m, z, switch):
    """A path of 1,000 nodes; the defaults cut 9 edges (blocks of 100), the
    alternative 9 + 2m (m isolated flips): r = 1 + 2m/9, so the z needed is
    6 ln r (0, 1.20, 4.48); with m None the defaults cut nothing (r = inf:
    the cap Z_MAX)."""
    i, j = np.r_[0:999], np.r_[1:1000]
    blocks = (np.arange(1000) // 100) % 2
    lab_def = np.zeros(1000, int) if m is None else blocks
    lab_alt = blocks.copy()
    for k in range(m or 0):
        lab_alt[50 + 100 * k] = 1 - lab_alt[50 + 100 * k]
    ev = _evidence_with_labels([lab_def, lab_alt], (i, j), z)
    cut = cut_ratio(ev, 0, 1)
    r = np.inf if m is None else (9 + 2 * m) / 9
    assert cut["cut_ratio"] == pytest.approx(r)
    report: dict = {}
    k_chosen, zz, _, why = choose(ev, 0, Z_SWITCH, graded=True, report=report)
    assert zz == pytest.approx(z)
    assert (k_chosen == 1) == switch
    if zz > 0:
        assert report["z_needed"] == pytest.approx(graded_threshold(r))
        assert "ratio" in why
    else:  # z <= 0 never switches, and the cut is not even computed
        assert report == {}
    # without the graded rule the fixed threshold decides
    assert (choose(ev, 0, Z_SWITCH)[0] == 1) == (zz > Z_SWITCH)


def _fitted_cut(est_cls, X, yy, pair, idx_edges):
    """Cut fraction of an explicit refit of one candidate on given edges."""
    m = est_cls(gamma_a=pair[0], gamma_i=pair[1]).fit(X, yy)
    t = np.searchsorted(m.classes_, m.transduction_)
    i, j = idx_edges
    return float(np.mean(t[i] != t[j]))


@pytest.mark.parametrize("est_cls", [LapRLS, LapSVM])
def test_reported_cut_fractions_equal_the_estimators_refits(est_cls, monkeypatch):
    """On a problem small enough for exact LOO features (n <= 600 landmarks:
    the exact square root of K), the cut fractions the rule reports are those
    of the two candidates refitted by the estimator itself on the estimator's
    graph: a labeler with the wrong balance, basis or bias would differ."""
    import semisvm.models._model as lapsvm_module

    seen: dict = {}
    real = lapsvm_module.select_regularization

    def spy(est, **kw):
        seen["L"] = kw["L"]
        return real(est, **kw)

    monkeypatch.setattr(lapsvm_module, "select_regularization", spy)
    X, y = make_moons(240, noise=0.25, random_state=3)
    X = np.c_[X, np.random.default_rng(3).normal(size=(240, 3))]
    rng = np.random.default_rng(5)
    yy = np.full(240, -1)
    for c in (0, 1):
        yy[rng.choice(np.flatnonzero(y == c), 8, replace=False)] = c
    for seed in range(6):  # a draw where the rule reaches the cut (z > 0)
        m = est_cls(random_state=0).fit(X, yy)
        sel = m.regularization_selection_
        if "cut_ratio" in sel:
            break
        yy = np.full(240, -1)
        rng = np.random.default_rng(100 + seed)
        for c in (0, 1):
            yy[rng.choice(np.flatnonzero(y == c), 8, replace=False)] = c
    assert "cut_ratio" in sel, sel["reason"]
    edges = graph_edges(seen["L"], 240)
    pairs = sel["pairs"]
    alt = tuple(sel["best_alternative"])
    monkeypatch.setattr(lapsvm_module, "select_regularization", real)
    c_def = _fitted_cut(est_cls, X, yy, tuple(pairs[0]), edges)
    c_alt = _fitted_cut(est_cls, X, yy, alt, edges)
    # exact features; the estimator's own solver converges to a tolerance, so
    # a handful of near-boundary points may differ
    assert sel["cut_default"] == pytest.approx(c_def, abs=0.01)
    assert sel["cut_alternative"] == pytest.approx(c_alt, abs=0.01)
