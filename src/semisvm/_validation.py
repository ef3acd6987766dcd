"""Parameter and data validation shared by every estimator.

A tiny, public-API-only replacement for scikit-learn's private parameter
validation: each estimator declares ``_parameter_constraints`` as data and
calls :func:`validate_params` at the top of ``fit``.
"""

from __future__ import annotations

import numbers
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Interval",
    "Options",
    "validate_params",
    "check_finite",
    "labeled_mask",
    "split_labeled",
    "check_semi_supervised_targets",
    "check_n_neighbors",
    "warn_if_unscaled",
    "DataScaleWarning",
    "UNLABELED",
]

#: Ratio of the largest to the smallest feature standard deviation above which
#: a distance-based kernel or graph warns that X looks unscaled.
UNSCALED_STD_RATIO = 1e3

#: Marker for unlabeled points in ``y`` (scikit-learn's convention).  The one
#: label decoder :func:`labeled_mask` reads ``-1``, ``-1.0`` and the string
#: ``"-1"`` as this marker.
UNLABELED = -1


def _is_unlabeled(v: Any) -> bool:
    """True for one label equal to the marker: -1, -1.0 or the string "-1"."""
    if isinstance(v, str):
        return v == str(UNLABELED)
    if isinstance(v, bytes):
        return v == str(UNLABELED).encode()
    if isinstance(v, bool | np.bool_):
        return False
    if isinstance(v, numbers.Number):
        return bool(v == UNLABELED)
    return False


def labeled_mask(y: Any) -> np.ndarray:
    """Boolean mask of the labeled rows: the one label decoder of the package.

    A label marks an unlabeled point when it is the integer ``-1``, the float
    ``-1.0`` or the string ``"-1"`` (scikit-learn's convention, extended to
    string labels); every other value (booleans included) is a class label.
    Estimators, ``score``, the scorers, the splitters and the CV estimators all
    decide labeled / unlabeled through this function.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    ndarray of bool of shape (n_samples,)

    Examples
    --------
    >>> labeled_mask(["neg", "-1", "pos"]).tolist()
    [True, False, True]
    >>> labeled_mask([0, -1, 1.0, -1.0]).tolist()
    [True, False, True, False]
    """
    y = np.asarray(y)
    kind = y.dtype.kind
    if kind in "iufc":
        return np.asarray(y != UNLABELED, dtype=bool)
    if kind == "U":
        return np.asarray(y != str(UNLABELED), dtype=bool)
    if kind == "S":
        return np.asarray(y != str(UNLABELED).encode(), dtype=bool)
    if kind == "O":
        flat = [not _is_unlabeled(v) for v in y.ravel()]
        return np.array(flat, dtype=bool).reshape(y.shape)
    return np.ones(y.shape, dtype=bool)


@dataclass(frozen=True)
class Interval:
    """Numeric interval constraint ``[left, right]`` (``closed`` says which ends)."""

    type: type
    left: float | None
    right: float | None
    closed: str = "both"  # "both", "left", "right", "neither"

    def __contains__(self, value: Any) -> bool:
        if isinstance(value, bool | np.bool_):
            return False
        if self.type is numbers.Integral and not isinstance(value, numbers.Integral):
            return False
        if not isinstance(value, numbers.Real):
            return False
        x = cast(float, value)  # a real number: compares with floats
        if not np.isfinite(x):
            return False
        lo_ok = (
            self.left is None
            or x > self.left
            or (x == self.left and self.closed in ("both", "left"))
        )
        hi_ok = (
            self.right is None
            or x < self.right
            or (x == self.right and self.closed in ("both", "right"))
        )
        return bool(lo_ok and hi_ok)

    def __str__(self) -> str:
        kind = "an int" if self.type is numbers.Integral else "a float"
        lb = "[" if self.closed in ("both", "left") else "("
        rb = "]" if self.closed in ("both", "right") else ")"
        lo = "-inf" if self.left is None else repr(self.left)
        hi = "inf" if self.right is None else repr(self.right)
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """A closed set of allowed values (usually strings)."""

    values: tuple

    def __contains__(self, value: Any) -> bool:
        try:
            return value in self.values
        except TypeError:  # unhashable / array-like
            return False

    def __str__(self) -> str:
        return "one of {" + ", ".join(repr(v) for v in self.values) + "}"


def _matches(value: Any, constraint: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, Interval | Options):
        return value in constraint
    if constraint == "callable":
        return callable(value)
    if constraint == "array-like":
        return isinstance(value, list | tuple | np.ndarray) or sp.issparse(value)
    if constraint == "random_state":
        return value is None or isinstance(
            value, numbers.Integral | np.random.RandomState | np.random.Generator
        )
    if constraint == "boolean":
        return isinstance(value, bool | np.bool_)
    if constraint == "dict":
        return isinstance(value, Mapping)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    raise TypeError(f"unknown constraint {constraint!r}")  # pragma: no cover


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__}"
    if constraint == "random_state":
        return "None, an int or a numpy RandomState/Generator"
    return str(constraint)


def validate_params(
    params: Mapping[str, Any], constraints: Mapping[str, list], owner: str = ""
) -> None:
    """Check every parameter against its list of allowed constraints.

    ``owner`` (e.g. ``'SolverOptions'``) is named in the message when given.

    Raises
    ------
    ValueError
        Naming the parameter, the value received and what is allowed.
    """
    for name, allowed in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if any(_matches(value, c) for c in allowed):
            continue
        desc = " or ".join(_describe(c) for c in allowed)
        of = f" of {owner}" if owner else ""
        raise ValueError(
            f"The {name!r} parameter{of} must be {desc}. Got {value!r} instead."
        )


def check_finite(X: Any, name: str = "X") -> None:
    """Raise a clear error if ``X`` (dense or sparse) holds NaN or infinity.

    The message names the first bad row and column.
    """
    data = X.data if sp.issparse(X) else np.asarray(X)
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        bad = ~np.isfinite(data)
        n_bad = int(bad.sum())
        where = ""
        if not sp.issparse(X) and data.ndim == 2:
            r, c = np.argwhere(bad)[0]
            where = f"; first at row {r}, column {c} ({data[r, c]})"
        raise ValueError(
            f"Input {name} contains NaN or infinity ({n_bad} non-finite "
            f"value(s){where}). Remove or impute them first."
        )


def check_numeric_frame(X: Any, name: str = "X") -> None:
    """A pandas DataFrame with non-numeric columns: an error naming them.

    (Without it the conversion to float fails deep inside pandas/numpy with a
    message that names neither the column nor the row.)
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return

    def numeric(dt: Any) -> bool:
        try:
            return bool(
                np.issubdtype(np.dtype(dt), np.number) or np.dtype(dt) == np.bool_
            )
        except TypeError:  # pandas extension dtypes (string, category, ...)
            return getattr(dt, "kind", "O") in "biuf"

    bad = [str(c) for c, dt in zip(X.columns, dtypes, strict=False) if not numeric(dt)]
    if bad:
        col = bad[0]
        example = X[col].iloc[0] if len(X) else None
        raise ValueError(
            f"{name} has non-numeric column(s) {bad[:5]!r} (e.g. {col!r} holds "
            f"{example!r}); encode them as numbers first (e.g. with "
            "sklearn.preprocessing.OneHotEncoder in a Pipeline)."
        )


def split_labeled(y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Separate labeled from unlabeled points.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, with ``-1`` marking unlabeled points.

    Returns
    -------
    labeled : ndarray of bool
        Mask of labeled points.
    classes : ndarray
        Sorted distinct labels of the labeled points.
    y_enc : ndarray of int
        Index into ``classes`` for labeled points, ``-1`` for unlabeled ones.

    Raises
    ------
    ValueError
        If there is no labeled point, or only one class among them.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity; mark unlabeled points with -1.")
    labeled = labeled_mask(y)
    if not labeled.any():
        raise ValueError(
            "No labeled point in y: every entry is -1 (unlabeled). At least one"
            " labeled point per class is needed."
        )
    classes, enc = np.unique(y[labeled], return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"The labeled points hold a single class ({classes[0]!r}); at least two"
            " classes are needed to train a classifier."
        )
    y_enc = np.full(y.shape[0], -1, dtype=np.intp)
    y_enc[labeled] = enc
    return labeled, classes, y_enc


def check_semi_supervised_targets(y: Any, name: str = "y") -> np.ndarray:
    """Check a semi-supervised label column and return it as an array.

    Class labels may be ints, strings, or integer-valued floats; ``-1`` (or the
    string ``"-1"``) marks an unlabeled point.  Strings mixed with the integer
    ``-1`` are accepted (the ``-1`` entries become ``"-1"``).

    Raises
    ------
    ValueError
        For continuous (non-integer float) labels, NaN or None entries, strings
        mixed with other numbers, or a column that is not 1-dimensional, with a
        message saying how unlabeled points are marked.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {y.shape}.")
    hint = " Class labels must be ints or strings; mark unlabeled points with -1."
    if y.dtype.kind == "O":
        if any(v is None for v in y):
            raise ValueError(f"{name} contains None.{hint}")
        is_str = np.array([isinstance(v, str) for v in y], dtype=bool)
        if is_str.all():
            y = y.astype(str)
        elif is_str.any():
            other = y[~is_str]
            if all(_is_unlabeled(v) for v in other):
                y = np.array([str(UNLABELED) if _is_unlabeled(v) else v for v in y])
            else:
                raise ValueError(
                    f"{name} mixes strings with numbers other than -1 (e.g. "
                    f"{other[0]!r}).{hint}"
                )
        elif not is_str.any():
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{name} holds values that are neither numbers nor strings "
                    f"(e.g. {y[0]!r}).{hint}"
                ) from None
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError(f"{name} contains NaN or infinity.{hint}")
        lab = y[y != UNLABELED]
        frac = lab[lab != np.round(lab)]
        if frac.size:
            raise ValueError(
                f"Unknown label type: continuous. {name} holds non-integer values "
                f"(e.g. {frac[0]!r}), a regression target; this is a classifier." + hint
            )
    elif y.dtype.kind not in "iubUS":
        raise ValueError(f"{name} has an unsupported dtype {y.dtype}.{hint}")
    return y


def check_n_neighbors(n_neighbors: int, n_samples: int) -> None:
    """Raise if a kNN graph with ``n_neighbors`` cannot be built on ``n_samples`` points."""
    if n_neighbors >= n_samples:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of points "
            f"n_samples={n_samples} (each point's neighbours are the other points). "
            "Lower n_neighbors."
        )


_LAST_CHECKED: list = [None]


class DataScaleWarning(UserWarning):
    """The features of X are on very different scales for a distance-based method."""


def warn_if_unscaled(
    X: Any, what: str = "a distance-based kernel or kNN graph"
) -> bool:
    """Warn when the features of a dense ``X`` live on very different scales.

    Criterion: the ratio of the largest to the smallest standard deviation
    among the non-constant features exceeds ``UNSCALED_STD_RATIO`` (1e3).
    Data already on a common scale (standardized features, pixels in a fixed
    range) stay far below it; a feature in dollars next to one in years is
    above it.  Sparse ``X`` is not checked (its features are usually counts
    whose spreads differ legitimately).

    Returns
    -------
    bool
        Whether a warning was issued.
    """
    if sp.issparse(X):
        return False
    last = _LAST_CHECKED[0]() if _LAST_CHECKED[0] is not None else None
    if last is X:  # already checked during this fit (kernel, then graph)
        return False
    try:
        _LAST_CHECKED[0] = weakref.ref(X)
    except TypeError:
        _LAST_CHECKED[0] = None
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2 or X.dtype.kind not in "fiu":
        return False
    std = X.std(axis=0, dtype=np.float64)
    tiny = 1e-12 * max(float(std.max()), np.finfo(np.float64).tiny)
    nz = np.flatnonzero(std > tiny)
    if nz.size < 2:
        return False
    hi, lo = nz[np.argmax(std[nz])], nz[np.argmin(std[nz])]
    ratio = float(std[hi] / std[lo])
    if ratio <= UNSCALED_STD_RATIO:
        return False
    warnings.warn(
        f"The features of X are on very different scales (standard deviation of "
        f"feature {hi} is {ratio:.3g} times that of feature {lo}); {what} uses "
        "Euclidean distances, which the largest-scale features dominate. "
        "Standardize X first (e.g. sklearn.preprocessing.StandardScaler in a "
        "Pipeline).",
        DataScaleWarning,
        stacklevel=3,
    )
    return True


def resolve_seed(random_state: Any) -> Any:
    """``random_state`` for the library's internal draws: ``None`` becomes 0.

    The same call on the same data gives the same model (landmarks, validation
    splits, folds, the randomized TSVM's samples); pass an int or a
    ``RandomState`` to draw differently.
    """
    return 0 if random_state is None else random_state


def as_generator(random_state: Any) -> np.random.Generator:
    """A numpy ``Generator`` for ``random_state`` (:func:`resolve_seed`: None is 0).

    An int seeds it; a ``Generator`` is used as is; a ``RandomState`` seeds it with
    one draw (consumed, so that successive fits differ, as in scikit-learn).
    """
    rs = resolve_seed(random_state)
    if isinstance(rs, np.random.Generator):
        return rs
    if isinstance(rs, np.random.RandomState):
        return np.random.default_rng(rs.randint(2**31 - 1))
    return np.random.default_rng(rs)


def int_seed(random_state: Any) -> int:
    """An int seed for ``random_state`` (for libraries that take only ints):
    None is 0, an int itself, a ``RandomState``/``Generator`` gives one draw."""
    rs = resolve_seed(random_state)
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(2**31 - 1))
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(2**31 - 1))
    return int(rs)
