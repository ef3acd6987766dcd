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

**The rule**: :math:`m = 3` when :math:`\hat d \ge 16`, else :math:`m = 1`.
The asymptotic order :math:`m > d/2` is far above what helps at the sizes of
the benchmarks for data of low or moderate dimension: a power above 1 costs
accuracy on two moons and circles (d = 2, one label per class: 0% error with
m = 1, 5-19% with m = 2-5), COIL20 (d about 4), digits (d about 7; m = 5: 3.5
-> 7.1% with 5 labels per class) and full USPS (d about 10; m = 2, one label
per class, 2 draws: 13.3 -> 16.5%), while PCMAC (d about 11) gains 2-3 points at m = 2:
between 8 and 16 the dimension does not say which.  From 16 on every family
tried gains, the more the higher d: G50C (d about 26) 12.5 -> 9.5% at m = 3
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
    "auto_laplacian_power",
    "intrinsic_dimension",
]

#: intrinsic dimension from which ``laplacian_power="auto"`` raises the power
HIGH_DIMENSION = 16.0
#: the power above it
HIGH_POWER = 3


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


def auto_laplacian_power(dimension: float) -> int:
    r"""The power of ``laplacian_power="auto"`` for an intrinsic dimension:
    :data:`HIGH_POWER` (3) from :data:`HIGH_DIMENSION` (16) on, else 1 (also
    when the dimension is unknown, ``nan``)."""
    if np.isnan(dimension):
        return 1
    return HIGH_POWER if dimension >= HIGH_DIMENSION else 1
