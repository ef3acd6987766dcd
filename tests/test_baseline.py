"""Never worse than the labels alone: the majority-class and supervised fallbacks."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from semisvm import LapRLS, LapRLSCV, LapSVM, LapSVMCV, SolverOptions
from semisvm.datasets import make_two_moons
from semisvm.kernels import kernel_matrix
from semisvm.models._baseline import (
    beats_majority,
    labels_prefer,
    majority_beatable,
    majority_loo,
    majority_margin,
    scale_gamma,
)
from semisvm.solvers._newton import laprls_direct


def test_majority_loo_is_brute_force():
    r = np.random.default_rng(0)
    for _ in range(20):
        y = r.integers(0, 3, size=13)
        w = r.uniform(0.5, 2.0, size=13)
        for weights in (None, w):
            ww = np.ones(13) if weights is None else weights
            brute = []
            for i in range(13):
                keep = np.arange(13) != i
                totals = np.bincount(y[keep], weights=ww[keep], minlength=3)
                brute.append(float(np.argmax(totals) != y[i]))
            np.testing.assert_array_equal(majority_loo(y, weights), brute)


def test_labels_prefer_a_baseline_by_a_margin_they_can_see():
    cand = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=float)
    # b = 4 points only the candidate misses, c = 0
    assert labels_prefer(np.zeros(10), cand, 0.0, 0.4, 10)
    # b = 4, c = 3: a difference of 1 point is not enough
    base = np.array([0, 0, 0, 0, 1, 1, 1, 0, 0, 0], dtype=float)
    assert not labels_prefer(base, cand, 0.3, 0.4, 10)
    # b = 4, c = 2: two points are
    base[6] = 0
    assert labels_prefer(base, cand, 0.2, 0.4, 10)
    # weighted errors (weight over the mean weight) count by weight
    assert not labels_prefer(base * 0.0, cand * 0.45, 0.0, 0.18, 10)
    # without per-point errors: l times the difference of the rates
    assert labels_prefer(None, None, 0.40, 0.42, 100)
    assert not labels_prefer(None, None, 0.40, 0.41, 100)


def test_scale_gamma_is_scikit_learns():
    r = np.random.default_rng(1)
    X = r.normal(size=(50, 7)) * 3.0
    y = np.arange(50) % 2
    assert scale_gamma(X) == pytest.approx(SVC(gamma="scale").fit(X, y)._gamma)
    Xs = sp.random(50, 30, density=0.2, random_state=0, format="csr")
    assert scale_gamma(Xs) == pytest.approx(SVC(gamma="scale").fit(Xs, y)._gamma)


def _null_data(n=600, seed=0, n_labeled=60, stratified=False):
    """Labels independent of X (classes 60/40); ``stratified``: the labeled
    points drawn per class in those proportions."""
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 20))
    truth = (r.random(n) < 0.4).astype(int)
    if stratified:
        n1 = int(round(0.4 * n_labeled))
        lab = np.r_[
            r.choice(np.flatnonzero(truth == 0), n_labeled - n1, replace=False),
            r.choice(np.flatnonzero(truth == 1), n1, replace=False),
        ]
    else:
        lab = r.choice(n, n_labeled, replace=False)
    y = np.full(n, -1)
    y[lab] = truth[lab]
    return X, y, truth


@pytest.mark.parametrize("est", [LapSVM(), LapRLS()], ids=["LapSVM", "LapRLS"])
def test_labels_independent_of_x_fall_back_to_the_majority(est):
    X, y, truth = _null_data()
    est.fit(X, y)
    info = est.regularization_selection_["baseline"]
    # the labels see the chosen model lose to the majority class
    assert info["fallback"] == "majority"
    assert info["majority_loo_error"] < info["candidate_loo_error"]
    lab = y != -1
    majority = np.bincount(y[lab]).argmax()
    assert np.all(est.transduction_[~lab] == majority)
    assert np.all(est.predict(X[:50]) == majority)
    assert est.solver_ == "majority" and est.kernel_operator_ == "labeled"
    proba = est.predict_proba(X[:5])
    assert np.allclose(proba.sum(axis=1), 1.0)


def test_supervised_fallback_is_the_kernel_machine_on_the_labels():
    # a linear boundary through uniform density in 50 dimensions: the graph
    # carries no cluster, the labels carry the boundary
    r = np.random.default_rng(0)
    X = r.uniform(-1, 1, size=(800, 50))
    truth = (X[:, 0] + X[:, 1] > 0).astype(int)
    y = np.full(800, -1)
    lab = r.choice(800, 200, replace=False)
    y[lab] = truth[lab]
    est = LapRLS().fit(X, y)
    info = est.regularization_selection_["baseline"]
    # on this draw the kernel machine at gamma='scale' errs on 13.5% of the
    # held-out labels, the chosen lambda_I = 0 model at the graph's width on 16%
    assert info["fallback"] == "supervised"
    assert info["supervised_loo_error"] < info["candidate_loo_error"]
    # the fallback is exactly the RLS machine on the labeled points with
    # gamma='scale' and the chosen lambda_A (the direct solve of Eq. 15, no graph)
    g = 1.0 / (X.shape[1] * X.var())
    assert est.gamma_ == pytest.approx(g)
    lab = np.sort(lab)
    K = kernel_matrix(X[lab], gamma=g)
    Y = np.where(truth[lab] == 1, 1.0, -1.0)[:, None]
    ref = laprls_direct(K, Y, gamma_a=est.gamma_a_, gamma_i=0.0)
    np.testing.assert_allclose(est.dual_coef_, ref.alpha, rtol=1e-6, atol=1e-8)
    Kt = kernel_matrix(X[:20], X[lab], gamma=g)
    np.testing.assert_allclose(
        est.decision_function(X[:20]),
        (Kt @ ref.alpha)[:, 0] + ref.b[0],
        rtol=1e-6,
        atol=1e-8,
    )


@pytest.mark.parametrize("est", [LapSVM(), LapRLS()], ids=["LapSVM", "LapRLS"])
def test_the_graph_model_stands_where_the_graph_carries_the_labels(est):
    X, y, truth = make_two_moons(400, noise=0.08, n_labeled_per_class=5, random_state=0)
    est.fit(X, y)
    info = est.regularization_selection_["baseline"]
    assert info["fallback"] is None
    assert info["candidate_loo_error"] <= info.get("supervised_loo_error", 1.0)
    assert np.mean(est.transduction_ == truth) >= 0.97


def test_numbers_given_are_kept_and_one_label_per_class_cannot_be_judged():
    X, y, _ = _null_data()
    est = LapRLS(gamma_a=1e-3, gamma_i=1e-2).fit(X, y)
    assert "baseline" not in est.regularization_selection_
    X2, y2, _ = make_two_moons(200, n_labeled_per_class=1, random_state=0)
    est = LapSVM().fit(X2, y2)
    assert "baseline" not in est.regularization_selection_


def test_labels_only_check_option_always_and_never():
    X, y, truth = _null_data()
    lab = y != -1
    majority = np.bincount(y[lab]).argmax()
    # 'always': the numbers given are checked too, and lose to the majority
    est = LapRLS(
        gamma_a=1e-3, gamma_i=1e-2, options=SolverOptions(labels_only_check="always")
    ).fit(X, y)
    assert est.regularization_selection_["baseline"]["fallback"] == "majority"
    assert np.all(est.transduction_[~lab] == majority)
    # None: no check, the model the "auto" rule chose
    est = LapRLS(options=SolverOptions(labels_only_check=None)).fit(X, y)
    assert "baseline" not in est.regularization_selection_
    assert est.kernel_operator_ != "labeled"
    assert len(np.unique(est.transduction_[~lab])) == 2
    with pytest.raises(ValueError, match="labels_only_check"):
        LapRLS(options=SolverOptions(labels_only_check="yes")).fit(X, y)


@pytest.mark.parametrize("cls", [LapSVMCV, LapRLSCV], ids=["LapSVMCV", "LapRLSCV"])
def test_cross_validated_estimators_keep_the_promise(cls):
    # the search's choice is refitted with numbers: the refit checks them
    X, y, _ = _null_data(n=300, n_labeled=40)
    lab = y != -1
    est = cls(cv=3, gamma_a=(1e-6, 1e-3), gamma_i=(0.0, 1.0), random_state=0).fit(X, y)
    best = est.best_estimator_
    assert best.options.labels_only_check == "always"
    info = best.regularization_selection_["baseline"]
    assert info["fallback"] == "majority"
    assert np.all(best.transduction_[~lab] == np.bincount(y[lab]).argmax())
    assert np.array_equal(est.transduction_, best.transduction_)
    # weights the user fixed stay unchecked
    fixed = cls(cv=3, gamma_a=1e-3, gamma_i=1e-2).fit(X, y)
    assert fixed.best_estimator_.options is None or (
        fixed.best_estimator_.options.labels_only_check == "auto"
    )
    assert "baseline" not in fixed.best_estimator_.regularization_selection_


def _evidence(per_point, point_errors, pairs=None):
    from semisvm.models._autoreg import LOOEvidence

    K = per_point.shape[0]
    pairs = pairs or [(10.0**-j, 0.0) for j in range(K)]
    return LOOEvidence(
        pairs,
        per_point,
        per_point.mean(axis=1),
        point_errors.mean(axis=1),
        10,
        0,
        0.0,
        point_errors=point_errors,
    )


def test_selection_point_errors_redo_the_choice_without_each_label():
    """Brute force: for each label, drop its column, choose the candidate with the
    lowest mean criterion on the others, and read that candidate's error on it."""
    from semisvm.models._autoreg import selection_point_errors

    r = np.random.default_rng(3)
    for _ in range(20):
        K, l_ = int(r.integers(2, 6)), int(r.integers(5, 30))
        pp = r.gamma(2.0, size=(K, l_))
        pe = (r.random((K, l_)) < 0.3).astype(float)
        ev = _evidence(pp, pe)
        got = selection_point_errors(ev, lambda e, _: int(np.argmin(e.scores)))
        want = []
        for i in range(l_):
            keep = np.arange(l_) != i
            k = int(np.argmin(pp[:, keep].mean(axis=1)))
            want.append(pe[k, i])
        np.testing.assert_array_equal(got, want)


def test_a_winner_by_one_label_is_scored_by_the_runner_up_there():
    """Candidate 1 beats candidate 0 only on label 0's evidence: without label 0
    the rule picks candidate 0, so label 0 is scored by candidate 0's error."""
    from semisvm.models._autoreg import selection_point_errors

    pp = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 1.1, 1.1, 1.1]])
    pe = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    ev = _evidence(pp, pe)
    assert int(np.argmin(ev.scores)) == 1  # chosen on all labels
    got = selection_point_errors(ev, lambda e, _: int(np.argmin(e.scores)))
    # label 0: candidate 0 (errs); labels 1-3: candidate 1 still wins (errs)
    np.testing.assert_array_equal(got, [1.0, 1.0, 1.0, 1.0])
    # the winner's own LOO error (3 of 4) is the optimistic figure
    assert got.mean() > pe[1].mean()


@pytest.mark.parametrize("est", [LapSVM(), LapRLS()], ids=["LapSVM", "LapRLS"])
def test_the_majority_class_is_the_reference(est):
    """Labels independent of X, 60/40, 100 labels: whatever the rule chose, the
    fit is the majority class unless a model beats it on the held-out labels by
    the margin (checked against the reported per-point evidence), and it is never
    a model that does not."""
    from semisvm.models._baseline import MIN_MARGIN

    kept = 0
    for seed in range(4):
        X, y, _ = _null_data(n=500, seed=seed, n_labeled=100)
        est.fit(X, y)
        info = est.regularization_selection_["baseline"]
        if info["fallback"] is None:
            kept += 1
            # kept only by beating the majority by the margin
            gain = info["majority_loo_error"] - info["candidate_selection_error"]
            assert gain * 100 >= MIN_MARGIN - 1e-9
            assert info["candidate_selection_error"] >= 0.0
        elif info["fallback"] == "majority":
            lab = y != -1
            assert np.all(est.transduction_[~lab] == np.bincount(y[lab]).argmax())
    assert kept < 4


def test_beats_majority_by_the_margin_and_one_standard_deviation():
    maj = np.r_[np.ones(40), np.zeros(60)]
    # 39 vs 40 errors: one label better is not a margin the labels can see
    mod = np.r_[np.ones(39), np.zeros(61)]
    assert not beats_majority(maj, mod, 0.40, 0.39, 100)
    # two better where they disagree on two labels only: the margin, and
    # sqrt(b + c) = sqrt(2) < 2
    mod = np.r_[np.ones(38), np.zeros(62)]
    assert beats_majority(maj, mod, 0.40, 0.38, 100)
    # the same two better where they disagree on 36 labels (c = 19, b = 17):
    # c - b = 2 < sqrt(36) = 6
    mod = np.r_[np.zeros(19), np.ones(21), np.ones(17), np.zeros(43)]
    assert mod.sum() == 38
    assert not beats_majority(maj, mod, 0.40, 0.38, 100)
    # c = 22, b = 14: c - b = 8 >= sqrt(36)
    mod = np.r_[np.zeros(22), np.ones(18), np.ones(14), np.zeros(46)]
    assert beats_majority(maj, mod, 0.40, 0.32, 100)
    # brute force against the definition
    r = np.random.default_rng(5)
    for _ in range(200):
        a, m = (r.random(30) < r.uniform(0.2, 0.6, size=2)[:, None]).astype(float)
        c, b = np.sum((a == 1) & (m == 0)), np.sum((a == 0) & (m == 1))
        want = c - b >= max(2, np.sqrt(b + c))
        assert beats_majority(a, m, a.mean(), m.mean(), 30) == want
    # without per-point errors, on the rates
    assert beats_majority(maj, None, 0.40, 0.20, 100)
    assert not beats_majority(maj, None, 0.40, 0.35, 100)


def test_three_labels_against_a_real_majority_two_against_a_tie():
    from semisvm.models._baseline import MAJORITY_MARGIN, MIN_MARGIN, majority_margin

    assert (MIN_MARGIN, MAJORITY_MARGIN) == (2, 3)
    # 6/4: the majority class is right on the six; balanced: wrong on every label
    assert majority_margin(majority_loo(np.repeat([0, 1], [6, 4]), None)) == 3
    assert majority_margin(majority_loo(np.repeat([0, 1], [5, 5]), None)) == 2
    assert majority_margin(majority_loo(np.repeat([0, 1, 2], [2, 2, 2]), None)) == 2
    maj = np.r_[np.ones(4), np.zeros(6)]
    # two of two discordant labels (chance: one time in four): the first look
    # only
    mod = np.r_[np.zeros(2), np.ones(2), np.zeros(6)]
    assert beats_majority(maj, mod, 0.4, 0.2, 10)
    assert not beats_majority(maj, mod, 0.4, 0.2, 10, MAJORITY_MARGIN)
    # three right, one wrong (c - b = 2): the tie's margin only
    mod = np.r_[np.zeros(3), np.ones(1), np.ones(1), np.zeros(5)]
    assert beats_majority(maj, mod, 0.4, 0.2, 10)
    assert not beats_majority(maj, mod, 0.4, 0.2, 10, MAJORITY_MARGIN)
    # three of three: both
    mod = np.r_[np.zeros(3), np.ones(1), np.zeros(6)]
    assert beats_majority(maj, mod, 0.4, 0.1, 10, MAJORITY_MARGIN)
    r = np.random.default_rng(7)
    for _ in range(200):
        a, m = (r.random(12) < r.uniform(0.1, 0.6, size=2)[:, None]).astype(float)
        c, b = np.sum((a == 1) & (m == 0)), np.sum((a == 0) & (m == 1))
        want = c - b >= max(3, np.sqrt(b + c))
        assert beats_majority(a, m, a.mean(), m.mean(), 12, 3) == want


def test_the_margins_each_look_uses(monkeypatch):
    """60/40 labels: the chosen model, then the supervised fallback, each weighed
    against the majority class with three labels."""
    from semisvm.models import _baseline

    seen = []
    real = _baseline.beats_majority

    def spy(*args):
        seen.append(args[5] if len(args) > 5 else _baseline.MIN_MARGIN)
        return real(*args)

    monkeypatch.setattr(_baseline, "beats_majority", spy)
    X, y, _ = _null_data()
    LapRLS().fit(X, y)
    assert seen == [_baseline.MAJORITY_MARGIN, _baseline.MAJORITY_MARGIN]


def test_a_model_with_almost_no_held_out_errors_still_faces_the_majority():
    """Fewer than two LOO errors leave no labels-only model a margin against the
    chosen one, but the burden against the majority class is checked first
    (here a lucky fit of noise with 10% LOO error that clears it)."""
    X, y, _ = _null_data(300, seed=20, n_labeled=10, stratified=True)
    info = LapRLS().fit(X, y).regularization_selection_["baseline"]
    assert info["candidate_loo_error"] * 10 < 2
    assert info["fallback"] is None
    assert info["reason"].startswith("the chosen model beats the majority class")
    gain = info["majority_loo_error"] - info["candidate_selection_error"]
    assert gain * 10 >= 3 - 1e-9


@pytest.mark.parametrize("n_classes", [2, 3])
def test_majority_criterion_is_the_intercept_only_fit_brute_force(n_classes):
    from semisvm.models._baseline import majority_criterion
    from semisvm.solvers._loo import margins, scale_free_squared_hinge

    r = np.random.default_rng(n_classes)
    y = r.integers(0, n_classes, size=17)
    y[:n_classes] = np.arange(n_classes)
    Y = np.where(y[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
    if n_classes == 2:
        Y = Y[:, 1:]
    for w in (None, r.uniform(0.5, 2.0, size=y.size)):
        ww = np.ones(y.size) if w is None else w
        O = np.empty_like(Y)
        for i in range(y.size):  # the weighted mean of the other labels' targets
            keep = np.arange(y.size) != i
            O[i] = ww[keep] @ Y[keep] / ww[keep].sum()
        _, pts = scale_free_squared_hinge(margins(O, Y), ww)
        np.testing.assert_allclose(
            majority_criterion(Y, w), pts * ww / ww.mean(), rtol=1e-12, atol=1e-15
        )


def test_criterion_beats_is_one_paired_standard_error():
    from semisvm.models._baseline import criterion_beats

    r = np.random.default_rng(11)
    for _ in range(100):
        a, m = r.uniform(0, 2, size=(2, 30))
        m = m * r.uniform(0.5, 1.0)
        d = a - m
        want = d.mean() / (d.std(ddof=1) / np.sqrt(d.size)) > 1.0
        assert criterion_beats(a, m) == want
    # nothing to judge without per-point criteria
    assert criterion_beats(np.ones(5), None)


def test_beats_majority_counts_labels_under_weights():
    # class weights 2 / 0.5 on 4 / 4 labels, on the evidence's scale (weight over
    # the mean weight): the majority class misses the four light labels; a
    # model right everywhere beats it by four labels, not by 4 x 0.4
    maj = np.r_[np.zeros(4), np.full(4, 0.4)]
    assert beats_majority(maj, np.zeros(8), 0.2, 0.0, 8, 3)
    # right on three light labels, wrong on one heavy one: two labels more by
    # count, a weighted loss
    maj = np.r_[np.zeros(4), np.full(3, 0.2), 0.0]
    mod = np.r_[3.0, np.zeros(7)]
    assert not beats_majority(maj, mod, 0.1, 0.3, 8)


def test_majority_beatable_counts_the_labels_a_model_could_win():
    def beatable(counts):
        y = np.repeat(np.arange(len(counts)), counts)
        return majority_beatable(y, majority_loo(y, None))

    # one label per class: held out, its class has none left
    assert not beatable([1, 1]) and not beatable([1, 1, 1])
    # 9/1: the one label the majority misses leaves its class empty
    assert not beatable([9, 1])
    # 6/4, 7/3: at least three misses a model could get right; balanced 2/2:
    # a tie, beaten by two
    assert beatable([6, 4]) and beatable([7, 3]) and beatable([2, 2])
    # 8/2: two misses, below the three a real majority class takes
    assert not beatable([8, 2])
    # brute force: misses whose class keeps a label without them
    r = np.random.default_rng(3)
    for _ in range(50):
        y = r.integers(0, 3, size=r.integers(2, 12))
        y = np.unique(y, return_inverse=True)[1]
        e = majority_loo(y, None)
        n_misses = sum(e[i] > 0 and np.sum(y == y[i]) > 1 for i in range(y.size))
        assert majority_beatable(y, e) == (n_misses >= majority_margin(e))


@pytest.mark.parametrize("est", [LapSVM(), LapRLS()], ids=["LapSVM", "LapRLS"])
def test_ten_labels_from_noise_fall_back_to_the_majority(est):
    # 6/4 labels, independent of X: fewer than five in a class, yet the
    # majority class (leave-one-out 40%) is a reference a model must beat
    X, y, truth = _null_data(1500, n_labeled=10, stratified=True)
    est.fit(X, y)
    info = est.regularization_selection_["baseline"]
    assert info["fallback"] == "majority"
    assert info["majority_loo_error"] == pytest.approx(0.4)
    assert "supervised" not in info["reason"].split(";")[0]
    assert np.all(est.transduction_[y == -1] == 0)


@pytest.mark.parametrize("est", [LapSVM(), LapRLS()], ids=["LapSVM", "LapRLS"])
def test_few_imbalanced_labels_keep_the_graph_where_it_carries_them(est):
    X, y, truth = make_two_moons(400, noise=0.08, n_labeled_per_class=5, random_state=0)
    lab = np.flatnonzero(y != -1)
    y[lab[truth[lab] == 1][:2]] = -1  # 5/3 labels: the majority class is judged
    est.fit(X, y)
    info = est.regularization_selection_["baseline"]
    assert info["fallback"] is None
    assert np.mean(est.transduction_ == truth) >= 0.97
    # 5/2: two labels the majority class misses cannot show a margin of three
    y[lab[truth[lab] == 1][2]] = -1
    est.fit(X, y)
    assert "baseline" not in est.regularization_selection_
    assert np.mean(est.transduction_ == truth) >= 0.97


def test_variance_in_row_blocks_is_numpys_in_float64():
    from semisvm.models._baseline import _variance

    # float32 entries far from zero (the mean subtracted in float64), two blocks
    X = (np.random.default_rng(0).random((20_000, 300)) * 3 + 100).astype(np.float32)
    want = np.asarray(X, dtype=np.float64).var()
    assert _variance(X) == pytest.approx(want, rel=1e-13)
    assert scale_gamma(X) == pytest.approx(1 / (300 * want), rel=1e-13)
