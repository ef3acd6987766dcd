"""Cross-validation splitters that fold over the labeled points only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.model_selection._split import BaseCrossValidator

from .._validation import decode_labels, resolve_seed
from ._scorer import labeled_mask

__all__ = ["LabeledKFold", "LabeledStratifiedKFold"]


class _LabeledFolds(BaseCrossValidator):
    _inner: type

    def __init__(
        self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None
    ) -> None:
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of folds (``n_splits``)."""
        return self.n_splits

    def _labeled(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        if y is None:
            raise ValueError(
                f"{type(self).__name__}.split needs y (-1 marks unlabeled points)."
            )
        y = decode_labels(y)
        n = y.shape[0] if X is None else (X.shape[0] if hasattr(X, "shape") else len(X))
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]}.")
        lab = np.flatnonzero(labeled_mask(y))
        if lab.size < self.n_splits:
            raise ValueError(
                f"Cannot make n_splits={self.n_splits} folds from {lab.size} labeled "
                "point(s) (y != -1); lower n_splits or label more points."
            )
        return y, lab

    def _iter_test_masks(self, X=None, y=None, groups=None):  # pragma: no cover
        raise NotImplementedError

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train, test)`` index arrays.

        ``test`` is one fold of the labeled points; ``train`` is every other
        labeled point plus every unlabeled point (``y == -1``), in increasing order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            ``-1``, ``None``, ``NaN`` or ``pd.NA`` marks an unlabeled point.
        groups : ignored

        Yields
        ------
        train, test : ndarray of int
        """
        y, lab = self._labeled(X, y)
        inner = self._inner(
            n_splits=self.n_splits,
            shuffle=self.shuffle,
            random_state=resolve_seed(self.random_state) if self.shuffle else None,
        )
        n = y.shape[0]
        for _, te in inner.split(np.zeros((lab.size, 1)), y[lab]):
            test = lab[te]
            keep = np.ones(n, dtype=bool)
            keep[test] = False
            yield np.flatnonzero(keep), test

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_splits={self.n_splits}, shuffle={self.shuffle},"
            f" random_state={self.random_state!r})"
        )


class LabeledKFold(_LabeledFolds):
    """K-fold over the labeled points; every unlabeled point is in every training fold.

    Semi-supervised data marks unlabeled points with ``y == -1``.  A plain
    :class:`~sklearn.model_selection.KFold` would put unlabeled points in the
    test folds (where they cannot be scored) and take them out of training
    (where the graph needs them).  This splitter folds over the labeled points
    only (as :class:`~sklearn.model_selection.KFold` does on them) and adds all
    unlabeled points to every training set; test sets hold labeled points only.

    Parameters
    ----------
    n_splits : int, default=5
        At least 2, and at most the number of labeled points.
    shuffle : bool, default=False
        Shuffle the labeled points before folding.
    random_state : int, RandomState or None, default=None
        Used when ``shuffle=True``; ``None`` is the library's fixed seed
        (:func:`semisvm._validation.resolve_seed`): the same call gives the
        same folds.

    See Also
    --------
    LabeledStratifiedKFold : the same, keeping the class proportions per fold.
    """

    _inner = KFold


class LabeledStratifiedKFold(_LabeledFolds):
    """Stratified K-fold over the labeled points; unlabeled points always in training.

    As :class:`LabeledKFold`, with the folds of the labeled points made by
    :class:`~sklearn.model_selection.StratifiedKFold` (each class's labeled
    points spread evenly over the folds).

    Parameters
    ----------
    n_splits : int, default=5
        At least 2.  scikit-learn warns when a class has fewer labeled points.
    shuffle : bool, default=False
    random_state : int, RandomState or None, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from semisvm.model_selection import LabeledStratifiedKFold
    >>> y = np.array([0, 1, -1, 0, 1, -1, 0, 1])
    >>> for train, test in LabeledStratifiedKFold(3).split(np.zeros((8, 1)), y):
    ...     assert set(np.flatnonzero(y == -1)) <= set(train) and (y[test] != -1).all()
    """

    _inner = StratifiedKFold
