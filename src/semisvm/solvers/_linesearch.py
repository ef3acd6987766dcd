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
    f: np.ndarray,
    fd: np.ndarray,
    y: np.ndarray,
    A: float,
    B: float,
    w: np.ndarray | None = None,
) -> tuple[float, int]:
    r"""Minimise the LapSVM objective along a direction.

    With weights ``w`` the loss is :math:`\tfrac12\sum_i w_i \max(0, 1 - y_i f_i)^2`
    (``class_weight``): each point's contribution to the intercept and slope of
    :math:`\psi` is multiplied by :math:`w_i`, the break points do not change.

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
    w : ndarray of shape (l,), default=None
        Positive weights of the labeled loss terms (``None``: all 1).

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
    if w is not None:
        r = w * r
        q = w * q
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
    w: np.ndarray | None = None,
) -> float:
    """Objective at step ``s`` (for tests): 0.5 * w hinge^2 + reg0 + A s + B s^2 / 2."""
    h = np.maximum(0.0, 1.0 - y * (f + s * fd))
    hw = h if w is None else w * h
    return 0.5 * float(hw @ h) + reg0 + A * s + 0.5 * B * s * s


def exact_line_search_batch(
    F: np.ndarray,
    FD: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    w: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_line_search` for C columns at once (one-vs-rest PCG).

    Parameters
    ----------
    F, FD, Y : ndarray of shape (l, C)
        Outputs, direction outputs and +-1 labels on the labeled points.
    A, B : ndarray of shape (C,)
    w : ndarray of shape (l,) or (l, C), default=None
        Weights of the labeled loss terms (``None``: all 1).

    Returns
    -------
    s : ndarray of shape (C,)
    n_intervals : ndarray of int of shape (C,)
    """
    margin = 1.0 - Y * F
    yfd = Y * FD
    in_E = (margin > 0) | ((margin == 0) & (yfd < 0))
    r = (F - Y) * FD
    q = FD * FD
    if w is not None:
        w = np.asarray(w, dtype=np.float64)
        w = w[:, None] if w.ndim == 1 else w
        r = w * r
        q = w * q
    a0 = A + np.where(in_E, r, 0.0).sum(axis=0)
    c0 = B + np.where(in_E, q, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_break = margin / yfd
    switching = (yfd != 0) & (s_break > 0) & np.isfinite(s_break)
    switching &= np.where(in_E, yfd > 0, yfd < 0)
    s_break = np.where(switching, s_break, np.inf)
    sign = np.where(in_E, -1.0, 1.0) * switching
    order = np.argsort(s_break, axis=0, kind="stable")
    sb = np.take_along_axis(s_break, order, axis=0)
    dr = np.take_along_axis(sign * r, order, axis=0)
    dq = np.take_along_axis(sign * q, order, axis=0)
    C = F.shape[1]
    a_j = np.vstack([a0, a0 + np.cumsum(dr, axis=0)])
    c_j = np.vstack([c0, c0 + np.cumsum(dq, axis=0)])
    finite = np.isfinite(sb)
    with np.errstate(invalid="ignore"):
        psi_right = np.where(
            finite, a_j[:-1] + c_j[:-1] * np.where(finite, sb, 0.0), -1.0
        )
    hit = finite & (psi_right >= 0)
    m = finite.sum(axis=0)
    j = np.where(hit.any(axis=0), np.argmax(hit, axis=0), m)
    cols = np.arange(C)
    a_sel, c_sel = a_j[j, cols], c_j[j, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(
            c_sel > 0,
            np.maximum(-a_sel / c_sel, 0.0),
            np.where(a_sel >= 0, 0.0, np.inf),
        )
    sb_pad = np.vstack([sb, np.full((1, C), np.inf)])
    lo = np.where(j > 0, sb_pad[np.maximum(j - 1, 0), cols], 0.0)
    hi = np.where(j < m, sb_pad[j, cols], np.inf)
    s = np.minimum(np.maximum(s, lo), hi)
    return s, j + 1
