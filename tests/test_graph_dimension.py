"""``laplacian_power="auto"``: the intrinsic dimension and the power it picks."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons

from semisvm import LapRLS, LapSVM
from semisvm.graph import auto_laplacian_power, intrinsic_dimension
from semisvm.graph._dimension import HIGH_POWER, MID_LABELS, MID_POWER


def _brute_force_mle(X: np.ndarray, k: int) -> float:
    """Levina-Bickel/MacKay-Ghahramani estimate by an explicit loop."""
    inv = []
    for i in range(X.shape[0]):
        d = np.sort(np.linalg.norm(X - X[i], axis=1))[1 : k + 1]
        if d[0] == 0:
            continue
        inv.append(sum(np.log(d[-1] / d[j]) for j in range(k - 1)) / (k - 1))
    return 1.0 / float(np.mean(inv))


def _subspace(n: int, dim: int, ambient: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(ambient, dim)))
    return rng.uniform(size=(n, dim)) @ Q.T


@pytest.mark.parametrize("k", [5, 10])
def test_dimension_equals_the_brute_force_formula(k):
    X = np.random.default_rng(0).normal(size=(150, 6))
    X[7] = X[3]  # a duplicate pair: both left out
    assert intrinsic_dimension(X, k) == pytest.approx(_brute_force_mle(X, k), rel=1e-10)


@pytest.mark.parametrize("dim", [1, 2, 6])
def test_dimension_of_a_flat_subspace(dim):
    # uniform points on a dim-dimensional subspace of a 40-dimensional space
    X = _subspace(1500, dim, 40, seed=dim)
    assert intrinsic_dimension(X) == pytest.approx(dim, rel=0.2)


def test_dimension_is_scale_and_rotation_free_and_uses_a_fixed_sample():
    X = np.random.default_rng(1).normal(size=(3000, 12))
    Q, _ = np.linalg.qr(np.random.default_rng(2).normal(size=(12, 12)))
    d = intrinsic_dimension(X)
    assert intrinsic_dimension(7.0 * X @ Q) == pytest.approx(d, rel=1e-8)
    # above max_samples: the estimate of the sample drawn with random_state
    rng = np.random.default_rng(0)
    S = X[np.sort(rng.choice(3000, size=2000, replace=False))]
    assert d == pytest.approx(intrinsic_dimension(S), rel=1e-12)
    assert intrinsic_dimension(X, random_state=5) != d


def test_dimension_of_degenerate_data_is_nan_and_gives_power_1():
    X = np.ones((20, 3))
    assert np.isnan(intrinsic_dimension(X))
    assert np.isnan(intrinsic_dimension(np.zeros((2, 3))))
    assert auto_laplacian_power(float("nan")) == 1
    assert auto_laplacian_power(float("inf")) == HIGH_POWER


@pytest.mark.parametrize(
    ("dim", "fewest", "power"),
    [
        (0.5, 100, 1),
        (2.0, 100, 1),
        (4.99, 100, 1),
        (5.0, 5, 2),
        (9.8, 10, 2),
        (15.99, 5, 2),
        (9.8, 4, 1),  # one to four labels in some class: the first power
        (9.8, None, 1),  # no labels known (the unsupervised deformed kernel)
        (16.0, 1, 3),
        (25.5, None, 3),
        (60.0, 5, 3),
    ],
)
def test_power_rule(dim, fewest, power):
    assert auto_laplacian_power(dim, fewest) == power
    if fewest is None:
        assert auto_laplacian_power(dim) == power


def test_mid_power_needs_the_labels_the_auto_rule_needs():
    from semisvm.models._autoreg import MIN_LABELS_PER_CLASS

    assert MID_LABELS == MIN_LABELS_PER_CLASS


def _blobs_with_a_lone_label():
    """Six blobs in 6 dimensions, two per class (three classes); five labels in
    every blob but one, which holds a single label at its edge (the point
    farthest from its centre; its class still has six labels)."""
    from sklearn.datasets import make_blobs

    X, c, centres = make_blobs(
        1125,
        n_features=6,
        centers=6,
        cluster_std=1.8,
        random_state=2027,
        return_centers=True,
    )
    rng = np.random.default_rng(0)
    yy = np.full(c.size, -1)
    for b in range(6):
        idx = np.flatnonzero(c == b)
        if b == 4:
            yy[idx[np.argmax(((X[idx] - centres[b]) ** 2).sum(axis=1))]] = b % 3
        else:
            yy[rng.choice(idx, 5, replace=False)] = b % 3
    return X, c % 3, c, yy


def test_second_power_spreads_a_lone_label_in_moderate_dimension():
    """The degenerate regime (module docstring): at the first power a label alone
    in its blob stays a spike and the blob takes the class of its labeled
    neighbour blob; from 5 labels per class on, in 5 <= d < 16, the rule's
    second power spreads it."""
    X, y, c, yy = _blobs_with_a_lone_label()
    unl = yy == -1
    auto = LapSVM(random_state=0).fit(X, yy)
    assert 5.0 <= auto.intrinsic_dimension_ < 16.0
    assert auto.laplacian_power_ == MID_POWER
    assert np.mean(auto.transduction_[unl] != y[unl]) < 0.01
    first = LapSVM(random_state=0, laplacian_power=1).fit(X, yy)
    wrong = first.transduction_ != y
    assert np.mean(wrong[unl]) > 0.1
    assert np.mean(wrong[unl & (c == 4)]) > 0.9  # the lone label's blob
    np.testing.assert_array_equal(
        auto.decision_function(X),
        LapSVM(random_state=0, laplacian_power=2).fit(X, yy).decision_function(X),
    )
    # one label per class: the first power (too few labels to pin L^2)
    one = np.full(c.size, -1)
    for k in range(3):
        one[np.flatnonzero(y == k)[0]] = k
    assert LapRLS().fit(X, one).laplacian_power_ == 1


def _labels(y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    out = np.full(y.size, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        out[idx] = c
    return out


def test_estimators_resolve_the_power_from_the_data():
    X, y = make_moons(300, noise=0.1, random_state=0)
    m = LapRLS().fit(X, _labels(y, 1))
    assert m.laplacian_power_ == 1
    assert m.intrinsic_dimension_ == pytest.approx(2.0, rel=0.2)
    # two Gaussian classes in 60 dimensions: intrinsic dimension far above 16
    rng = np.random.default_rng(3)
    t = rng.integers(2, size=300)
    Z = rng.normal(size=(300, 60)) + 1.5 * t[:, None] / np.sqrt(60)
    yy = _labels(t, 2)
    auto = LapSVM().fit(Z, yy)
    assert auto.intrinsic_dimension_ > 16 and auto.laplacian_power_ == 3
    given = LapSVM(laplacian_power=3).fit(Z, yy)
    assert given.laplacian_power_ == 3 and np.isnan(given.intrinsic_dimension_)
    # the same model as the power given by hand
    np.testing.assert_array_equal(auto.decision_function(Z), given.decision_function(Z))
    assert not np.array_equal(
        auto.decision_function(Z),
        LapSVM(laplacian_power=1).fit(Z, yy).decision_function(Z),
    )


def test_power_1_without_features_to_measure():
    X, y = make_moons(120, noise=0.1, random_state=1)
    yy = _labels(y, 2)
    from sklearn.metrics.pairwise import rbf_kernel

    m = LapRLS(kernel="precomputed").fit(rbf_kernel(X, gamma=2.0), yy)
    assert m.laplacian_power_ == 1 and np.isnan(m.intrinsic_dimension_)


def test_bad_power_names_the_parameter():
    X, y = make_moons(60, noise=0.1, random_state=2)
    with pytest.raises(ValueError, match="laplacian_power"):
        LapRLS(laplacian_power="high").fit(X, _labels(y, 2))


def test_verbose_states_the_power_and_the_dimension(capsys):
    rng = np.random.default_rng(5)
    t = rng.integers(2, size=200)
    Z = rng.normal(size=(200, 40)) + t[:, None] / 4.0
    m = LapRLS(verbose=1).fit(Z, _labels(t, 2))
    out = capsys.readouterr().out
    assert f"intrinsic dimension {m.intrinsic_dimension_:.1f}" in out
    assert f"Laplacian power {m.laplacian_power_} (laplacian_power='auto'" in out
    LapRLS(verbose=1, laplacian_power=2).fit(Z, _labels(t, 2))
    out = capsys.readouterr().out
    # a given power: its line claims no dimension (the graph-width rule's own
    # line may state the one it measured)
    line = [row for row in out.splitlines() if "Laplacian power" in row]
    assert line and "Laplacian power 2" in line[0]
    assert "intrinsic dimension" not in line[0]


def test_sample_search_runs_once_for_the_defaults(monkeypatch):
    """Width, length ratio and dimension read the same 2,000-row sample: its kNN
    search runs once (the cache keyed by the sample's rows); a smaller k reads the
    first columns, equal to a search with that k; other rows search again."""
    import sklearn.neighbors

    from semisvm import _sample

    calls = []

    class Counting(sklearn.neighbors.NearestNeighbors):
        def kneighbors(self, *a, **kw):
            calls.append(self.n_neighbors)
            return super().kneighbors(*a, **kw)

    _sample._CACHE.clear()
    X = np.random.default_rng(0).normal(size=(3000, 6))
    ref7 = _sample.sample_knn_distances(X, 7)  # before the counting class
    _sample._CACHE.clear()
    monkeypatch.setattr(sklearn.neighbors, "NearestNeighbors", Counting)
    d10 = _sample.sample_knn_distances(X, 10)
    d7 = _sample.sample_knn_distances(X, 7)
    assert calls == [11]
    np.testing.assert_array_equal(d7, ref7)
    np.testing.assert_array_equal(d10[:, :7], d7)
    d7[:] = -1.0  # a copy: the cache is not the caller's array
    assert (_sample.sample_knn_distances(X, 7) >= 0).all() and calls == [11]
    Y = X.copy()
    Y[_sample.sample_indices(3000, 2000)[0]] += 1.0  # one sampled row moved
    _sample.sample_knn_distances(Y, 7)
    assert calls == [11, 8]
    # a larger k than cached searches again
    _sample.sample_knn_distances(X, 12)
    assert calls == [11, 8, 13]


def test_operator_cache_keys_the_power_by_the_labels():
    """Fits sharing an OperatorCache on one X (a search's) with 5 and with 1
    labels per class resolve "auto" to different powers: the cache must not hand
    the first fit's L^2 to the second."""
    from semisvm.models._base import OperatorCache

    X, y, c, yy = _blobs_with_a_lone_label()
    one = np.full(c.size, -1)
    for k in range(3):
        one[np.flatnonzero(y == k)[0]] = k
    cache = OperatorCache()
    a, b = LapRLS(), LapRLS()
    a.fit(X, yy, operator_cache=cache)
    b.fit(X, one, operator_cache=cache)
    assert (a.laplacian_power_, b.laplacian_power_) == (MID_POWER, 1)
    np.testing.assert_allclose(
        b.decision_function(X), LapRLS().fit(X, one).decision_function(X), atol=1e-8
    )
    c2 = LapRLS()
    c2.fit(
        X, np.where(yy >= 0, yy, -1), operator_cache=cache
    )  # the same band: served from the cache
    assert cache.hits >= 1 and c2.laplacian_power_ == MID_POWER
