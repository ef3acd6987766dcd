"""The gamma_a='auto' / gamma_i='auto' rule: balanced, scale-free leave-one-out.

Each closed form is checked against brute force: refits without each label and
the library's own class-mass balance (brentq), scipy's scalar minimizer, and the
estimator refitted twice (same bytes)."""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.datasets import load_digits, make_blobs, make_moons

from semisvm import LapRLS, LapSVM
from semisvm.graph import graph_laplacian, knn_graph
from semisvm.kernels import kernel_matrix
from semisvm.models._adaptive import _mass_shift
from semisvm.solvers._loo import (
    SpectralLOO,
    balanced_loo,
    loo_features,
    margins,
    mass_shifts,
    scale_free_squared_hinge,
)
from semisvm.solvers._newton import laprls_direct, lapsvm_newton


def _problem(n=90, n_lab=12, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    if classes == 2:
        X, yt = make_moons(n, noise=0.2, random_state=seed)
    else:
        X, yt = make_blobs(n, centers=classes, cluster_std=2.0, random_state=seed)
    K = kernel_matrix(X, kernel="rbf", gamma=1.0)
    L = graph_laplacian(knn_graph(X, 6, weight="binary"))
    lab = np.sort(
        np.concatenate(
            [
                rng.choice(np.flatnonzero(yt == c), n_lab // classes, replace=False)
                for c in range(classes)
            ]
        )
    )
    if classes == 2:
        Yl = np.where(yt[lab] == 1, 1.0, -1.0)[:, None]
    else:
        Yl = np.where(yt[lab][:, None] == np.arange(classes), 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, size=lab.size)
    return K, L, lab, Yl, c


def _brute_balanced_loo(solve, K, L, lab, Yl, c, ga, gi, targets):
    """Refit without each label, balance on the original unlabeled points
    (``targets`` None: the held-out outputs unbalanced)."""
    n = K.shape[0]
    unl = np.setdiff1d(np.arange(n), lab)
    Y = np.zeros((n, Yl.shape[1]))
    Y[lab] = Yl
    sw = np.ones(n)
    sw[lab] = c
    out = np.empty_like(Yl)
    for t, i in enumerate(lab):
        Y2 = Y.copy()
        Y2[i] = 0.0
        r = solve(K, Y2, L=L, gamma_a=ga, gamma_i=gi, sample_weight=sw)
        F = K @ r.alpha + r.b
        for col in range(Yl.shape[1]):
            shift = 0.0 if targets is None else _mass_shift(F[unl, col], targets[col])
            out[t, col] = F[i, col] + shift
    return out


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("ga, gi", [(1e-2, 1e-3), (1e-3, 1e-1), (1e-4, 1.0)])
def test_balanced_loo_equals_balanced_refits_laprls(classes, ga, gi):
    K, L, lab, Yl, c = _problem(classes=classes, seed=classes)
    n = K.shape[0]
    unl = np.setdiff1d(np.arange(n), lab)
    targets = np.full(Yl.shape[1], 0.3 if classes == 2 else -1 / 3)
    Phi = loo_features(lambda idx: K[:, idx], n, lab)
    eng = SpectralLOO(Phi, L, lab, Yl, weights=c, unlabeled_idx=unl)
    O, FU, D = eng.fold_outputs(ga, gi, "squared")
    O_bal, _ = balanced_loo(O, FU, D, targets)
    ref = _brute_balanced_loo(laprls_direct, K, L, lab, Yl, c, ga, gi, targets)
    np.testing.assert_allclose(O_bal, ref, atol=1e-6 * np.abs(ref).max())
    # the unbalanced held-out outputs are those of rls(): fold_outputs adds
    # only the unlabeled outputs
    np.testing.assert_allclose(O, eng.rls(ga, gi)[1], atol=1e-9)


@pytest.mark.parametrize("ga, gi", [(1e-2, 1e-3), (1e-3, 1e-1)])
def test_balanced_loo_equals_balanced_refits_lapsvm(ga, gi):
    K, L, lab, Yl, c = _problem(seed=5, n_lab=16)
    n = K.shape[0]
    unl = np.setdiff1d(np.arange(n), lab)
    Phi = loo_features(lambda idx: K[:, idx], n, lab)
    eng = SpectralLOO(Phi, L, lab, Yl, weights=c, unlabeled_idx=unl)
    O, FU, D = eng.fold_outputs(ga, gi, "squared_hinge")
    O_bal, _ = balanced_loo(O, FU, D, np.array([0.0]))
    ref = _brute_balanced_loo(lapsvm_newton, K, L, lab, Yl, c, ga, gi, [0.0])
    np.testing.assert_allclose(O_bal, ref, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("ga, gi", [(1e-3, 1e-1), (1e-2, 0.0)])
def test_lapsvm_loo_with_resolved_points_equals_refits(ga, gi, monkeypatch):
    """The exact LapSVM LOO where held-out error sets move (the batched
    re-solves of ``_settle_many``): every held-out output equals a refit of
    primal Newton without that label."""
    K, L, lab, Yl, c = _problem(classes=3, seed=7, n_lab=30)
    n = K.shape[0]
    Phi = loo_features(lambda idx: K[:, idx], n, lab)
    eng = SpectralLOO(Phi, L, lab, Yl, weights=c)
    resolved = []
    settle = SpectralLOO._settle_many

    def spy(self, G, y, E, keep, max_iter):
        resolved.append(E.shape[0])
        return settle(self, G, y, E, keep, max_iter)

    monkeypatch.setattr(SpectralLOO, "_settle_many", spy)
    _, O = eng.l2svm(ga, gi)
    assert sum(resolved) >= 3  # the path under test ran
    ref = _brute_balanced_loo(lapsvm_newton, K, L, lab, Yl, c, ga, gi, None)
    np.testing.assert_allclose(O, ref, atol=1e-6 * np.abs(ref).max())


def test_balance_changes_the_verdict_on_a_graph_smoothed_fit():
    # a strongly graph-smoothed fit: without each held-out fit's own balance its
    # LOO outputs lean toward the class that kept more labels, and (nearly)
    # every held-out label is misclassified -- as by brute-force refits without
    # each label; balanced, most are right
    for seed in range(3):
        K, L, lab, Yl, c = _problem(n=150, n_lab=10, seed=seed)
        n = K.shape[0]
        unl = np.setdiff1d(np.arange(n), lab)
        Phi = loo_features(lambda idx, K=K: K[:, idx], n, lab)
        eng = SpectralLOO(Phi, L, lab, Yl, unlabeled_idx=unl)
        O, FU, D = eng.fold_outputs(1e-6, 100.0, "squared")
        O_bal, _ = balanced_loo(O, FU, D, np.array([0.0]))
        Y = np.zeros((n, 1))
        Y[lab] = Yl
        ref = np.empty_like(Yl)
        for t, i in enumerate(lab):
            Y2 = Y.copy()
            Y2[i] = 0.0
            r = laprls_direct(K, Y2, L=L, gamma_a=1e-6, gamma_i=100.0)
            ref[t] = (K[i] @ r.alpha + r.b)[0]
        np.testing.assert_allclose(O, ref, atol=1e-3 * np.abs(ref).max())
        unbalanced_error = np.mean(margins(O, Yl) <= 0)
        assert unbalanced_error == np.mean(margins(ref, Yl) <= 0)
        assert unbalanced_error >= 0.9
        assert np.mean(margins(O_bal, Yl) <= 0) <= 0.3


@pytest.mark.parametrize("t", [-0.95, -0.4, 0.0, 0.2, 0.9])
def test_mass_shifts_equal_brentq(t):
    rng = np.random.default_rng(7)
    V = rng.normal(size=(300, 9)) * rng.uniform(1e-3, 5, 9) + rng.normal(size=9)
    V[:, 0] = 0.0  # a degenerate column: all outputs equal
    ref = np.array([_mass_shift(V[:, k], t) for k in range(V.shape[1])])
    np.testing.assert_allclose(mass_shifts(V, t), ref, atol=1e-9)


def test_mass_shifts_with_a_target_per_column_equal_brentq():
    """Several classes' columns solved together (each with its own target, a
    shared start) give each column's own root: a target read from the wrong
    column, or a settled column moved again, fails."""
    rng = np.random.default_rng(11)
    V = rng.normal(size=(250, 12)) * rng.uniform(1e-2, 4, 12) + rng.normal(size=12)
    t = rng.uniform(-0.9, 0.9, size=12)
    ref = np.array([_mass_shift(V[:, k], t[k]) for k in range(12)])
    np.testing.assert_allclose(mass_shifts(V, t), ref, atol=1e-9)
    start = ref + rng.normal(scale=0.5, size=12)
    np.testing.assert_allclose(mass_shifts(V, t, start=start), ref, atol=1e-9)


@pytest.mark.parametrize("intercept", [True, False])
def test_error_set_fits_equal_the_hat_maps(intercept):
    """The vector path of the error-set fits (one solve, two right-hand sides)
    and its batched, padded form (``_settle_many``, one round) give the outputs
    of the hat maps they replace, on the labeled and the unlabeled rows, for
    weighted points and any error set."""
    K, L, lab, Yl, c = _problem(classes=2)
    unl = np.setdiff1d(np.arange(K.shape[0]), lab)
    Phi = loo_features(lambda idx: K[:, idx], K.shape[0], lab)
    eng = SpectralLOO(
        Phi, L, lab, Yl, weights=c, unlabeled_idx=unl, fit_intercept=intercept
    )
    G, GU = eng.gram(1e-2, 0.5), eng.gram_u(1e-2, 0.5)
    y = Yl[:, 0]
    rng = np.random.default_rng(3)
    for _ in range(5):
        E = rng.random(y.size) < 0.6
        E[0] = True
        P, PU = eng._maps(G, GU, E)
        iE, v, b = eng._solve_on(G, y, E)
        np.testing.assert_allclose(G[:, iE] @ v + b, P @ y[E], atol=1e-10)
        np.testing.assert_allclose(GU[:, iE] @ v + b, PU @ y[E], atol=1e-10)
        keep = np.ones((1, y.size), dtype=bool)
        F, Z, bb = eng._settle_many(G, y, E[None], keep, max_iter=1)
        np.testing.assert_allclose(F[0], P @ y[E], atol=1e-10)
        np.testing.assert_allclose(GU @ Z[0] + bb[0], PU @ y[E], atol=1e-10)
        assert not Z[0, ~E].any()


def test_the_selection_runs_on_one_blas_thread(monkeypatch):
    """The LOO engine's thousands of small l x l steps run on one BLAS thread
    (two threads made the selection 4x slower on the 2-core machine)."""
    from threadpoolctl import threadpool_info

    import semisvm.models._autoreg as autoreg

    seen = []
    real = autoreg.loo_evidence

    def spy(*args, **kwargs):
        seen.extend(
            m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"
        )
        return real(*args, **kwargs)

    monkeypatch.setattr(autoreg, "loo_evidence", spy)
    X, yt = make_moons(120, noise=0.1, random_state=0)
    y = np.full(120, -1)
    for c in (0, 1):
        y[np.flatnonzero(yt == c)[:8]] = c
    est = LapSVM().fit(X, y)
    assert est.regularization_selection_["rule"] == "loo"
    assert seen and set(seen) == {1}


def test_scale_free_squared_hinge_is_the_minimum_and_scale_free():
    rng = np.random.default_rng(2)
    for _ in range(20):
        m = rng.normal(size=30) + rng.uniform(-0.5, 1.5)
        w = rng.uniform(0.2, 3.0, size=30)
        val, pts = scale_free_squared_hinge(m, w)
        wn = w / w.sum()
        ref = minimize_scalar(
            lambda s, m=m, wn=wn: float((wn * np.maximum(0, 1 - s * m) ** 2).sum()),
            bounds=(0, 1e3 / np.abs(m).min()),
            method="bounded",
            options={"xatol": 1e-12},
        ).fun
        assert val <= ref + 1e-10
        assert val == pytest.approx(ref, rel=1e-6, abs=1e-12)
        assert float((wn * pts).sum()) == pytest.approx(val, rel=1e-9, abs=1e-12)
        # scale-free: any positive factor on the outputs gives the same value
        assert scale_free_squared_hinge(7.5 * m, w)[0] == pytest.approx(val, rel=1e-9)
    assert scale_free_squared_hinge(np.array([0.1, 2.0, 0.01]))[0] == 0.0


def _digits_5():
    X, yt = load_digits(return_X_y=True)
    X = X[:600] / 16.0
    yt = yt[:600]
    rng = np.random.default_rng(0)
    y = np.full(yt.size, -1)
    for c in range(10):
        y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
    return X, y, yt


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
def test_auto_keeps_the_graph_where_it_is_right(cls):
    # digits, 5 labels per class: the graph-trusting model is far better than
    # the supervised one, and the balanced LOO must see it
    X, y, yt = _digits_5()
    U = y == -1
    est = cls().fit(X, y)
    sel = est.regularization_selection_
    assert sel["rule"] == "loo"
    assert (sel["gamma_a"], sel["gamma_i"]) == (1e-6, 1.0), sel["reason"]
    sup = cls(gamma_a="auto", gamma_i=0.0).fit(X, y)
    assert (
        np.mean(est.transduction_[U] == yt[U])
        > np.mean(sup.transduction_[U] == yt[U]) + 0.02
    )


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
def test_identical_fits_give_identical_models(cls):
    X, y, _ = _digits_5()
    a = cls().fit(X, y)
    b = cls().fit(X, y)
    assert (
        a.regularization_selection_["reason"] == b.regularization_selection_["reason"]
    )
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()


def test_identical_fit_in_a_fresh_process():
    import os

    from threadpoolctl import threadpool_limits

    X, y, _ = _digits_5()
    with threadpool_limits(limits=1):  # the same BLAS thread count in both
        here = LapSVM().fit(X, y).decision_function(X)
    code = (
        "from threadpoolctl import threadpool_limits\n"
        "threadpool_limits(limits=1)\n"
        "import pickle, sys\n"
        "from semisvm import LapSVM\n"
        "X, y = pickle.loads(sys.stdin.buffer.read())\n"
        "sys.stdout.buffer.write(LapSVM().fit(X, y).decision_function(X).tobytes())\n"
    )
    env = dict(
        os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps((X, y)),
        capture_output=True,
        check=True,
        env=env,
    ).stdout
    assert out == here.tobytes()


def test_fit_times_cover_the_whole_fit_and_verbose_lists_candidates(capsys):
    import time

    X, y, _ = _digits_5()
    t0 = time.perf_counter()
    est = LapSVM(verbose=1).fit(X, y)
    wall = time.perf_counter() - t0
    times = est.fit_times_
    assert "selection" in times and times["selection"] > 0
    total = sum(times.values())
    assert total <= wall and total >= 0.9 * wall
    out = capsys.readouterr().out
    sel = est.regularization_selection_
    for (a, i), v in zip(sel["pairs"], sel["scores"], strict=True):
        assert f"gamma_a={a:g}, gamma_i={i:g}: criterion {v:.4g}" in out
    assert out.count("<- chosen") == 1


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_cholesky_path_equals_the_spectral_path(loss):
    # the two algebraic routes to the same LOO numbers (per-pair Cholesky solve
    # vs one eigendecomposition of Phi^T L Phi)
    K, L, lab, Yl, c = _problem(n=120, n_lab=12, seed=4, classes=3)
    unl = np.setdiff1d(np.arange(K.shape[0]), lab)
    Phi = loo_features(lambda idx: K[:, idx], K.shape[0], lab)
    a = SpectralLOO(Phi, L, lab, Yl, weights=c, unlabeled_idx=unl, spectral=True)
    b = SpectralLOO(Phi, L, lab, Yl, weights=c, unlabeled_idx=unl, spectral=False)
    for ga, gi in [(1e-3, 1e-1), (1e-2, 0.0)]:
        Oa, FUa, Da = a.fold_outputs(ga, gi, loss)
        Ob, FUb, Db = b.fold_outputs(ga, gi, loss)
        scale = np.abs(Oa).max()
        np.testing.assert_allclose(Ob, Oa, atol=1e-7 * scale)
        np.testing.assert_allclose(FUb, FUa, atol=1e-7 * np.abs(FUa).max())


def _every_estimator():
    from semisvm import (
        ExactTSVM,
        LapRLSCV,
        LapSVC,
        LapSVMCV,
        LapSVMPath,
        SemiSupervisedKernel,
    )

    return [
        LapSVM(),
        LapRLS(),
        LapSVC(),
        LapSVMCV(gamma_a=(1e-6, 1e-2), gamma_i=(0.0, 1.0)),
        LapRLSCV(gamma_a=(1e-6, 1e-2), gamma_i=(0.0, 1.0)),
        LapSVMPath(),
        SemiSupervisedKernel(),
        ExactTSVM(time_limit=5),
    ]


def _small_problem():
    X, yt = make_moons(60, noise=0.15, random_state=5)
    rng = np.random.default_rng(5)
    y = np.full(yt.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
    return X, y


def _outputs(est, X):
    if not hasattr(est, "predict"):  # SemiSupervisedKernel: a kernel
        return np.asarray(est.gram(X)).tobytes()
    out = est.decision_function(X) if hasattr(est, "decision_function") else None
    if out is None:
        out = est.predict(X)
    return np.asarray(out).tobytes() + np.asarray(est.predict(X)).tobytes()


def _every_estimator_ids() -> list[str]:
    return [type(e).__name__ for e in _every_estimator()]


@functools.cache
def _fresh_process_outputs() -> tuple[bytes, ...]:
    """Every estimator of :func:`_every_estimator` fitted once in one fresh
    interpreter (one BLAS thread), its outputs in that order."""
    import os

    code = (
        "from threadpoolctl import threadpool_limits\n"
        "threadpool_limits(limits=1)\n"
        "import pickle, sys\n"
        "from sklearn.base import clone\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_selection_rule import _every_estimator, _outputs, _small_problem\n"
        "X, y = _small_problem()\n"
        "outs = [_outputs(clone(e).fit(X, y), X) for e in _every_estimator()]\n"
        "sys.stdout.buffer.write(pickle.dumps(outs))\n"
    )
    here = str(__import__("pathlib").Path(__file__).parent)
    env = dict(
        os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, here], capture_output=True, check=True, env=env
    ).stdout
    return tuple(pickle.loads(out))


@pytest.mark.parametrize("est", _every_estimator(), ids=lambda e: type(e).__name__)
def test_every_estimator_fitted_twice_gives_the_same_bytes(est):
    # issue 33.1: the same call on the same data gives the same model, also in a
    # fresh process (one for all estimators), with random_state=None
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    X, y = _small_problem()
    # one BLAS thread here and in the fresh process: float32 BLAS results may
    # differ in the last bits between thread counts (another test of the suite
    # may have changed this process's), not between identical calls
    with threadpool_limits(limits=1):
        a = _outputs(clone(est).fit(X, y), X)
        b = _outputs(clone(est).fit(X, y), X)
    assert a == b
    assert (
        _fresh_process_outputs()[_every_estimator_ids().index(type(est).__name__)] == a
    )


def _brute_intrinsic_bias_loo(solve, K, L, lab, Yl, c, ga, gi):
    """Refit without each label's loss term, the bias inside the graph term."""
    n = K.shape[0]
    Y = np.zeros((n, Yl.shape[1]))
    Y[lab] = Yl
    sw = np.ones(n)
    sw[lab] = c
    out = np.empty_like(Yl)
    for t, i in enumerate(lab):
        Y2 = Y.copy()
        Y2[i] = 0.0
        r = solve(
            K, Y2, L=L, gamma_a=ga, gamma_i=gi, sample_weight=sw, intrinsic_bias=True
        )
        out[t] = (K @ r.alpha + r.b)[i]
    return out


@pytest.mark.parametrize("spectral", [True, False, "ratio"])
@pytest.mark.parametrize("ga, gi", [(1e-2, 1e-3), (1e-3, 1e-1), (1e-4, 1.0)])
def test_loo_with_the_intrinsic_bias_equals_refits(spectral, ga, gi):
    """With a normalized Laplacian (rows not summing to 0) the estimators' default
    intrinsic bias puts b in the graph term: the LOO engine scores that model with
    the features [Phi, 1] and the bias out of the ambient penalty.  Fails if the
    engine scored the free-intercept model instead (checked: they differ here)."""
    K, _, lab, Yl, c = _problem(seed=3, n_lab=14)
    X, _ = make_moons(K.shape[0], noise=0.2, random_state=3)
    L = graph_laplacian(knn_graph(X, 6, weight="binary"), normalized=True)
    n = K.shape[0]
    Phi = loo_features(lambda idx: K[:, idx], n, lab)
    Phi1 = np.c_[Phi, np.ones(n)]
    mask = np.r_[np.ones(Phi.shape[1]), 0.0]
    eng = SpectralLOO(
        Phi1,
        L,
        lab,
        Yl,
        weights=c,
        fit_intercept=False,
        ambient_mask=mask,
        spectral=spectral,
    )
    _, O = eng.rls(ga, gi)
    ref = _brute_intrinsic_bias_loo(laprls_direct, K, L, lab, Yl, c, ga, gi)
    np.testing.assert_allclose(O, ref, atol=1e-6 * np.abs(ref).max())
    _, O_svm = eng.l2svm(ga, gi)
    ref_svm = _brute_intrinsic_bias_loo(lapsvm_newton, K, L, lab, Yl, c, ga, gi)
    np.testing.assert_allclose(O_svm, ref_svm, atol=1e-6 * np.abs(ref_svm).max())
    # the free-intercept engine scores another model on this graph
    free = SpectralLOO(Phi, L, lab, Yl, weights=c)
    assert np.abs(free.rls(ga, gi)[1] - ref).max() > 1e-4 * np.abs(ref).max()


def test_auto_rule_scores_the_intrinsic_bias_model_it_fits():
    """loo_evidence uses the intrinsic-bias engine exactly when the fitted model
    has the bias in a graph term that sees it (normalized Laplacian)."""
    from semisvm.models import _autoreg

    X, yt = make_moons(120, noise=0.15, random_state=1)
    y = np.full(120, -1)
    rng = np.random.default_rng(1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), 6, replace=False)] = c
    built = []
    real = _autoreg.SpectralLOO

    def spy(*args, **kw):
        built.append(kw.get("ambient_mask") is not None)
        return real(*args, **kw)

    for normalized, expected in ((True, True), (False, False)):
        built.clear()
        _autoreg.SpectralLOO = spy
        try:
            LapRLS(normalize_laplacian=normalized).fit(X, y)
        finally:
            _autoreg.SpectralLOO = real
        assert any(built) is expected


def test_random_state_instances_are_threaded_not_replaced_by_zero():
    """A RandomState/Generator reaches the internal draws (issue 29): it used to
    become seed 0 in the LOO landmark draw."""
    from semisvm._validation import as_generator, int_seed

    assert int_seed(None) == 0 and int_seed(7) == 7
    a = as_generator(np.random.RandomState(1)).integers(10**9)
    b = as_generator(np.random.RandomState(2)).integers(10**9)
    assert a != b
    assert as_generator(None).integers(10**9) == np.random.default_rng(0).integers(
        10**9
    )
    g = np.random.default_rng(5)
    assert as_generator(g) is g
    # the LOO landmarks follow the state: two states, two draws
    K = np.eye(50)
    cols = lambda idx: K[:, idx]  # noqa: E731
    lab = np.arange(3)
    P1 = loo_features(
        cols, 50, lab, max_features=10, random_state=np.random.RandomState(1)
    )
    P2 = loo_features(
        cols, 50, lab, max_features=10, random_state=np.random.RandomState(2)
    )
    assert P1.shape == P2.shape and not np.allclose(P1, P2)


def test_switch_is_a_one_sided_five_percent_test():
    """The auto rule leaves the defaults exactly when the paired z of the per-point
    criterion differences (computed here by hand) exceeds the one-sided 5% normal
    quantile and the alternative makes no more LOO errors (no per-point errors
    given: the rate comparison)."""
    from scipy.stats import norm

    from semisvm.models._autoreg import Z_SWITCH, LOOEvidence, choose

    assert Z_SWITCH == pytest.approx(norm.isf(0.05), abs=1e-12)
    rng = np.random.default_rng(3)
    base = rng.random(40)
    noise = rng.normal(size=40)
    noise -= noise.mean()
    noise /= noise.std(ddof=1) / np.sqrt(40)  # standard error of the mean 1

    def evidence(z, err_alt):
        alt = base - z * 1.0 - noise  # paired differences: mean z, se 1
        pp = [base, alt, alt + 5.0]
        return LOOEvidence(
            [(1e-6, 1.0), (1e-6, 0.0), (1.0, 0.0)],
            pp,
            np.array([p.mean() for p in pp]),
            np.array([0.2, err_alt, 0.5]),
            10,
            0,
            0.0,
        )

    for z, err_alt, switch in [
        (1.60, 0.1, False),
        (1.70, 0.1, True),
        (1.70, 0.3, False),  # more LOO errors: kept
        (-3.0, 0.0, False),
    ]:
        k, z_seen, k_best, _ = choose(evidence(z, err_alt), 0, Z_SWITCH)
        d = base - (base - z - noise)
        assert z_seen == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(d.size)))
        assert k_best == 1 and (k == 1) is switch, (z, err_alt)


def test_error_veto_is_the_same_one_sided_test_on_paired_errors():
    """With per-point LOO errors the switch is vetoed only when the alternative
    makes significantly more errors (paired z of the 0-1 differences above the
    threshold): two more errors in 50 do not veto, eleven more on 50 do."""
    from semisvm.models._autoreg import Z_SWITCH, LOOEvidence, choose

    rng = np.random.default_rng(4)
    base = rng.random(50) + 1.0
    alt = base - 0.5  # every point better on the criterion: z = inf

    def evidence(extra_alt_errors):
        e_def = np.zeros(50)
        e_def[:12] = 1.0  # 12 LOO errors
        e_alt = np.zeros(50)
        e_alt[10 : 24 + extra_alt_errors] = 1.0  # shares 2, then its own
        pe = [e_def, e_alt]
        return LOOEvidence(
            [(1e-6, 1.0), (1e-6, 0.0)],
            [base, alt],
            np.array([base.mean(), alt.mean()]),
            np.array([e.mean() for e in pe]),
            10,
            0,
            0.0,
            point_errors=pe,
        )

    # paired 0-1 differences by hand: +1 on the alternative's own errors, -1 on
    # the default's own; z = mean / (sd / sqrt(50))
    for extra, switch in [(0, True), (9, False)]:
        ev = evidence(extra)
        d = ev.point_errors[1] - ev.point_errors[0]
        z_err = d.mean() / (d.std(ddof=1) / np.sqrt(50))
        assert bool(z_err > Z_SWITCH) is (not switch)
        k, _, _, why = choose(ev, 0, Z_SWITCH)
        assert (k == 1) is switch, (extra, z_err, why)
    # without per-point errors: the rate comparison of the previous version
    ev = evidence(0)
    ev.point_errors = None
    assert choose(ev, 0, Z_SWITCH)[0] == 0


@pytest.mark.parametrize("kind", ["duplicates", "wide_kernel_2d"])
def test_loo_features_of_a_singular_kernel_are_an_exact_root(kind):
    """Numerically singular K (duplicate points; a wide RBF on 2-d data) falls
    back from the Cholesky factor to the pivoted one, truncated at the numerical
    rank: Phi Phi^T = K to 1e-9 of its scale, with no more columns than K has
    eigenvalues above the truncation (an eigendecomposition's count bounds it)."""
    rng = np.random.default_rng(7)
    if kind == "duplicates":
        X = np.repeat(rng.normal(size=(120, 4)), 2, axis=0)
        gamma = 0.3
    else:
        X, _ = make_moons(400, noise=0.1, random_state=7)
        gamma = 0.5
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    n = K.shape[0]
    Phi = loo_features(lambda idx: K[:, idx], n, np.arange(0, n, 40))
    assert Phi.shape[1] < n
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-9 * np.abs(K).max())
    lam = np.linalg.eigvalsh(K)
    assert Phi.shape[1] <= np.sum(lam > 1e-13 * lam[-1])


def test_supervised_choice_is_the_lowest_criterion_ties_to_the_largest_gamma_a():
    # lambda_I = 0 given: no z-test against the default lambda_A, the lowest
    # criterion wins; a floating-point tie goes to the larger gamma_a
    from semisvm.models._autoreg import GRID_A, LOOEvidence, supervised_choice

    def ev(scores):
        k = len(scores)
        return LOOEvidence(
            [(a, 0.0) for a in GRID_A[:k]],
            np.zeros((k, 3)),
            scores,
            [0.0] * k,
            3,
            0,
            0.0,
        )

    assert supervised_choice(ev([0.5, 0.5, 0.6, 0.4, 0.7])) == 3
    assert supervised_choice(ev([0.4, 0.4 + 1e-13, 0.4, 0.5])) == 2  # tie: largest
    assert supervised_choice(ev([0.4, 0.4 + 1e-6, 0.5])) == 0  # not a tie
    assert supervised_choice(ev([0.0] * 7)) == 6  # every LOO margin above 1


@pytest.mark.parametrize("cls", [LapSVM, LapRLS])
def test_supervised_mode_fits_the_lowest_criterion(cls):
    # overlapping blobs in 10-d, 5 labels per class: the chosen gamma_a is the
    # lowest reported criterion (ties to the largest), and the model is the
    # explicit fit at that gamma_a
    from semisvm.models._autoreg import LOOEvidence, supervised_choice

    X, yt = make_blobs(300, centers=2, n_features=10, cluster_std=4.0, random_state=3)
    rng = np.random.default_rng(0)
    y = np.full(yt.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
    est = cls(gamma_a="auto", gamma_i=0.0).fit(X, y)
    sel = est.regularization_selection_
    assert "lambda_I = 0 given" in sel["reason"]
    k = sel["pairs"].index((sel["gamma_a"], 0.0))
    n = len(sel["pairs"])
    ev = LOOEvidence(sel["pairs"], np.zeros((n, 1)), sel["scores"], [0.0] * n, 1, 0, 0)
    assert supervised_choice(ev) == k
    assert sel["scores"][k] <= min(sel["scores"]) * (1 + 1e-9) + 1e-12
    ref = cls(gamma_a=sel["gamma_a"], gamma_i=0.0).fit(X, y)
    np.testing.assert_allclose(
        est.decision_function(X), ref.decision_function(X), rtol=1e-10, atol=1e-10
    )


def test_z_threshold_bonferroni_on_student_t():
    """The CV's threshold: the Bonferroni level of the search on Student's t
    with n - 1 degrees of freedom (checked against the t density integrated
    numerically); the 8 candidates of "auto" keep the normal 1.645."""
    from scipy.integrate import quad
    from scipy.special import gammaln
    from scipy.stats import norm

    from semisvm.models._autoreg import Z_SWITCH, z_threshold

    assert z_threshold(8) == pytest.approx(Z_SWITCH)
    assert z_threshold(8, 10) == pytest.approx(Z_SWITCH)
    level = norm.sf(Z_SWITCH) * 8 / 980
    assert z_threshold(980) == pytest.approx(norm.isf(level))
    q = z_threshold(980, 10)
    nu = 9

    def density(x):
        c = np.exp(gammaln((nu + 1) / 2) - gammaln(nu / 2)) / np.sqrt(nu * np.pi)
        return c * (1 + x * x / nu) ** (-(nu + 1) / 2)

    tail, _ = quad(density, q, np.inf, epsabs=1e-14, epsrel=1e-10)
    assert tail == pytest.approx(level, rel=1e-6)
    assert q > 4.5 > z_threshold(980) + 1  # 10 labels: far above the normal 3.35
    # more held-out points: closer to the normal quantile
    qs = [z_threshold(980, n) for n in (10, 20, 50, 300, 10**6)]
    assert np.all(np.diff(qs) < 0)
    assert qs[-1] == pytest.approx(z_threshold(980), abs=1e-3)
