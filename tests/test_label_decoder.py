"""One label decoder (issue 29): -1, -1.0 and "-1" mark an unlabeled point everywhere."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics import accuracy_score

from semisvm import LapRLS, _validation
from semisvm._validation import split_labeled
from semisvm.model_selection import (
    LabeledStratifiedKFold,
    LapRLSCV,
    labeled_mask,
    labeled_scorer,
)
from semisvm.models import _problem


@pytest.fixture(scope="module")
def moons():
    """Two moons, 5 labels per class; numeric (0/1/-1) and text ("neg"/"pos"/"-1") labels."""
    X, y = make_moons(200, noise=0.05, random_state=0)
    rng = np.random.RandomState(0)
    lab = np.r_[
        rng.choice(np.flatnonzero(y == 0), 5, replace=False),
        rng.choice(np.flatnonzero(y == 1), 5, replace=False),
    ]
    y_num = np.full(200, -1)
    y_num[lab] = y[lab]
    y_str = np.where(y_num == -1, "-1", np.where(y_num == 1, "pos", "neg"))
    return X, y_num, y_str, np.isin(np.arange(200), lab)


def _encodings(y_num):
    """The same labels written every accepted way (unlabeled marker last in each name)."""
    as_str = np.where(y_num == -1, "-1", np.where(y_num == 1, "pos", "neg"))
    obj_int = as_str.astype(object)
    obj_int[y_num == -1] = -1
    obj_float = as_str.astype(object)
    obj_float[y_num == -1] = -1.0
    return {
        "int -1": y_num,
        "float -1.0": y_num.astype(float),
        "str '-1'": as_str,
        "object str '-1'": as_str.astype(object),
        "object int -1": obj_int,
        "object float -1.0": obj_float,
        "list str '-1'": as_str.tolist(),
    }


def test_one_decoder_one_constant():
    # _problem reuses the decoder and the constant of _validation (no second copy)
    assert _problem.labeled_mask is _validation.labeled_mask is labeled_mask
    assert _problem.UNLABELED is _validation.UNLABELED
    assert "UNLABELED =" not in open(_problem.__file__).read()


def test_every_marker_read_the_same_way_everywhere(moons):
    X, y_num, _, labeled = moons
    cv = LabeledStratifiedKFold(3, shuffle=True, random_state=0)
    for name, y in _encodings(y_num).items():
        assert np.array_equal(labeled_mask(y), labeled), name
        assert np.array_equal(split_labeled(y)[0], labeled), name
        assert split_labeled(y)[1].size == 2, name
        tests = np.concatenate([te for _, te in cv.split(X, y)])
        assert np.array_equal(np.sort(tests), np.flatnonzero(labeled)), name


def test_booleans_and_other_strings_are_classes():
    assert labeled_mask([True, False]).all()
    assert labeled_mask(np.array([True, False], dtype=object)).all()
    assert labeled_mask(["-1.0", " -1", "x"]).all()  # only the exact string "-1"
    assert not labeled_mask(np.array([b"-1"])).any()


def test_string_minus_one_score_counts_labeled_rows_only(moons):
    X, _, y_str, labeled = moons
    clf = LapRLS().fit(X, y_str)
    assert list(clf.classes_) == ["neg", "pos"]
    expected = accuracy_score(y_str[labeled], clf.predict(X[labeled]))
    assert clf.score(X, y_str) == pytest.approx(expected)
    assert labeled_scorer("accuracy")(clf, X, y_str) == pytest.approx(expected)


def test_string_minus_one_cv_scores_like_numeric_labels(moons):
    X, y_num, y_str, _ = moons
    cv_num = LapRLSCV().fit(X, y_num)
    cv_str = LapRLSCV().fit(X, y_str)
    assert cv_str.best_score_ == pytest.approx(cv_num.best_score_)
    assert cv_str.best_params_ == cv_num.best_params_
