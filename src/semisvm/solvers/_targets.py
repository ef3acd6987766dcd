"""The solvers' target convention (see :mod:`semisvm.solvers`), checked in one place."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_targets"]


def as_targets(Y: Any, n: int | None = None, *, name: str = "Y") -> np.ndarray:
    """Targets as the (n, C) float64 matrix with entries in {-1, 0, +1}.

    Parameters
    ----------
    Y : array-like of shape (n, C) or (n,)
        +1 / -1 on labeled rows (one one-vs-rest problem per column), 0 on
        unlabeled rows; a 1-D array is one column.
    n : int, default=None
        Expected number of rows (that of K).
    name : str, default='Y'
        Parameter name used in error messages.

    Returns
    -------
    ndarray of shape (n, C)
        A new array (the caller's is never modified).

    Raises
    ------
    ValueError
        Wrong shape or an entry other than -1, 0, +1 (e.g. class labels, where
        -1 would mean "unlabeled": encode them with
        :func:`semisvm.models._problem.encode_targets`).
    """
    Y = np.array(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"{name} must have shape (n, C) or (n,), got {Y.shape}.")
    if n is not None and Y.shape[0] != n:
        raise ValueError(f"{name} has {Y.shape[0]} rows; K has {n}.")
    # three comparisons, not np.isin: the branch and bound checks thousands of
    # small target vectors (NaN and infinity compare unequal: bad)
    bad = (Y != 1.0) & (Y != -1.0) & (Y != 0.0)
    if bad.any():
        vals = np.unique(Y[bad])[:5]
        raise ValueError(
            f"{name} must hold +1 / -1 on labeled rows and 0 on unlabeled rows (the "
            f"solvers' target convention); got the value(s) {vals.tolist()}. Class "
            "labels (with -1 for unlabeled points) must be encoded first."
        )
    return Y
