"""One label decoder (issue 29): -1, -1.0 and "-1" mark an unlabeled point everywhere."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics import accuracy_score

from semisvm import ExactTSVM, LapRLS, LapSVC, LapSVM, LapSVMPath, _validation
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


# ---------------------------------------------------------------- pandas labels
# None, NaN and pd.NA mark unlabeled rows (how pandas writes an empty cell); the
# class names are kept.

pd = pytest.importorskip("pandas")


def _names(y_num, missing):
    """Class names "neg" / "pos", ``missing`` on the unlabeled rows, as a list."""
    return [
        missing if v == -1 else ("pos" if v == 1 else "neg") for v in y_num.tolist()
    ]


def _pandas_encodings(y_num):
    """The same labels as pandas columns of every dtype, missing = unlabeled."""
    names = _names(y_num, None)
    with_nan = np.where(y_num == -1, np.nan, y_num.astype(float))
    return {
        "object None": pd.Series(names, dtype=object),
        "object NaN": pd.Series(_names(y_num, np.nan), dtype=object),
        "object pd.NA": pd.Series(_names(y_num, pd.NA), dtype=object),
        "object -1 and None": pd.Series(
            [-1 if v is None and i % 2 else v for i, v in enumerate(names)],
            dtype=object,
        ),
        "str": pd.Series(names, dtype="str"),
        "string pd.NA": pd.Series(names, dtype="string"),
        "category": pd.Series(names, dtype="category"),
        "list with NaN": _names(y_num, float("nan")),
        "float NaN": with_nan,
        "Int64": pd.Series(with_nan).astype("Int64"),
        "int category": pd.Series(with_nan).astype("Int64").astype("category"),
    }


def test_missing_values_mark_unlabeled_rows_everywhere(moons):
    X, y_num, _, labeled = moons
    cv = LabeledStratifiedKFold(3, shuffle=True, random_state=0)
    for name, y in _pandas_encodings(y_num).items():
        assert np.array_equal(labeled_mask(y), labeled), name
        lab, classes, y_enc = split_labeled(y)
        assert np.array_equal(lab, labeled), name
        expected = [0, 1] if name in ("float NaN", "Int64", "int category") else None
        assert classes.tolist() == (expected or ["neg", "pos"]), name
        assert np.array_equal(y_enc, y_num), name
        tests = np.concatenate([te for _, te in cv.split(X, y)])
        assert np.array_equal(np.sort(tests), np.flatnonzero(labeled)), name
        if not isinstance(y, list):  # np.asarray turns the list's NaN into "nan"
            targets = _problem.encode_targets(y)
            assert np.array_equal(targets.labeled, labeled), name


def test_integer_classes_stay_integers():
    # a categorical or nullable-integer column with blanks keeps class 1 as 1
    # (numpy would turn the column into floats)
    for y in (
        pd.Series([0, None, 1, 2], dtype="Int64"),
        pd.Series([0, None, 1, 2], dtype="category"),
        np.array([0, None, 1, 2], dtype=object),
    ):
        decoded = _validation.decode_labels(y)
        assert decoded.dtype.kind == "i" and decoded.tolist() == [0, -1, 1, 2], y


def test_numeric_labels_without_missing_values_are_unchanged():
    # scikit-learn's checks pass numeric y with -1: the decoder leaves it alone
    for y in (np.array([0, -1, 1]), np.array([0.0, -1.0, 2.0]), np.array(["a", "b"])):
        assert _validation.decode_labels(y) is y
    assert _validation.decode_labels([0, -1, 1]).tolist() == [0, -1, 1]


def test_mix_of_strings_and_numbers_names_the_rows():
    y = pd.Series(["neg", None, "pos", 3, "neg", 4.5, -1, np.nan])
    with pytest.raises(ValueError, match="mixes strings with numbers") as exc:
        labeled_mask(y)
    msg = str(exc.value)
    assert "rows 0, 2, 4 hold strings (e.g. 'neg')" in msg, msg
    assert "rows 3, 5 hold numbers (e.g. 3)" in msg, msg
    assert "-1, None, NaN or pd.NA" in msg, msg
    with pytest.raises(ValueError, match="row 1 holds other values"):
        split_labeled(np.array(["neg", True, None], dtype=object))
    with pytest.raises(ValueError, match="rows 0, 2 hold strings"):
        LapRLS().fit(np.arange(24.0).reshape(12, 2), ["a", 7, "b"] + [None] * 9)


@pytest.fixture(scope="module")
def small():
    """Three blobs' worth of two classes: 24 points, 3 labels per class."""
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(-2, 0.5, (12, 2)), rng.normal(2, 0.5, (12, 2))])
    y_num = np.full(24, -1)
    y_num[[0, 1, 2]] = 0
    y_num[[12, 13, 14]] = 1
    return X, y_num


def _series_of_names(y_num):
    return pd.Series(_names(y_num, None), dtype=object)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(LapRLS, id="LapRLS"),
        pytest.param(LapSVM, id="LapSVM"),
        pytest.param(ExactTSVM, id="ExactTSVM"),
        pytest.param(lambda: LapSVMPath(n_neighbors=5), id="LapSVMPath"),
        pytest.param(lambda: LapSVC(n_neighbors=5), id="LapSVC"),
    ],
)
@pytest.mark.parametrize("dtype", ["object", "str", "string", "category"])
def test_fit_on_a_series_of_names_with_blanks_keeps_the_names(small, make, dtype):
    X, y_num = small
    y = _series_of_names(y_num).astype(dtype)
    clf = make().fit(X, y)
    ref = make().fit(X, y_num)  # the same labels written 0/1/-1
    names = np.array(["neg", "pos"])
    assert clf.classes_.tolist() == ["neg", "pos"]
    assert np.array_equal(clf.predict(X), names[ref.predict(X)])
    if hasattr(ref, "transduction_"):
        assert np.array_equal(clf.transduction_, names[ref.transduction_])
    if isinstance(clf, LapRLS | LapSVM):  # accuracy over the labeled rows
        assert clf.score(X, y) == pytest.approx(ref.score(X, y_num))


def test_float_nan_marks_unlabeled_points(small):
    X, y_num = small
    y_nan = np.where(y_num == -1, np.nan, y_num.astype(float))
    clf, ref = ExactTSVM().fit(X, y_nan), ExactTSVM().fit(X, y_num)
    assert clf.classes_.tolist() == [0.0, 1.0]
    assert np.array_equal(clf.transduction_, ref.transduction_)


def test_score_scorer_and_calibration_read_blanks_as_unlabeled(moons):
    from semisvm.model_selection import LabeledCalibratedClassifierCV

    X, _, y_str, labeled = moons
    clf = LapRLS().fit(X, y_str)  # "-1" marks the unlabeled rows
    y = pd.Series(np.where(labeled, y_str, None), dtype="string")  # pd.NA
    expected = accuracy_score(y_str[labeled], clf.predict(X[labeled]))
    assert clf.score(X, y) == pytest.approx(expected)
    assert labeled_scorer("accuracy")(clf, X, y) == pytest.approx(expected)
    cal = LabeledCalibratedClassifierCV(LapRLS(), cv=2).fit(X, y_str)
    assert cal.score(X, y) == pytest.approx(cal.score(X, y_str))


def test_cv_estimator_on_a_string_series_with_blanks(moons):
    X, _, y_str, labeled = moons
    y = pd.Series(np.where(labeled, y_str, None), dtype="string")  # pd.NA
    cv_ref, cv = LapRLSCV().fit(X, y_str), LapRLSCV().fit(X, y)
    assert cv.classes_.tolist() == ["neg", "pos"]
    assert cv.best_params_ == cv_ref.best_params_
    assert cv.best_score_ == pytest.approx(cv_ref.best_score_)
