"""semisvm.plotting: drawn through DecisionBoundaryDisplay, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from semisvm import LapSVM
from semisvm.datasets import make_two_moons

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_decision_boundary_surface_is_the_decision_function():
    import matplotlib.pyplot as plt

    from semisvm.plotting import plot_decision_boundary

    X, y, _ = make_two_moons(80, n_labeled_per_class=2, random_state=0)
    clf = LapSVM(graph_weight="heat").fit(X, y)
    fig = plot_decision_boundary(clf, X, y, resolution=30, title="moons")
    ax = fig.axes[0]
    assert ax.get_title() == "moons"
    lo, hi = ax.get_xlim()
    assert lo < X[:, 0].min() and hi > X[:, 0].max()
    # the zero level line separates the points the classifier labels differently
    zero = [
        c for c in ax.collections if hasattr(c, "levels") and list(c.levels) == [0.0]
    ]
    assert len(zero) == 1
    pts = np.vstack([p.vertices for p in zero[0].get_paths()])
    np.testing.assert_allclose(clf.decision_function(pts), 0.0, atol=0.05)
    plt.close(fig)


def test_decision_boundary_errors():
    from semisvm.plotting import plot_decision_boundary

    X, y, _ = make_two_moons(60, n_labeled_per_class=2, random_state=0)
    clf = LapSVM().fit(X, y)
    with pytest.raises(ValueError, match="2-D points"):
        plot_decision_boundary(clf, np.c_[X, X], y)
    y3 = y.copy()
    y3[np.flatnonzero(y == -1)[:2]] = 2
    with pytest.raises(ValueError, match="binary classifiers only"):
        plot_decision_boundary(LapSVM().fit(X, y3), X, y3)
    with pytest.raises(ValueError, match="decision_function"):
        plot_decision_boundary(object(), X, y)
