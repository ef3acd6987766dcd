"""Probability calibration on the labeled rows of a semi-supervised set."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import accuracy_score
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_is_fitted

from .._validation import UNLABELED, decode_labels, labeled_mask

__all__ = ["LabeledCalibratedClassifierCV"]


def _stack(A: Any, B: Any) -> Any:
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    if hasattr(A, "iloc") and hasattr(B, "iloc"):
        import pandas as pd

        return pd.concat([A, B], ignore_index=True)
    return np.concatenate([np.asarray(A), np.asarray(B)])


def _with_marker(y: Any, n: int) -> np.ndarray:
    """``y`` followed by ``n`` unlabeled markers of a compatible dtype."""
    y = np.asarray(y)
    if y.dtype.kind in "US":
        mark = np.full(n, str(UNLABELED)).astype(y.dtype.kind)
        return np.concatenate([y, mark])
    if y.dtype.kind in "if":
        return np.concatenate([y, np.full(n, UNLABELED, dtype=y.dtype)])
    if y.dtype.kind == "u":
        return np.concatenate([y.astype(np.int64), np.full(n, UNLABELED)])
    text = all(isinstance(v, str) for v in y.ravel())
    marker = str(UNLABELED) if text else UNLABELED  # strings keep one sortable type
    return np.concatenate([y.astype(object), np.full(n, marker, dtype=object)])


class _WithUnlabeled(ClassifierMixin, BaseEstimator):
    """Fit ``estimator`` on the given labeled rows plus fixed unlabeled rows."""

    def __init__(self, estimator: Any = None, X_unlabeled: Any = None) -> None:
        self.estimator = estimator
        self.X_unlabeled = X_unlabeled

    def fit(self, X: Any, y: Any) -> _WithUnlabeled:
        n_u = 0 if self.X_unlabeled is None else self.X_unlabeled.shape[0]
        Xa = X if n_u == 0 else _stack(X, self.X_unlabeled)
        self.estimator_ = clone(self.estimator).fit(Xa, _with_marker(y, n_u))
        self.classes_ = self.estimator_.classes_
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        return self.estimator_.decision_function(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        return self.estimator_.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        return self.estimator_.predict(X)


class LabeledCalibratedClassifierCV(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """:class:`~sklearn.calibration.CalibratedClassifierCV` for semi-supervised data.

    ``CalibratedClassifierCV(LapSVM())`` on a ``y`` with ``-1`` rows calibrates
    ``-1`` as a class.  This estimator splits only the labeled rows into the
    calibration folds: each fold's estimator is fitted on the other labeled rows
    plus **every** unlabeled row (marked ``-1``), and the calibrator is fitted on
    the held-out labeled rows.  ``classes_`` holds the real classes only.

    The estimators' own ``predict_proba`` (one Platt slope fitted on the labeled
    training points) needs no wrapper; use this one when the probabilities must
    be calibrated on labels the model did not train on.

    Parameters
    ----------
    estimator : classifier, default=None
        Semi-supervised classifier; ``None`` means ``semisvm.LapSVM()``.  Not
        for ``kernel="precomputed"`` (the rows of X are split and stacked).
    method, cv, n_jobs, ensemble
        As in :class:`~sklearn.calibration.CalibratedClassifierCV` (``cv``
        splits the labeled rows).

    Attributes
    ----------
    calibrated_ : CalibratedClassifierCV
        Fitted on the labeled rows.
    classes_ : ndarray
        The classes of the labeled rows.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from semisvm import LapRLS
    >>> from semisvm.datasets import hide_labels
    >>> from semisvm.model_selection import LabeledCalibratedClassifierCV
    >>> X, y_true = make_moons(200, noise=0.05, random_state=0)
    >>> y = hide_labels(y_true, 10, random_state=0)
    >>> cal = LabeledCalibratedClassifierCV(LapRLS(), cv=3).fit(X, y)
    >>> cal.classes_.tolist()
    [0, 1]
    """

    def __init__(
        self,
        estimator: Any = None,
        *,
        method: str = "sigmoid",
        cv: Any = None,
        n_jobs: int | None = None,
        ensemble: Any = "auto",
    ) -> None:
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.n_jobs = n_jobs
        self.ensemble = ensemble

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None
    ) -> LabeledCalibratedClassifierCV:
        """Calibrate on the labeled rows (``y != -1``); see the class docstring."""
        if self.estimator is None:
            from ..models import LapSVM

            base = LapSVM()
        else:
            base = self.estimator
        y = decode_labels(y)
        mask = labeled_mask(y)
        if not mask.any():
            raise ValueError(
                "y has no labeled row (every y is -1): nothing to calibrate on."
            )
        lab, unl = np.flatnonzero(mask), np.flatnonzero(~mask)
        Xu = _safe_indexing(X, unl) if unl.size else None
        sw = None if sample_weight is None else np.asarray(sample_weight)[lab]
        self.calibrated_ = CalibratedClassifierCV(
            _WithUnlabeled(base, Xu),
            method=self.method,
            cv=self.cv,
            n_jobs=self.n_jobs,
            ensemble=self.ensemble,
        ).fit(_safe_indexing(X, lab), y[lab], sample_weight=sw)
        self.classes_ = self.calibrated_.classes_
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probabilities, one column per class of ``classes_``."""
        check_is_fitted(self, "calibrated_")
        return self.calibrated_.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class."""
        check_is_fitted(self, "calibrated_")
        return self.calibrated_.predict(X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy on the labeled rows (``y != -1``) of ``(X, y)``."""
        y = decode_labels(y)
        rows = np.flatnonzero(labeled_mask(y))
        sw = None if sample_weight is None else np.asarray(sample_weight)[rows]
        return float(
            accuracy_score(
                y[rows],
                self.predict(_safe_indexing(X, rows)),
                sample_weight=sw,
            )
        )
