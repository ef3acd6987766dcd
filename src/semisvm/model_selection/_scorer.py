"""Scorers that judge only the labeled rows (``y != -1``) of a semi-supervised set."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics import get_scorer, make_scorer
from sklearn.utils import _safe_indexing

from .._validation import decode_labels, labeled_mask

__all__ = ["labeled_mask", "labeled_scorer", "make_labeled_scorer", "LabeledScorer"]


class LabeledScorer:
    """Wrap a scikit-learn scorer so that it ignores the unlabeled rows.

    ``scorer(estimator, X, y)`` evaluates the wrapped scorer on the rows with
    ``y != -1`` only; this is what model selection on semi-supervised data needs
    (a ``-1`` row is not a class, and counting it as an error makes every
    candidate look equally bad).  Usable as ``scoring=`` in scikit-learn's
    ``GridSearchCV``, ``cross_val_score`` and ``cross_validate``.

    Parameters
    ----------
    scorer : callable
        A scikit-learn scorer ``scorer(estimator, X, y, **kwargs)``.
    name : str, default=None
        Shown in ``repr``.

    Raises
    ------
    ValueError
        When called on a ``y`` without any labeled row.
    """

    def __init__(self, scorer: Callable, name: str | None = None) -> None:
        self.scorer = scorer
        self.name = name

    def __call__(self, estimator: Any, X: Any, y: Any, **kwargs: Any) -> float:
        y = decode_labels(y)  # None / NaN / pd.NA: unlabeled rows
        mask = labeled_mask(y)
        if not mask.any():
            raise ValueError(
                "The scored fold has no labeled row (every y is -1): use a splitter "
                "whose test folds hold labeled points, e.g. "
                "semisvm.model_selection.LabeledStratifiedKFold."
            )
        if mask.all():
            return self.scorer(estimator, X, y, **kwargs)
        rows = np.flatnonzero(mask)
        sw = kwargs.get("sample_weight")
        if sw is not None:
            kwargs["sample_weight"] = np.asarray(sw)[rows]
        return self.scorer(estimator, _safe_indexing(X, rows), y[rows], **kwargs)

    def __repr__(self) -> str:
        return f"LabeledScorer({self.name or self.scorer!r})"


def labeled_scorer(scoring: str | Callable = "accuracy") -> LabeledScorer:
    """A scorer that evaluates ``scoring`` on the labeled rows only.

    Parameters
    ----------
    scoring : str or callable, default='accuracy'
        Any name accepted by :func:`sklearn.metrics.get_scorer` (``'accuracy'``,
        ``'balanced_accuracy'``, ``'f1_macro'``, ``'neg_log_loss'``, ...) or a
        scorer callable ``(estimator, X, y)``.

    Returns
    -------
    LabeledScorer

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from semisvm import LapSVM
    >>> from semisvm.model_selection import LabeledStratifiedKFold, labeled_scorer
    >>> search = GridSearchCV(LapSVM(), {"gamma_i": [0.1, 1.0]},
    ...                       scoring=labeled_scorer("balanced_accuracy"),
    ...                       cv=LabeledStratifiedKFold(3))
    """
    if isinstance(scoring, str):
        return LabeledScorer(get_scorer(scoring), name=scoring)
    if not callable(scoring):
        raise TypeError(
            f"scoring must be a scorer name or a callable, got {scoring!r}."
        )
    return LabeledScorer(scoring)


def make_labeled_scorer(score_func: Callable, **kwargs: Any) -> LabeledScorer:
    """:func:`sklearn.metrics.make_scorer` restricted to the labeled rows.

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_pred, **kwargs)``.
    **kwargs
        Passed to :func:`sklearn.metrics.make_scorer` (``greater_is_better``,
        ``response_method``, metric keyword arguments).

    Returns
    -------
    LabeledScorer
    """
    return LabeledScorer(
        make_scorer(score_func, **kwargs), name=getattr(score_func, "__name__", None)
    )
