"""LapSVM / LapRLS estimators: accuracy, API conventions, bad input."""

import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import hide_labels, make_clock, make_two_moons
from semisvm.graph import knn_graph

# --------------------------------------------------------------- accuracy


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "est",
    [
        LapSVM(graph_weight="heat"),
        LapSVM(solver="newton", graph_weight="heat"),
        LapRLS(graph_weight="heat"),
    ],
    ids=["pcg-stability", "newton", "laprls"],
)
def test_two_moons_one_label_per_class(est, seed):
    X, y, y_true = make_two_moons(200, n_labeled_per_class=1, random_state=seed)
    est.fit(X, y)
    acc = np.mean(est.transduction_ == y_true)
    assert acc >= 0.99, acc


def test_paper_stability_rule_can_stop_too_early_and_default_guards_it():
    """The paper's stability rule alone stops before the labels have diffused on
    small two moons; the default guard (stability_value_tol) does not."""
    accs_paper, accs_default = [], []
    for seed in range(10):
        X, y, y_true = make_two_moons(200, random_state=seed)
        kw = dict(graph_weight="heat", gamma_a=1e-6, gamma_i=1.0)
        p = LapSVM(**kw, options=SolverOptions(stability_value_tol=None)).fit(X, y)
        d = LapSVM(**kw).fit(X, y)
        accs_paper.append(np.mean(p.transduction_ == y_true))
        accs_default.append(np.mean(d.transduction_ == y_true))
    assert min(accs_default) >= 0.99
    assert min(accs_default) >= min(accs_paper)


def test_clock_manifold_beats_supervised():
    wins = 0
    for seed in range(5):
        X, y, y_true = make_clock(400, random_state=seed)
        lab = y != -1
        lap = LapSVM(solver="newton").fit(X, y)
        svc = SVC(gamma=lap.gamma_).fit(X[lab], y[lab])
        acc_lap = np.mean(lap.transduction_ == y_true)
        acc_svc = np.mean(svc.predict(X) == y_true)
        wins += acc_lap > acc_svc + 0.05
    assert wins >= 4


def test_defaults_beat_svc_on_digits_with_few_labels():
    X, y_true = load_digits(return_X_y=True)
    gains = []
    for seed in range(2):
        y = hide_labels(y_true, 5, random_state=seed)
        u = y == -1
        lap = LapSVM().fit(X, y)
        svc = SVC().fit(X[~u], y[~u])
        gains.append(
            np.mean(lap.transduction_[u] == y_true[u])
            - np.mean(svc.predict(X[u]) == y_true[u])
        )
    assert min(gains) > 0.05, gains


def test_multiclass_newton_equals_pcg_estimators():
    X, y_true = load_digits(n_class=4, return_X_y=True)
    X, y_true = X[:300], y_true[:300]
    y = hide_labels(y_true, 4, random_state=0)
    kw = dict(gamma_a=1e-3, gamma_i=0.1, n_neighbors=8)
    n = LapSVM(solver="newton", **kw).fit(X, y)
    p = LapSVM(solver="pcg", early_stopping=None, tol=1e-12, max_iter=20000, **kw).fit(
        X, y
    )
    np.testing.assert_allclose(p.objective_, n.objective_, rtol=1e-6)
    assert np.array_equal(p.predict(X), n.predict(X))
    assert p.decision_function(X).shape == (300, 4)
    assert list(p.classes_) == [0, 1, 2, 3]


def test_laprls_direct_equals_pcg_estimator():
    X, y, _ = make_two_moons(150, n_labeled_per_class=3, random_state=1)
    d = LapRLS(solver="direct").fit(X, y)
    p = LapRLS(solver="pcg", early_stopping=None, tol=1e-12, max_iter=20000)
    p.fit(X, y)
    np.testing.assert_allclose(
        p.decision_function(X), d.decision_function(X), atol=1e-6
    )


def test_laprls_auto_solver_factorizes_small_and_iterates_large(monkeypatch):
    """``solver='auto'``: the direct solve up to LAPRLS_DIRECT_MAX_N points, PCG
    above (threshold lowered here; to ``tol`` without early stopping), the same
    model either way."""
    import semisvm.models._solve as lm

    X, y, _ = make_two_moons(150, n_labeled_per_class=3, random_state=1)
    small = LapRLS(solver="auto").fit(X, y)
    assert small.solver_ == "direct"
    d = LapRLS(solver="direct").fit(X, y)
    np.testing.assert_array_equal(small.decision_function(X), d.decision_function(X))
    monkeypatch.setattr(lm, "LAPRLS_DIRECT_MAX_N", 149)
    large = LapRLS(solver="auto", early_stopping=None, tol=1e-10, max_iter=20000)
    large.fit(X, y)
    assert large.solver_ == "pcg" and large.termination_condition_ == "tol"
    np.testing.assert_allclose(
        large.decision_function(X), d.decision_function(X), atol=1e-5
    )
    assert LapRLS(solver="direct").fit(X, y).solver_ == "direct"  # given: kept


@pytest.mark.parametrize("rule", ["stability", "validation", "mixed"])
def test_early_stopping_rules_report_reason(rule):
    X, y_true = load_digits(n_class=2, return_X_y=True)
    y = hide_labels(y_true, 5, random_state=0)
    rng = np.random.default_rng(0)
    val = rng.choice(np.flatnonzero(y == -1), 20, replace=False)
    clf = LapSVM(early_stopping=rule, max_iter=5000)
    clf.fit(X, y, X_val=X[val], y_val=y_true[val])
    assert clf.termination_condition_ in (rule, "tol")
    theta = int(np.ceil(np.sqrt(X.shape[0]) / 2))
    if clf.termination_condition_ == rule:
        assert clf.n_iter_ % theta == 0
    assert np.mean(clf.predict(X) == y_true) > 0.9


def test_validation_fraction_split_off():
    X, y_true = load_digits(n_class=3, return_X_y=True)
    y = hide_labels(y_true, 6, random_state=0)
    clf = LapSVM(
        early_stopping="validation",
        random_state=0,
        options=SolverOptions(validation_fraction=0.34),
    )
    clf.fit(X, y)
    assert set(clf.termination_condition_) <= {"validation", "tol"}


def test_fit_times_and_attributes():
    X, y, y_true = make_two_moons(100, random_state=0)
    clf = LapSVM(options=SolverOptions(record_history=True)).fit(X, y)
    assert set(clf.fit_times_) >= {"kernel", "graph", "solver"}
    assert clf.solver_ == "pcg"
    assert clf.history_["objective"].shape[0] == clf.n_iter_ + 1
    assert clf.transduction_.shape == (100,)
    assert np.array_equal(clf.transduction_[y != -1], y[y != -1])


def test_user_adjacency_and_precomputed_kernel(monkeypatch):
    X, y, y_true = make_two_moons(200, random_state=3)
    W = knn_graph(X, 10, weight="heat")
    a = LapSVM(solver="newton", graph_weight="heat").fit(X, y)
    b = LapSVM(solver="newton").fit(X, y, adjacency=W)
    np.testing.assert_allclose(
        a.decision_function(X), b.decision_function(X), atol=1e-8
    )
    from semisvm.kernels import kernel_matrix

    K = kernel_matrix(X, gamma=a.gamma_)
    c = LapSVM(solver="newton", kernel="precomputed").fit(K, y, adjacency=W)
    # a precomputed kernel has no X whose dimension gates the reading of the
    # proportions with one label per class (prior_reading): the same model as
    # the estimator's own kernel without that reading
    a0 = LapSVM(
        solver="newton",
        graph_weight="heat",
        options=SolverOptions(prior_reading="mass"),
    ).fit(X, y)
    np.testing.assert_allclose(
        c.decision_function(K), a0.decision_function(X), atol=1e-8
    )


def test_adjacency_with_isolated_points_gives_no_nan():
    X, y, _ = make_two_moons(60, random_state=0)
    W = knn_graph(X, 5).tolil()
    W[0, :] = 0
    W[:, 0] = 0
    with pytest.warns(UserWarning, match="isolated"):
        clf = LapSVM(solver="newton").fit(X, y, adjacency=W.tocsr())
    assert np.all(np.isfinite(clf.decision_function(X)))


def test_sparse_and_dense_input_agree():
    X, y, _ = make_two_moons(120, random_state=0)
    Xp = np.c_[X, np.zeros((120, 3))]
    kw = dict(solver="newton", gamma=2.0)
    d = LapSVM(**kw).fit(Xp, y)
    s = LapSVM(**kw).fit(sp.csr_matrix(Xp), y)
    np.testing.assert_allclose(
        s.decision_function(sp.csr_matrix(Xp)), d.decision_function(Xp), atol=1e-8
    )


def test_float32_kept_in_kernel_and_close_to_float64():
    X, y, _ = make_two_moons(150, random_state=0)
    a = LapSVM(early_stopping=None, tol=1e-8).fit(X, y)
    b = LapSVM(early_stopping=None, tol=1e-5).fit(X.astype(np.float32), y)
    assert np.array_equal(a.predict(X), b.predict(X.astype(np.float32)))


@pytest.mark.parametrize(
    "kernel", ["linear", "poly", "rbf", lambda A, B: (A @ B.T + 1) ** 2]
)
def test_kernels_run(kernel):
    X, y, y_true = make_two_moons(80, n_labeled_per_class=5, random_state=0)
    clf = LapSVM(kernel=kernel, solver="newton", gamma_a=1e-2).fit(X, y)
    assert np.all(np.isfinite(clf.decision_function(X)))


def test_pipeline_gridsearch_pickle():
    X, y_true = load_digits(n_class=2, return_X_y=True)
    X, y_true = X[:200], y_true[:200]
    pipe = make_pipeline(StandardScaler(), LapSVM())
    gs = GridSearchCV(pipe, {"lapsvm__gamma_i": [0.1, 1.0]}, cv=3)
    gs.fit(X, y_true)
    assert gs.best_score_ > 0.9
    clf = LapSVM().fit(X, hide_labels(y_true, 3, random_state=0))
    clf2 = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clf2.decision_function(X), clf.decision_function(X))


def test_permuting_unlabeled_points_changes_nothing():
    X, y, _ = make_two_moons(120, random_state=5)
    a = LapSVM(solver="newton").fit(X, y)
    perm = np.random.default_rng(0).permutation(120)
    b = LapSVM(solver="newton").fit(X[perm], y[perm])
    np.testing.assert_allclose(
        b.decision_function(X), a.decision_function(X), atol=1e-7
    )


def test_max_iter_warns():
    X, y, _ = make_two_moons(100, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        LapSVM(early_stopping=None, max_iter=3).fit(X, y)


# ------------------------------------------------------------- bad input

X0, Y0, _ = make_two_moons(40, n_labeled_per_class=3, random_state=0)


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(solver="sgd"), "'solver' parameter must be one of"),
        (dict(kernel="sigmoid"), "'kernel' parameter"),
        (dict(gamma_a=-1.0), "'gamma_a' parameter"),
        (dict(gamma_a=0.0), "'gamma_a' parameter"),
        (dict(gamma_i=-0.5), "'gamma_i' parameter"),
        (dict(n_neighbors=0), "'n_neighbors' parameter"),
        (dict(laplacian_power=1.5), "'laplacian_power' parameter"),
        (dict(early_stopping="patience"), "'early_stopping' parameter"),
        (dict(gamma=-2.0), "'gamma' parameter"),
    ],
)
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=re.escape(match) if "(" in match else match):
        LapSVM(**params).fit(X0, Y0)


def test_bad_data():
    with pytest.raises(ValueError, match="No labeled point"):
        LapSVM().fit(X0, np.full(40, -1))
    y1 = np.full(40, -1)
    y1[:3] = 1
    with pytest.raises(ValueError, match="single class"):
        LapSVM().fit(X0, y1)
    Xn = X0.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        LapSVM().fit(Xn, Y0)
    Xi = X0.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        LapSVM().fit(Xi, Y0)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LapSVM().fit(X0, Y0[:-1])
    clf = LapSVM().fit(X0, Y0)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.zeros((3, 5)))
    with pytest.raises(NotFittedError):
        LapSVM().predict(X0)
    with pytest.raises(ValueError, match="needs validation data"):
        LapSVM(early_stopping="validation").fit(X0, Y0)
    with pytest.raises(ValueError, match="adjacency must have shape"):
        LapSVM().fit(X0, Y0, adjacency=np.eye(3))
    with pytest.raises(ValueError, match="symmetric"):
        LapSVM().fit(X0, Y0, adjacency=np.triu(np.ones((40, 40)), 1))
    with pytest.raises(
        ValueError, match="precomputed kernel matrix X is not symmetric"
    ):
        LapSVM(kernel="precomputed").fit(np.triu(np.ones((40, 40))), Y0)


def test_pm1_labels_hint():
    y = np.full(40, -1)
    y[:5] = 1
    with pytest.raises(ValueError, match="recode the labels"):
        LapSVM().fit(X0, y)


def test_memory_guard_message():
    from semisvm.kernels import check_memory

    with pytest.raises(MemoryError, match="GiB.*float32"):
        check_memory(10**7, 10**7, np.float64)


# ------------------------------------------------- scikit-learn common checks


def test_plots(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from semisvm.plotting import plot_convergence, plot_decision_boundary

    X, y, y_true = make_two_moons(100, random_state=0)
    clf = LapSVM(graph_weight="heat", options=SolverOptions(record_history=True)).fit(
        X, y, X_val=X, y_val=y_true
    )
    fig = plot_decision_boundary(clf, X, y, resolution=40)
    fig.savefig(tmp_path / "b.png")
    fig = plot_convergence(clf)
    fig.savefig(tmp_path / "c.png")
    assert (tmp_path / "b.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="record_history=True"):
        plot_convergence(LapSVM().fit(X, y))


def test_constructors_are_keyword_only():
    # scikit-learn convention (issue 29): no positional constructor argument
    import inspect

    import semisvm
    from semisvm.model_selection import LapRLSCV, LapSVMCV

    classes = [
        getattr(semisvm, n)
        for n in semisvm.__all__
        if inspect.isclass(getattr(semisvm, n))
    ] + [LapSVMCV, LapRLSCV]
    assert len(classes) >= 8
    for cls in classes:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        positional = [
            p.name for p in params if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)
        ]
        assert not positional, (cls.__name__, positional)
