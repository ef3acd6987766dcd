"""Scoring, splitting and built-in model selection on semi-supervised data."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import (
    GridSearchCV,
    PredefinedSplit,
    StratifiedKFold,
    cross_val_score,
    cross_validate,
)
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisvm import LapRLS, LapRLSCV, LapSVM, LapSVMCV, SolverOptions
from semisvm.datasets import make_two_moons
from semisvm.model_selection import (
    LabeledKFold,
    LabeledStratifiedKFold,
    labeled_scorer,
    make_labeled_scorer,
)


@pytest.fixture(scope="module")
def moons():
    X, y, y_true = make_two_moons(160, n_labeled_per_class=6, random_state=3)
    return X, y, y_true


def _three_blobs(n=90, per_class=5, seed=0):
    rng = np.random.RandomState(seed)
    centers = np.array([[0, 0], [4, 0], [0, 4]])
    y_true = np.repeat([0, 1, 2], n // 3)
    X = centers[y_true] + rng.randn(n, 2)
    y = np.full(n, -1)
    for c in range(3):
        y[rng.choice(np.flatnonzero(y_true == c), per_class, replace=False)] = c
    return X, y, y_true


# ----------------------------------------------------------------- score
def test_score_ignores_unlabeled_rows(moons):
    X, y, y_true = moons
    clf = LapSVM().fit(X, y)
    y_eval = y_true.copy()
    y_eval[::3] = -1
    keep = y_eval != -1
    expected = accuracy_score(y_true[keep], clf.predict(X[keep]))
    assert clf.score(X, y_eval) == pytest.approx(expected)
    # the old behaviour counted -1 rows as errors: strictly lower here
    assert accuracy_score(y_eval, clf.predict(X)) < expected
    w = np.linspace(1, 2, y.size)
    assert clf.score(X, y_eval, sample_weight=w) == pytest.approx(
        accuracy_score(y_true[keep], clf.predict(X[keep]), sample_weight=w[keep])
    )


def test_score_without_labels_raises(moons):
    X, y, _ = moons
    clf = LapRLS().fit(X, y)
    with pytest.raises(ValueError, match="no labeled row"):
        clf.score(X, np.full(y.size, -1))
    with pytest.raises(ValueError, match="no labeled row"):
        labeled_scorer()(clf, X, np.full(y.size, -1))


def test_labeled_scorers(moons):
    X, y, y_true = moons
    clf = LapRLS().fit(X, y)
    y_eval = y_true.copy()
    y_eval[1::2] = -1
    keep = y_eval != -1
    pred = clf.predict(X[keep])
    assert labeled_scorer()(clf, X, y_eval) == pytest.approx(
        accuracy_score(y_true[keep], pred)
    )
    assert labeled_scorer("balanced_accuracy")(clf, X, y_eval) == pytest.approx(
        balanced_accuracy_score(y_true[keep], pred)
    )
    sc = make_labeled_scorer(balanced_accuracy_score)
    assert sc(clf, X, y_eval) == pytest.approx(
        balanced_accuracy_score(y_true[keep], pred)
    )
    with pytest.raises(TypeError, match="scoring"):
        labeled_scorer(3)


# -------------------------------------------------------------- splitters
@pytest.mark.parametrize("cls", [LabeledKFold, LabeledStratifiedKFold])
def test_splitters_keep_unlabeled_in_training(cls):
    X, y, _ = _three_blobs(per_class=4)
    unl = set(np.flatnonzero(y == -1))
    lab = np.flatnonzero(y != -1)
    cv = cls(4, shuffle=True, random_state=0)
    assert cv.get_n_splits(X, y) == 4
    seen = []
    for train, test in cv.split(X, y):
        assert unl <= set(train)
        assert (y[test] != -1).all()
        assert not set(train) & set(test)
        assert set(train) | set(test) == set(range(y.size))
        seen.extend(test)
        if cls is LabeledStratifiedKFold:
            assert np.array_equal(np.bincount(y[test], minlength=3), [1, 1, 1])
    assert sorted(seen) == list(lab)


def test_splitter_errors():
    y = np.array([0, 1, -1, -1])
    with pytest.raises(ValueError, match="labeled"):
        list(LabeledKFold(3).split(np.zeros((4, 1)), y))
    with pytest.raises(ValueError, match="needs y"):
        list(LabeledKFold(2).split(np.zeros((4, 1))))


def test_gridsearch_with_splitter_scores_labeled_accuracy(moons):
    X, y, y_true = moons
    cv = LabeledStratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"gamma_i": [0.0, 1.0], "gamma_a": [1e-6, 1e-2]}
    search = GridSearchCV(LapSVM(), grid, cv=cv).fit(X, y)
    # best_score_ is the mean accuracy on the held-out labeled points, recomputed
    best = clone(LapSVM()).set_params(**search.best_params_)
    accs = []
    for train, test in cv.split(X, y):
        est = clone(best).fit(X[train], y[train])
        accs.append(accuracy_score(y[test], est.predict(X[test])))
    assert search.best_score_ == pytest.approx(np.mean(accs))
    assert search.best_score_ >= 0.9
    assert (search.best_estimator_.transduction_ == y_true).mean() >= 0.9
    # with the same folds, the labeled scorer gives the same numbers
    res = cross_validate(LapSVM(gamma_i=1.0), X, y, cv=cv, scoring=labeled_scorer())
    np.testing.assert_allclose(
        res["test_score"], cross_val_score(LapSVM(gamma_i=1.0), X, y, cv=cv)
    )


def test_gridsearch_default_cv_uses_labeled_score(moons):
    # StratifiedKFold treats -1 as a class; score() must ignore those test rows
    X, y, _ = moons
    search = GridSearchCV(LapRLS(), {"gamma_i": [0.1, 1.0]}, cv=StratifiedKFold(3)).fit(
        X, y
    )
    assert search.best_score_ > 0.8


def _brute_force_scores(cvcls, base, X, y, grid, n_splits, rs, **base_kw):
    Q = np.flatnonzero(y != -1)
    folds = list(
        StratifiedKFold(n_splits, shuffle=True, random_state=rs).split(
            np.zeros((Q.size, 1)), y[Q]
        )
    )
    out = []
    for ga, gi in grid:
        accs = []
        for _, te in folds:
            yf = y.copy()
            yf[Q[te]] = -1
            est = base(gamma_a=ga, gamma_i=gi, **base_kw).fit(X, yf)
            accs.append(np.mean(est.transduction_[Q[te]] == y[Q[te]]))
        out.append(np.mean(accs))
    return np.array(out)


@pytest.mark.parametrize(
    "cvcls, base, kw",
    [(LapRLSCV, LapRLS, {}), (LapSVMCV, LapSVM, {"solver": "newton"})],
)
def test_cv_scores_equal_brute_force(cvcls, base, kw):
    X, y, _ = _three_blobs(per_class=6, seed=2)
    gas, gis = (1e-3, 1e-1), (0.0, 0.1, 10.0)
    cv = cvcls(
        gamma_a=gas,
        gamma_i=gis,
        gamma="median",
        cv=3,
        random_state=0,
        estimator_params=kw,
    ).fit(X, y)
    grid = [(ga, gi) for ga in gas for gi in gis]
    ref = _brute_force_scores(cvcls, base, X, y, grid, 3, 0, **kw)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], ref)
    assert cv.best_score_ == pytest.approx(ref.max())
    assert cv.cv_results_["rank_test_score"][cv.best_index_] == 1
    assert cv.n_newton_fallbacks_ == 0 if cvcls is LapSVMCV else True


@pytest.mark.slow
@pytest.mark.parametrize("cvcls", [LapRLSCV, LapSVMCV])
def test_cv_estimator_moons(cvcls, moons):
    X, y, y_true = moons
    # the exact solvers (the estimators' default is PCG with an early stop)
    kw = {"solver": "newton"} if cvcls is LapSVMCV else {"solver": "direct"}
    clf = cvcls(cv=3, random_state=0, n_neighbors=(6, 10), estimator_params=kw)
    clf.fit(X, y)
    n_cand = 3 * 2 * 5 * 5
    assert len(clf.cv_results_["params"]) == n_cand
    assert set(clf.best_params_) == {"gamma", "gamma_a", "gamma_i", "n_neighbors"}
    for k, v in clf.best_params_.items():
        assert clf.best_estimator_.get_params()[k] == v
    assert clf.best_score_ == pytest.approx(clf.cv_results_["mean_test_score"].max())
    # every candidate and fold is a fit of the plain estimator, whose exact
    # solver shares one factorization per distinct ratio gamma_i / gamma_a (8 for
    # the default grids) and per (width, graph)
    assert clf.n_fits_ == n_cand * clf.n_splits_
    assert clf.n_factorizations_ == 8 * 3 * 2
    assert (clf.transduction_ == y_true).mean() >= 0.95
    assert clf.score(X, y_true) == pytest.approx(accuracy_score(y_true, clf.predict(X)))


@pytest.mark.slow
def test_cv_estimator_multiclass_balanced():
    X, y, y_true = _three_blobs(per_class=5)
    clf = LapSVMCV(cv=2, scoring="balanced_accuracy", random_state=0).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2]
    assert clf.decision_function(X).shape == (X.shape[0], 3)
    assert (clf.predict(X) == y_true).mean() > 0.85


@pytest.mark.parametrize("cvcls, base", [(LapRLSCV, LapRLS), (LapSVMCV, LapSVM)])
def test_fallback_with_one_label_per_class(cvcls, base):
    X, y, _ = make_two_moons(100, n_labeled_per_class=1, random_state=0)
    with pytest.warns(UserWarning, match="at least two labeled points per class"):
        clf = cvcls().fit(X, y)
    assert clf.best_params_ == {} and clf.fallback_reason_
    # the estimator the search refits: the base estimator with its defaults
    ref = base().fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


@pytest.mark.slow
def test_fewer_folds_warning(moons):
    X, y, _ = moons
    with pytest.warns(UserWarning, match="6 folds|instead of cv=8"):
        clf = LapRLSCV(cv=8, gamma="median").fit(X, y)
    assert clf.n_splits_ == 6


def test_bad_parameters(moons):
    X, y, _ = moons
    with pytest.raises(ValueError, match="gamma_a"):
        LapRLSCV(gamma_a=(-1.0,)).fit(X, y)
    with pytest.raises(ValueError, match="estimator_params"):
        LapSVMCV(estimator_params={"gamma_i": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="cv"):
        LapSVMCV(cv=1).fit(X, y)


def test_verbose_progress(moons, capsys):
    X, y, _ = moons
    LapRLSCV(gamma=(0.5, 1.0), cv=2, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "LapRLSCV" in err


# ------------------------------------------- scikit-learn common checks
EXPECTED_FAILURES = {
    # -1 marks unlabeled points (scikit-learn's semi-supervised convention)
    "check_classifiers_classes": "trains on labels {-1, 1}; -1 marks unlabeled points",
}


@parametrize_with_checks(
    # the checks fit on as few as 10 points: n_neighbors must stay below n
    [
        LapRLSCV(
            gamma_a=(1e-2, 1.0),
            gamma_i=(0.0, 0.1),
            gamma="median",
            cv=2,
            n_neighbors=(5,),
        ),
        LapSVMCV(
            gamma_a=(1e-2,), gamma_i=(0.0, 0.1), gamma="median", cv=2, n_neighbors=(5,)
        ),
        # the default leave-one-out search over kernels and Laplacians
        LapRLSCV(gamma_a=(1e-2, 1.0), gamma_i=(0.0, 0.1), n_neighbors=(5,)),
        LapSVMCV(gamma_a=(1e-2,), gamma_i=(0.0, 0.1), n_neighbors=(5,)),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILURES,
)
def test_sklearn_common_checks(estimator, check):
    check(estimator)


def test_cv_precomputed_kernel_and_pipeline(moons):
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, y_true = moons
    grid = dict(gamma_a=(1e-3, 1e-1), gamma_i=(0.0, 1.0), cv=3, random_state=0)
    # binary weights: the kNN sets from X and from the kernel-induced distance
    # 2 - 2 k(x, z) coincide, the distance-based ("local", "heat") weights do not
    a = LapRLSCV(gamma=2.0, estimator_params={"graph_weight": "binary"}, **grid).fit(
        X, y
    )
    b = LapRLSCV(
        estimator_params={"kernel": "precomputed", "graph_weight": "binary"}, **grid
    ).fit(rbf_kernel(X, gamma=2.0), y)
    np.testing.assert_allclose(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
    )
    np.testing.assert_allclose(
        a.decision_function(X[:7]), b.decision_function(rbf_kernel(X[:7], X, gamma=2.0))
    )
    # gamma_a is a normalized weight (default 1e-6): the grid spans that scale
    grid_p = dict(grid, gamma_a=(1e-6, 1e-3))
    pipe = make_pipeline(StandardScaler(), LapSVMCV(gamma="median", **grid_p)).fit(X, y)
    assert pipe.score(X, y_true) >= 0.9


@pytest.mark.slow
def test_cv_groups_in_parallel_give_the_same_results(moons):
    """n_jobs runs the (width, n_neighbors) groups through joblib: same results."""
    X, y, _ = moons
    kw = dict(
        gamma_a=(1e-6, 1e-3),
        gamma_i=(0.0, 1.0),
        n_neighbors=(5, 8),
        cv=3,
        random_state=0,
    )
    a = LapRLSCV(**kw).fit(X, y)
    b = LapRLSCV(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
    )
    assert a.best_params_ == b.best_params_
    assert len(a.cv_results_["mean_test_score"]) == 2 * 2 * 2 * 3  # 3 widths


# ------------------------------------ K-fold: the plain estimator per fold
def _kfold_by_hand(base_kw, cand, X, y, folds):
    """Scores and losses of ``cand`` fitted by hand on each fold's labels."""
    from semisvm.models._problem import one_vs_rest
    from semisvm.solvers._loo import pointwise_loss

    cls, kw = base_kw
    loss = "squared" if cls is LapRLS else "squared_hinge"
    scores, losses = [], []
    for y_fold, test in folds:
        est = cls(**kw, **cand).fit(X, y_fold)
        O = np.asarray(est.decision_function(X[test])).reshape(test.size, -1)
        scores.append(np.mean(est.predict(X[test]) == y[test]))
        T = one_vs_rest(y[test], est.classes_)
        losses.append(np.mean(pointwise_loss(O, T, loss)))
    return np.array(scores), float(np.mean(losses))


def _stratified_folds(y, n_splits, seed):
    Q = np.flatnonzero(y != -1)
    skf = StratifiedKFold(n_splits, shuffle=True, random_state=seed)
    out = []
    for _, te in skf.split(np.zeros((Q.size, 1)), y[Q]):
        y_fold = y.copy()
        y_fold[Q[te]] = -1
        out.append((y_fold, Q[te]))
    return out


@pytest.mark.parametrize(
    "cvcls, base, kw",
    [
        (LapRLSCV, LapRLS, {}),
        (LapSVMCV, LapSVM, {}),
    ],
)
@pytest.mark.parametrize("three_classes", [False, True])
def test_kfold_equals_the_plain_estimator_fold_by_fold(cvcls, base, kw, three_classes):
    # every candidate's split scores and its loss are those of the plain
    # estimator fitted by hand on the fold (held-out labels -1, same seed), and
    # the refit is the plain estimator with best_params_
    if three_classes:
        X, y, _ = _three_blobs(per_class=6, seed=4)
    else:
        X, y, _ = make_two_moons(100, n_labeled_per_class=6, random_state=5)
    cv = cvcls(gamma_a=(1e-4, 1e-1), gamma_i=(0.0, 1.0), cv=3, random_state=7).fit(X, y)
    folds = _stratified_folds(y, 3, 7)
    base_kw = (base, dict(kw, random_state=7))
    for i, cand in enumerate(cv.cv_results_["params"]):
        scores, loss = _kfold_by_hand(base_kw, cand, X, y, folds)
        got = [cv.cv_results_[f"split{f}_test_score"][i] for f in range(3)]
        np.testing.assert_allclose(got, scores, rtol=0, atol=1e-12)
        assert cv.cv_results_["mean_test_loss"][i] == pytest.approx(loss, rel=1e-9)
    ref = base(**base_kw[1], **cv.best_params_).fit(X, y)
    np.testing.assert_allclose(
        cv.decision_function(X), ref.decision_function(X), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_array_equal(cv.transduction_, ref.transduction_)


def test_kfold_accepts_a_splitter(moons):
    X, y, _ = moons
    splitter = LabeledStratifiedKFold(3, shuffle=True, random_state=2)
    cv = LapRLSCV(gamma_a=(1e-4,), gamma_i=(0.0, 1.0), gamma=[2.0], cv=splitter).fit(
        X, y
    )
    assert cv.n_splits_ == 3
    folds = []
    for tr, te in splitter.split(X, y):
        y_fold = np.full(y.size, -1)
        y_fold[tr] = y[tr]
        folds.append((y_fold, te))
    base_kw = (LapRLS, {"early_stopping": None})
    for i, cand in enumerate(cv.cv_results_["params"]):
        scores, _ = _kfold_by_hand(base_kw, cand, X, y, folds)
        got = [cv.cv_results_[f"split{f}_test_score"][i] for f in range(3)]
        np.testing.assert_allclose(got, scores, rtol=0, atol=1e-12)
    # a splitter that leaves a class without training labels: a clear error
    with pytest.raises(ValueError, match="without a training label"):
        LapRLSCV(cv=PredefinedSplit(np.where(y == 1, 0, 1)), gamma=[2.0]).fit(X, y)
    with pytest.raises(ValueError, match="'cv' parameter"):
        LapRLSCV(cv="bogus").fit(X, y)


@pytest.mark.parametrize("cvcls, base", [(LapRLSCV, LapRLS), (LapSVMCV, LapSVM)])
def test_fallback_keeps_scalar_weights_base_defaults_and_refit(cvcls, base):
    X, y, _ = make_two_moons(100, n_labeled_per_class=2, random_state=0)
    with pytest.warns(UserWarning, match="no model selection"):
        clf = cvcls(gamma_a=1e-2, gamma_i=0.5, gamma=[2.0], random_state=3).fit(X, y)
    est = clf.best_estimator_
    assert (est.gamma_a, est.gamma_i, est.gamma) == (1e-2, 0.5, 2.0)
    assert est.early_stopping == base().early_stopping and est.random_state == 3
    ref = base(gamma_a=1e-2, gamma_i=0.5, gamma=2.0, random_state=3).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X))
    # refit=False: no model is fitted, as after a search
    with pytest.warns(UserWarning, match="no model selection"):
        clf = cvcls(gamma_a=1e-2, refit=False).fit(X, y)
    assert not hasattr(clf, "best_estimator_")
    assert clf.fallback_params_ == {"gamma_a": 1e-2}
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        clf.predict(X)


def test_width_rule_errors_are_not_swallowed(moons, monkeypatch):
    import semisvm.kernels

    def broken(*args, **kwargs):
        raise ValueError("width rule failed")

    X, y, _ = moons
    monkeypatch.setattr(semisvm.kernels, "resolve_gamma", broken)
    with pytest.raises(ValueError, match="width rule failed"):
        LapRLSCV(gamma_a=(1e-4,), gamma_i=(1.0,), cv=3).fit(X, y)


def test_bad_estimator_params_fail_with_the_estimators_message(moons):
    X, y, _ = moons
    with pytest.raises(ValueError, match="'graph_weight' parameter"):
        LapRLSCV(cv=3, estimator_params={"graph_weight": "bogus"}).fit(X, y)


def test_random_state_is_threaded(moons):
    X, y, _ = moons
    kw = dict(gamma_a=(1e-4,), gamma_i=(0.0, 1.0), gamma=[2.0], cv=3)
    a = LapRLSCV(**kw).fit(X, y)
    b = LapRLSCV(random_state=0, **kw).fit(X, y)  # None: the library's seed, 0
    np.testing.assert_array_equal(
        a.cv_results_["split0_test_score"], b.cv_results_["split0_test_score"]
    )
    c = LapRLSCV(random_state=5, **kw).fit(X, y)
    assert c.best_estimator_.random_state == 5
    d = LapRLSCV(random_state=5, estimator_params={"random_state": 1}, **kw).fit(X, y)
    assert d.best_estimator_.random_state == 1
    # the labeled splitters: None is a fixed seed too
    s1 = list(LabeledKFold(3, shuffle=True).split(X, y))
    s2 = list(LabeledKFold(3, shuffle=True).split(X, y))
    for (_, t1), (_, t2) in zip(s1, s2, strict=True):
        np.testing.assert_array_equal(t1, t2)


# ------------------------------- the fitting core's shared factorizations
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("intrinsic_bias", [True, False])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_factorized_core_equals_the_plain_solvers(
    normalized, intrinsic_bias, class_weight
):
    # fits with an OperatorCache given the labeled superset take the shared
    # factorization (models/_factorized.py); they equal the plain fits
    from semisvm.models._base import OperatorCache

    for X, y in (
        make_two_moons(120, n_labeled_per_class=7, random_state=1)[:2],
        _three_blobs(per_class=5, seed=3)[:2],
    ):
        Q = np.flatnonzero(y != -1)
        cache = OperatorCache(labeled=Q)
        y_fold = y.copy()
        y_fold[Q[::3]] = -1  # a fold: a subset of the labeled points
        for base, kw in ((LapRLS, {}), (LapSVM, {"solver": "newton"})):
            for ga, gi in [(1e-2, 1.0), (1e-4, 10.0), (1e-6, 1e-2)]:
                params = dict(
                    gamma_a=ga,
                    gamma_i=gi,
                    normalize_laplacian=normalized,
                    options=SolverOptions(intrinsic_bias=intrinsic_bias),
                    class_weight=class_weight,
                    early_stopping=None,
                    **kw,
                )
                for yy in (y, y_fold):
                    est = base(**params)
                    est.fit(X, yy, operator_cache=cache)
                    ref = base(**params).fit(X, yy)
                    np.testing.assert_allclose(
                        est.decision_function(X),
                        ref.decision_function(X),
                        rtol=1e-7,
                        atol=1e-9,
                    )
                    np.testing.assert_allclose(
                        est.objective_, ref.objective_, rtol=1e-9
                    )
                    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
                    assert est.solver_ == ref.solver_
        # one LU per distinct ratio gamma_i / gamma_a, shared by both estimators
        assert cache.n_factorizations == 3
