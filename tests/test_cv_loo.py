"""LapSVMCV / LapRLSCV on the one selection engine (cv='loo', the default).

The search scores candidates with the estimators' own "auto" engine, searches
kernels, widths, graph sizes and Laplacians, and refits through the plain
estimator: each of these is checked against an independent computation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons

from semisvm import LapRLS, LapSVM
from semisvm.model_selection import LapRLSCV, LapSVMCV


def _moons(n=240, per=6, seed=0):
    X, yt = make_moons(n, noise=0.12, random_state=seed)
    rng = np.random.default_rng(seed)
    y = np.full(n, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), per, replace=False)] = c
    return X, y, yt


def _tanh(n=400, d=10, seed=0, n_lab=60):
    W = np.random.default_rng(123).normal(size=(10, d))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 10))
    X = np.tanh(Z @ W / 3)
    yt = (Z[:, 0] > 0).astype(int)
    y = np.full(n, -1)
    lab = rng.choice(n, n_lab, replace=False)
    y[lab] = yt[lab]
    return X, y, yt


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
def test_search_space_covers_kernels_and_laplacians(cls):
    X, y, _ = _moons()
    cv = cls(gamma_a=(1e-6, 1e-2), gamma_i=(0.0, 1.0)).fit(X, y)
    assert cv.cv == "loo" and cv.n_splits_ == int((y != -1).sum())
    r = cv.cv_results_
    # round 2 holds the defaults' configuration, the supervised model and the
    # three best others; the whole search is counted in selection_
    assert cv.selection_["n_candidates"] >= 4 * 12 * 2
    assert "rbf" in set(r["param_kernel"])
    assert r["rank_test_score"][cv.best_index_] == 1
    assert cv.best_params_ == r["params"][cv.best_index_]


@pytest.mark.parametrize("base, cls", [(LapRLS, LapRLSCV), (LapSVM, LapSVMCV)])
def test_the_default_candidate_is_scored_by_the_auto_engine(base, cls):
    # one engine: the search's score of the defaults' configuration is the one
    # the estimator's own "auto" rule computes for its defaults
    X, y, _ = _moons(n=300, per=8, seed=1)
    cv = cls().fit(X, y)
    r = cv.cv_results_
    k = next(
        i
        for i, p in enumerate(r["params"])
        if p["gamma_a"] == 1e-6
        and p["gamma_i"] == 1.0
        and p["kernel"] == "rbf"
        and p["n_neighbors"] == 10
        and p["normalize_laplacian"] is False
        and p["laplacian_power"] == 1
        and p["gamma"] == pytest.approx(base().fit(X, y).gamma_)
    )
    est = clone(cv.best_estimator_).set_params(
        gamma_a="auto",
        gamma_i="auto",
        kernel="rbf",
        gamma="knn",
        n_neighbors=10,
        normalize_laplacian=False,
        laplacian_power=1,
    )
    sel = est.fit(X, y).regularization_selection_
    assert sel["rule"] == "loo"
    assert r["mean_test_loss"][k] == pytest.approx(
        sel["scores"][0], rel=1e-9, abs=1e-12
    )
    assert 1.0 - r["mean_test_score"][k] == pytest.approx(sel["loo_error"][0])


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
def test_refit_is_the_plain_estimator_with_the_best_parameters(cls, monkeypatch):
    from semisvm.models import _factorized

    calls = []
    solve = _factorized.factorized_solve

    def counted(*args, **kwargs):
        calls.append(1)
        return solve(*args, **kwargs)

    monkeypatch.setattr(_factorized, "factorized_solve", counted)
    X, y, _ = _moons(seed=2)
    # a graph-term pair only: the refit must reuse the search's K and L (it did
    # not while graph_pca='auto' counted as a projection)
    # (through the exact solvers: the default PCG factorizes nothing)
    kw = {"solver": "newton"} if cls is LapSVMCV else {"solver": "direct"}
    cv = cls(gamma_a=(1e-6, 1e-2), gamma_i=(1.0,), estimator_params=kw).fit(X, y)
    assert calls, "the refit did not use the search's factorization"
    ref = clone(cv.best_estimator_).set_params(**cv.best_params_).fit(X, y)
    # the refit solves with the search's K and L, through one factorization of
    # I + rLK (models._factorized): the same minimiser, to rounding
    np.testing.assert_allclose(
        cv.decision_function(X), ref.decision_function(X), rtol=1e-8, atol=1e-10
    )
    assert isinstance(cv.best_params_["gamma_a"], float)


def test_cv_leaves_a_misleading_graph():
    # the class boundary crosses the dense regions: the search must leave the
    # graph-trusting defaults and do clearly better than them
    X, y, yt = _tanh()
    U = y == -1
    cv = LapRLSCV().fit(X, y)
    trusting = LapRLS(gamma_a=1e-6, gamma_i=1.0).fit(X, y)
    assert (cv.best_params_["gamma_a"], cv.best_params_["gamma_i"]) != (1e-6, 1.0) or (
        cv.best_params_["kernel"] != "rbf"
    )
    acc = np.mean(cv.transduction_[U] == yt[U])
    assert acc > np.mean(trusting.transduction_[U] == yt[U]) + 0.03


def test_cv_loo_is_deterministic():
    X, y, _ = _moons(seed=3)
    a = LapSVMCV(gamma_a=(1e-6, 1e-2), gamma_i=(0.0, 1.0)).fit(X, y)
    b = LapSVMCV(gamma_a=(1e-6, 1e-2), gamma_i=(0.0, 1.0)).fit(X, y)
    assert a.best_params_ == b.best_params_
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
def test_grid_without_the_supervised_model(cls):
    # gamma_i = 0 left out of the grid: no supervised candidate is scored, the
    # prior is the defaults' pair (this crashed with "min() arg is an empty
    # sequence"), and the choice stays in the user's grid
    X, y, _ = _moons(seed=2)
    cv = cls(gamma_a=(1e-6, 1e-2), gamma_i=(0.1, 1.0), n_neighbors=(6,)).fit(X, y)
    assert cv.best_params_["gamma_i"] in (0.1, 1.0)
    assert all(p["gamma_i"] > 0 for p in cv.cv_results_["params"])


@pytest.mark.parametrize("cls", [LapRLSCV, LapSVMCV])
@pytest.mark.parametrize("operator", ["streamed", "nystroem"])
def test_search_without_a_dense_kernel_scores_as_the_dense_one(
    cls, operator, monkeypatch
):
    # where the estimator fits on a scalable operator (75,000 points: its dense
    # K needs 42 GiB) the search must not build the n x n K either; it reads
    # kernel columns from X and the graphs from the estimator's own kNN search,
    # which for the RBF kernel are the graphs read off the dense K: every
    # candidate's LOO score is the dense search's
    from semisvm.models import SolverOptions, _problem

    X, y, _ = _moons(n=260, per=6, seed=3)
    dense = cls(
        estimator_params={"options": SolverOptions(kernel_approximation="dense")}
    ).fit(X, y)

    def no_dense_kernel(*args, **kwargs):
        raise AssertionError("the dense kernel was built")

    monkeypatch.setattr(_problem, "prepare_kernel", no_dense_kernel)
    other = cls(
        estimator_params={"options": SolverOptions(kernel_approximation=operator)}
    ).fit(X, y)
    assert other.best_params_ == dense.best_params_
    assert other.best_estimator_.kernel_operator_ == operator
    a, b = dense.cv_results_, other.cv_results_
    assert a["params"] == b["params"]
    np.testing.assert_allclose(
        b["mean_test_loss"], a["mean_test_loss"], rtol=1e-7, atol=1e-10
    )
    np.testing.assert_array_equal(b["mean_test_score"], a["mean_test_score"])
