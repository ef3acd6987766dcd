"""scikit-learn's common estimator checks for every public estimator.

``ExactTSVM`` is checked in ``tests/test_tsvm.py`` (its owner's module, with
its own list of expected failures).

Expected failures, each with its reason:

* ``check_classifiers_classes`` trains on the labels ``{-1, 1}``; ``-1`` is the
  library's (and scikit-learn's semi-supervised) marker of an unlabeled point,
  so that data holds a single labeled class.

The estimators are built with ``n_neighbors=5``: some checks fit on 10 points,
and a kNN graph with ``n_neighbors >= n_samples`` is (deliberately) an error.
``LapSVMPath`` runs with ``cv=None`` (the midpoint rule): the checks label
every point, and cross-validation would follow 5 more paths per class on each
of hundreds of fits; its selection is tested in ``tests/test_path.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisvm import (
    LapRLS,
    LapSVC,
    LapSVM,
    LapSVMPath,
    SemiSupervisedKernel,
    SolverOptions,
)
from semisvm.solvers._path import PathWarning

EXPECTED_FAILURES = {
    "check_classifiers_classes": "trains on labels {-1, 1}; -1 marks unlabeled points",
}

ESTIMATORS = [
    LapSVM(n_neighbors=5),
    LapSVM(solver="newton", n_neighbors=5),
    LapSVM(solver="dual", n_neighbors=5),
    # an options object: scikit-learn sees its fields as options__<name>
    LapSVM(n_neighbors=5, options=SolverOptions(preconditioner="paper")),
    LapRLS(n_neighbors=5),
    LapRLS(solver="pcg", tol=1e-4, n_neighbors=5),
    LapSVC(n_neighbors=5),
    LapSVMPath(n_neighbors=5, cv=None),
    SemiSupervisedKernel(n_neighbors=5),
]


def _expected(estimator):
    if isinstance(estimator, SemiSupervisedKernel):  # not a classifier
        return {}
    return EXPECTED_FAILURES


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_sklearn_common_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' tiny random problems make path ties/re-entries common
        warnings.simplefilter("ignore", PathWarning)
        check(estimator)


@pytest.mark.parametrize("est", ESTIMATORS[:-1], ids=lambda e: type(e).__name__)
def test_minus_one_is_never_a_class(est):
    """Three classes plus unlabeled points: ``classes_`` excludes -1 everywhere."""
    rng = np.random.default_rng(0)
    X = np.concatenate(
        [c + rng.normal(0, 0.5, (20, 2)) for c in ([0, 0], [3, 0], [0, 3])]
    )
    y = np.full(60, -1)
    y[[0, 1, 2, 20, 21, 22, 40, 41, 42]] = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PathWarning)
        clf = est.fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    assert set(np.unique(clf.predict(X))) <= {0, 1, 2}
