r"""The data's intrinsic dimension and the Laplacian power it calls for.

``laplacian_power="auto"`` (the default) raises the graph Laplacian to a power
that grows with the intrinsic dimension of the data.

**Why** (Zhou & Belkin, "Semi-supervised learning by higher order
regularization", AISTATS 2011; Nadler, Srebro & Zhou, NIPS 2009).  With a
fixed number of labels and n growing, the minimizer of
:math:`\sum_{\text{labels}} \ell + \gamma\, \mathbf f^T L \mathbf f` on data of
intrinsic dimension :math:`d \ge 2` degenerates toward a constant with spikes at
the labels: the Dirichlet energy :math:`\int \|\nabla f\|^2` does not control
point values when :math:`d \ge 2`.  The iterated Laplacian :math:`L^m` measures
:math:`\int f \Delta^m f`, a Sobolev :math:`W^{m,2}` seminorm, which controls
point values when :math:`2m > d`.

**The rule** (:func:`auto_laplacian_power`): :math:`m = 3` when
:math:`\hat d \ge 16`; :math:`m = 2` when :math:`5 \le \hat d < 16` and every
class has at least 5 labeled points; else :math:`m = 1`.  The asymptotic order
:math:`m > d/2` is far above what helps at practical sizes: in low dimension,
or with a single label per class, the smoother solution has too few labels to
pin it and a power above 1 costs accuracy; the power stops at 3 because the
condition number of :math:`L^m`, and PCG's iterations with it, grow like the
m-th power of L's.  Measurements: docs/rules.rst.

**The estimate** (:func:`intrinsic_dimension`) is the maximum-likelihood
estimator of Levina & Bickel (NIPS 2004) with the pooling of MacKay &
Ghahramani (2005), computed on a fixed-size random sample (2,000 points, as
:func:`semisvm.kernels.knn_gamma`): the scale it sees, and so the power, does
not drift as n grows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._sample import sample_knn_distances

__all__ = [
    "HIGH_DIMENSION",
    "HIGH_POWER",
    "MID_DIMENSION",
    "MID_LABELS",
    "MID_POWER",
    "auto_laplacian_power",
    "intrinsic_dimension",
]

#: intrinsic dimension from which ``laplacian_power="auto"`` raises the power
HIGH_DIMENSION = 16.0
#: the power above it
HIGH_POWER = 3
#: intrinsic dimension from which the power is :data:`MID_POWER` when every
#: class has :data:`MID_LABELS` labeled points (below :data:`HIGH_DIMENSION`)
MID_DIMENSION = 5.0
#: that power
MID_POWER = 2
#: labeled points per class that pin the second power's smoother solution (the
#: auto rule's ``MIN_LABELS_PER_CLASS``: the labels then also judge the graph)
MID_LABELS = 5


def intrinsic_dimension(
    X: Any, n_neighbors: int = 10, *, max_samples: int = 2000, random_state: int = 0
) -> float:
    r"""Levina-Bickel maximum-likelihood intrinsic dimension of X.

    .. math::

        \hat d = \Bigl[\frac{1}{|S|} \sum_{i \in S} \frac{1}{k-1}
        \sum_{j=1}^{k-1} \log \frac{T_k(x_i)}{T_j(x_i)}\Bigr]^{-1}

    with :math:`T_j(x_i)` the distance from :math:`x_i` to its j-th nearest
    neighbour within the sample S (all points when :math:`n \le`
    ``max_samples``, else a uniform random sample of that size).  Points with a
    duplicate among their neighbours (:math:`T_1 = 0`) are left out.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    n_neighbors : int, default=10
        k (at least 2; fewer points than k + 1 lower it).
    max_samples : int, default=2000
    random_state : int, default=0

    Returns
    -------
    dimension : float
        ``nan`` when fewer than 3 points or every point has a duplicate.
    """
    T = sample_knn_distances(
        X, n_neighbors, max_samples=max_samples, random_state=random_state
    )
    k = T.shape[1]
    if k < 2:
        return float("nan")
    ok = T[:, 0] > 0
    if not ok.any():
        return float("nan")
    T = T[ok]
    inverse = np.log(T[:, -1:] / T[:, :-1]).sum(axis=1) / (k - 1)
    mean = float(inverse.mean())
    return 1.0 / mean if mean > 0 else float("inf")


def auto_laplacian_power(dimension: float, fewest_labels: int | None = None) -> int:
    r"""The power of ``laplacian_power="auto"``.

    Parameters
    ----------
    dimension : float
        The intrinsic dimension (:func:`intrinsic_dimension`; ``nan`` when
        unknown).
    fewest_labels : int or None, default=None
        Labeled points in the class with the fewest (None: unknown, as for
        the unsupervised :class:`~semisvm.SemiSupervisedKernel`).

    Returns
    -------
    power : int
        :data:`HIGH_POWER` (3) from :data:`HIGH_DIMENSION` (16) on;
        :data:`MID_POWER` (2) from :data:`MID_DIMENSION` (5) on when
        ``fewest_labels >= MID_LABELS`` (5); else 1 (also when the dimension is
        unknown).
    """
    if np.isnan(dimension):
        return 1
    if dimension >= HIGH_DIMENSION:
        return HIGH_POWER
    if (
        dimension >= MID_DIMENSION
        and fewest_labels is not None
        and fewest_labels >= MID_LABELS
    ):
        return MID_POWER
    return 1
