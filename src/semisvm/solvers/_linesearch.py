r"""Exact line search for the primal LapSVM objective (Melacci & Belkin 2011, Sec. 3.2.1).

Along a direction :math:`d = [d_b; d_\alpha]` the derivative of the objective

.. math::
    \psi(s) = \sum_{i \in E(s)} (f_i + s\, f^d_i - y_i) f^d_i + A + s B

is piecewise linear and non-decreasing (the objective is convex), where
:math:`f^d_i = k_i^T d_\alpha + d_b`, :math:`A = \gamma_A \alpha^T K d_\alpha +
\gamma_I (K\alpha)^T L (K d_\alpha)` and :math:`B = \gamma_A d_\alpha^T K d_\alpha +
\gamma_I (K d_\alpha)^T L (K d_\alpha)`.  A labeled point switches state (enters or
leaves the error set E) at :math:`s_i = (y_i - f_i) / f^d_i`.  Sorting the positive
break points and walking the intervals, updating the slope and intercept of
:math:`\psi` by the single point that switches, gives the exact minimiser in
:math:`O(l \log l)` with no product by K.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_line_search", "objective_along"]


def exact_line_search(
    f: np.ndarray, fd: np.ndarray, y: np.ndarray, A: float, B: float
) -> tuple[float, int]:
    """Minimise the LapSVM objective along a direction.

    Parameters
    ----------
    f : ndarray of shape (l,)
        Current outputs on the labeled points.
    fd : ndarray of shape (l,)
        Outputs of the direction on the labeled points.
    y : ndarray of shape (l,)
        Labels in {-1, +1}.
    A, B : float
        Intercept and slope of the regulariser part of the derivative.

    Returns
    -------
    s : float
        The optimal step ``s >= 0``.
    n_intervals : int
        Intervals visited (the paper's "line-search iterations").
    """
    margin = 1.0 - y * f  # > 0: in E
    yfd = y * fd
    # membership just after s = 0
    in_E = (margin > 0) | ((margin == 0) & (yfd < 0))
    r = (f - y) * fd  # contribution to the intercept of psi
    q = fd * fd  # contribution to the slope
    a = A + r[in_E].sum()
    c = B + q[in_E].sum()
    # break points: points whose state changes at s_i > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        s_break = margin / yfd
    switching = (yfd != 0) & (s_break > 0) & np.isfinite(s_break)
    # an error vector leaves E when y f_d > 0; a non-error enters when y f_d < 0
    switching &= np.where(in_E, yfd > 0, yfd < 0)
    idx = np.flatnonzero(switching)
    if idx.size == 0:
        return _zero(a, c), 1
    order = idx[np.argsort(s_break[idx], kind="stable")]
    sb = s_break[order]
    sign = np.where(in_E[order], -1.0, 1.0)  # leaving E: -1, entering: +1
    # intercept / slope on each interval j (j = 0 before the first break point)
    a_j = a + np.concatenate(([0.0], np.cumsum(sign * r[order])))
    c_j = c + np.concatenate(([0.0], np.cumsum(sign * q[order])))
    # psi at the right end of each finite interval
    psi_right = a_j[:-1] + c_j[:-1] * sb
    hit = np.flatnonzero(psi_right >= 0)
    j = int(hit[0]) if hit.size else sb.size
    s = _zero(a_j[j], c_j[j])
    lo = sb[j - 1] if j > 0 else 0.0
    if j < sb.size:
        s = min(max(s, lo), sb[j])
    else:
        s = max(s, lo)
    return float(s), j + 1


def _zero(a: float, c: float) -> float:
    if c > 0:
        return max(-a / c, 0.0)
    return 0.0 if a >= 0 else np.inf


def objective_along(
    s: float,
    f: np.ndarray,
    fd: np.ndarray,
    y: np.ndarray,
    reg0: float,
    A: float,
    B: float,
) -> float:
    """Objective at step ``s`` (for tests): 0.5 * hinge^2 + reg0 + A s + B s^2 / 2."""
    h = np.maximum(0.0, 1.0 - y * (f + s * fd))
    return 0.5 * float(h @ h) + reg0 + A * s + 0.5 * B * s * s
