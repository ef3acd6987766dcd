"""Split protocols: labeled / unlabeled / validation / test index arrays.

:func:`paper_splits` is the protocol of Melacci & Belkin (2011), Section 6.2:
a stratified 4-fold partition, repeated 3 times with fresh randomisation
(12 splits); in each split one fold is the test set T and the other three the
training data, from which the labeled set L and the validation set V are drawn at
random with at least one point of every class in each (no other balancing), the
rest being the unlabeled set U.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state

from .._validation import plain

__all__ = [
    "TABLE2_SIZES",
    "Split",
    "paper_splits",
    "split_labeled_unlabeled",
]

#: Table 2 of Melacci & Belkin (2011): |L|, |U|, |V|, |T| per data set.  |L| and |V|
#: are reproduced exactly; |U| and |T| follow from the 4-fold partition and can
#: differ from the table by a few points (e.g. PCMAC: 4 x 488 > 1946 points, so
#: the table's |T| cannot be the size of every fold).
TABLE2_SIZES: dict[str, tuple[int, int, int, int]] = {
    "g50c": (50, 314, 50, 136),
    "coil20_b": (40, 1000, 40, 360),
    "pcmac": (50, 1358, 50, 488),
    "uspst_b": (50, 1409, 50, 498),
    "coil20": (40, 1000, 40, 360),
    "uspst": (50, 1409, 50, 498),
    "mnist3vs8": (80, 11822, 80, 1984),
    "facemit": (2, 23973, 50, 6997),
}


@dataclass(frozen=True)
class Split:
    """Index arrays of one split (into the rows of the full data set).

    Attributes
    ----------
    labeled, unlabeled, validation, test : ndarray of int
        Disjoint, sorted index arrays.  ``validation`` and ``test`` may be empty.
    repeat, fold : int
        Position in the repeated k-fold scheme (0 for splits not made by it).
    """

    labeled: np.ndarray
    unlabeled: np.ndarray
    validation: np.ndarray
    test: np.ndarray
    repeat: int = 0
    fold: int = 0

    @property
    def train(self) -> np.ndarray:
        """Training points, labeled first then unlabeled."""
        return np.concatenate([self.labeled, self.unlabeled])

    def sizes(self) -> tuple[int, int, int, int]:
        """(|L|, |U|, |V|, |T|)."""
        return (
            self.labeled.size,
            self.unlabeled.size,
            self.validation.size,
            self.test.size,
        )


def _draw_with_each_class(
    idx: np.ndarray,
    y: np.ndarray,
    n: int,
    rng: np.random.RandomState,
    min_per_class: int = 1,
) -> np.ndarray:
    """Draw ``n`` of ``idx`` at random, at least ``min_per_class`` of each class."""
    yi = y[idx]
    classes = np.unique(yi)
    if n < min_per_class * classes.size:
        raise ValueError(
            f"Cannot draw {n} points with at least {min_per_class} of each of the "
            f"{classes.size} classes."
        )
    chosen: list[int] = []
    for c in classes:
        members = idx[yi == c]
        if members.size < min_per_class:
            raise ValueError(
                f"Class {plain(c)!r} has {members.size} point(s) here; {min_per_class} needed."
            )
        chosen.extend(rng.choice(members, size=min_per_class, replace=False))
    rest = np.setdiff1d(idx, chosen)
    extra = n - len(chosen)
    if extra > rest.size:
        raise ValueError(f"Cannot draw {n} points out of {idx.size}.")
    if extra > 0:
        chosen.extend(rng.choice(rest, size=extra, replace=False))
    return np.sort(np.asarray(chosen, dtype=np.intp))


def split_labeled_unlabeled(
    y: Any,
    n_labeled: int,
    *,
    min_per_class: int = 1,
    random_state: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Random labeled / unlabeled partition with every class among the labeled.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True labels.
    n_labeled : int
        Number of labeled points.
    min_per_class : int, default=1
        Labeled points guaranteed for every class; the rest are drawn at random.
    random_state : int, RandomState or None

    Returns
    -------
    idx_labeled, idx_unlabeled : ndarray of int
        Sorted, disjoint index arrays covering ``range(n_samples)``.

    Examples
    --------
    >>> import numpy as np
    >>> lab, unl = split_labeled_unlabeled(np.r_[np.zeros(10), np.ones(10)], 4,
    ...                                    random_state=0)
    >>> lab.size, unl.size
    (4, 16)
    """
    y = np.asarray(y).ravel()
    rng = check_random_state(random_state)
    lab = _draw_with_each_class(
        np.arange(y.size), y, int(n_labeled), rng, min_per_class
    )
    return lab, np.setdiff1d(np.arange(y.size), lab)


def paper_splits(
    y: Any,
    n_labeled: int,
    n_validation: int,
    *,
    n_folds: int = 4,
    n_repeats: int = 3,
    n_splits: int | None = None,
    random_state: Any = None,
) -> list[Split]:
    """The 12 splits of Melacci & Belkin (2011), Section 6.2.

    For each of ``n_repeats`` randomisations a stratified ``n_folds``-fold
    partition is made (each fold has the per-class proportions of the whole set);
    each fold in turn is the test set T, and from the other folds L (``n_labeled``
    points) and V (``n_validation`` points) are drawn at random with at least one
    point per class in each; the remaining training points form U.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True class labels of all points.
    n_labeled, n_validation : int
        |L| and |V| (Table 2: ``TABLE2_SIZES[name][0]`` and ``[2]``).
    n_folds, n_repeats : int, default=4, 3
    n_splits : int, default=None
        Return only the first ``n_splits`` splits (all when None).
    random_state : int, RandomState or None
        Same value, same splits.

    Returns
    -------
    list of Split
    """
    y = np.asarray(y).ravel()
    rng = check_random_state(random_state)
    splits: list[Split] = []
    total = (
        n_folds * n_repeats if n_splits is None else min(n_splits, n_folds * n_repeats)
    )
    for r in range(n_repeats):
        skf = StratifiedKFold(
            n_splits=n_folds, shuffle=True, random_state=rng.randint(2**31 - 1)
        )
        for f, (train, test) in enumerate(skf.split(np.zeros(y.size), y)):
            if len(splits) >= total:
                return splits
            lab = _draw_with_each_class(train, y, n_labeled, rng)
            rest = np.setdiff1d(train, lab)
            val = (
                _draw_with_each_class(rest, y, n_validation, rng)
                if n_validation > 0
                else np.empty(0, dtype=np.intp)
            )
            unl = np.setdiff1d(rest, val)
            splits.append(Split(lab, unl, val, np.sort(test), repeat=r, fold=f))
    return splits
