"""scikit-learn meta-estimators on semi-supervised labels (issue 33 point 5)."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from semisvm import LapRLS
from semisvm.datasets import hide_labels


@pytest.fixture(scope="module")
def digits():
    X, y_true = load_digits(return_X_y=True)
    X = X / 16.0
    return X, hide_labels(y_true, 5, random_state=0), y_true


@pytest.mark.slow
def test_labeled_calibration_has_only_the_real_classes(digits):
    from semisvm.model_selection import LabeledCalibratedClassifierCV

    X, y, y_true = digits
    cal = LabeledCalibratedClassifierCV(LapRLS(), cv=5).fit(X, y)
    assert cal.classes_.tolist() == list(range(10))
    P = cal.predict_proba(X)
    assert P.shape == (X.shape[0], 10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    unl = y == -1
    acc = np.mean(cal.predict(X[unl]) == y_true[unl])
    assert acc > 0.8
    assert cal.score(X, y) == pytest.approx(np.mean(cal.predict(X[~unl]) == y[~unl]))


def test_labeled_calibration_string_labels():
    from sklearn.datasets import make_moons

    from semisvm.model_selection import LabeledCalibratedClassifierCV

    X, y_true = make_moons(200, noise=0.05, random_state=0)
    y = hide_labels(y_true, 10, random_state=0)
    ys = np.where(y == -1, "-1", np.where(y == 1, "pos", "neg"))
    cal = LabeledCalibratedClassifierCV(LapRLS(), cv=3).fit(X, ys)
    assert cal.classes_.tolist() == ["neg", "pos"]


def test_readme_does_not_claim_plain_calibration_with_unlabeled_rows():
    from pathlib import Path

    text = Path(__file__).resolve().parents[1].joinpath("README.md").read_text()
    assert "`CalibratedClassifierCV(LapSVM())` and" not in text
    assert "LabeledCalibratedClassifierCV" in text


@pytest.mark.slow
def test_self_training_lapsvm_digits_five_labels_per_class():
    # issue 33.5: SelfTrainingClassifier(LapSVM()) with 5 labels per class; its
    # refits are fully labeled, where the automatic choice runs on a bounded
    # subset of the labels (regularization_selection_['n_loo_labels'])
    import time

    from sklearn.datasets import load_digits
    from sklearn.semi_supervised import SelfTrainingClassifier
    from sklearn.svm import SVC

    from semisvm import LapSVM
    from semisvm.models._autoreg import MAX_LOO_LABELS

    X, yt = load_digits(return_X_y=True)
    X = X / 16.0
    rng = np.random.default_rng(0)
    y = np.full(yt.size, -1)
    for c in range(10):
        y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
    U = y == -1
    t0 = time.perf_counter()
    st = SelfTrainingClassifier(LapSVM(), max_iter=3).fit(X, y)
    assert time.perf_counter() - t0 < 600  # a minute here; not a speed test
    np.testing.assert_array_equal(st.classes_, np.arange(10))
    svc = SVC().fit(X[~U], y[~U])
    assert np.mean(st.predict(X[U]) == yt[U]) >= np.mean(svc.predict(X[U]) == yt[U])
    full = LapSVM().fit(X, yt).regularization_selection_
    assert full["n_loo_labels"] <= MAX_LOO_LABELS + 10
