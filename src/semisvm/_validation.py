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
    "decode_labels",
    "plain",
    "check_n_neighbors",
    "warn_if_unscaled",
    "DataScaleWarning",
    "UNLABELED",
]

#: Ratio of the largest to the smallest feature standard deviation above which
#: a distance-based kernel or graph warns that X looks unscaled.
UNSCALED_STD_RATIO = 1e3

#: Marker for unlabeled points in ``y`` (scikit-learn's convention).  The one
#: label decoder :func:`decode_labels` reads ``-1``, ``-1.0``, the string
#: ``"-1"`` and the missing values ``None``, ``NaN`` and ``pd.NA`` as this marker.
UNLABELED = -1

#: How the messages name the accepted markers of an unlabeled point.
UNLABELED_MARKERS = "-1, None, NaN or pd.NA"


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays turned into Python objects.

    Messages format values with ``repr``, which numpy 2 writes as ``np.int64(0)``
    for a scalar and ``array([7])`` for an array: a message should show the value
    the user wrote (``0``, ``[7]``), not how numpy stores it.  Lists, tuples and
    sets are converted element by element.

    Examples
    --------
    >>> repr(plain(np.int64(0))), repr(plain([np.str_("a"), np.float64(0.5)]))
    ('0', "['a', 0.5]")
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple | set | frozenset):
        return type(value)(plain(v) for v in value)
    return value


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


def _label_array(y: Any) -> np.ndarray:
    """``y`` as a numpy array that keeps the class values and the missing entries.

    pandas columns need care: ``np.asarray`` turns a categorical or nullable
    integer column with missing entries into floats (class ``1`` becomes
    ``1.0``), and a Python list of strings with a ``NaN`` into the string
    ``"nan"``.  Missing entries come back as ``None`` / ``NaN`` / ``pd.NA`` in an
    object array, or as the marker in an integer array.
    """
    dtype = getattr(y, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype):
        import pandas as pd  # a pandas extension dtype: pandas is loaded

        if isinstance(dtype, pd.CategoricalDtype):
            cat = pd.Categorical(y)
            codes = np.asarray(cat.codes)
            cats = np.asarray(cat.categories)
            if cats.dtype.kind in "iu":
                out = cats.astype(np.int64)[np.maximum(codes, 0)] if cats.size else None
                fill: Any = UNLABELED
            elif cats.dtype.kind == "f":
                out = cats[np.maximum(codes, 0)] if cats.size else None
                fill = float(UNLABELED)
            else:
                out = cats.astype(object)[np.maximum(codes, 0)] if cats.size else None
                fill = None
            if out is None:  # no category: every entry is missing
                return np.full(codes.shape, UNLABELED)
            out[codes < 0] = fill
            return out
        kind = getattr(dtype, "kind", "O")
        if kind in "iu":  # nullable integers: keep them integers
            return np.asarray(y.to_numpy(dtype=np.int64, na_value=UNLABELED))
        if kind == "f":
            return np.asarray(y.to_numpy(dtype=np.float64, na_value=np.nan))
        return np.asarray(y.to_numpy(dtype=object))
    arr = np.asarray(y)
    if dtype is None and arr.dtype.kind in "US":  # a list: was a NaN stringified?
        obj = np.asarray(y, dtype=object)
        if obj.shape == arr.shape and any(
            isinstance(v, float) and v != v for v in obj.ravel()
        ):
            return obj
    return arr


def _rows(mask: np.ndarray, limit: int = 5) -> str:
    """The first rows of ``mask`` and a verb, for a message: ``"rows 0, 3 hold"``."""
    idx = np.flatnonzero(mask).tolist()
    shown = ", ".join(str(i) for i in idx[:limit])
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    return f"rows {shown}{more} hold" if len(idx) > 1 else f"row {shown} holds"


def _decode_objects(y: np.ndarray, name: str) -> np.ndarray:
    """Object labels: missing entries become the marker, one type of class label.

    Strings stay strings (object dtype, the marker written ``"-1"`` so that the
    column still sorts); numbers become an int or float array; other objects
    (booleans) are left as they are.  Strings mixed with other values among the
    labeled rows are ambiguous (is ``3`` the class ``"3"``?) and refused.
    """
    import pandas as pd

    flat = y.ravel()
    missing = np.asarray(pd.isna(flat), dtype=bool)
    marker = missing | np.fromiter(
        (_is_unlabeled(v) for v in flat), dtype=bool, count=flat.size
    )
    is_str = np.fromiter(
        (isinstance(v, str) for v in flat), dtype=bool, count=flat.size
    )
    text, other = ~marker & is_str, ~marker & ~is_str
    if text.any() and other.any():
        others = flat[other]
        numeric = all(
            isinstance(v, numbers.Number) and not isinstance(v, bool | np.bool_)
            for v in others
        )
        kind = "numbers" if numeric else "other values"
        raise ValueError(
            f"{name} mixes strings with {kind} among the labeled rows: "
            f"{_rows(text)} strings (e.g. {plain(flat[text][0])!r}), "
            f"{_rows(other)} {kind} (e.g. {plain(others[0])!r}). Use one type of "
            f"class label; {UNLABELED_MARKERS} mark the unlabeled rows."
        )
    if text.any():
        if not (marker & ~is_str).any():
            return y
        out = flat.copy()
        out[marker] = str(UNLABELED)
        return out.reshape(y.shape)
    lab = flat[other]
    if lab.size and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_) for v in lab
    ):
        integral = all(isinstance(v, numbers.Integral) for v in lab)
        num = np.full(flat.shape, UNLABELED, dtype=np.int64 if integral else np.float64)
        num[other] = lab.astype(num.dtype)
        return num.reshape(y.shape)
    if not missing.any():
        return y
    out = flat.copy()
    out[missing] = UNLABELED
    return out.reshape(y.shape)


def decode_labels(y: Any, name: str = "y") -> np.ndarray:
    """``y`` as a numpy array in which every unlabeled row holds the marker.

    The one label decoder of the package.  An entry marks an unlabeled point
    when it is ``-1`` (int, float or the string ``"-1"``) or a missing value:
    ``None``, ``NaN`` or ``pd.NA`` -- how pandas writes an empty cell, so that a
    column of class names with blanks for the unlabeled rows needs no recoding.
    Missing entries become ``-1`` (``"-1"`` among string labels); the class
    values themselves are kept (a categorical or nullable-integer column keeps
    its categories and integers, an object column of numbers becomes numeric).
    A numeric array without missing values is returned unchanged.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels: a numpy array, a list, or a pandas Series of any dtype (object,
        string, categorical, nullable integer, float).
    name : str, default="y"
        Named in the error message.

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the labeled rows mix strings with numbers or other values (naming
        the first rows of each kind): ``["a", 3]`` could mean the class ``"3"``
        or a typo, and no single sort order holds both.

    Examples
    --------
    >>> import pandas as pd
    >>> decode_labels(pd.Series(["neg", None, "pos"])).tolist()
    ['neg', '-1', 'pos']
    >>> decode_labels(np.array([0.0, np.nan, 1.0])).tolist()
    [0.0, -1.0, 1.0]
    >>> decode_labels(pd.Series([0, None, 1], dtype="category")).tolist()
    [0, -1, 1]
    """
    y = _label_array(y)
    kind = y.dtype.kind
    if kind in "fc":
        nan = np.isnan(y)
        if nan.any():
            y = y.copy()
            y[nan] = UNLABELED
        return y
    if kind == "O":
        return _decode_objects(y, name)
    return y


def labeled_mask(y: Any) -> np.ndarray:
    """Boolean mask of the labeled rows, as :func:`decode_labels` reads ``y``.

    A label marks an unlabeled point when it is the integer ``-1``, the float
    ``-1.0``, the string ``"-1"`` (scikit-learn's convention, extended to
    string labels) or a missing value (``None``, ``NaN``, ``pd.NA``); every
    other value (booleans included) is a class label.  Estimators, ``score``,
    the scorers, the splitters and the CV estimators all decide labeled /
    unlabeled through this function.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    ndarray of bool of shape (n_samples,)

    Raises
    ------
    ValueError
        If the labeled rows mix strings with other values (:func:`decode_labels`).

    Examples
    --------
    >>> labeled_mask(["neg", "-1", "pos", None]).tolist()
    [True, False, True, False]
    >>> labeled_mask([0, -1, 1.0, -1.0, float("nan")]).tolist()
    [True, False, True, False, False]
    """
    y = decode_labels(y)
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
            f"The {name!r} parameter{of} must be {desc}. Got {plain(value)!r} instead."
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
            f"{plain(example)!r}); encode them as numbers first (e.g. with "
            "sklearn.preprocessing.OneHotEncoder in a Pipeline)."
        )


def split_labeled(y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Separate labeled from unlabeled points.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels; ``-1``, ``None``, ``NaN`` or ``pd.NA`` mark unlabeled points
        (:func:`decode_labels`).

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
    y = decode_labels(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(
            f"y contains infinity; mark unlabeled points with {UNLABELED_MARKERS}."
        )
    labeled = labeled_mask(y)
    if not labeled.any():
        raise ValueError(
            f"No labeled point in y: every entry is unlabeled ({UNLABELED_MARKERS})."
            " At least one labeled point per class is needed."
        )
    classes, enc = np.unique(y[labeled], return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"The labeled points hold a single class ({plain(classes[0])!r}); at least"
            " two classes are needed to train a classifier."
        )
    y_enc = np.full(y.shape[0], -1, dtype=np.intp)
    y_enc[labeled] = enc
    return labeled, classes, y_enc


def check_semi_supervised_targets(y: Any, name: str = "y") -> np.ndarray:
    """Check a semi-supervised label column and return it as an array.

    Class labels may be ints, strings, or integer-valued floats, in a numpy
    array, a list or a pandas Series (object, string, categorical or nullable
    dtype); ``-1`` (or the string ``"-1"``), ``None``, ``NaN`` and ``pd.NA`` mark
    an unlabeled point (:func:`decode_labels`: they become ``-1``, or ``"-1"``
    among string labels, and the class names are kept).

    Raises
    ------
    ValueError
        For continuous (non-integer float) labels, infinity, strings mixed with
        other values among the labeled rows (naming the rows), or a column that
        is not 1-dimensional, with a message saying how unlabeled points are
        marked.
    """
    y = decode_labels(y, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {y.shape}.")
    hint = (
        " Class labels must be ints or strings; mark unlabeled points with "
        f"{UNLABELED_MARKERS}."
    )
    if y.dtype.kind == "O":
        if all(isinstance(v, str) for v in y):
            y = y.astype(str)
        else:
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                bad = next((v for v in y if not isinstance(v, numbers.Number)), y[0])
                raise ValueError(
                    f"{name} holds values that are neither numbers nor strings "
                    f"(e.g. {plain(bad)!r}).{hint}"
                ) from None
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError(f"{name} contains infinity.{hint}")
        lab = y[y != UNLABELED]
        frac = lab[lab != np.round(lab)]
        if frac.size:
            raise ValueError(
                f"Unknown label type: continuous. {name} holds non-integer values "
                f"(e.g. {plain(frac[0])!r}), a regression target; this is a "
                "classifier." + hint
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
