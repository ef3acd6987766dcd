r"""The data's intrinsic dimension and the Laplacian power it calls for.

``laplacian_power="auto"`` (the default) raises the graph Laplacian to a power
that grows with the intrinsic dimension of the data.

**Why** (Zhou & Belkin, "Semi-supervised learning by higher order
regularization", AISTATS 2011; Nadler, Srebro & Zhou, NIPS 2009).  With a
fixed number of labels and n growing, the minimizer of
:math:`\sum_{\text{labels}} \ell + \gamma\, \mathbf f^T L \mathbf f` on data of
intrinsic dimension :math:`d \ge 2` degenerates toward a constant with spikes at
the labels: the limit functional (the Dirichlet energy
:math:`\int \|\nabla f\|^2`) does not control point values when
:math:`d \ge 2`.  The iterated Laplacian :math:`L^m` measures
:math:`\int f \Delta^m f`, a Sobolev :math:`W^{m,2}` seminorm, which controls
point values when :math:`2m > d`; the higher d, the higher the order needed.

**The rule**: :math:`m = 3` when :math:`\hat d \ge 16`; :math:`m = 2` when
:math:`5 \le \hat d < 16` and every class has at least 5 labeled points; else
:math:`m = 1`.  The asymptotic order :math:`m > d/2` is far above what helps at
the sizes of the benchmarks for data of low or moderate dimension: a power above
1 costs accuracy on two moons, circles and spirals (d = 2, one label per class:
0% error with m = 1, 5-19% with m = 2-5; spirals with 5-10 labels per class
+8 points at m = 2) and COIL20 (d about 4), and at **one label per class** on
data of moderate dimension (full USPS, d about 10: 13.3 -> 16.5%; USPST(B) +4
points), where the smoother :math:`L^2` solution has too few labels to pin it.
With 5 or more labels per class and :math:`5 \le d < 16` the second power wins
on most families: ``LapSVM()``, 5 label draws, 5 and 10 labels per class, error
on U (study in ``BENCHMARKS.md``, issue 27/28 session 14): PCMAC 20.2 -> 15.8%
and 16.8 -> 13.8%, XOR in 8 dimensions 18.8 -> 11.3%, two overlapping Gaussians
21.2 -> 19.9%, pairs of blobs 2.5 -> 0.1% (a blob holding a single label: its
label does not spread at m = 1, the spike of the degenerate regime), USPST(B)
25.5 -> 23.8%; losses up to 1.7 points (three clusters per class in 20
dimensions, d about 12, 10 labels per class).  From 16 on every family tried
gains at m = 3, the more the higher d: G50C (d about 26) 12.5 -> 9.5% at m = 3
(one label per class 19.4 -> 12.9%), 200-dimensional noise with 2 informative
directions (d about 60) 26.2 -> 22.1%, two Gaussians in 100 dimensions (d
about 42) 6.5 -> 4.5%, 30 informative of 60 features (d about 17) 18.0 ->
11.2% (graph-trusting LapSVM, 10-NN, 5 labels per class, 3 draws;
``BENCHMARKS.md``, issue 28).  The power 3 and not higher: the condition number
of :math:`L^m` grows like the m-th power of L's, and PCG's iterations with it
(G50C, 5 labels per class: 22, 44, 132 iterations at m = 1, 2, 3 and no
convergence in 1,000 at m = 5, where m = 5 would gain another point).

**The estimate** is the maximum-likelihood estimator of Levina & Bickel
("Maximum likelihood estimation of intrinsic dimension", NIPS 2004) with the
pooling of MacKay & Ghahramani (2005): for each point the inverse estimate
:math:`\frac{1}{k-1}\sum_{j<k} \log(T_k / T_j)` from its k nearest-neighbour
distances :math:`T_1 \le \dots \le T_k`, averaged over the points, then
inverted.  It is computed on a fixed-size random sample (2,000 points, as
:func:`semisvm.kernels.knn_gamma`): the scale it sees, and so the power, does not
drift as n grows.
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
