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
