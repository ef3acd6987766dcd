"""The generators of the accuracy benchmark's families where nothing helps (issue 56,
``benchmarks/accuracy/bench_accuracy.py``: ``NULL_FAMILIES``): shape, dtype,
determinism, class proportions, and the structure each is built to have."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "accuracy"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_accuracy as B  # noqa: E402


def _same(f, n):
    (X1, y1), (X2, y2) = f(n), f(n)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    return X1, y1


@pytest.mark.parametrize("n", [1500, 50000])
def test_null_labels(n):
    X, y = _same(B.null_labels, n)
    assert X.shape == (n, 20) and X.dtype == np.float64
    assert y.shape == (n,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [round(0.6 * n), round(0.4 * n)]  # exactly
    assert abs(X.mean()) < 0.05 and abs(X.std() - 1) < 0.05


@pytest.mark.parametrize("n", [1500, 50000])
def test_seq_windows_one_hot_and_proportions(n):
    X, y = _same(B.seq_windows, n)
    assert X.shape == (n, 315) and X.dtype == np.float64
    assert y.shape == (n,) and y.dtype == np.int64
    assert set(np.unique(X)) == {0.0, 1.0}
    assert (X.sum(axis=1) == 15).all()
    # exactly one 1 per position block of 21 symbols
    assert (X.reshape(n, 15, 21).sum(axis=2) == 1).all()
    assert 0.53 <= np.mean(y == 0) <= 0.61
    # non-uniform symbol frequencies
    freq = X.reshape(n, 15, 21).mean(axis=(0, 1))
    assert freq.max() > 2.5 * freq.min()


def test_seq_windows_weak_signal():
    # the label reads only the central 5 positions, weakly: a logistic model fitted
    # on 1,125 labels is within a few points of the majority class (57.6% right) on
    # the held-out quarter (54% here; the Bayes rule's accuracy is about 60%)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = B.seq_windows(1500)
    tr, te = train_test_split(np.arange(y.size), test_size=0.25, random_state=0)
    acc = (
        LogisticRegression(C=0.1, solver="liblinear")
        .fit(X[tr], y[tr])
        .score(X[te], y[te])
    )
    assert 0.5 < acc < 0.66


def test_g241_like_clusters_mislead_linear_separates():
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = _same(B.g241_like, 1500)
    assert X.shape == (1500, 241) and X.dtype == np.float64
    assert y.dtype == np.int64 and 0.45 <= y.mean() <= 0.55
    # the four clusters are found, but each holds both classes about half/half:
    # the nearest-cluster rule (clusters labeled by their majority) errs >= 40%
    km = KMeans(4, n_init=4, random_state=0).fit(X)
    assert sorted(np.bincount(km.labels_).tolist()) == [375] * 4
    pred = np.empty_like(y)
    for c in range(4):
        m = km.labels_ == c
        pred[m] = np.bincount(y[m], minlength=2).argmax()
    assert np.mean(pred != y) >= 0.40
    # the construction guarantees linear separability (one hyperplane through the
    # four centres): fitted on all labels, a linear model makes no training error;
    # fitted on three quarters, it errs less than 15% on the rest
    lin = LogisticRegression(C=100, max_iter=5000)
    assert lin.fit(X, y).score(X, y) >= 0.99
    tr, te = train_test_split(
        np.arange(1500), test_size=0.25, stratify=y, random_state=0
    )
    assert lin.fit(X[tr], y[tr]).score(X[te], y[te]) >= 0.85


def test_g241_like_large_shape():
    X, y = B.g241_like(50000)
    assert X.shape == (50000, 241) and 0.48 <= y.mean() <= 0.52


@pytest.mark.parametrize("total", [10, 100])
@pytest.mark.parametrize("family", ["null_labels", "seq_windows", "g241_like"])
def test_total_label_setting(family, total):
    X, y, test_mask = B.load(f"{family}-1500", Path("."))
    assert test_mask is None
    for draw in (0, 1):
        lab, unl, test = B.draw_split(y, None, f"n{total}", draw, family)
        assert lab.size == total
        counts = np.bincount(y[lab], minlength=2)
        assert counts.min() >= 1
        train = np.r_[lab, unl]
        share = np.mean(y[train] == 0) * total
        assert abs(counts[0] - share) <= 1  # stratified (largest remainders)
        assert np.intersect1d(lab, unl).size == 0
        assert np.intersect1d(train, test).size == 0
        assert train.size + test.size == y.size and test.size == 375
    if family == "null_labels":
        assert counts.tolist() == [6 * total // 10, 4 * total // 10]


def test_allocate_at_least_one_per_class():
    assert B._allocate(10, np.array([60, 40])).tolist() == [6, 4]
    assert B._allocate(10, np.array([57, 43])).tolist() == [6, 4]
    assert B._allocate(3, np.array([98, 1, 1])).tolist() == [1, 1, 1]
    assert B._allocate(10, np.array([990, 5, 5])).sum() == 10


def test_majority_method():
    est = B.Majority().fit(np.zeros((5, 2)), np.array([1, 1, 0, -1, -1]))
    assert est.predict(np.zeros((3, 2))).tolist() == [1, 1, 1]
    assert "majority" in B.METHODS
    assert B.METHODS.index("majority") == B.METHODS.index("SVC") + 1


def test_null_families_and_flag():
    assert len(B.NULL_FAMILIES) == 12
    assert {s for _, s in B.NULL_FAMILIES} == {"n10", "n100"}
    assert {n.split("-")[1] for n, _ in B.NULL_FAMILIES} == {"1500", "50000"}

    class Args:
        quick = heldout = hard = exact = False
        null = True
        only = ["g241_like-1500"]
        settings = None
        data = None

    assert B.cells(Args()) == [("g241_like-1500", "n10"), ("g241_like-1500", "n100")]
    # the 50,000-point cells hold 37,500 training points: the dense n x n peers
    # are skipped at the default --max-dense (10,000), before any fit
    dense = sorted(B.DENSE)
    rows = B.run_cell(
        "null_labels-50000", "n10", [(0, dense)], dense, ".", False, 10000, None
    )
    assert len(rows) == len(B.DENSE)
    assert all(r["note"].startswith("skipped: dense") for r in rows)
    assert all(r["n"] == 37500 and r["n_labeled"] == 10 for r in rows)
